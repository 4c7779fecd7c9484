#!/bin/bash
# Instruction counts of the host path of a 1-element x + x on "cuda", on a machine without a GPU:
# a do-nothing driver and NVRTC (tools/fake_cuda) stand in for libcuda and libnvrtc, and callgrind
# counts what ember itself does per op (the C++ loop, then Python's `x + x`).
# Usage: bash tools/host_profile.sh [calls]   (after `make install`; needs valgrind)
set -e
cd "$(dirname "$0")/.."
calls=${1:-20000}
tmp=$(mktemp -d)
lib=$(ls build/py-*/libember.a | head -1)
g++ -std=c++20 -O2 -shared -fPIC -Isrc -Iinclude tools/fake_cuda/driver.cpp \
  tools/fake_cuda/defaults.cpp -o "$tmp/libcuda.so.1"
ln -s libcuda.so.1 "$tmp/libnvrtc.so.13"
g++ -std=c++20 -O2 -g -Iinclude -Isrc tools/fake_cuda/add_loop.cpp "$lib" -o "$tmp/add_loop" -ldl -lpthread -lz
export LD_LIBRARY_PATH=$tmp EMBER_CACHE_DIR=$tmp/cache
per_call() {  # total instructions of the function matching $2 in callgrind output $1, per call
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null | grep -m1 -F "$2" |
    awk -v n=$((calls + 2000)) '{gsub(",","",$1); printf "%d instructions per call\n", $1 / n}'
}
valgrind --tool=callgrind --callgrind-out-file="$tmp/cpp.out" "$tmp/add_loop" "$calls" 2>/dev/null
echo -n "C++ ember::add:     "; per_call "$tmp/cpp.out" "ember::add("
# Python: the whole loop iteration (PyNumber_Add, the release of the previous result, the
# interpreter) on the main thread, as the difference of two loop lengths; a fixed hash seed keeps
# the count the same from run to run.
cat > "$tmp/loop.py" <<'PY'
import sys
import ember
def main(n):
    x = ember.ones((1,), dtype="float32", device="cuda")
    for _ in range(n):
        x + x
main(int(sys.argv[1]))
PY
main_thread() {  # instructions of the main thread of `python loop.py $1`
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$tmp/py$1.out" \
    .venv/bin/python "$tmp/loop.py" "$1" >/dev/null 2>&1
  awk '/^(summary|totals):/ {print $2; exit}' "$tmp/py$1.out-01"
}
export PYTHONHASHSEED=0
a=$(main_thread 2000)
b=$(main_thread $((calls + 2000)))
echo "Python x + x (whole loop iteration): $(((b - a) / calls)) instructions per call"
echo "profiles: $tmp/cpp.out $tmp/py*.out-01 (callgrind_annotate --inclusive=yes)"
