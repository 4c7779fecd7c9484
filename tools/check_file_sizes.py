"""Fails when a source file of the project (not a test) is over 800 lines: a file that large holds
more than one topic and should be split along its seams (docs/design.md says where things live).

    python tools/check_file_sizes.py [ROOT] [--max N]

Counts the lines of the C++, CUDA and Python sources under src/, include/, python/, tools/ and
bench/ (tests/ and generated data tables are exempt: see EXEMPT).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DIRS = ("src", "include", "python", "tools", "bench")
SUFFIXES = {".cpp", ".hpp", ".h", ".inc", ".cu", ".cuh", ".in", ".py"}
# Data, not code: the ziggurat tables are written by tools/gen_ziggurat.py.
EXEMPT = {"src/ops/ziggurat_tables.hpp"}


def oversized(root: Path, limit: int) -> list[tuple[str, int]]:
    found = []
    for top in DIRS:
        for p in sorted((root / top).rglob("*")):
            rel = p.relative_to(root).as_posix()
            if not p.is_file() or p.suffix not in SUFFIXES or rel in EXEMPT:
                continue
            n = len(p.read_text(encoding="utf-8", errors="replace").splitlines())
            if n > limit:
                found.append((rel, n))
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", default=Path(__file__).resolve().parent.parent, type=Path)
    ap.add_argument("--max", type=int, default=800)
    args = ap.parse_args(argv)
    bad = oversized(args.root, args.max)
    for rel, n in bad:
        print(f"{rel}: {n} lines (at most {args.max}): split it along its seams")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
