#!/bin/bash
# One GPU-machine session in a single call (the device tool's calls are few and expensive):
# build, the GPU tests of the newest families, the RNG probe, a timed sample of the big suites
# (with the kernel-cache statistics), and the quick GPU benchmark. Logs go to $OUT (or build/).
# Usage: bash tools/gpu_batch.sh [seconds for the suite sample]
cd "$(dirname "$0")/.."
out=${OUT:-build}; mkdir -p "$out"
export PYTHONUNBUFFERED=1
sample=${1:-120}
(time python3 -m pip install -q --no-build-isolation --no-deps .) > "$out/build.log" 2>&1
tail -3 "$out/build.log"
cd tests/python
timeout 240 python3 -m pytest -q -p no:cacheprovider -rfs --tb=short --durations=5 -k "not cpu" \
  test_cuda.py test_random.py test_matmul.py test_take.py test_einsum.py test_linalg.py \
  test_fft.py test_where.py "test_special_values.py::test_binary_special_values" \
  > "$out/quick.log" 2>&1
tail -25 "$out/quick.log"
cd ../..
nvcc -O3 -arch=sm_90 --fmad=false tools/rng_probe.cu -o /tmp/rng_probe && /tmp/rng_probe > "$out/rng.log" 2>&1
cat "$out/rng.log"
timeout 200 python3 -m ember.bench --gpu --quick > "$out/bench.log" 2>&1
grep -E "PASS|FAIL|fft|svd|normal|bare|x \+ x" "$out/bench.log"
cd tests/python
timeout -s INT "$sample" python3 -m pytest -q -p no:cacheprovider --maxfail=20 -rf --tb=line --durations=15 -k "not cpu" \
  test_reductions.py > "$out/sample.log" 2>&1
tail -22 "$out/sample.log"
