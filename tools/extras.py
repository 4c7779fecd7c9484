"""Prints an optional-dependency list of pyproject.toml, one quoted requirement per word, for the
Makefile (`TEST_DEPS := $(shell python3 tools/extras.py test)`): the extras users install with
`pip install ember[test]` and what `make test` installs stay one list."""

import pathlib
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
print(" ".join(f'"{r}"' for r in extras[sys.argv[1]]))
