"""ember.fuse with a final reduction (sum, prod, max, min, mean, any, all; axis, keepdims) fused
into the elementwise kernel, against eager ember and NumPy; and the CUDA sources of fused
functions compiled by NVRTC for sm_90 (NVRTC runs without a GPU)."""

from __future__ import annotations

import ember
import numpy as np
import pytest

REDUCTIONS = ["sum", "prod", "max", "min", "mean", "any", "all"]


def _data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return ember.asarray(rng.integers(0, 2, shape).astype(bool))
    if dtype[0] in "iu":
        return ember.asarray(rng.integers(0, 4, shape).astype(dtype))
    v = rng.uniform(0.5, 1.5, shape)
    if dtype.startswith("complex"):
        v = v + 0.25j * rng.uniform(-1, 1, shape)
    if dtype == "bfloat16":
        return ember.asarray(v).astype("bfloat16")
    return ember.asarray(v.astype(dtype))


def _check(fused, eager, exact):
    assert fused.dtype == eager.dtype and fused.shape == eager.shape
    f, e = ember.asnumpy(fused), ember.asnumpy(eager)
    if exact or f.dtype.kind in "biu":
        np.testing.assert_array_equal(f, e)
    else:
        # Float sums and products fold in another order than eager's kernels.
        wide = np.complex128 if f.dtype.kind == "c" else np.float64
        tol = 1e-2 if f.dtype.itemsize <= 2 or f.dtype == np.dtype("complex64") else 1e-5
        tol = 1e-12 if f.dtype in (np.float64, np.complex128) else tol
        np.testing.assert_allclose(f.astype(wide), e.astype(wide), rtol=tol, atol=tol)


_FUSED = {}


def _fused(name):
    """One fused function per reduction: a * b + 1 (or a > b for any/all), then the reduction."""
    if name not in _FUSED:

        def fn(a, b, axis, keepdims):
            v = (a > b) if name in ("any", "all") else a * b + 1
            return getattr(v, name)(axis=axis, keepdims=keepdims)

        _FUSED[name] = fn
    return _FUSED[name]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "float16", "float32"])
def test_reductions_over_dtypes(name, dtype, device):
    a = _data(dtype, (3, 5)).to(device)
    b = _data(dtype, (5,), seed=1).to(device)
    fn = _fused(name)
    for axis, keepdims in ((None, False), (1, True)):
        f = ember.fuse(lambda x, y, fn=fn, axis=axis, k=keepdims: fn(x, y, axis, k))
        try:
            e = fn(a, b, axis, keepdims)
        except TypeError as exc:
            with pytest.raises(type(exc)):
                f(a, b)
            continue
        exact = name in ("max", "min", "any", "all") or dtype in ("bool",) or dtype[0] in "iu"
        _check(f(a, b), e, exact and name != "mean")


@pytest.mark.parametrize("name", ["sum", "max", "mean", "prod"])
@pytest.mark.parametrize("dtype", ["float64", "complex128", "bfloat16"])
def test_float_and_complex_reductions(name, dtype, device):
    a = _data(dtype, (4, 3, 5)).to(device)
    if name == "max" and dtype.startswith("complex"):
        a = ember.real(a)
    f = ember.fuse(lambda x: ember.sqrt(x * x + 1).__getattribute__(name)(axis=(0, 2)))
    e = ember.sqrt(a * a + 1).__getattribute__(name)(axis=(0, 2))
    _check(f(a), e, False)


@pytest.mark.parametrize(
    "axis,keepdims",
    [
        (None, False),
        (None, True),
        (0, False),
        (-1, True),
        ((0, 2), False),
        ((1, 2), True),
        (2, False),
    ],
)
def test_axes_and_keepdims_against_numpy(axis, keepdims, device):
    rng = np.random.default_rng(3)
    na = rng.integers(-5, 5, (3, 4, 5)).astype(np.int32)
    nb = rng.integers(-5, 5, (4, 1)).astype(np.int32)
    a, b = ember.asarray(na).to(device), ember.asarray(nb).to(device)
    f = ember.fuse(lambda x, y: ember.sum(x * y - 2, axis=axis, keepdims=keepdims))
    r = f(a, b)
    np.testing.assert_array_equal(
        ember.asnumpy(r), np.sum(na * nb - 2, axis=axis, keepdims=keepdims)
    )
    assert r.dtype == ember.int64
    g = ember.fuse(lambda x: (x > 0).any(axis=axis, keepdims=keepdims))
    np.testing.assert_array_equal(ember.asnumpy(g(a)), np.any(na > 0, axis=axis, keepdims=keepdims))


