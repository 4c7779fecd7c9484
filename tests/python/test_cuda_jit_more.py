"""ember.cuda.jit beyond the first examples: vectorize/guvectorize, cuda.reduce, xoroshiro128p
(Numba's Monte Carlo pi), grid sync, dynamic and constant memory, more atomics and warp
functions, complex and float16, and Numba's memory API; on the CPU and on the GPU."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import cuda
from ember.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

pytestmark = pytest.mark.skipif(
    cuda.jit_cpu_compiler() is None, reason="the CPU mode needs a C++ compiler"
)


def arr(a, device):
    return ember.asarray(np.array(a), device=device)


def host(x):
    return ember.asnumpy(x)


# ---- vectorize, guvectorize, reduce -----------------------------------------------------------


@ember.vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
def rel_diff(x, y):
    return 2 * (x - y) / (x + y)


@ember.vectorize
def clipped(x, lo):
    return max(min(x, 1.0), lo)


def test_vectorize_broadcasts_like_a_ufunc(device):
    x = np.linspace(1, 2, 12, dtype=np.float32).reshape(3, 4)
    y = np.float32(1.5)
    got = rel_diff(arr(x, device), arr(y, device))
    assert got.dtype == ember.float32 and got.shape == (3, 4)
    np.testing.assert_allclose(host(got), 2 * (x - y) / (x + y), rtol=1e-6)
    got64 = rel_diff(arr(x.astype(np.float64), device), arr(np.ones(4), device))
    assert got64.dtype == ember.float64
    z = clipped(arr(np.linspace(-2, 2, 9), device), arr(-0.5, device))
    np.testing.assert_array_equal(host(z), np.clip(np.linspace(-2, 2, 9), -0.5, 1.0))


@ember.guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),()->(n)", target="cuda")
def add_scalar(row, c, out):
    for i in range(row.shape[0]):
        out[i] = row[i] + c[0]


def test_guvectorize(device):
    a = np.arange(12.0).reshape(3, 4)
    c = np.array([10.0, 20.0, 30.0])
    got = add_scalar(arr(a, device), arr(c, device))
    np.testing.assert_array_equal(host(got), a + c[:, None])


@cuda.reduce
def sum_reduce(a, b):
    return a + b


def test_cuda_reduce():
    a = np.arange(1, 10_001, dtype=np.float64)
    assert sum_reduce(ember.asarray(a, device="cuda" if cuda.is_available() else "cpu")) == a.sum()
    m = cuda.reduce(lambda_free_max)
    assert m(np.array([3, -7, 12, 5], np.int64), init=-(10**9)) == 12


@cuda.jit(device=True)
def lambda_free_max(a, b):
    return a if a > b else b


# ---- Monte Carlo pi with xoroshiro128p ----------------------------------------------------------


@cuda.jit
def compute_pi(rng_states, iterations, out):
    thread_id = cuda.grid(1)
    inside = 0
    for _ in range(iterations):
        x = xoroshiro128p_uniform_float32(rng_states, thread_id)
        y = xoroshiro128p_uniform_float32(rng_states, thread_id)
        if x**2 + y**2 <= 1.0:
            inside += 1
    out[thread_id] = 4.0 * inside / iterations


def test_monte_carlo_pi():
    threads, blocks = 64, 16
    states = create_xoroshiro128p_states(threads * blocks, seed=1)
    assert states.shape == (threads * blocks, 2) and states.dtype == ember.uint64
    s = host(states)
    assert len({tuple(r) for r in s.tolist()}) == threads * blocks  # distinct streams
    out = ember.zeros(threads * blocks, dtype=ember.float32, device=states.device)
    compute_pi[blocks, threads](states, 1000, out)
    assert abs(host(out).mean() - np.pi) < 0.02


# ---- grid sync, dynamic shared memory, constant memory -------------------------------------------


@cuda.jit
def laplace_steps(data0, data1, steps):
    i = cuda.grid(1)
    g = cuda.cg.this_grid()
    n = data0.shape[0]
    for step in range(steps):
        src = data0 if step % 2 == 0 else data1
        dst = data1 if step % 2 == 0 else data0
        if 0 < i < n - 1:
            dst[i] = 0.5 * src[i] + 0.25 * (src[i - 1] + src[i + 1])
        elif i == 0 or i == n - 1:
            dst[i] = src[i]
        g.sync()


def test_grid_sync_laplace(device):
    n = 256
    x = np.zeros(n)
    x[n // 2] = 1.0
    a, b = arr(x, device), arr(x, device)
    laplace_steps[4, 64](a, b, 10)
    want = x.copy()
    for _ in range(10):
        nxt = want.copy()
        nxt[1:-1] = 0.5 * want[1:-1] + 0.25 * (want[:-2] + want[2:])
        want = nxt
    np.testing.assert_allclose(host(a), want, rtol=1e-12)


@cuda.jit
def reverse_block(x):
    buf = cuda.shared.array(0, dtype=np.float32)
    t = cuda.threadIdx.x
    buf[t] = x[t]
    cuda.syncthreads()
    x[t] = buf[buf.shape[0] - 1 - t]


def test_dynamic_shared_memory(device):
    x = arr(np.arange(64, dtype=np.float32), device)
    reverse_block[1, 64, 0, 64 * 4](x)
    np.testing.assert_array_equal(host(x), np.arange(64, dtype=np.float32)[::-1])


COEFFS = np.array([0.5, 0.25, 0.125], np.float64)


@cuda.jit
def poly_const(x, out):
    c = cuda.const.array_like(COEFFS)
    i = cuda.grid(1)
    if i < x.size:
        out[i] = c[0] + c[1] * x[i] + c[2] * x[i] * x[i]


def test_const_array_like(device):
    x = np.linspace(0, 1, 7)
    out = arr(np.zeros(7), device)
    poly_const.forall(7)(arr(x, device), out)
    np.testing.assert_allclose(host(out), 0.5 + 0.25 * x + 0.125 * x * x, rtol=1e-15)


# ---- more atomics and warp functions ------------------------------------------------------------


@cuda.jit
def atomics(a):
    i = cuda.grid(1)
    cuda.atomic.sub(a, 0, 1)
    cuda.atomic.min(a, 1, i)
    cuda.atomic.or_(a, 2, 1 << (i % 8))
    cuda.atomic.inc(a, 3, 9)
    cuda.atomic.cas(a, 4, 0, i + 100)


def test_more_atomics(device):
    a = arr(np.array([1000, 1000, 0, 0, 0], np.uint32), device)
    atomics[2, 32](a)
    got = host(a)
    assert got[0] == 1000 - 64 and got[1] == 0 and got[2] == 0xFF
    assert got[3] == 64 % 10  # wraps to 0 after 9
    assert 100 <= got[4] < 164


@cuda.jit
def warp_ops(x, out):
    i = cuda.grid(1)
    v = x[i]
    out[i, 0] = cuda.shfl_xor_sync(0xFFFFFFFF, v, 1)
    out[i, 1] = cuda.ballot_sync(0xFFFFFFFF, v % 2 == 0)
    out[i, 2] = cuda.shfl_sync(0xFFFFFFFF, v, 0)
    out[i, 3] = cuda.any_sync(0xFFFFFFFF, v == 5)


def test_warp_functions(device):
    x = np.arange(64, dtype=np.int64)
    out = arr(np.zeros((64, 4), np.int64), device)
    warp_ops[1, 64](arr(x, device), out)
    got = host(out)
    np.testing.assert_array_equal(got[:, 0], x ^ 1)
    assert (got[:, 1] == 0x55555555).all()
    np.testing.assert_array_equal(got[:, 2], (x // 32) * 32)
    np.testing.assert_array_equal(got[:, 3], (x < 32).astype(np.int64))


# ---- complex and float16 ------------------------------------------------------------------------


@cuda.jit
def complex_ops(z, out):
    i = cuda.grid(1)
    if i < z.size:
        w = z[i] * (1 + 2j)
        out[i] = np.exp(w) + abs(z[i]) + w.conjugate() * z[i].real


def test_complex_kernels(device):
    z = (np.linspace(-1, 1, 9) + 1j * np.linspace(0, 1, 9)).astype(np.complex128)
    out = arr(np.zeros(9, np.complex128), device)
    complex_ops.forall(9)(arr(z, device), out)
    w = z * (1 + 2j)
    np.testing.assert_allclose(host(out), np.exp(w) + abs(z) + np.conj(w) * z.real, rtol=1e-13)


@cuda.jit
def half_axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def test_float16_arrays(device):
    x = np.linspace(-2, 2, 17).astype(np.float16)
    y = np.linspace(1, 3, 17).astype(np.float16)
    yd = arr(y, device)
    half_axpy.forall(17)(np.float16(0.5), arr(x, device), yd)
    want = (np.float32(0.5) * x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(host(yd), want)


# ---- Numba's memory API --------------------------------------------------------------------------


def test_memory_api():
    a = np.arange(6.0)
    d = cuda.to_device(a)
    assert isinstance(d, ember.ndarray)
    np.testing.assert_array_equal(d.copy_to_host(), a)
    buf = np.zeros(6)
    d.copy_to_host(buf)
    np.testing.assert_array_equal(buf, a)
    e = cuda.device_array((2, 3), dtype=np.float32)
    assert e.shape == (2, 3) and e.dtype == ember.float32
    assert cuda.device_array_like(a).shape == (6,)
    p = cuda.pinned_array(4, dtype=np.int32)
    assert p.shape == (4,) and p.device.type == "cpu"
    if cuda.is_available():
        s = cuda.stream()
        with s.auto_synchronize():
            pass
        ev = cuda.event()
        ev.record()
        ev.synchronize()


# ---- the GPU source of these kernels compiles (NVRTC runs without a GPU) -------------------------

_SIGS = [
    (compute_pi, "void(uint64[:, :], int64, float32[:])"),
    (laplace_steps, "void(float64[:], float64[:], int64)"),
    (reverse_block, "void(float32[:])"),
    (poly_const, "void(float64[:], float64[:])"),
    (atomics, "void(uint32[:])"),
    (warp_ops, "void(int64[:], int64[:, :])"),
    (complex_ops, "void(complex128[:], complex128[:])"),
    (half_axpy, "void(float16, float16[:], float16[:])"),
]


def _nvrtc_reason():
    try:
        ember._core._kernels.compile('extern "C" __global__ void k() {}', "probe", [], [], 90)
    except Exception as e:  # no NVRTC here
        return str(e).splitlines()[0]
    return None


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=f"no NVRTC: {_nvrtc_reason()}")
@pytest.mark.parametrize("kernel,sig", _SIGS, ids=[k.__name__ for k, _ in _SIGS])
def test_gpu_source_compiles_for_sm90(kernel, sig):
    from ember.cuda import _jit

    types, _ = _jit._parse_sig(sig)
    c = kernel._compile(tuple(types))
    ember._core._kernels.compile(_jit._gpu_source(c), c.name, ["-std=c++17"], [], 90)


def test_grid_sync_too_large_a_grid_is_refused_on_the_gpu():
    if not cuda.is_available():
        pytest.skip("needs a GPU: the CPU mode runs any grid")
    a = ember.zeros(1 << 24, device="cuda")
    with pytest.raises(ValueError, match="needs all its blocks on the device at once"):
        laplace_steps[(1 << 24) // 64, 64](a, a, 1)


def test_the_interpreter_runs_kernels_without_a_compiler(monkeypatch):
    # EMBER_JIT_CPU=interpret: what a machine without a C++ compiler gets.
    from test_cuda_jit import array_sum, fast_matmul, increment_by_one, use_device, warp_sum

    monkeypatch.setenv("EMBER_JIT_CPU", "interpret")
    monkeypatch.setenv("EMBER_JIT_TARGET", "cpu")  # NumPy arguments stay on the host here too
    a = np.arange(100.0)
    increment_by_one.forall(100)(a)
    np.testing.assert_array_equal(a, np.arange(100.0) + 1)
    x, y = np.random.default_rng(7).random((2, 32, 32)).astype(np.float32)
    c = np.zeros((32, 32), np.float32)
    on_cpu = [ember.asarray(v, device="cpu") for v in (x, y, c)]  # share x, y, c's memory
    fast_matmul[(2, 2), (16, 16)](*on_cpu)
    np.testing.assert_allclose(c, x @ y, rtol=1e-5)
    d = np.random.default_rng(8).random(600)
    part = np.zeros(3)
    array_sum[3, 256](d, part)
    np.testing.assert_allclose(part.sum(), d.sum())
    w = np.zeros(2, np.int32)
    warp_sum[1, 64](np.arange(64, dtype=np.int32), w)
    np.testing.assert_array_equal(w, np.arange(64).reshape(2, 32).sum(axis=1))
    out = np.zeros(5)
    use_device.forall(5)(np.linspace(-1, 1, 5), out)
    assert np.isfinite(out).all()
    bins = np.zeros(4, np.int32)
    atomics_hist = cuda.jit(histogram_py)
    atomics_hist.forall(1000)(np.arange(1000, dtype=np.int32), bins)
    np.testing.assert_array_equal(bins, np.bincount(np.arange(1000) % 4))


def histogram_py(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i] % bins.size, 1)
