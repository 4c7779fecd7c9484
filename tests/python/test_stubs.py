"""The type stub of ember._core (python/ember/_core.pyi, tools/gen_stubs.py): current, valid
Python, and covering every public name the package re-exports from the C++ module."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import ember
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
STUB = ROOT / "python" / "ember" / "_core.pyi"


def stub_names():
    tree = ast.parse(STUB.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_stub_is_current():
    nb = pytest.importorskip("nanobind")
    if f"nanobind {nb.__version__}" not in STUB.read_text().splitlines()[1]:
        pytest.skip("the stub was generated with another nanobind version")
    r = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_stubs.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_stub_covers_the_core():
    names = stub_names()
    missing = [n for n in vars(ember._core) if not n.startswith("__") and n not in names]
    assert not missing
    assert (ROOT / "python" / "ember" / "py.typed").exists()
    # the ndarray methods carry their signatures
    text = STUB.read_text()
    assert "def reshape(self, *shape" in text and "keepdims: bool = ..." in text
