"""tools/check_layers.py, the layer rules `make lint` checks: the tree passes, and a copy with one
include that breaks a rule fails naming the file, the line and the rule."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "check_layers.py"


def run(root):
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, check=False
    )


def test_the_tree_follows_the_layer_rules():
    r = run(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr


BAD = [
    ("src/core/fft.cpp", '#include "backend/cuda/cufft.hpp"', "rule 2"),
    ("src/core/array.cpp", '#include "autograd/internal.hpp"', "rule 2"),
    ("src/core/shape.cpp", "#include <cuda.h>", "rule 1"),
    ("include/ember/array.hpp", '#include "ops/scalar.hpp"', "rule 3"),
    ("src/backend/cpu/fft.cpp", '#include "backend/cuda/loader.hpp"', "rule 4"),
    ("src/autograd/rows.cpp", '#include "backend/backend.hpp"', "rule 7"),
    ("src/python/module.cpp", '#include "backend/cpu/blas.hpp"', "rule 6"),
    ("src/backend/cpu/rows.cpp", "#include <nanobind/nanobind.h>", "rule 5"),
    ("src/backend/cpu/sort.cpp", '#include "core/internal.hpp"', "rule 8"),
    ("src/ops/scalar.hpp", '#include "backend/backend.hpp"', "rule 9"),
    ("src/support/thread_pool.cpp", '#include "ember/array.hpp"', "rule 10"),
    ("src/core/scan.cpp", "class CumsumNode final : public autograd::Node {};", "rule 11"),
]


@pytest.mark.parametrize(("path", "line", "rule"), BAD)
def test_a_broken_rule_fails(tmp_path, path, line, rule):
    for top in ("src", "include"):
        shutil.copytree(ROOT / top, tmp_path / top)
    f = tmp_path / path
    text = f.read_text().splitlines()
    text.insert(2, line)  # after the file's opening comment
    f.write_text("\n".join(text) + "\n")
    r = run(tmp_path)
    assert r.returncode == 1
    assert f"{path}:3: {rule}:" in r.stdout, r.stdout
