"""ember.fuse (CuPy's cupy.fuse): fused results equal eager ember's, bitwise on the CPU (the same
scalar bodies, the same rounding between ops), over the whole elementwise op table and every
dtype, broadcasting, non-contiguous, 0-d and empty arrays, weak and strong scalars; the trace
cache; the eager fallbacks; errors. The reductions and the NVRTC checks: test_fuse_reduce.py."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _fuse_helpers import equal_results as _equal
from _fuse_helpers import supported_ops as _supported
from _fuse_helpers import values as _values
from _helpers import ALL_DTYPES


# int32, uint16 and uint32 are covered by the mixed-dtype tests below (each dtype here costs a
# host compilation of every op's body).
@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d not in ("int32", "uint16", "uint32")])
def test_every_op_table_row_fused_equals_eager(dtype, device):
    """One fused function with one output per op-table row the dtype supports."""
    good = _supported(dtype)
    x = _values(dtype).to(device)
    y = _values(dtype, seed=1).to(device)
    z = _values(dtype, seed=2).to(device)

    def fn(a, b, c):
        return tuple(getattr(ember, n)(*[a, b, c][:k]) for n, k in good)

    fused = ember.fuse(fn)(x, y, z)
    eager = fn(x, y, z)
    assert len(good) >= 40
    for (name, _), f, e in zip(good, fused, eager, strict=True):
        _equal(f, e, device), name


def _chain(a, b, c):
    return ember.sqrt(ember.abs(a * b + c)) - ember.exp(-ember.abs(a)) / (b * b + 1)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64"])
def test_chain_rounds_between_ops_like_eager(dtype, device):
    """Every intermediate is stored in its dtype (float16 rounds after each op), as eager."""
    x, y, z = (_values(dtype, seed=s).to(device) for s in range(3))
    _equal(ember.fuse(_chain)(x, y, z), _chain(x, y, z), device)


@pytest.mark.parametrize(
    "da,db",
    [
        ("int8", "uint8"),
        ("int8", "float16"),
        ("int16", "float16"),
        ("int32", "float32"),
        ("uint64", "int64"),
        ("bool", "int8"),
        ("bfloat16", "float16"),
        ("float32", "complex64"),
        ("int64", "complex64"),
        ("uint32", "bfloat16"),
        ("uint16", "int32"),
    ],
)
def test_mixed_dtype_promotion(da, db, device):
    def fn(a, b):
        return (a + b, a * b - 1, a < b, ember.where(a > b, a, b), ember.sin(a) + b)

    x, y = _values(da).to(device), _values(db, seed=3).to(device)
    for f, e in zip(ember.fuse(fn)(x, y), fn(x, y), strict=True):
        _equal(f, e, device)


@pytest.mark.parametrize("dtype", ["int8", "uint64", "float16", "float32"])
@pytest.mark.parametrize("scalar", [3, -2, 2.5, True, 1j, 300])
def test_python_scalars_are_weak(dtype, scalar, device):
    x = _values(dtype).to(device)

    def fn(a, s):
        return a * s + 1, a > s, a - s

    try:
        eager = fn(x, scalar)
    except (OverflowError, TypeError) as exc:
        with pytest.raises(type(exc)):
            ember.fuse(fn)(x, scalar)
        return
    for f, e in zip(ember.fuse(fn)(x, scalar), eager, strict=True):
        _equal(f, e, device)


def test_scalar_values_change_without_retrace(device):
    @ember.fuse
    def f(a, s):
        return a * s + s // 2

    x = _values("int16").to(device)
    for s in (3, -7, 100, 2**15 - 1):
        _equal(f(x, s), x * s + s // 2, device)
    assert f.trace_count == 1
    with pytest.raises(OverflowError):
        f(x, 2**20)  # eager's error: a Python int beyond int16
    _equal(f(x.astype("float32"), 1.5), x.astype("float32") * 1.5 + 1.5 // 2, device)
    assert f.trace_count == 2


def test_numpy_scalars_are_strong(device):
    def fn(a, s):
        return a + s, a * np.float64(2)

    x = _values("float32").to(device)
    s = np.int64(3)
    for f, e in zip(ember.fuse(fn)(x, s), fn(x, s), strict=True):
        _equal(f, e, device)
    assert ember.fuse(fn)(x, s)[0].dtype == ember.float64


@pytest.mark.parametrize("dtype", ["int8", "float16", "complex128"])
def test_pow_special_exponents(dtype, device):
    """x ** 2 is square and x ** 0.5 sqrt in eager ember (NumPy's fast paths): also fused,
    for a literal exponent and for a scalar argument whose value changes per call."""
    x = _values(dtype).to(device)
    if dtype[0] == "i":
        x = ember.abs(x) % 10
    lit = ember.fuse(lambda a: (a**2, a**0.5, a**3))
    for f, e in zip(lit(x), (x**2, x**0.5, x**3), strict=True):
        _equal(f, e, device)
    arg = ember.fuse(lambda a, p: a**p)
    for p in (2, 2.0, 0.5, 3, 1.5):
        try:
            e = x**p
        except (TypeError, ValueError):
            continue
        _equal(arg(x, p), e, device)


def test_negative_integer_power_raises_like_eager(device):
    x = ember.asarray(np.arange(5, dtype=np.int32)).to(device)
    f = ember.fuse(lambda a, p: a**p)
    with pytest.raises(ValueError):
        f(x, -1)
    _equal(f(x, 3), x**3, device)


@pytest.mark.parametrize(
    "sa,sb",
    [((3, 1), (4,)), ((2, 1, 4), (3, 1)), ((), (5,)), ((1,), (2, 3)), ((0, 3), (3,)), ((), ())],
)
def test_broadcasting(sa, sb, device):
    rng = np.random.default_rng(4)
    a = ember.asarray(rng.standard_normal(sa).astype(np.float32)).to(device)
    b = ember.asarray(rng.integers(-5, 5, sb).astype(np.int16)).to(device)

    def fn(x, y):
        return x * y + ember.maximum(x, y), (y > 0) & (x < 1)

    for f, e in zip(ember.fuse(fn)(a, b), fn(a, b), strict=True):
        assert f.shape == e.shape
        _equal(f, e, device)


def test_broadcast_error_is_eagers(device):
    a, b = ember.ones((3,), device=device), ember.ones((4,), device=device)
    with pytest.raises(ValueError):
        ember.fuse(lambda x, y: x + y)(a, b)


def test_non_contiguous_inputs(device):
    rng = np.random.default_rng(5)
    base = ember.asarray(rng.standard_normal((6, 8)).astype(np.float64)).to(device)
    a = base[::2, 1::3]  # strided
    b = base.T[:3, :3]  # transposed
    c = ember.asarray(rng.standard_normal((3, 1))).to(device)

    def fn(x, y, z):
        return ember.tanh(x) * y - z

    _equal(ember.fuse(fn)(a, b, c), fn(a, b, c), device)
    neg = base[::-1, ::-2]
    _equal(ember.fuse(lambda x: x * 2 + 1)(neg), neg * 2 + 1, device)


def test_large_arrays_split_over_threads(device):
    rng = np.random.default_rng(6)
    a = ember.asarray(rng.standard_normal((300, 701)).astype(np.float32)).to(device)
    b = ember.asarray(rng.standard_normal((701,)).astype(np.float32)).to(device)

    def fn(x, y):
        return x * y - x / 3

    _equal(ember.fuse(fn)(a, b), fn(a, b), device)
    t = a.T  # strided rows
    _equal(ember.fuse(fn)(t, 2.0), fn(t, 2.0), device)


def test_zero_d_and_empty(device):
    f = ember.fuse(lambda x, y: ember.log1p(ember.abs(x)) + y)
    z0 = ember.asarray(np.float32(1.5)).to(device)
    r = f(z0, 2)
    assert r.shape == () and r.dtype == ember.float32
    _equal(r, ember.log1p(ember.abs(z0)) + 2, device)
    e = ember.ones((0, 4), dtype="float16", device=device)
    r = f(e, 1.0)
    assert r.shape == (0, 4) and r.dtype == ember.float16


def test_casts_and_where(device):
    def fn(x, y):
        i = (x * 10).astype("int16")
        m = ember.where(i > 3, i, y.astype(ember.int8))
        return m.astype("float16") / 3, ember.where(x > 0, 1.5, x)

    x = _values("float64").to(device)
    y = _values("int32", seed=7).to(device)
    for f, e in zip(ember.fuse(fn)(x, y), fn(x, y), strict=True):
        _equal(f, e, device)


def test_operators_and_unary(device):
    def fn(a, b):
        return (-a, +a, abs(a), ~b, a // 3, a % 4, b << 2, b >> 1, b ^ 5, b | 1, b & 6,
                a != b, a <= b, a >= b, 2 - a, 7 // (b | 1), 3 ** (b & 3))  # fmt: skip

    a = _values("int32").to(device)
    b = _values("int32", seed=8).to(device)
    for f, e in zip(ember.fuse(fn)(a, b), fn(a, b), strict=True):
        _equal(f, e, device)


def test_numpy_ufuncs_and_clip(device):
    def fn(a, b):
        return np.arctan2(a, b), np.power(ember.abs(a), 0.3), ember.clip(a, -1, 2), a.clip(0)

    a = _values("float32").to(device)
    b = _values("float32", seed=9).to(device)
    for f, e in zip(ember.fuse(fn)(a, b), fn(a, b), strict=True):
        _equal(f, e, device)


def test_clip_with_scalar_bounds_changing_per_call(device):
    x = ember.asarray(np.arange(-5, 5, dtype=np.int8)).to(device)
    f = ember.fuse(lambda a, lo: ember.clip(a, lo, 3))
    for lo in (-1000, 2, -1):  # -1000: beyond int8, no bound (NumPy 2), as eager
        _equal(f(x, lo), ember.clip(x, lo, 3), device)
    with pytest.raises(OverflowError):
        f(x, 1000)
    with pytest.raises(TypeError):
        ember.fuse(lambda a: a + [1, 2])(x)


def test_scalar_arithmetic_is_pythons(device):
    """Arithmetic on scalar arguments alone runs in Python per call (weak results), as it
    does unfused."""

    def fn(a, s, t):
        return a * (s * t) + (s // 2)

    a = _values("float16").to(device)
    for s, t in ((3, 4), (5, 0.5), (7, 11)):
        _equal(ember.fuse(fn)(a, s, t), fn(a, s, t), device)


def test_trace_once_per_signature_and_new_sizes_do_not_retrace(device):
    calls = []

    @ember.fuse()
    def f(x, y):
        calls.append(1)
        return x * y + 1

    for n in (3, 10, 100, 7):
        x = ember.ones((n,), dtype="float32", device=device)
        f(x, x)
    assert f.trace_count == 1 and len(calls) == 1
    f(ember.ones((2, 3), device=device), ember.ones((3,), device=device))  # ndim changes
    f(ember.ones((4,), dtype="int8", device=device), 2)  # dtypes change
    assert f.trace_count == 3


def test_kernel_name_and_decorator_forms():
    @ember.fuse
    def bare(x):
        return x + 1

    @ember.fuse()
    def empty(x):
        return x + 1

    @ember.fuse(kernel_name="my_kernel")
    def named(x):
        return x + 1

    x = ember.ones((3,))
    for f in (bare, empty, named):
        assert ember.asnumpy(f(x)).tolist() == [2.0, 2.0, 2.0]
    assert named.kernel_name == "my_kernel" and bare.__name__ == "bare"
    assert "__global__ void my_kernel(" in named._cuda_source(x)
    assert "__global__ void bare(" in bare._cuda_source(x)
    with pytest.raises(TypeError, match="kernel_name"):
        ember.fuse(kernel_name=3)(lambda x: x)
    with pytest.raises(TypeError):
        ember.fuse(kernel_nme="a")


@pytest.mark.parametrize(
    "body,name",
    [
        (lambda x: ember.sort(x) + 1, "sort"),
        (lambda x: ember.cumsum(x), "cumsum"),
        (lambda x: ember.matmul(x, x), "matmul"),
        (lambda x: x[1:] + 1, "indexing"),
        (lambda x: x + 1 if x > 0 else x, "truth value"),
        (lambda x: ember.reshape(x, (-1,)), "reshape"),
    ],
)
def test_non_elementwise_ops_raise_type_error(body, name):
    before = (ember.sort, ember.add, ember.sum)
    f = ember.fuse(body)
    with pytest.raises(TypeError, match=name):
        f(ember.ones((4,)))
    # the ember namespace is restored after a failed trace
    assert (ember.sort, ember.add, ember.sum) == before
    assert ember.asnumpy(ember.sort(ember.asarray([3.0, 1.0]))).tolist() == [1.0, 3.0]


def test_in_place_ops_raise():
    def f(x, y):
        x += y
        return x

    with pytest.raises(TypeError, match="in-place"):
        ember.fuse(f)(ember.ones(3), ember.ones(3))


def test_eager_fallback_paths(device, monkeypatch):
    """Without a host compiler (or EMBER_FUSE_CPU=eager) the CPU runs the function eagerly;
    outputs that are not elementwise, keywords, autograd and unsupported arguments too."""
    from ember._fusion import _run
    from ember.cuda import _host

    x = _values("float32").to(device)

    def fn(a, b):
        return ember.cos(a) * b + 0.25

    eager = fn(x, x)
    monkeypatch.setenv("EMBER_FUSE_CPU", "eager")
    _equal(ember.fuse(fn)(x, x), eager, device)
    monkeypatch.delenv("EMBER_FUSE_CPU")
    monkeypatch.setattr(_host, "compiler", lambda: None)
    monkeypatch.setattr(_run, "_host_libs", {})
    _equal(ember.fuse(fn)(x, x), eager, device)
    monkeypatch.undo()
    _equal(ember.fuse(fn)(x, b=x), eager, device)  # keywords: eager
    assert ember.asnumpy(ember.fuse(lambda a: a)(x)).shape == (23,)  # identity: eager
    assert ember.fuse(lambda a, b: a + b)(2, 3) == 5  # scalars only: eager (Python)
    w = ember.ones((3,), device=device).requires_grad_()
    r = ember.fuse(lambda a: (a * a).sum())(w)
    r.backward()
    assert ember.asnumpy(w.grad).tolist() == [2.0, 2.0, 2.0]


def test_nested_fused_functions_inline(device):
    inner = ember.fuse(lambda a: a * 2 + 1)
    outer = ember.fuse(lambda a, b: inner(a) - b)
    x = _values("float64").to(device)
    _equal(outer(x, x), (x * 2 + 1) - x, device)


@pytest.mark.parametrize("dtype", ["int8", "uint32", "int64", "float16", "float64", "complex64"])
def test_against_numpy(dtype, device):
    def fn(a, b):
        return a * b + a, ember.maximum(a, b)

    na = np.arange(1, 13, dtype=dtype).reshape(3, 4)
    nb = np.arange(4, dtype=dtype)
    f = ember.fuse(fn)(ember.asarray(na).to(device), ember.asarray(nb).to(device))
    np.testing.assert_array_equal(ember.asnumpy(f[0]), na * nb + na)
    np.testing.assert_array_equal(ember.asnumpy(f[1]), np.maximum(na, nb))


def test_repeated_calls_relaunch_with_new_data_and_layouts(device):
    """Calls like an earlier one take the fast path (on the GPU: the kernel relaunched with the
    stored geometry): new data, new scalar values, other strides and shapes all give eager's
    results, and a large full reduction (two passes) too."""
    f = ember.fuse()(lambda v, s: ember.maximum(v * s + 1, 0).sum(axis=1))
    g = ember.fuse()(lambda a, b: a * b - a / 2)
    h = ember.fuse()(lambda v: (v * v).sum())
    rng = np.random.default_rng(3)
    for i in range(4):
        x = rng.standard_normal((5 + i % 2, 300)).astype(np.float32)
        xe = ember.asarray(x, device=device)
        for s in (2.0, -1.5):
            want = ember.maximum(xe * s + 1, 0).sum(axis=1)  # summed in another order
            np.testing.assert_allclose(ember.asnumpy(f(xe, s)), ember.asnumpy(want), rtol=1e-5)
        a = ember.asarray(rng.standard_normal((40, 30)), device=device)
        b = a[:, ::-1] if i % 2 else a[::-1]
        np.testing.assert_array_equal(ember.asnumpy(g(a, b)), ember.asnumpy(a * b - a / 2))
    big = ember.asarray(rng.standard_normal(1 << 20).astype(np.float32), device=device)
    for _ in range(2):
        np.testing.assert_allclose(float(h(big)), float((big * big).sum()), rtol=1e-5)
