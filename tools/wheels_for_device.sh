#!/usr/bin/env bash
# Downloads into build/wheels the wheels `make gpu-array-api` installs on the GPU machine, which
# has no network: the Array API suite's dependencies for that machine's Python (default 3.12,
# x86-64 Linux), with everything they pull in. Carry build/wheels there; PYVER=3.11 etc. to change.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] && PY="${PYTHON:-.venv/bin/python}"
PYVER="${PYVER:-3.12}"
mkdir -p build/wheels
"$PY" -m pip download -q --only-binary=:all: --python-version "$PYVER" --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux_2_28_x86_64 --platform linux_x86_64 -d build/wheels \
  "pytest>=8" "pytest-json-report>=1.5" "hypothesis>=6.151" "ndindex>=1.8"
ls build/wheels
