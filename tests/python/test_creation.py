"""Array creation: asarray and the creation functions, against NumPy."""

from __future__ import annotations

import array

import ember
import ml_dtypes
import numpy as np
import pytest
from _helpers import (
    ALL_DTYPES,
    NUMPY_DTYPES,
    assert_close,
    builtin_exception,
    dtype_name,
    em,
    em_dtype,
    near,
    np_dtype,
    same,
    to_ember,
    to_numpy,
)

SHAPES = [(), (0,), (3,), (2, 3), (2, 0, 3), (1, 1, 1, 1), (4, 1, 5)]
SHAPE_IDS = [str(s).replace(" ", "") for s in SHAPES]


# --------------------------------------------------------------------------------------------
# zeros / ones / empty / full
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
def test_zeros_ones_empty(fn, shape, dtype, device):
    x = getattr(ember, fn)(shape, dtype=em_dtype(dtype), device=device)
    assert isinstance(x, ember.ndarray)
    assert x.shape == shape
    assert dtype_name(x.dtype) == dtype
    assert str(x.device).split(":")[0] == device
    if fn != "empty":
        ref = getattr(np, fn)(shape, dtype=np.float32).astype(np_dtype(dtype))
        assert_close(x, ref, dtype)


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
def test_default_dtype_is_float64_and_int_shape(fn, device):
    x = getattr(ember, fn)(4, device=device)
    assert x.shape == (4,)
    assert dtype_name(x.dtype) == "float64"
    y = getattr(ember, fn)([2, 3], device=device)
    assert y.shape == (2, 3)


@pytest.mark.parametrize("shape", [(3, 0, 4), (2, 3), (), (1, 1, 7), (2**30, 2**30, 0)])
def test_empty_strides_and_size(shape, device):
    # C-order strides in bytes (zero-length dimensions count as 1), and the element count. As
    # NumPy, the non-zero dimensions times the item size must fit 63 bits even when empty.
    x = ember.empty(shape, dtype=ember.float32, device=device)
    assert x.shape == shape and x.size == int(np.prod(shape, dtype=object))
    expect, acc = [], 4
    for d in reversed(shape):
        expect.insert(0, acc)
        acc *= max(d, 1)
    assert x.strides == tuple(expect)
    with pytest.raises(ValueError):
        np.empty((2**40, 2**40, 0), dtype=np.float32)
    with pytest.raises(ValueError):
        ember.empty((2**40, 2**40, 0), dtype=ember.float32, device=device)


def test_empty_bad_shapes(device):
    with pytest.raises(ValueError, match="negative dimensions are not allowed, got \\(2, -1\\)"):
        ember.empty((2, -1), device=device)
    with pytest.raises(ValueError, match="more than 2\\*\\*63 elements"):
        ember.empty((2**40, 2**40), device=device)
    with pytest.raises(ValueError, match="too big"):
        ember.empty((2**61,), dtype=ember.float64, device=device)


FULL_CASES = [
    (7, None),
    (7.5, None),
    (True, None),
    (1 + 2j, None),
    (7, "int8"),
    (1.5, "int8"),
    (-1, "uint8"),
    (300, "int8"),
    (2**63, None),
    (np.nan, "float16"),
    (-np.inf, "bfloat16"),
    (0.1, "float32"),
    (3, "complex64"),
    (1, "bool"),
    (0, "bool"),
]


