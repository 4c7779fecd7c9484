#!/usr/bin/env bash
# Prepares what `make gpu-array-api` needs on the GPU machine, which has no network and no
# ../shared: the Array API suite's dependency wheels for its Python (default 3.12, x86-64 Linux)
# with everything they pull in, in build/wheels, and a copy of ../shared/array-api-tests in
# build/array-api-tests, and Dask with distributed for the ember.dask tests (the GPU machine has
# no Dask). Both are git-ignored; carry them there. PYVER=3.11 etc. to change.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ -z "${PYTHON:-}" ] && [ -x .venv/bin/python ]; then PY=.venv/bin/python; fi
PYVER="${PYVER:-3.12}"
mkdir -p build/wheels
"$PY" -m pip download -q --only-binary=:all: --python-version "$PYVER" --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux_2_28_x86_64 --platform linux_x86_64 -d build/wheels \
  "pytest>=8" "pytest-json-report>=1.5" "hypothesis>=6.151" "ndindex>=1.8" \
  "dask[array,dataframe]>=2024.8" "distributed>=2024.8"
# The GPU machine has NumPy, pandas and pyarrow: their wheels would only fill the carry limit.
rm -f build/wheels/numpy-*.whl build/wheels/pandas-*.whl build/wheels/pyarrow-*.whl
ls build/wheels
if [ -d ../shared/array-api-tests ]; then
    rm -rf build/array-api-tests
    cp -r ../shared/array-api-tests build/array-api-tests
    chmod -R u+w build/array-api-tests
    echo "suite copied to build/array-api-tests"
else
    echo "../shared/array-api-tests not found: build/array-api-tests not made"
fi