def test_reduction_of_non_contiguous_and_broadcast(device):
    rng = np.random.default_rng(4)
    base = ember.asarray(rng.standard_normal((6, 10))).to(device)
    x = base[::2, ::3].T  # (4, 3), strided and transposed
    y = ember.asarray(rng.standard_normal((3,))).to(device)
    f = ember.fuse(lambda a, b: ember.max(ember.abs(a - b), axis=0))
    _check(f(x, y), ember.max(ember.abs(x - y), axis=0), True)
    g = ember.fuse(lambda a, b: (a * b).sum())
    _check(g(x, y), (x * y).sum(), False)


@pytest.mark.parametrize(
    "shape,axis",
    [((6, 7, 9, 64), (0, 1, 2)), ((3000, 40), 0), ((200000, 9), 0), ((5, 3, 50), (0, 1))],
)
@pytest.mark.parametrize("name", ["sum", "max", "mean"])
def test_reductions_keeping_the_innermost_dimension(shape, axis, name, device):
    """Outputs adjacent in memory (a channels_last batch norm's statistics, sum(axis=0)): the
    GPU's column kernel (coalesced, partials folded in a fixed order), small and split slices."""
    a, b = (_data("float32", shape, seed).to(device) for seed in (1, 2))
    f = ember.fuse()(lambda x, y: _fused(name)(x, y, axis, False))
    _check(f(a, b), _fused(name)(a, b, axis, False), name == "max")
    h = ember.fuse()(lambda x, m: ((x.astype("float32") - m) ** 2).sum(axis=axis))
    x, m = a.astype("float16"), b.mean(axis=axis)
    xn, mn = ember.asnumpy(x).astype(np.float64), ember.asnumpy(m).astype(np.float64)
    want = ((xn - mn) ** 2).sum(axis=axis)  # float32 sums of 200,000 terms: 1e-4
    np.testing.assert_allclose(ember.asnumpy(h(x, m)), want, rtol=1e-4)
    np.testing.assert_array_equal(ember.asnumpy(h(x, m)), ember.asnumpy(h(x, m)))  # the same twice


def test_reduction_of_an_argument_and_of_scalars(device):
    x = _data("float32", (7, 3)).to(device)
    _check(ember.fuse(lambda a: a.sum(axis=0))(x), x.sum(axis=0), False)
    f = ember.fuse(lambda a, s: ember.mean(a * s, axis=1))
    _check(f(x, 2.5), ember.mean(x * 2.5, axis=1), False)
    assert f.trace_count == 1


def test_large_full_reduction_uses_threads_and_stays_accurate(device):
    n = 300_001
    x = ember.asarray(np.full(n, 0.1, dtype=np.float32)).to(device)
    r = ember.fuse(lambda a: (a * 1.0).sum())(x)
    assert abs(float(ember.asnumpy(r)) - 0.1 * n) / (0.1 * n) < 1e-5
    i = ember.asarray(np.arange(n, dtype=np.int32)).to(device)
    assert int(ember.asnumpy(ember.fuse(lambda a: (a % 7).sum())(i))) == int(
        np.sum(np.arange(n) % 7)
    )


def test_empty_reductions(device):
    e = ember.ones((0, 3), dtype="float32", device=device)
    s = ember.fuse(lambda a: (a + 1).sum(axis=0))(e)
    np.testing.assert_array_equal(ember.asnumpy(s), np.zeros(3, np.float32))
    p = ember.fuse(lambda a: (a + 1).prod())(e)
    assert float(ember.asnumpy(p)) == 1.0
    assert ember.fuse(lambda a: (a > 0).all())(e).dtype == ember.bool
    with pytest.raises(ValueError):
        ember.fuse(lambda a: (a + 1).max(axis=0))(e)  # no identity: eager's error
    z = ember.fuse(lambda a: (a + 1).max(axis=1))(e)
    assert z.shape == (0,)