@pytest.mark.parametrize("value,dtype", FULL_CASES, ids=[f"{v!r}-{d}" for v, d in FULL_CASES])
def test_full(value, dtype, device):
    kwargs = {} if dtype is None else {"dtype": em_dtype(dtype)}
    try:
        ref = np.full((2, 3), value, **({} if dtype is None else {"dtype": np_dtype(dtype)}))
    except Exception as exc:  # the oracle refused
        with pytest.raises(builtin_exception(exc)):
            ember.full((2, 3), value, device=device, **kwargs)
        return
    x = ember.full((2, 3), value, device=device, **kwargs)
    assert_close(x, ref, dtype_name(ref.dtype), exact=True)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("fn", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like_functions(fn, dtype, device):
    src = to_ember(np.arange(24, dtype=np.float32).reshape(4, 6).astype(np_dtype(dtype)), device)
    view = src[::2, ::-3]
    args = (view, 3) if fn == "full_like" else (view,)
    y = getattr(ember, fn)(*args)
    assert y.shape == view.shape
    assert dtype_name(y.dtype) == dtype
    if fn != "empty_like":
        value = {"zeros_like": 0, "ones_like": 1, "full_like": 3}[fn]
        ref = np.full(view.shape, value).astype(np_dtype(dtype))
        assert_close(y, ref, dtype)
    # writing into the new array must not touch the source
    before = ember.asnumpy(src).copy()
    y[...] = 0
    np.testing.assert_array_equal(ember.asnumpy(src), before)


@pytest.mark.parametrize("target", ["int16", "float32", "complex128", "bool"])
@pytest.mark.parametrize("fn", ["zeros_like", "ones_like", "full_like"])
def test_like_dtype_override(fn, target, device):
    src = ember.zeros((2, 3), dtype=ember.float64, device=device)
    args = (src, 1) if fn == "full_like" else (src,)
    y = getattr(ember, fn)(*args, dtype=em_dtype(target))
    assert dtype_name(y.dtype) == target
    assert y.shape == (2, 3)


# --------------------------------------------------------------------------------------------
# arange / linspace / eye
# --------------------------------------------------------------------------------------------

ARANGE_CASES = [
    ((5,), {}),
    ((0,), {}),
    ((-3,), {}),
    ((2, 10), {}),
    ((2, 10, 3), {}),
    ((10, 2, -2), {}),
    ((10, 2), {}),
    ((0.0, 1.0, 0.1), {}),
    ((1, 2, 0.3), {}),
    ((-3.5, 2, 0.5), {}),
    ((10, 0, -1.5), {}),
    ((5,), {"dtype": "int8"}),
    ((0, 5), {"dtype": "float32"}),
    ((0, 1, 0.25), {"dtype": "float16"}),
    ((3.0,), {}),
    ((1, 4, 1), {"dtype": "uint16"}),
]


@pytest.mark.parametrize("args,kw", ARANGE_CASES, ids=[f"{a}-{k}" for a, k in ARANGE_CASES])
def test_arange(args, kw, device):
    ref = np.arange(*args, **{k: np_dtype(v) for k, v in kw.items()})
    x = ember.arange(*args, device=device, **{k: em_dtype(v) for k, v in kw.items()})
    assert_close(x, ref)


def test_arange_zero_step_raises(device):
    with pytest.raises((ValueError, ZeroDivisionError)):
        ember.arange(0, 5, 0, device=device)


def test_arange_too_large_raises(device):
    with pytest.raises((ValueError, MemoryError)):
        ember.arange(0, 1e300, 1e-300, device=device)


LINSPACE_CASES = [
    ((0, 1, 5), {}),
    ((0, 1, 5), {"endpoint": False}),
    ((1, 0, 7), {}),
    ((0, 1, 1), {}),
    ((0, 1, 1), {"endpoint": False}),
    ((0, 1, 0), {}),
    ((-1, 1, 101), {}),
    ((0, 10, 4), {"dtype": "float32"}),
    ((2.5, 2.5, 3), {}),
    ((0, 1e10, 11), {}),
]


@pytest.mark.parametrize("args,kw", LINSPACE_CASES, ids=[f"{a}-{k}" for a, k in LINSPACE_CASES])
def test_linspace(args, kw, device):
    npkw = {k: (np_dtype(v) if k == "dtype" else v) for k, v in kw.items()}
    emkw = {k: (em_dtype(v) if k == "dtype" else v) for k, v in kw.items()}
    ref = np.linspace(*args, **npkw)
    x = ember.linspace(*args, device=device, **emkw)
    assert_close(x, ref)
    got = ember.asnumpy(x)
    if got.size and kw.get("endpoint", True):
        assert got[-1] == ref[-1], "linspace must hit the endpoint exactly"
        assert got[0] == ref[0]


def test_linspace_negative_num_raises(device):
    with pytest.raises(ValueError):
        ember.linspace(0, 1, -1, device=device)


EYE_CASES = [
    ((3,), {}),
    ((3, 4), {}),
    ((4, 3), {"k": 1}),
    ((3,), {"k": -2}),
    ((3,), {"k": 5}),
    ((0,), {}),
    ((2, 5), {"k": 3, "dtype": "int32"}),
    ((3,), {"dtype": "bool"}),
]


@pytest.mark.parametrize("args,kw", EYE_CASES, ids=[f"{a}-{k}" for a, k in EYE_CASES])
def test_eye(args, kw, device):
    npkw = {k: (np_dtype(v) if k == "dtype" else v) for k, v in kw.items()}
    emkw = {k: (em_dtype(v) if k == "dtype" else v) for k, v in kw.items()}
    ref = np.eye(*args, **npkw)
    assert_close(ember.eye(*args, device=device, **emkw), ref)


# --------------------------------------------------------------------------------------------
# asarray
# --------------------------------------------------------------------------------------------

SEQUENCES = [
    [1, 2, 3],
    [1.0, 2.5],
    [True, False],
    [1 + 2j, 3],
    [1, 2.5],
    [True, 2],
    [[1, 2], [3, 4]],
    [[[1.5], [2.5]], [[3.5], [4.5]]],
    [],
    [[]],
    [[], []],
    5,
    2.5,
    True,
    1j,
    [2**63],
    [-(2**63), 2**63 - 1],
    (1, 2, 3),
    [(1, 2), [3, 4]],
    [np.float32(1.5), 2],
]


@pytest.mark.parametrize("obj", SEQUENCES, ids=[repr(s) for s in SEQUENCES])
def test_asarray_from_python(obj, device):
    ref = np.asarray(obj)
    x = ember.asarray(obj, device=device)
    assert_close(x, ref, exact=True)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_asarray_python_with_dtype(dtype, device):
    obj = [[0, 1, 2], [3, 1, 0]]
    ref = np.asarray(obj, dtype=np.float32).astype(np_dtype(dtype))
    assert_close(ember.asarray(obj, dtype=em_dtype(dtype), device=device), ref, exact=True)


@pytest.mark.parametrize(
    "obj",
    [
        [2**64],
        [-(2**63) - 1],
        [[1, 2], [3]],
        [[1], 2],
        ["a", 1],
        [None],
        [object()],
    ],
    ids=[
        "2**64",
        "-2**63-1",
        "ragged",
        "ragged_scalar",
        "str",
        "None",
        "object",
    ],
)
def test_asarray_rejects(obj, device):
    with pytest.raises((OverflowError, TypeError, ValueError)):
        ember.asarray(obj, device=device)


def test_ragged_raises_value_error(device):
    with pytest.raises(ValueError):
        ember.asarray([[1, 2], [3]], device=device)
    with pytest.raises(ValueError):
        ember.asarray([[1, 2], 3], device=device)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("layout", ["contig", "strided", "transposed", "negstride", "0d"])
def test_asarray_from_numpy(layout, dtype, device):
    base = (np.arange(30).reshape(5, 6) % 7).astype(dtype)
    a = {
        "contig": base,
        "strided": base[::2, 1::2],
        "transposed": base.T,
        "negstride": base[::-1, ::-2],
        "0d": base[2, 3],
    }[layout]
    x = ember.asarray(a, device=device)
    assert_close(x, np.asarray(a), dtype, exact=True)


def test_asarray_from_numpy_scalar(device):
    x = ember.asarray(np.float32(1.5), device=device)
    assert x.shape == () and dtype_name(x.dtype) == "float32"
    assert_close(x, np.asarray(np.float32(1.5)))


def test_asarray_from_ml_dtypes_bfloat16(device):
    a = np.array([1.0, -2.5, 3.0], dtype=ml_dtypes.bfloat16)
    x = ember.asarray(a, device=device)
    assert dtype_name(x.dtype) == "bfloat16"
    assert_close(x, a, "bfloat16", exact=True)
    back = ember.asnumpy(x)
    assert back.dtype == np.dtype(ml_dtypes.bfloat16)


@pytest.mark.parametrize(
    "make",
    [
        lambda: array.array("i", [1, -2, 3]),
        lambda: array.array("d", [1.5, 2.5]),
        lambda: array.array("b", [1, -1]),
        lambda: memoryview(np.arange(6, dtype=np.int16).reshape(2, 3)),
        lambda: memoryview(np.arange(12, dtype=np.float32).reshape(3, 4))[::2],
    ],
    ids=[
        "array_i",
        "array_d",
        "array_b",
        "memoryview_2d",
        "memoryview_strided",
    ],
)
def test_asarray_from_buffer(make, device):
    ref = np.asarray(make())
    x = ember.asarray(make(), device=device)
    assert_close(x, ref, exact=True)


def test_asarray_copy_semantics(device):
    x = ember.asarray([1.0, 2.0, 3.0], device=device)
    same = ember.asarray(x)
    copied = ember.asarray(x, copy=True)
    x[0] = 10.0
    assert float(copied[0]) == 1.0, "copy=True must not share memory"
    assert float(same[0]) in (1.0, 10.0)
    shared = ember.asarray(x, copy=False)
    x[1] = 20.0
    assert float(shared[1]) == 20.0, "copy=False must share memory"
    with pytest.raises(ValueError):
        ember.asarray(x, dtype=ember.int32, copy=False)  # needs a copy: must refuse


def test_asarray_numpy_copy_false_shares_or_refuses():
    a = np.arange(4, dtype=np.float64)
    try:
        x = ember.asarray(a, copy=False)
    except ValueError:
        return
    a[0] = 42.0
    assert float(x[0]) == 42.0, "copy=False returned an array that does not share memory"


def test_asarray_numpy_copy_true_is_independent():
    a = np.arange(4, dtype=np.float64)
    x = ember.asarray(a, copy=True)
    a[0] = 42.0
    assert float(x[0]) == 0.0


def test_asarray_dtype_conversion(device):
    a = np.array([1.7, -2.7, 3.2])
    x = ember.asarray(a, dtype=ember.int32, device=device)
    assert_close(x, a.astype(np.int32))
    assert_close(ember.asarray(x, dtype=ember.float32), a.astype(np.int32).astype(np.float32))


# --------------------------------------------------------------------------------------------
# bad shapes
# --------------------------------------------------------------------------------------------

HUGE_SHAPES = [
    (2**40, 2**40),
    (2**62,),
    (2**31, 2**31, 4),
    (2**63 - 1,),
    (2**32, 2**32, 2**32),
]


@pytest.mark.parametrize("shape", HUGE_SHAPES, ids=str)
@pytest.mark.parametrize("fn", ["zeros", "ones", "empty", "full"])
def test_huge_shape_raises(fn, shape, device):
    args = (shape, 1.0) if fn == "full" else (shape,)
    with pytest.raises((ValueError, MemoryError)):
        getattr(ember, fn)(*args, device=device)


@pytest.mark.parametrize("shape", [(-1,), (2, -3), -5], ids=str)
@pytest.mark.parametrize("fn", ["zeros", "ones", "empty", "full"])
def test_negative_shape_raises_value_error(fn, shape, device):
    args = (shape, 1.0) if fn == "full" else (shape,)
    with pytest.raises(ValueError):
        getattr(ember, fn)(*args, device=device)


@pytest.mark.parametrize("shape", [(2.5,), "abc", (None,), 1.0, ((2,),)], ids=str)
def test_non_integer_shape_raises_type_error(shape, device):
    with pytest.raises(TypeError):
        ember.zeros(shape, device=device)


def test_huge_eye_and_linspace_raise(device):
    with pytest.raises((ValueError, MemoryError)):
        ember.eye(2**40, device=device)
    with pytest.raises((ValueError, MemoryError)):
        ember.linspace(0, 1, 2**62, device=device)


RNG = np.random.default_rng(13)


def close(got, want, tol=1e-12):
    got = to_numpy(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


A = RNG.standard_normal((4, 5))


def test_array_copy_asanyarray(device):
    x = em(A, device)
    a = ember.array([[1, 2]], ndmin=3, device=device)
    assert a.shape == (1, 1, 2)
    c = ember.copy(x)
    c[0, 0] = 99
    assert to_numpy(x)[0, 0] != 99
    same(ember.asanyarray([1, 2]), np.asanyarray([1, 2]))


def test_identity_logspace_geomspace(device):
    close(ember.identity(3, device=device), np.identity(3))
    close(ember.logspace(0, 3, 4, device=device), np.logspace(0, 3, 4))
    close(
        ember.logspace(1, 2, 5, base=2.0, endpoint=False, device=device),
        np.logspace(1, 2, 5, base=2.0, endpoint=False),
    )
    close(ember.geomspace(1, 1000, 4, device=device), np.geomspace(1, 1000, 4))
    close(ember.geomspace(-2, -32, 5, device=device), np.geomspace(-2, -32, 5))
    with pytest.raises(ValueError, match="non-zero"):
        ember.geomspace(0, 1, 3)
    with pytest.raises(ValueError, match="same sign"):
        ember.geomspace(-1, 1, 3)


def test_asarray_chkfinite_fromfunction(device):
    with pytest.raises(ValueError, match="infs or NaNs"):
        ember.asarray_chkfinite([1.0, np.inf])
    same(
        ember.fromfunction(lambda i, j: i * 10 + j, (3, 4)),
        np.fromfunction(lambda i, j: i * 10 + j, (3, 4)),
    )


def test_ascontiguousarray(device):
    a = RNG.standard_normal((4, 6))
    x = em(a, device)
    assert ember.ascontiguousarray(x) is x
    t = ember.ascontiguousarray(x.T)
    assert t.strides == (32, 8)
    near(t, np.ascontiguousarray(a.T), exact=True)
    assert ember.ascontiguousarray(em(2.5, device)).shape == (1,)
    near(
        ember.ascontiguousarray(x[:, ::2], dtype=ember.float32),
        np.ascontiguousarray(a[:, ::2], dtype=np.float32),
        exact=True,
    )


@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 5), (7,), (0, 3)])
def test_asfortranarray(shape, device):
    a = RNG.standard_normal(shape)
    x = em(a, device)
    f = ember.asfortranarray(x)
    want = np.asfortranarray(a)
    if a.size:  # NumPy's strides of an empty array are its own choice
        assert f.strides == want.strides and ember.isfortran(f) == np.isfortran(want)
    near(f, want, exact=True)
    assert ember.asfortranarray(f) is f  # already column-major: no copy
    rev = ember.permute_dims(x, tuple(reversed(range(x.ndim))))  # column-major view of x
    assert ember.asfortranarray(rev) is rev
    g = ember.asfortranarray(x[..., ::2], dtype=ember.float32)
    if a.size:
        assert g.strides == np.asfortranarray(a[..., ::2], dtype=np.float32).strides
    near(g, np.asfortranarray(a[..., ::2], dtype=np.float32), exact=True)
    assert ember.asfortranarray(em(2.5, device)).shape == (1,)


