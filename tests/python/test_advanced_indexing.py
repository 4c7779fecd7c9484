"""NumPy's advanced indexing against NumPy: integer arrays (every int dtype, negative, repeated,
broadcast, empty), boolean masks (any rank, 0-d, empty, mismatched), lists and NumPy arrays as
indices, mixed with slices / ints / None / ...; where the advanced dimensions go; assignment
(broadcast, cast, last value wins for repeated indices); the gradient of x[idx]; both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import ALL_DTYPES, INT_DTYPES, np_dtype, to_ember, to_numpy

SHAPE = (4, 5, 6)


def base(device, dtype="float32", shape=SHAPE):
    a = (np.arange(int(np.prod(shape))).reshape(shape) % 97).astype(np_dtype(dtype))
    return a, to_ember(a, device)


def check(got, want):
    got = to_numpy(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert np.array_equal(got, want, equal_nan=got.dtype.kind in "fc")


def on(device, idx):
    """The index with its NumPy arrays moved to ember arrays on `device` (lists stay lists)."""
    if isinstance(idx, tuple):
        return tuple(on(device, i) for i in idx)
    if isinstance(idx, np.ndarray):
        return to_ember(idx, device)
    return idx


I = np.array  # noqa: E741

INDICES = [
    I([0, 2, -1]),
    I([[0, 1], [3, -4]]),
    I([], dtype=np.int64),
    I(2),
    (slice(None), I([4, 0, 0])),
    (Ellipsis, I([5, -6])),
    (I([0, 1]), I([1, 2])),
    (I([0, 1]), slice(1, 3), I([1, 2])),  # separated: advanced dims first
    (slice(None), I([0, 1]), I([1, 2])),  # adjacent: in place
    (1, slice(None), I([1, 2])),  # an int counts as advanced: separated
    (slice(None), 1, I([1, 2])),  # adjacent
    (I([[0], [1]]), I([0, 1, 2])),  # broadcast (2, 1) with (3,)
    (I([0, 1]), None, I([1, 2])),  # None in between: separated
    (None, I([0, 3]), Ellipsis, None),
    (I([1]), slice(None, None, -1), I([2, 3, 4])),
    (slice(1, None), I([[-1, 0]]), slice(None, None, 2)),
    (I([0, 0, 0]), I([1, 1, 1]), I([2, 2, 2])),
    (I([], dtype=np.int64), slice(None), I([], dtype=np.int64)),
    (I([1, 2]), Ellipsis),
    I([True, False, True, False]),
    I([[True, False, True, False, True]] * 4),
    I(np.arange(120).reshape(SHAPE) % 3 == 0),
    I(np.zeros(SHAPE, bool)),
    (slice(None), I([True, False, False, True, True])),
    (Ellipsis, I([True] * 6)),
    (I([True, False, True, True]), I([0, 1, 4])),  # mask + int array broadcast
    (I([1, 2, 0]), I([True, False, True, False, True])),
    np.True_,
    np.False_,
    True,
    False,
    (0, True),
    (I([0, 1]), True),
    (I([0, 1]), slice(None), True),
    (I([True, True, False, False]), slice(2, 4), 0),
]


def ids(v):
    return repr(v).replace("\n", "")[:60]


@pytest.mark.parametrize("idx", INDICES, ids=ids)
def test_getitem_matches_numpy(device, idx):
    a, x = base(device)
    check(x[on(device, idx)], a[idx])


@pytest.mark.parametrize(
    "idx",
    [[0, 2], [[0, 1], [2, 3]], ([0, 1], [2, 3]), (slice(None), [1, 1]), [True, False, True, True]],
    ids=ids,
)
def test_list_indices(device, idx):
    a, x = base(device)
    check(x[idx], a[idx])


def test_numpy_array_indices(device):
    a, x = base(device)
    check(x[np.array([3, 1])], a[np.array([3, 1])])
    check(x[np.array([True, False, True, False])], a[np.array([True, False, True, False])])
    check(x[:, np.array([[0], [4]]), 0], a[:, np.array([[0], [4]]), 0])
    check(x[[]], a[[]])


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_index_dtypes(device, dtype):
    a, x = base(device)
    idx = np.array([3, 0, 1], dtype=np_dtype(dtype))
    check(x[to_ember(idx, device)], a[idx])
    check(x[:, to_ember(idx, device)], a[:, idx])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_value_dtypes(device, dtype):
    if dtype == "bfloat16":
        x = ember.asarray(np.arange(12.0).reshape(3, 4), dtype=ember.bfloat16, device=device)
        got = x[[2, 0]][:, [1, 3]]
        check(
            got.astype(ember.float32),
            np.arange(12.0, dtype=np.float32).reshape(3, 4)[[2, 0]][:, [1, 3]],
        )
        return
    a, x = base(device, dtype, (3, 4))
    check(x[[2, 0, -1]], a[[2, 0, -1]])
    check(x[a > 1], a[a > 1]) if dtype != "bool" else check(x[a], a[a])


@pytest.mark.parametrize("view", ["transposed", "strided", "reversed", "broadcast"])
def test_views(device, view):
    a, x = base(device)
    pick = {
        "transposed": lambda t: t.swapaxes(0, 2),
        "strided": lambda t: t[::2, 1::2],
        "reversed": lambda t: t[::-1, :, ::-1],
        "broadcast": lambda t: t[:1].reshape((1, 5, 6))[[0, 0, 0]],
    }[view]
    v, e = pick(a), pick(x)
    idx = np.array([1, 0, -1])
    check(e[to_ember(idx, device)], v[idx])
    check(e[:, to_ember(idx, device)], v[:, idx])
    m = v > 40
    check(e[to_ember(m, device)], v[m])


def test_zero_d_array(device):
    x = to_ember(np.array(7.0), device)
    check(x[True], np.array(7.0)[True])
    check(x[False], np.array(7.0)[False])
    check(x[np.array(True)], np.array(7.0)[np.array(True)])
    check(x[None, True], np.array(7.0)[None, True])


def test_empty_array(device):
    a = np.zeros((0, 3), np.float32)
    x = to_ember(a, device)
    check(x[np.zeros(0, bool)], a[np.zeros(0, bool)])
    check(x[[]], a[[]])
    check(x[:, [0, 2]], a[:, [0, 2]])
    with pytest.raises(IndexError):
        x[[0]]


def test_out_of_bounds(device):
    _, x = base(device)
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        x[[0, 4]]
    with pytest.raises(IndexError, match="index -7 is out of bounds for axis 1 with size 5"):
        x[:, [-7]]
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 2 with size 6"):
        x[[0], 0, [6]]
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0], 9]
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 4"):
        x[None, [9]]


def test_bad_indices(device):
    _, x = base(device)
    with pytest.raises(IndexError, match="integer"):
        x[to_ember(np.array([0.0, 1.0]), device)]
    with pytest.raises(IndexError, match="integer"):
        x[[0.5]]
    with pytest.raises(IndexError, match="broadcast"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="boolean index did not match.*axis 0.*4.*3"):
        x[np.array([True, False, True])]
    with pytest.raises(IndexError, match="boolean index did not match.*axis 1"):
        x[:, np.ones(4, bool)]
    with pytest.raises(IndexError, match="too many indices"):
        x[[0], [0], [0], [0]]
    with pytest.raises(IndexError, match="too many indices"):
        x[np.ones((4, 5, 6, 1), bool)]
    with pytest.raises(IndexError):
        x["a"]


def test_large_mask(device):
    rng = np.random.default_rng(0)
    a = rng.random(1 << 20).astype(np.float32)
    m = a < 0.5
    x, mx = to_ember(a, device), to_ember(m, device)
    check(x[mx], a[m])
    b = rng.integers(0, 100, size=(20_000, 3)).astype(np.int16)
    mb = rng.random(20_000) < 0.3
    check(to_ember(b, device)[to_ember(mb, device)], b[mb])
    c = rng.random((5000, 2)).astype(np.complex128)
    mc = c.real > 0.5
    check(to_ember(c, device)[to_ember(mc, device)], c[mc])


# ---- assignment ----------------------------------------------------------------------------

SET_INDICES = [
    I([0, 2, -1]),
    (slice(None), I([4, 0])),
    (I([0, 1]), slice(1, 3), I([1, 2])),
    (slice(None), 1, I([1, 2])),
    I(np.arange(120).reshape(SHAPE) % 3 == 0),
    I([True, False, True, False]),
    (Ellipsis, I([True, False] * 3)),
    (I([[0], [1]]), I([0, 1, 2])),
    I([], dtype=np.int64),
    True,
    False,
    (1, I([True, False, True, True, False])),
]


@pytest.mark.parametrize("idx", SET_INDICES, ids=ids)
def test_setitem_scalar(device, idx):
    a, x = base(device)
    x[on(device, idx)] = -3
    a[idx] = -3
    check(x, a)


@pytest.mark.parametrize("idx", SET_INDICES, ids=ids)
def test_setitem_array(device, idx):
    a, x = base(device)
    shape = a[idx].shape
    v = (np.arange(int(np.prod(shape))).reshape(shape) * -1.5).astype(np.float32)
    x[on(device, idx)] = to_ember(v, device)
    a[idx] = v
    check(x, a)


def test_setitem_broadcast_and_cast(device):
    a, x = base(device, "int32")
    x[[0, 2]] = to_ember(np.arange(6, dtype=np.float64) + 0.7, device)
    a[[0, 2]] = np.arange(6, dtype=np.float64) + 0.7
    check(x, a)
    x[:, [1, 3], 0] = to_ember(np.array([[5], [6], [7], [8]]), device)
    a[:, [1, 3], 0] = np.array([[5], [6], [7], [8]])
    check(x, a)
    x[a > 50] = 1.9
    a[a > 50] = 1.9
    check(x, a)
    # leading size-1 dims of the value are dropped as in NumPy
    x[[1]] = to_ember(np.ones((1, 1, 5, 6), np.int32) * 4, device)
    a[[1]] = np.ones((1, 1, 5, 6), np.int32) * 4
    check(x, a)
    # a NumPy value is uploaded
    x[[0], 0] = np.arange(6)
    a[[0], 0] = np.arange(6)
    check(x, a)


def test_setitem_repeated_last_wins(device):
    a = np.zeros(10, np.float32)
    x = to_ember(a, device)
    idx = np.array([3, 1, 3, 3, 1, 7, -7])
    vals = np.arange(7, dtype=np.float32) + 1
    x[to_ember(idx, device)] = to_ember(vals, device)
    a[idx] = vals
    check(x, a)
    b = np.zeros((4, 4), np.int64)
    y = to_ember(b, device)
    r = np.random.default_rng(1).integers(0, 4, size=(2, 1000))
    v = np.arange(1000)
    y[to_ember(r[0], device), to_ember(r[1], device)] = to_ember(v, device)
    b[r[0], r[1]] = v
    check(y, b)


def test_setitem_repeated_sparse_large_array(device):
    # few repeated indices into a large array (the GPU resolves winners on the host then)
    a = np.zeros(1 << 23, np.float32)
    x = to_ember(a, device)
    idx = np.array([5, 9, 5, 1 << 22, 9])
    x[idx] = np.array([1, 2, 3, 4, 5], np.float32)
    a[idx] = np.array([1, 2, 3, 4, 5], np.float32)
    check(x[idx], a[idx])
    assert float(x.sum()) == float(a.sum())


def test_setitem_views(device):
    a, x = base(device)
    v, e = a[::-1, :, 1::2], x[::-1, :, 1::2]
    e[[0, 3], 1] = -1.0
    v[[0, 3], 1] = -1.0
    check(x, a)
    e[e > 80] = 0.5
    v[v > 80] = 0.5
    check(x, a)


def test_setitem_errors(device):
    a, x = base(device)
    before = a.copy()
    with pytest.raises(ValueError, match="shape mismatch"):
        x[[0, 1]] = to_ember(np.ones((3, 6), np.float32), device)
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 9]] = 1.0
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.ones(3, bool)] = 1.0
    with pytest.raises(TypeError):
        x[[0]] = 1j
    check(x, before)


def test_setitem_requires_grad(device):
    x = ember.asarray(np.ones(4), device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf array that requires grad"):
        x[[0]] = 2.0  # in place on a leaf, as in PyTorch
    with ember.no_grad():
        x[[0]] = 2.0
    check(x.detach(), np.array([2.0, 1.0, 1.0, 1.0]))


def _setitem_case(idx_of, value_shape):
    """y = 1.5 * x; y[idx] = v (an advanced index); returns fn(x, v) -> y * y."""

    def fn(x, v):
        y = x * 1.5
        y[idx_of(x)] = v
        return y * y

    return fn


@pytest.mark.parametrize(
    "name,idx_of,xshape,vshape",
    [
        ("ints", lambda x: ember.asarray([2, 0], device=x.device), (4, 3), (2, 3)),
        (
            "pairs",
            lambda x: (
                ember.asarray([0, 3], device=x.device),
                ember.asarray([1, 1], device=x.device),
            ),
            (4, 3),
            (2,),
        ),
        ("broadcast value", lambda x: ember.asarray([1, 3], device=x.device), (4, 3), (3,)),
        (
            "mask",
            lambda x: ember.asarray(np.array([True, False, True, False]), device=x.device),
            (4, 3),
            (1, 3),
        ),
        (
            "mixed slice",
            lambda x: (slice(1, None), ember.asarray([0, 2], device=x.device)),
            (4, 3),
            (3, 2),
        ),
    ],
)
def test_setitem_gradients(device, name, idx_of, xshape, vshape):
    from test_autograd_ops import gradcheck

    rng = np.random.default_rng(3)
    gradcheck(
        _setitem_case(idx_of, vshape),
        [rng.standard_normal(xshape), rng.standard_normal(vshape)],
        device,
    )


def test_setitem_gradient_with_repeated_indices(device):
    # the last value wins the element; every value gets its position's gradient (PyTorch's rule)
    y = ember.zeros(3, device=device, requires_grad=True) * 1
    v = ember.asarray([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y[ember.asarray([1, 1, 0], device=device)] = v
    check(y.detach(), np.array([3.0, 2.0, 0.0]))
    (y * ember.asarray([5.0, 7.0, 11.0], device=device)).sum().backward()
    check(v.grad, np.array([7.0, 7.0, 5.0]))


# ---- gradient ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "idx",
    [
        I([0, 2, 2, -1]),
        (slice(None), I([[1, 1], [0, 4]])),
        (I([0, 1]), slice(1, 3), I([1, 1])),
        I(np.arange(120).reshape(SHAPE) % 4 == 1),
        (I([True, False, True, True]), 1),
    ],
    ids=ids,
)
def test_getitem_grad(device, idx):
    a = np.random.default_rng(0).random(SHAPE)
    x = ember.asarray(a, device=device, requires_grad=True)
    y = x[on(device, idx)]
    w = np.random.default_rng(1).random(y.shape)
    (y * to_ember(w, device)).sum().backward()
    want = np.zeros_like(a)
    np.add.at(want, idx, w)
    np.testing.assert_allclose(to_numpy(x.grad), want, rtol=1e-12)


def test_getitem_grad_through_view(device):
    a = np.random.default_rng(0).random((4, 6))
    x = ember.asarray(a, device=device, requires_grad=True)
    y = (x * 2)[::-1][[0, 0, 3], 1:4]
    y.sum().backward()
    want = np.zeros_like(a)
    np.add.at(want, (np.array([3, 3, 0]), slice(1, 4)), 2.0)
    np.testing.assert_allclose(to_numpy(x.grad), want)


def test_zero_size_mask_selects_nothing(device):
    # The Array API suite's rule (test_getitem_masking): a mask axis of size 0 selects nothing,
    # where NumPy raises. Other mismatches still raise.
    x = to_ember(np.arange(10, dtype=np.uint8).reshape(5, 2), device)
    out = x[to_ember(np.zeros(0, bool), device)]
    assert out.shape == (0, 2) and out.dtype == x.dtype
    assert x[to_ember(np.zeros((5, 0), bool), device)].shape == (0,)
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[to_ember(np.ones(3, bool), device)]
