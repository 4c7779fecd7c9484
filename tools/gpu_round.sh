#!/bin/bash
# One call of the device tool, in stages (the machine is given back 30 s after each call, so a
# later call starts bare: `build` leaves the wheel in $OUT, and a later call that carries it runs
# `install DIR` in seconds instead of building again).
#   bash tools/gpu_round.sh build                 wheel with the sm_90 pack into $OUT, installed
#   bash tools/gpu_round.sh quickbuild            install from source without the kernel pack
#   bash tools/gpu_round.sh install DIR           the wheel carried in DIR + this tree's Python
#   bash tools/gpu_round.sh tests END FILES...    GPU test shards over FILES until END (epoch s)
#   bash tools/gpu_round.sh bench END ARGS...     python -m ember.bench --gpu ARGS until END
#   bash tools/gpu_round.sh newest END KEEP       this round's GPU tests, ending KEEP s before END
# Logs and a tarball of the shard logs go to $OUT (at most 8 files come back).
set -u
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-round}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
stage=$1
shift
dask() {
    python3 -c "import dask, distributed" 2>/dev/null ||
        python3 -m pip install -q --no-index --find-links build/wheels "dask[array,dataframe]" \
            distributed >/dev/null 2>&1 || echo "gpu_round: no Dask wheels (tools/wheels_for_device.sh)"
}
case "$stage" in
build)
    t0=$(date +%s)
    python3 -m pip wheel -q --no-build-isolation --no-deps -w "$out" \
        -C cmake.define.EMBER_SHIP_ARCHS=90 -C build-dir=build/gpu-pip . >"$out/build.log" 2>&1 ||
        { tail -40 "$out/build.log"; exit 1; }
    python3 -m pip install -q --no-deps "$out"/ember-*.whl
    dask
    echo "gpu_round: built and installed in $(($(date +%s) - t0)) s"
    ;;
quickbuild)
    # no kernel pack (kernels compile at first use through NVRTC): a few minutes less
    t0=$(date +%s)
    python3 -m pip install -q --no-build-isolation --no-deps -C build-dir=build/gpu-pip . \
        >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    dask
    echo "gpu_round: built (no pack) and installed in $(($(date +%s) - t0)) s"
    ;;
install)
    # the carried wheel's C++ core and kernel pack, with this tree's Python files over it
    python3 -m pip install -q --no-deps "$1"/ember-*.whl && dask
    site=$(python3 -c "import ember, os; print(os.path.dirname(ember.__file__))")
    cp -r python/ember/. "$site/" && echo "gpu_round: this tree's Python files over the wheel"
    ;;
tests)
    end=$1
    shift
    left=$((end - $(date +%s)))
    export EMBER_TEST_LOGS=/tmp/gpu-tests
    timeout -s TERM "$left" python3 tools/gpu_tests.py -j "${GPU_JOBS:-14}" "$@"
    rc=$?
    tar czf "$out/tests-$(date +%s).tgz" -C /tmp gpu-tests
    exit $rc
    ;;
bench)
    end=$1
    shift
    left=$((end - $(date +%s)))
    timeout -s INT "$left" python3 -m ember.bench --gpu "$@" 2>&1 | tee "$out/bench-$(date +%s).log"
    ;;
newest)
    # this round's new families: the GPU-only tests first, then shards until END - $2 seconds
    end=$1
    keep=$2
    [ -n "${SKIP_GPU_ONLY:-}" ] || timeout 150 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short \
        tests/python/test_nn_cudnn.py tests/python/test_cuda_processes.py \
        tests/python/test_debug_gpu.py tests/python/test_cuda_paths.py \
        tests/python/test_kernel_pack.py 2>&1 | tail -40
    files=()
    for f in cuda_jit cuda_jit_more torch_api torch_tutorials nn_conv nn_image nn_sequence \
        nn_packed nn_extra nn_functional amp memory_format data_images data_workers keras \
        keras_layers keras_callbacks frame_basic frame_groupby frame_io frame_merge frame_rows \
        frame_strings ml_base ml_cluster ml_decomposition_neighbors ml_linear \
        ml_preprocessing_metrics dask_array dask_frame dask_distributed dask_spill ndimage_filters \
        ndimage_interpolation ndimage_morphology fuse fuse_reduce compile compile_more backends \
        take devices optim_more examples distributed distributed_ddp; do
        [ -f "tests/python/test_$f.py" ] && files+=("tests/python/test_$f.py")
    done
    bash "$0" tests $((end - keep)) "${files[@]}"
    ;;
*)
    echo "gpu_round: unknown stage $stage" >&2
    exit 2
    ;;
esac
