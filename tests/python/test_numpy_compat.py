"""docs/numpy-compat.md (written by tools/numpy_compat.py) says, for every public NumPy function,
whether ember has it: the claims must match the code."""

from __future__ import annotations

import re
from pathlib import Path

import ember

DOC = Path(__file__).resolve().parents[2] / "docs" / "numpy-compat.md"
ROW = re.compile(r"^\| `([\w.]+)` \| (yes|—) \|$")


def test_compat_table_matches_the_namespace():
    rows = [m.groups() for line in DOC.read_text().splitlines() if (m := ROW.match(line))]
    assert len(rows) > 300
    wrong = []
    for name, claim in rows:
        obj = ember
        for part in name.split("."):
            obj = getattr(obj, part, None)
        if callable(obj) != (claim == "yes"):
            wrong.append(f"{name}: table says {claim}")
    assert not wrong, "docs/numpy-compat.md is stale (python tools/numpy_compat.py): " + ", ".join(
        wrong
    )
    have = sum(claim == "yes" for _, claim in rows)
    assert f"ember has {have} of the {len(rows)} public functions" in DOC.read_text()
