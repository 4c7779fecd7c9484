"""Basic indexing and assignment against NumPy; views share storage; strides are in bytes."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import ALL_DTYPES, assert_close, em_dtype, np_dtype, to_ember


class _Index:
    def __getitem__(self, key):
        return key


I = _Index()

INDICES = [
    I[0],
    I[-1],
    I[3],
    I[-4],
    I[:],
    I[1:3],
    I[::2],
    I[::-1],
    I[-1:0:-2],
    I[5:1:-1],
    I[100::-1],
    I[10:],
    I[-10:],
    I[1:1],
    I[2:100],
    I[-100:2],
    I[...],
    I[..., 0],
    I[0, ...],
    I[None],
    I[None, 0],
    I[0, None, ::2],
    I[1, 2, 3],
    I[-1, -1, -1],
    I[:, 2],
    I[..., ::-2],
    I[1:3, None, ..., 0],
    I[None, ..., None],
    I[::2, ::-3, 1::2],
    I[()],
    I[0, ..., 1],
    I[:, :, -1],
    I[::-1, ::-1, ::-1],
    I[1:-1, 1:-1, 1:-1],
    I[3:0:-1, :0:-2],
    I[:, None, :, None],
    I[2, ::-1],
    I[..., None],
]
IDS = [repr(i).replace(" ", "") for i in INDICES]
SHAPE = (4, 5, 6)


def base(dtype, device):
    a = (np.arange(np.prod(SHAPE)).reshape(SHAPE) % 97).astype(np.float32).astype(np_dtype(dtype))
    return a, to_ember(a, device)


@pytest.mark.parametrize("dtype", ["int32", "float64", "bool", "bfloat16", "complex64"])
@pytest.mark.parametrize("idx", INDICES, ids=IDS)
def test_getitem_matches_numpy(idx, dtype, device):
    a, x = base(dtype, device)
    expected = np.asarray(a[idx])
    got = x[idx]
    assert isinstance(got, ember.ndarray), "indexing must return an ember array (0-d for ints)"
    assert_close(got, expected, dtype, exact=True)


@pytest.mark.parametrize("idx", INDICES, ids=IDS)
def test_view_strides_in_bytes(idx, device):
    a, x = base("float64", device)
    view = a[idx]
    got = x[idx]
    if not isinstance(view, np.ndarray) or view.size == 0:
        pytest.skip("strides compared for non-empty views only")
    assert tuple(got.strides) == view.strides, f"strides of x[{idx!r}]"
    assert got.itemsize == 8


@pytest.mark.parametrize("idx", INDICES, ids=IDS)
def test_view_shares_storage(idx, device):
    a, x = base("int32", device)
    view = a[idx]
    if not (isinstance(view, np.ndarray) and np.shares_memory(view, a)):
        pytest.skip("NumPy makes no view here")
    got = x[idx]
    got[...] = -7
    view[...] = -7
    assert_close(x, a, err_msg=f"write through x[{idx!r}]: ")
    # and the other way: a write to the base is seen by the view
    x[...] = 3
    assert_close(got, np.full(view.shape, 3, np.int32))


@pytest.mark.parametrize("dtype", ["int16", "float32", "bool", "complex128", "bfloat16"])
@pytest.mark.parametrize("idx", INDICES, ids=IDS)
def test_setitem_scalar(idx, dtype, device):
    a, x = base(dtype, device)
    a[idx] = 1
    x[idx] = 1
    assert_close(x, a, dtype, exact=True)


@pytest.mark.parametrize("idx", INDICES, ids=IDS)
def test_setitem_broadcast_array(idx, device):
    a, x = base("float64", device)
    target = a[idx]
    shape = np.shape(target)
    value = np.arange(shape[-1] if shape else 1, dtype=np.float64) + 0.5
    if not shape:
        value = value[0]
    a[idx] = value
    x[idx] = ember.asarray(value, device=device) if np.ndim(value) else value
    assert_close(x, a, exact=True)


SETITEM_CASTS = [
    ("int32", 2.7),
    ("int32", -2.7),
    ("int8", True),
    ("uint8", 255),
    ("float32", 3),
    ("float16", 1e10),
    ("bool", 2),
    ("bool", 0.0),
    ("complex64", 1.5),
    ("float64", 1 + 0j),
]


@pytest.mark.parametrize("dtype,value", SETITEM_CASTS, ids=[f"{d}={v!r}" for d, v in SETITEM_CASTS])
def test_setitem_casts_python_values(dtype, value, device):
    a, x = base(dtype, device)
    try:
        a[1, ::2] = value
    except Exception as exc:  # e.g. complex into float
        with pytest.raises(type(exc) if isinstance(exc, (TypeError, OverflowError)) else Exception):
            x[1, ::2] = value
        return
    x[1, ::2] = value
    assert_close(x, a, dtype, exact=True)


@pytest.mark.parametrize("src", ["float64", "int64", "bool", "float16"])
@pytest.mark.parametrize("dst", ["int32", "float32", "uint8", "bool", "complex64"])
def test_setitem_casts_arrays(src, dst, device):
    a, x = base(dst, device)
    v = (np.arange(6) * 1.25).astype(np_dtype(src))
    a[2, 1] = v
    x[2, 1] = to_ember(v, device)
    assert_close(x, a, dst, exact=True)


@pytest.mark.parametrize("dtype,value", [("int8", 300), ("uint8", -1), ("int16", 2**40)])
def test_setitem_out_of_range_python_int(dtype, value, device):
    a, x = base(dtype, device)
    with pytest.raises(OverflowError):
        a[0] = value
    before = ember.asnumpy(x).copy()
    with pytest.raises(OverflowError):
        x[0] = value
    np.testing.assert_array_equal(ember.asnumpy(x), before)


@pytest.mark.parametrize(
    "idx",
    [
        I[4],
        I[-5],
        I[0, 5],
        I[0, 0, 6],
        I[0, -6],
        I[0, 0, 0, 0],
        I[..., ...],
        I[1, ..., 1, ...],
    ],
    ids=repr,
)
def test_bad_index_raises_index_error(idx, device):
    _, x = base("float32", device)
    with pytest.raises(IndexError):
        x[idx]
    before = ember.asnumpy(x).copy()
    with pytest.raises(IndexError):
        x[idx] = 1.0
    np.testing.assert_array_equal(ember.asnumpy(x), before)


@pytest.mark.parametrize("idx", [1.5, "a", object(), {1: 2}, 2**70], ids=repr)
def test_invalid_index_type(idx, device):
    _, x = base("float32", device)
    with pytest.raises((IndexError, TypeError)):
        x[idx]
    with pytest.raises((IndexError, TypeError)):
        x[idx] = 0.0


def test_setitem_shape_mismatch_leaves_array_untouched(device):
    _, x = base("float32", device)
    before = ember.asnumpy(x).copy()
    with pytest.raises(ValueError):
        x[0:2] = ember.ones((3, 6), dtype=ember.float32, device=device)
    with pytest.raises(ValueError):
        x[0] = ember.ones((2, 5, 6), dtype=ember.float32, device=device)
    np.testing.assert_array_equal(ember.asnumpy(x), before)


def test_advanced_indexing_matches_numpy(device):
    # integer-array and boolean indexing (tests/python/test_advanced_indexing.py has the rest)
    a, x = base("float32", device)
    for idx, nidx in (
        ([0, 2], [0, 2]),
        (x > 3, a > 3),
        (ember.asarray([1, 0], device=device), [1, 0]),
        ((slice(None), [0, 1]), (slice(None), [0, 1])),
    ):
        assert_close(x[idx], a[nidx])


def test_negative_strides(device):
    a, x = base("int32", device)
    v = x[::-1, :, ::-2]
    assert tuple(v.strides) == a[::-1, :, ::-2].strides
    assert v.strides[0] < 0 and v.strides[2] < 0
    assert_close(v, a[::-1, :, ::-2])
    assert_close(v[::-1], a[::-1, :, ::-2][::-1])  # double reversal
    assert_close(ember.asarray(v.copy()), np.ascontiguousarray(a[::-1, :, ::-2]))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_contiguous_strides(dtype, device):
    x = ember.zeros((2, 3, 4), dtype=em_dtype(dtype), device=device)
    assert tuple(x.strides) == np.zeros((2, 3, 4), dtype=np_dtype(dtype)).strides


def test_zero_d_indexing(device):
    x = ember.asarray(3.5, device=device)
    assert_close(x[()], np.asarray(3.5))
    assert_close(x[...], np.asarray(3.5))
    assert_close(x[None], np.asarray([3.5]))
    with pytest.raises(IndexError):
        x[0]
    x[()] = 1.0
    assert float(x) == 1.0


def test_chained_views_write_through(device):
    a, x = base("float64", device)
    v = x[1:, ::-1][:, 2:, ::3][..., None]
    w = a[1:, ::-1][:, 2:, ::3][..., None]
    v[0, 0] = 42.0
    w[0, 0] = 42.0
    assert_close(x, a)
    t = x[0].T
    t[1, 2] = -1.0
    a[0].T[1, 2] = -1.0
    assert_close(x, a)


def test_view_keeps_base_alive(device):
    x = ember.arange(10, device=device)
    v = x[2:5]
    del x
    import gc

    gc.collect()
    assert_close(v, np.arange(2, 5))


# --------------------------------------------------------------------------------------------
# overlapping source and destination (NumPy behaves as if the source were copied first)
# --------------------------------------------------------------------------------------------

OVERLAPS = {
    "shift_right": (lambda t: t[1:], lambda t: t[:-1]),
    "shift_left": (lambda t: t[:-1], lambda t: t[1:]),
    "reverse": (lambda t: t[...], lambda t: t[::-1]),
    "transpose": (lambda t: t[...], lambda t: t.T),
}


@pytest.mark.parametrize("dtype", ["int32", "float64", "complex64"])
@pytest.mark.parametrize("case", list(OVERLAPS))
def test_setitem_overlapping(case, dtype, device):
    dst, src = OVERLAPS[case]
    n = 6 if case == "transpose" else 1000
    shape = (n, n) if case == "transpose" else (n,)
    a = np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)
    x = to_ember(a, device)
    dst(a)[...] = src(a).copy()
    dst(x)[...] = src(x)
    assert_close(x, a)


@pytest.mark.parametrize("case", list(OVERLAPS))
def test_inplace_op_with_overlapping_operand(case, device):
    dst, src = OVERLAPS[case]
    shape = (6, 6) if case == "transpose" else (1000,)
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    x = to_ember(a, device)
    d = dst(a)
    d += src(a)  # NumPy resolves the overlap
    v = dst(x)
    v += src(x)
    assert_close(x, a)


def test_elementwise_into_overlapping_view(device):
    a = np.arange(10.0)
    x = to_ember(a, device)
    x[1:] = x[:-1] * 2
    a[1:] = a[:-1] * 2
    assert_close(x, a)
