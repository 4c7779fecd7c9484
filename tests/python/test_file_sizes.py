"""tools/check_file_sizes.py: the 800-line limit on the project's non-test sources holds, and the
check fails on a file over it."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "check_file_sizes.py"


def run(root):
    return subprocess.run(
        [sys.executable, str(TOOL), str(root)], capture_output=True, text=True, check=False
    )


def test_the_tree_keeps_the_limit():
    r = run(ROOT)
    assert r.returncode == 0, r.stdout


def test_a_file_over_the_limit_fails(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ok.cpp").write_text("x\n" * 800)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "long_test.py").write_text("x = 1\n" * 2000)
    assert run(tmp_path).returncode == 0
    (tmp_path / "src" / "big.cpp").write_text("x\n" * 801)
    r = run(tmp_path)
    assert r.returncode == 1
    assert "src/big.cpp: 801 lines" in r.stdout