def equal(got, want):
    got = to_numpy(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(device, indexing):
    x, y, z = np.arange(3.0), np.arange(4.0), np.arange(2.0)
    for got, want in zip(
        ember.meshgrid(em(x, device), em(y, device), em(z, device), indexing=indexing),
        np.meshgrid(x, y, z, indexing=indexing),
        strict=True,
    ):
        equal(got, want)


def test_asarray_of_a_list_of_arrays(device):
    # The Array API suite builds references as asarray([[x1[i] * x2[j] ...]]): 0-d arrays on the
    # device in a nested list stay on it, with NumPy's result type of a list.
    x1 = ember.asarray([1.5, -2.0, 3.0], device=device)
    x2 = ember.asarray([2, 4], dtype="int32", device=device)
    got = ember.asarray([[x1[i] * x2[j] for j in range(2)] for i in range(3)])
    assert got.device == x1.device and got.dtype == ember.float64
    np.testing.assert_array_equal(ember.asnumpy(got), np.outer([1.5, -2.0, 3.0], [2, 4]))
    mixed = ember.asarray([x2[0], 7, x2[1]])
    assert mixed.device == x1.device and mixed.dtype == ember.int64
    np.testing.assert_array_equal(ember.asnumpy(mixed), [2, 7, 4])
    f32 = ember.asarray([x1[0], x1[1]], dtype="float32")
    assert f32.dtype == ember.float32 and f32.device == x1.device
    with pytest.raises(ValueError):
        ember.asarray([[x1[0], x1[1]], [x1[2]]])
    from ember._array import _stack_nested  # the GPU path, run on the CPU too

    got = _stack_nested([[x1[0], 2], (x1[2], x1[1])], None, None)
    np.testing.assert_array_equal(ember.asnumpy(got), [[1.5, 2.0], [3.0, -2.0]])
    assert got.dtype == ember.float64


def test_eye_any_integer_k(device):
    for n, m, k in [
        (2, 30, 11057371157032240878774709175753637888),
        (3, None, -(10**30)),
        (4, 5, 2),
        (4, 5, -5),
        (0, 3, 7),
    ]:
        got = ember.eye(n, m, k=k, device=device)
        np.testing.assert_array_equal(ember.asnumpy(got), np.eye(n, m, k=k))
    with pytest.raises(TypeError, match="ember.eye: k must be an integer"):
        ember.eye(3, k=1.5)


@pytest.mark.parametrize(
    "shape, perm",
    [
        ((2, 3, 4, 5), (0, 3, 1, 2)),
        ((3, 4), (1, 0)),
        ((2, 1, 4, 5), (0, 3, 1, 2)),
        ((2, 3, 4), (2, 0, 1)),
    ],
)
def test_like_functions_keep_the_memory_order(shape, perm, device):
    """*_like with order='K' (the default) lays the result out as `x` is (a channels_last batch
    stays channels_last, as NumPy keeps a transpose's order); 'C' and 'F' as asked."""

    def dense(strides, shp):  # strides of the axes longer than 1 (a size-1 axis's is arbitrary)
        return tuple(s for s, n in zip(strides, shp, strict=True) if n != 1)

    a = np.ones(shape).transpose(perm)
    x = ember.asarray(np.ones(shape), device=device).transpose(perm)
    for xa, xe in ((a, x), (a[:, ::2], x[:, ::2])):
        for f, extra in (
            ("ones_like", ()),
            ("zeros_like", ()),
            ("empty_like", ()),
            ("full_like", (3,)),
        ):
            for order in ("K", "C", "F", "A"):
                got = getattr(ember, f)(xe, *extra, order=order)
                want = getattr(np, f)(xa, *extra, order=order)
                assert dense(got.strides, got.shape) == dense(want.strides, want.shape), (f, order)
                assert got.shape == want.shape and got.device == xe.device
    assert ember.ones_like(x, requires_grad=True).requires_grad
    assert ember.ones_like(x, shape=(2, 3)).flags.c_contiguous
