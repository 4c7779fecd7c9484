"""ember.cuda.jit: Numba's documentation examples (written here by hand), run on the CPU (the
generated C++ compiled for the host, GPU threads as fibers) and on the GPU, against NumPy."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from conftest import cuda_unavailable_reason
from ember import cuda

needs_cxx = pytest.mark.skipif(
    cuda.jit_cpu_compiler() is None, reason="the CPU mode needs a C++ compiler"
)
pytestmark = needs_cxx


def arr(a, device):
    return ember.asarray(np.array(a), device=device)


def host(x):
    return ember.asnumpy(x)


# ---- increment by one (Numba's first example) ------------------------------------------------


@cuda.jit
def increment_by_one(an_array):
    pos = cuda.grid(1)
    if pos < an_array.size:
        an_array[pos] += 1


def test_increment_by_one(device):
    a = np.arange(1000, dtype=np.float32)
    x = arr(a, device)
    threadsperblock = 32
    blockspergrid = (a.size + (threadsperblock - 1)) // threadsperblock
    increment_by_one[blockspergrid, threadsperblock](x)
    np.testing.assert_array_equal(host(x), a + 1)


def test_numpy_arrays_are_used_in_place_on_the_cpu():
    a = np.arange(10, dtype=np.int64)
    if cuda.is_available():
        with pytest.warns(cuda.NumbaPerformanceWarning):
            increment_by_one[1, 32](a)
    else:
        increment_by_one[1, 32](a)
    np.testing.assert_array_equal(a, np.arange(10) + 1)


# ---- 2-D with grid(2) ------------------------------------------------------------------------


@cuda.jit
def increment_a_2D_array(an_array):  # noqa: N802
    x, y = cuda.grid(2)
    if x < an_array.shape[0] and y < an_array.shape[1]:
        an_array[x, y] += 1


def test_grid2(device):
    a = np.arange(24 * 20, dtype=np.float64).reshape(24, 20)
    x = arr(a, device)
    increment_a_2D_array[(3, 3), (8, 8)](x)
    np.testing.assert_array_equal(host(x), a + 1)


def test_strided_views(device):
    a = np.arange(30 * 40, dtype=np.float32).reshape(30, 40)
    x = arr(a, device)
    v = x[::2, 1::3]
    increment_a_2D_array[(2, 2), (16, 16)](v)
    want = a.copy()
    want[::2, 1::3] += 1
    np.testing.assert_array_equal(host(x), want)


# ---- vector add with forall ----------------------------------------------------------------


@cuda.jit
def f_add(a, b, c):
    tid = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    size = len(c)
    if tid < size:
        c[tid] = a[tid] + b[tid]


def test_vector_add_forall(device):
    n = 100_000
    a = np.random.default_rng(0).random(n).astype(np.float32)
    b = np.random.default_rng(1).random(n).astype(np.float32)
    c = arr(np.zeros(n, np.float32), device)
    f_add.forall(n)(arr(a, device), arr(b, device), c)
    np.testing.assert_array_equal(host(c), a + b)


# ---- shared-memory tiled matmul --------------------------------------------------------------

TPB = 16


@cuda.jit
def fast_matmul(A, B, C):  # noqa: N803
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)  # noqa: N806
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)  # noqa: N806
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = np.float32(0.0)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def test_tiled_matmul(device):
    rng = np.random.default_rng(2)
    n = 64
    a = rng.random((n, n)).astype(np.float32)
    b = rng.random((n, n)).astype(np.float32)
    c = arr(np.zeros((n, n), np.float32), device)
    grid = (n + TPB - 1) // TPB
    fast_matmul[(grid, grid), (TPB, TPB)](arr(a, device), arr(b, device), c)
    np.testing.assert_allclose(host(c), a @ b, rtol=1e-5)


# ---- atomics -----------------------------------------------------------------------------------


@cuda.jit
def max_example(result, values):
    tid = cuda.threadIdx.x
    bid = cuda.blockIdx.x
    bdim = cuda.blockDim.x
    i = (bid * bdim) + tid
    if i < values.size:
        cuda.atomic.max(result, 0, values[i])


def test_atomic_max(device):
    v = np.random.default_rng(3).random(10_000) * 100
    res = arr(np.zeros(1), device)
    max_example[(10_000 + 255) // 256, 256](res, arr(v, device))
    assert host(res)[0] == v.max()


@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i] % bins.size, 1)


def test_atomic_add_histogram(device):
    x = np.random.default_rng(4).integers(0, 1000, 50_000).astype(np.int32)
    bins = arr(np.zeros(16, np.int32), device)
    histogram.forall(x.size)(arr(x, device), bins)
    np.testing.assert_array_equal(host(bins), np.bincount(x % 16, minlength=16))


# ---- shared-memory reduction, block max --------------------------------------------------------


@cuda.jit
def array_sum(data, partial):
    tid = cuda.threadIdx.x
    size = len(data)
    shr = cuda.shared.array(256, np.float64)
    i = cuda.grid(1)
    shr[tid] = data[i] if i < size else 0.0
    cuda.syncthreads()
    s = 128
    while s > 0:
        if tid < s:
            shr[tid] += shr[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = shr[0]


def test_shared_memory_sum(device):
    d = np.random.default_rng(5).random(5000)
    blocks = (d.size + 255) // 256
    part = arr(np.zeros(blocks), device)
    array_sum[blocks, 256](arr(d, device), part)
    np.testing.assert_allclose(host(part).sum(), d.sum(), rtol=1e-12)


@cuda.jit
def block_max(x, out):
    m = cuda.syncthreads_count(x[cuda.grid(1)] > 0.5)
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = m


def test_syncthreads_count(device):
    x = np.random.default_rng(6).random(512)
    out = arr(np.zeros(4, np.int32), device)
    block_max[4, 128](arr(x, device), out)
    np.testing.assert_array_equal(host(out), (x.reshape(4, 128) > 0.5).sum(axis=1))


# ---- warp functions -----------------------------------------------------------------------------


@cuda.jit
def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


def test_shfl_down_warp_sum(device):
    x = np.arange(256, dtype=np.int32)
    out = arr(np.zeros(8, np.int32), device)
    warp_sum[2, 128](arr(x, device), out)
    np.testing.assert_array_equal(host(out), x.reshape(8, 32).sum(axis=1))


# ---- ufuncs and math in kernels -----------------------------------------------------------------


@cuda.jit
def ufuncs(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = np.sin(x[i])
        out[i, 1] = math.exp(x[i]) + math.sqrt(abs(x[i]))
        out[i, 2] = np.arctan2(x[i], 2.0)
        out[i, 3] = max(x[i], 0.25) - min(x[i], -0.5)
        out[i, 4] = np.floor(x[i] * 3) // 2 + x[i] % 0.75
        out[i, 5] = x[i] ** 2 if x[i] > 0 else -x[i]


def test_ufuncs_match_ember(device):
    x = np.linspace(-3, 3, 101, dtype=np.float32)
    out = arr(np.zeros((101, 6), np.float32), device)
    ufuncs.forall(101)(arr(x, device), out)
    got = host(out)
    ex = arr(x, device)
    # np.sin in a kernel is ember.sin's scalar body: the same bits.
    np.testing.assert_array_equal(got[:, 0], host(ember.sin(ex)))
    np.testing.assert_allclose(got[:, 1], np.exp(x) + np.sqrt(np.abs(x)), rtol=1e-6)
    np.testing.assert_allclose(got[:, 2], np.arctan2(x, np.float32(2)), rtol=1e-6)
    np.testing.assert_array_equal(got[:, 3], np.maximum(x, 0.25) - np.minimum(x, -0.5))
    np.testing.assert_allclose(
        got[:, 4], np.floor(x * 3) // 2 + x % np.float32(0.75), rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(got[:, 5], np.where(x > 0, x**2, -x), rtol=1e-6)


# ---- device functions, local arrays, loops, tuples ---------------------------------------------


@cuda.jit(device=True)
def clamp(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@cuda.jit(device=True)
def poly(x):
    acc = 0.0
    for k in range(4):
        acc = acc * x + (k + 1)
    return acc


@cuda.jit
def use_device(x, out):
    i = cuda.grid(1)
    if i >= x.shape[0]:
        return
    loc = cuda.local.array(4, np.float64)
    for k in range(4):
        loc[k] = poly(x[i] + k)
    total = 0.0
    k = 0
    while True:
        if k == 4:
            break
        total += loc[k]
        k += 1
    out[i] = clamp(total, -100.0, 100.0)


def test_device_functions_and_control_flow(device):
    x = np.linspace(-2, 2, 33)
    out = arr(np.zeros(33), device)
    use_device.forall(33)(arr(x, device), out)

    def p(v):
        acc = 0.0
        for k in range(4):
            acc = acc * v + (k + 1)
        return acc

    want = np.clip(sum(p(x + k) for k in range(4)), -100, 100)
    np.testing.assert_allclose(host(out), want, rtol=1e-12)


@cuda.jit("void(float64[:, :], float64[:], int64)")
def row_sums(a, out, skip):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]
        s = 0.0
        for j in range(0, row.shape[0], skip):
            s += row[j]
        out[i] = s


def test_eager_signature_row_views(device):
    a = np.arange(40.0).reshape(8, 5)
    out = arr(np.zeros(8), device)
    assert len(row_sums.signatures) == 1
    row_sums.forall(8)(arr(a, device), out, 2)
    np.testing.assert_array_equal(host(out), a[:, ::2].sum(axis=1))


@cuda.jit
def integer_semantics(a, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        out[i, 0] = x // 3
        out[i, 1] = x % 3
        out[i, 2] = -x // 2
        out[i, 3] = x << 2
        out[i, 4] = (x * 1000003) & 0xFF


def test_integer_semantics_are_numpys(device):
    a = np.arange(-20, 20, dtype=np.int32)
    out = arr(np.zeros((40, 5), np.int32), device)
    integer_semantics.forall(40)(arr(a, device), out)
    want = np.stack([a // 3, a % 3, -a // 2, a << 2, (a * np.int32(1000003)) & 0xFF], axis=1)
    np.testing.assert_array_equal(host(out), want)


# ---- errors --------------------------------------------------------------------------------------


def test_unsupported_construct_names_file_and_line():
    @cuda.jit
    def bad(a):
        a[0] = [k for k in range(3)][0]

    with pytest.raises(cuda.TypingError, match=r"test_cuda_jit\.py:\d+: in bad: .*ListComp"):
        bad[1, 1](np.zeros(1))


def test_type_errors_name_the_construct():
    @cuda.jit
    def add_arrays(a, b):
        a[0] = a + b

    with pytest.raises(cuda.TypingError, match="array arithmetic is not supported"):
        add_arrays[1, 1](np.zeros(2), np.zeros(2))


def test_bad_launches_raise_before_launching():
    with pytest.raises(ValueError, match="launch configuration was not specified"):
        increment_by_one(np.zeros(3))
    with pytest.raises(TypeError, match="takes 1 argument, got 2"):
        increment_by_one[1, 1](np.zeros(3), 1)
    with pytest.raises(ValueError, match="blockdim must be positive"):
        increment_by_one[1, 0](np.zeros(3))
    with pytest.raises(ValueError, match="griddim must be an int or a tuple"):
        increment_by_one["a", 1](np.zeros(3))
    with pytest.raises(TypeError, match="argument 0 of type str is not supported"):
        increment_by_one[1, 1]("x")
    with pytest.raises(TypeError, match="device function"):
        clamp(1, 2, 3)


def test_intrinsics_outside_kernels_raise():
    with pytest.raises(RuntimeError, match="only be used inside a kernel"):
        cuda.grid(1)
    with pytest.raises(RuntimeError, match="can only be used inside a kernel"):
        cuda.threadIdx.x  # noqa: B018


@pytest.mark.skipif(cuda_unavailable_reason() is None, reason="checks the CPU-only machine")
def test_cpu_mode_is_used_without_a_gpu():
    a = np.zeros(5)
    increment_by_one[1, 8](a)
    assert a.tolist() == [1.0] * 5


def test_large_elementwise_kernel_runs_fast_on_the_cpu():
    import time

    n = 1 << 20
    x = ember.arange(n, dtype=ember.float32, device="cpu")
    increment_by_one.forall(n)(x)  # compiles (cached on disk afterwards)
    t0 = time.perf_counter()
    increment_by_one.forall(n)(x)
    dt = time.perf_counter() - t0
    assert host(x)[-1] == n + 1
    assert dt < 1.0, f"2^20 elements took {dt:.2f} s on the CPU"


# ---- the GPU source of every kernel above compiles (NVRTC runs without a GPU) --------------------

_SIGS = [
    (increment_by_one, "void(float32[:])"),
    (increment_a_2D_array, "void(float64[:, :])"),
    (f_add, "void(float32[:], float32[:], float32[:])"),
    (fast_matmul, "void(float32[:, :], float32[:, :], float32[:, :])"),
    (max_example, "void(float64[:], float64[:])"),
    (histogram, "void(int32[:], int32[:])"),
    (array_sum, "void(float64[:], float64[:])"),
    (block_max, "void(float64[:], int32[:])"),
    (warp_sum, "void(int32[:], int32[:])"),
    (ufuncs, "void(float32[:], float32[:, :])"),
    (use_device, "void(float64[:], float64[:])"),
    (row_sums, "void(float64[:, :], float64[:], int64)"),
    (integer_semantics, "void(int32[:], int32[:, :])"),
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


def _kernel_of(src):
    """A kernel from source text (as a file's function: the compiler reads its source back)."""
    ns = {"cuda": cuda, "np": np, "math": math}
    code = compile(src, "<errors>", "exec")
    exec(code, ns)
    f = ns["k"]
    f.__ember_source__ = (src, "<errors>")
    return cuda.jit(f)


@pytest.mark.parametrize(
    "body,message",
    [
        ("    while a[0] < 1:\n        a[0] += 1\n    else:\n        a[0] = 0\n", "while ... else"),
        ("    for x in [1, 2]:\n        a[0] += x\n", "for loop over anything but range"),
        ("    f = lambda x: x\n", "the expression 'Lambda'"),
        ("    try:\n        a[0] = 1\n    except Exception:\n        pass\n", "statement 'Try'"),
        ("    with open('x'):\n        pass\n", "statement 'With'"),
        ("    a[0] = len('abc')\n", "the constant 'abc'"),
        ("    a[0] = sorted(a)\n", "calling"),
        ("    return 1\n", "a kernel cannot return a value"),
        ("    a[0] = undefined_name\n", "name 'undefined_name' is not defined"),
        ("    a[1.5] = 0\n", "array indices must be integers"),
        ("    a[0, 0] = 0\n", "too many indices"),
        ("    a[0] = a.foo\n", "no attribute 'foo'"),
        ("    cuda.atomic.and_(a, 0, 1)\n", "atomic.and_ needs an integer array"),
        ("    x = 1\n    x = a\n", "variable 'x'"),
        ("    a[0] = cuda.grid(4)\n", "takes 1, 2 or 3"),
        ("    s = cuda.shared.array(a.size, np.float32)\n", "shape must be a constant"),
    ],
)
def test_each_unsupported_construct_is_named(body, message):
    k = _kernel_of("def k(a):\n" + body)
    with pytest.raises(cuda.TypingError, match=re_escape(message)) as e:
        k[1, 1](np.zeros(4))
    assert "<errors>:" in str(e.value) and "in k:" in str(e.value)


def re_escape(s):
    import re

    return re.escape(s)


@cuda.jit(device=True)
def recurse(n):
    return recurse(n - 1) if n > 0 else 0


def test_recursion_and_device_argument_counts():
    @cuda.jit
    def uses_recursion(a):
        a[0] = recurse(3)

    with pytest.raises(cuda.TypingError, match="recursive device functions"):
        uses_recursion[1, 1](np.zeros(1))

    @cuda.jit
    def wrong_count(a):
        a[0] = clamp(1.0, 2.0)

    with pytest.raises(cuda.TypingError, match="takes 3 arguments, got 2"):
        wrong_count[1, 1](np.zeros(1))


def test_dump_source_shows_the_generated_code(capfd, monkeypatch):
    monkeypatch.setenv("EMBER_DUMP_SOURCE", "1")

    @cuda.jit
    def dumped(a):
        a[0] = 42

    dumped[1, 1](ember.zeros(1, device="cpu"))
    err = capfd.readouterr().err
    assert "--- ember: generated source of ej_dumped" in err and "ej_dumped_body" in err