def test_epilogue_after_the_reduction(device):
    """Elementwise ops of the reduced value and scalars run in the same kernel."""
    x = _data("float32", (3, 4)).to(device)
    i = _data("int16", (3, 4)).to(device)

    def l2(a):
        return ember.sqrt((a * a).sum(axis=1))

    def g(a, s):
        return (a.sum(axis=0, keepdims=True) * s + 1).astype("float16")

    def h(a):
        return ember.where(a.max() > 2, (a * 3).min(axis=0), -1)

    _check(ember.fuse(l2)(x), l2(x), False)
    assert [n.op for n in ember.fuse(l2)._plan(x).post] == ["sqrt"]  # fused, not eager
    _check(ember.fuse(g)(x, 2.5), g(x, 2.5), False)
    _check(ember.fuse(g)(i, 3), g(i, 3), True)
    _check(ember.fuse(h)(i), h(i), True)  # two reductions: eagerly
    f = ember.fuse(lambda a: ember.mean(a, axis=0) - 0.5)
    _check(f(x), ember.mean(x, axis=0) - 0.5, False)


def test_reduction_not_final_runs_eagerly(device):
    x = _data("float32", (3, 4)).to(device)

    def f2(a):
        return a.sum(axis=0) + a.max(axis=0)

    _check(ember.fuse(f2)(x), f2(x), True)

    def g(a):
        return a.sum(), a + 1

    r = ember.fuse(g)(x)
    _check(r[0], x.sum(), True)


def test_reduction_keywords_errors():
    x = ember.ones((3,))
    with pytest.raises(TypeError, match="dtype"):
        ember.fuse(lambda a: (a + 1).sum(dtype="float64"))(x)
    with pytest.raises(ember.AxisError if hasattr(ember, "AxisError") else Exception):
        ember.fuse(lambda a: (a + 1).sum(axis=3))(x)


# ---- the CUDA sources compile (NVRTC, sm_90) -----------------------------------------------------


def _nvrtc_reason():
    try:
        ember._core._kernels.compile('extern "C" __global__ void k() {}', "probe", [], [], 90)
    except Exception as e:  # no NVRTC here
        return str(e).splitlines()[0]
    return None


def _compile(src, name):
    from ember._fusion._run import OPTIONS

    ember._core._kernels.compile(src, name, list(OPTIONS), [], 90)


def _all_ops(x, y, z):
    out = []
    for name, arity in ember._core.elementwise_ops():
        try:
            out.append(getattr(ember, name)(*[x, y, z][:arity]))
        except (TypeError, ValueError):
            pass
    return tuple(out)


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=f"no NVRTC: {_nvrtc_reason()}")
@pytest.mark.parametrize("dtype", ["bool", "uint64", "bfloat16", "float64"])
def test_cuda_source_of_every_op_compiles_for_sm90(dtype):
    x = ember.ones((4,), dtype=dtype)
    f = ember.fuse(_all_ops, kernel_name=f"all_ops_{dtype}")
    for nd in (0, 3) if dtype == "float64" else (3,):
        src = f._cuda_source(x, x, x, nd=nd)
        assert "ember::ops::op_add::apply" in src and "ember/ops/scalar.hpp" in src
        _compile(src, f"all_ops_{dtype}")


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=f"no NVRTC: {_nvrtc_reason()}")
def test_cuda_sources_compile_for_sm90():
    x16 = ember.ones((2, 3), dtype="float16")
    c64 = ember.ones((3,), dtype="complex64")
    i32 = ember.ones((3,), dtype="int32")
    cases = [
        (lambda a, b, s: ember.where(a > s, a * b, -b).astype("bfloat16"), (x16, x16, 1.5)),
        (lambda a, b, p: ember.exp(a) * b**p + ember.conj(a), (c64, c64, 2.0)),
        (lambda a, s: (a // s, a % 3, a**2, a << 1), (i32, 3)),
        (lambda a, p: a**p, (ember.ones((3,), dtype="int8"), 3)),  # selector: no int sqrt
        (lambda a, b: (a * b + 1).sum(axis=1), (x16, x16)),
        (lambda a: ember.mean(a * a, axis=0, keepdims=True), (c64,)),
        (lambda a: (a > 2).any(), (i32,)),
        (lambda a: ember.max(a - 1, axis=1), (x16,)),
        (lambda a, s: (a * s).prod(), (i32, np.int16(3))),
        (lambda a, s: ember.sqrt((a * a).sum(axis=0)) * s, (x16, 2.0)),
    ]
    for k, (fn, args) in enumerate(cases):
        f = ember.fuse(fn, kernel_name=f"case_{k}")
        for nd in (2,) if args[0] is c64 else (0, 1, 2):
            _compile(f._cuda_source(*args, nd=nd), f"case_{k}")
            if nd:
                _compile(f._cuda_source(*args, nd=nd, i32=True), f"case_{k}")
