"""The layering of the Python package: its modules do not import each other in a circle
(tools/check_import_cycles.py), and the checker itself finds a circle when there is one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "check_import_cycles.py"


def run(*args):
    return subprocess.run(
        [sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True, check=False
    )


def test_no_import_cycles_in_ember():
    r = run()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no import cycles" in r.stdout


def write(pkg: Path, files: dict[str, str]):
    for name, text in files.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_checker_finds_a_cycle(tmp_path):
    pkg = tmp_path / "pkg"
    write(
        pkg,
        {
            "__init__.py": "from . import _core, a\nfrom .a import f\n",
            "a.py": "from . import _core\nfrom .b import g\n\ndef f():\n    return g()\n",
            "b.py": "from .a import f\n\ndef g():\n    return 1\n",
            "c.py": "def h():\n    from . import f\n\n    return f()\n",  # at call time only
        },
    )
    r = run(pkg)
    assert r.returncode == 1
    assert "import cycle among 2 module(s): pkg.a, pkg.b" in r.stdout
    assert "pkg.c" not in r.stdout and "_core" not in r.stdout


def test_checker_sees_back_imports_of_the_package(tmp_path):
    pkg = tmp_path / "pkg"
    write(
        pkg,
        {
            "__init__.py": "from .a import f\nfrom .sub import g\n",
            "a.py": "import pkg\n\ndef f():\n    return pkg\n",
            "sub/__init__.py": "from .inner import g\n",
            "sub/inner.py": "from .. import f\n\ndef g():\n    return f\n",
        },
    )
    r = run(pkg)
    assert r.returncode == 1
    assert "pkg -> pkg.a" in r.stdout and "pkg.a -> pkg" in r.stdout
    assert "pkg.sub.inner -> pkg" in r.stdout


def test_checker_accepts_a_layered_package(tmp_path):
    pkg = tmp_path / "pkg"
    write(
        pkg,
        {
            "__init__.py": "from . import _core\nfrom .a import f\nfrom .b import g\n",
            "a.py": "from . import _core\n\ndef f():\n    return _core\n",
            "b.py": "from .a import f\n\ndef g():\n    import pkg\n\n    return pkg, f\n",
        },
    )
    r = run(pkg)
    assert r.returncode == 0, r.stdout
    assert "no import cycles among the 4 modules of pkg" in r.stdout


def test_checker_lists_back_imports_on_request(tmp_path):
    pkg = tmp_path / "pkg"
    write(
        pkg,
        {
            "__init__.py": "from . import _core\nfrom .a import f\n",
            "a.py": (
                "def f():\n    import pkg\n\n    return pkg\n\n\n"
                "def g():\n    from . import f, _core\n    from .a import f as h\n\n"
                "    return f, h\n"
            ),
        },
    )
    assert run(pkg).returncode == 0  # not at import time: no circle
    r = run(pkg, "--back-imports")
    assert r.returncode == 1
    assert "back-import: pkg/a.py:2: import pkg" in r.stdout
    assert "back-import: pkg/a.py:8: from . import f, _core" in r.stdout
    assert "a.py:9" not in r.stdout  # a module of the package, not its __init__
