"""GPU-specific tests of the CUDA backend: devices, streams and events, the memory pool, the
kernel cache, large arrays, faults. Skipped without a usable GPU (the reason is shown)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import ember
import numpy as np
import pytest
from conftest import cuda_unavailable_reason

REASON = cuda_unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no CUDA device: {REASON}")
cuda = ember.cuda


def run_child(code, **env):
    full = dict(os.environ)
    full.update({k: str(v) for k, v in env.items()})
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=300
    )
    return r


# ---- devices ----------------------------------------------------------------------------------


def test_default_device_is_the_gpu():
    r = run_child("import ember; print(ember.get_default_device())")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "cuda:0"


def test_device_queries():
    assert cuda.is_available() and cuda.device_count() >= 1
    assert cuda.unavailable_reason() == ""
    p = cuda.get_device_properties()
    assert isinstance(p["name"], str) and p["name"]
    assert p["major"] >= 7 and p["total_memory"] > 2**30
    assert p["multi_processor_count"] > 0 and p["l2_cache_size"] > 0
    assert cuda.get_device_name(0) == p["name"]
    assert cuda.current_device() == 0
    cuda.set_device(0)
    with cuda.device(0):
        assert cuda.current_device() == 0
    cuda.synchronize()
    cuda.synchronize(0)


def test_bad_device_index_raises():
    n = cuda.device_count()
    with pytest.raises(ValueError, match=str(n)):
        cuda.set_device(n)
    with pytest.raises(ValueError, match=f"cuda:{n}"):
        ember.zeros(3, device=f"cuda:{n}")
    with pytest.raises(ValueError):
        cuda.get_device_properties(-5)


def test_moving_between_devices():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = ember.asarray(a, device="cuda")
    assert str(x.device) == "cuda:0"
    assert str(x.cpu().device) == "cpu"
    assert str(ember.asarray(a, device="cpu").cuda().device) == "cuda:0"
    assert str(ember.asarray(a, device="cpu").to("cuda").device) == "cuda:0"
    np.testing.assert_array_equal(ember.asnumpy(x.T), a.T)
    np.testing.assert_array_equal(x.cpu()._numpy_view(), a)
    with pytest.raises(TypeError, match="asnumpy"):
        np.asarray(x)
    y = ember.ones(3, device="cpu")
    with pytest.raises(ValueError) as info:
        ember.ones(3, device="cuda") + y
    assert "cpu" in str(info.value) and "cuda" in str(info.value)


@pytest.mark.parametrize("nbytes", [1, 1000, (8 << 20) - 1, (70 << 20) + 3, 100 << 20])
def test_host_device_copies_are_exact(nbytes):
    rng = np.random.default_rng(nbytes)
    a = rng.integers(0, 256, nbytes, dtype=np.uint8)
    x = ember.asarray(a, device="cuda")
    b = ember.asnumpy(x)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ember.asnumpy(x[1::3]), a[1::3])


# ---- streams and events -----------------------------------------------------------------------


def test_streams_order_work_and_are_current_inside_the_block():
    s = cuda.Stream()
    assert cuda.current_stream() == cuda.default_stream()
    a = np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32)
    x = ember.asarray(a, device="cuda")
    with cuda.stream(s):
        assert cuda.current_stream() == s
        y = ember.sin(x) * 2 + 1
    assert cuda.current_stream() == cuda.default_stream()
    s.synchronize()
    assert s.query()
    np.testing.assert_allclose(ember.asnumpy(y), np.sin(a) * 2 + 1, rtol=1e-6, atol=1e-6)


def test_wait_stream_orders_two_streams():
    s1, s2 = cuda.Stream(), cuda.Stream()
    x = ember.zeros(1 << 24, dtype=ember.float32, device="cuda")
    cuda.synchronize()
    with cuda.stream(s1):
        for _ in range(10):
            x += 1
    s2.wait_stream(s1)
    with cuda.stream(s2):
        total = x.sum()
    s2.synchronize()
    assert float(total) == 10.0 * (1 << 24)


def test_events_time_and_synchronize():
    start, end = cuda.Event(), cuda.Event()
    x = ember.ones(1 << 24, device="cuda")
    start.record()
    for _ in range(5):
        x = x * 1.0001
    end.record()
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert 0.0 < ms < 10_000
    plain = cuda.Event(enable_timing=False)
    plain.record()
    plain.synchronize()
    with pytest.raises(ValueError, match="enable_timing"):
        start.elapsed_time(plain)
    with pytest.raises(ValueError, match="recorded"):
        cuda.Event().elapsed_time(end)


def test_stream_destroyed_with_live_memory_is_safe():
    s = cuda.Stream()
    with cuda.stream(s):
        y = ember.ones(1000, device="cuda") + 1
    del s
    import gc

    gc.collect()
    assert float(y.sum()) == 2000.0
    del y
    cuda.synchronize()


# ---- memory -----------------------------------------------------------------------------------


def test_allocator_reuses_memory_and_counts():
    cuda.synchronize()
    base = cuda.memory_allocated()
    s0 = cuda.memory_stats()
    for _ in range(50):
        x = ember.empty(1 << 20, dtype=ember.float32, device="cuda")
        del x
    s1 = cuda.memory_stats()
    assert s1["num_allocs"] - s0["num_allocs"] >= 50
    assert s1["num_frees"] - s0["num_frees"] >= 50
    assert cuda.memory_allocated() == base
    # 50 x 4 MiB allocated one at a time fit in a few blocks of the pool
    assert cuda.memory_reserved() - s0["reserved_bytes"] <= 16 << 20


def test_an_op_allocates_only_its_output():
    a = ember.ones(1 << 22, dtype=ember.float32, device="cuda")
    b = ember.ones(1 << 22, dtype=ember.float32, device="cuda")
    cuda.synchronize()
    cuda.reset_peak_memory_stats()
    before = cuda.memory_allocated()
    c = a + b
    cuda.synchronize()
    assert cuda.max_memory_allocated() - before == c.nbytes
    assert cuda.memory_allocated() - before == c.nbytes


def test_mixed_sizes_keep_the_reserve_close_to_the_peak():
    import math
    import random

    cuda.synchronize()
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    rng = random.Random(7)
    live, live_bytes, cap = [], 0, 512 << 20
    for _ in range(600):
        n = int(math.exp(rng.uniform(math.log(1 << 10), math.log(64 << 20))))
        while live and live_bytes + n > cap:
            live_bytes -= live.pop(rng.randrange(len(live))).nbytes
        live.append(ember.empty(n, dtype=ember.uint8, device="cuda"))
        live_bytes += n
    cuda.synchronize()
    s = cuda.memory_stats()
    # the pools trim themselves above 1.2x the peak plus 64 MiB; fragmentation they cannot
    # return stays below a further half chunk per pool
    assert s["reserved_bytes"] <= 1.25 * s["peak_allocated_bytes"] + (128 << 20), s
    assert s["peak_reserved_bytes"] >= s["reserved_bytes"]
    del live


def test_repr_names_the_device():
    x = ember.asarray([1.0, 2.0], dtype=ember.float32, device="cuda")
    assert repr(x) == "array([1., 2.], dtype=float32, device='cuda:0')"


def test_bare_launch_floor_is_measured():
    t = cuda._c._bare_launch_seconds(200)
    assert 0 < t < 1e-3


def test_empty_cache_returns_memory():
    x = ember.empty(256 << 20, dtype=ember.uint8, device="cuda")
    del x
    cuda.synchronize()
    assert cuda.memory_reserved() >= 256 << 20
    cuda.empty_cache()
    assert cuda.memory_reserved() <= cuda.memory_allocated() + (64 << 20)


def test_memory_limit_raises_out_of_memory_and_recovers():
    cuda.set_memory_limit(cuda.memory_allocated() + (64 << 20))
    try:
        with pytest.raises(cuda.OutOfMemoryError, match="limit") as info:
            ember.empty(128 << 20, dtype=ember.uint8, device="cuda")
        assert isinstance(info.value, MemoryError)
        ember.empty(16 << 20, dtype=ember.uint8, device="cuda")
    finally:
        cuda.set_memory_limit(0)
    ember.empty(128 << 20, dtype=ember.uint8, device="cuda")
    with pytest.raises(ValueError):
        cuda.set_memory_limit(-1)


def test_out_of_memory_is_reported_and_the_process_keeps_working():
    total = cuda.get_device_properties()["total_memory"]
    keep = ember.ones(1000, device="cuda")
    with pytest.raises(cuda.OutOfMemoryError) as info:
        ember.empty(2 * total, dtype=ember.uint8, device="cuda")
    msg = str(info.value)
    for word in ("allocated", "cached", "free", "cuda:0"):
        assert word in msg, msg
    assert cuda.memory_stats()["num_ooms"] >= 1
    assert float((keep + 1).sum()) == 2000.0


# ---- kernel cache (the tests that need child processes are in test_cuda_processes.py) ----


def test_second_call_in_process_does_not_compile():
    x = ember.ones((7, 5), dtype=ember.int16, device="cuda")
    ember.bitwise_xor(x, x[0])
    cuda._c._wait_background_compiles()  # its layout variants, compiled ahead
    before = cuda.kernel_cache_stats()
    ember.bitwise_xor(x, x[0])
    after = cuda.kernel_cache_stats()
    assert after["compiles"] == before["compiles"]
    assert after["disk_hits"] == before["disk_hits"]
    assert after["memory_hits"] > before["memory_hits"]
    assert after["launches"] == before["launches"] + 1


def test_launch_counters_count_kernels_and_gemms():
    a = ember.ones((32, 32), device="cuda")
    a @ a
    ember.cuda.synchronize()
    before = cuda.kernel_cache_stats()
    a + a
    a @ a
    after = cuda.kernel_cache_stats()
    assert after["launches"] - before["launches"] == 1
    assert after["library_calls"] - before["library_calls"] == 1


def test_concurrent_compilation_from_threads():
    dtypes = [ember.int8, ember.uint16, ember.int32, ember.uint64, ember.float32, ember.float64]
    results, errors = {}, []

    def work(i, dt):
        try:
            a = (np.arange(1000) % 97).astype(np.dtype(str(dt)))
            x = ember.asarray(a, device="cuda")
            y = ember.remainder(x * 3 + 1, 7)
            results[i] = bool(np.array_equal(ember.asnumpy(y), (a * 3 + 1) % 7))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(i, dt)) for i, dt in enumerate(dtypes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(results.values()) and len(results) == len(dtypes)


# ---- large arrays and determinism -------------------------------------------------------------


def test_arrays_over_2_pow_31_elements():
    free = cuda.memory_stats()["device_free_bytes"]
    n = 2**31 + 77
    if free < 3 * n + (1 << 30):
        pytest.skip("not enough free GPU memory")
    x = ember.ones(n, dtype=ember.int8, device="cuda")
    x[n - 1] = 5
    y = x + x  # 64-bit contiguous map
    assert int(y[n - 1]) == 10 and int(y[0]) == 2
    del y
    assert int(x.sum()) == n + 4  # 64-bit reduction (int8 sums in int64)
    assert int(x[::2].sum()) == (n + 1) // 2 + 4  # 64-bit strided reduction (n - 1 is even)
    z = x[::-1].astype(ember.int16)  # 64-bit strided cast
    assert int(z[0]) == 5 and int(z[n - 1]) == 1
    assert int(ember.argmax(x)) == n - 1
    del x, z
    cuda.empty_cache()


def test_reductions_are_deterministic():
    a = np.random.default_rng(3).standard_normal((4096, 3000)).astype(np.float32)
    x = ember.asarray(a, device="cuda")
    for axis in (None, 0, 1):
        r1 = ember.asnumpy(x.sum(axis=axis))
        r2 = ember.asnumpy(x.sum(axis=axis))
        assert np.array_equal(r1, r2)
        np.testing.assert_allclose(r1, a.astype(np.float64).sum(axis=axis), rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("shape,axis", [((1 << 22,), None), ((3, 1 << 20), 1), ((1 << 20, 3), 0)])
def test_large_reductions_match_numpy(shape, axis):
    a = np.random.default_rng(1).standard_normal(shape)
    x = ember.asarray(a, device="cuda")
    np.testing.assert_allclose(ember.asnumpy(x.sum(axis=axis)), a.sum(axis=axis), rtol=1e-9)
    np.testing.assert_array_equal(ember.asnumpy(x.max(axis=axis)), a.max(axis=axis))
    np.testing.assert_array_equal(ember.asnumpy(ember.argmin(x, axis=axis)), a.argmin(axis=axis))


def test_many_dims_split_on_the_host():
    a = np.random.default_rng(2).standard_normal((2,) * 12)
    v = a.transpose(list(range(11, -1, -1)))[:, ::-1]
    x = ember.asarray(a, device="cuda").transpose(list(range(11, -1, -1)))[:, ::-1]
    np.testing.assert_array_equal(ember.asnumpy(x + 1), v + 1)
    np.testing.assert_allclose(
        ember.asnumpy(x.sum(axis=(0, 2, 4, 6, 8, 10))), v.sum(axis=(0, 2, 4, 6, 8, 10)), rtol=1e-12
    )


def test_reduction_over_more_dims_than_a_kernel_takes():
    # 18 dims of 2, every other one reduced: 9 kept and 9 reduced dims that cannot merge, more
    # than a reduce kernel's 8, so the input is first copied with the reduced dims innermost.
    a = np.random.default_rng(4).standard_normal((2,) * 18)
    x = ember.asarray(a, device="cuda")
    axes = tuple(range(0, 18, 2))
    np.testing.assert_allclose(ember.asnumpy(x.sum(axis=axes)), a.sum(axis=axes), rtol=1e-12)
    np.testing.assert_array_equal(ember.asnumpy(x.max(axis=axes)), a.max(axis=axes))
    v = a.reshape(2**9, 2**9)[:, ::-1].reshape((2,) * 18)
    y = ember.asarray(a, device="cuda").reshape(2**9, 2**9)[:, ::-1].reshape((2,) * 18)
    np.testing.assert_array_equal(ember.asnumpy(ember.argmax(y, axis=5)), v.argmax(axis=5))
