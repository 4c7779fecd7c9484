"""Edge cases NumPy accepts, against NumPy: reductions over axis 0/-1 of 0-d arrays, argsort of
0-d, diff of booleans, reshape/ravel/flatten in Fortran, 'A' and 'K' order, take's modes, and
max/min/argmax/argmin over empty axes. On both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_ember, to_numpy


def outcome(f):
    try:
        return f(), None
    except Exception as e:  # compared with NumPy's exception type
        return None, e


def check(device, fe, fn, args, layout=None):
    """Runs fn on the NumPy arguments and fe on ember copies (both first passed through
    `layout`, which must work on either kind of array): the same values, or both raise (ember's
    exception an instance of NumPy's type; ember.AxisError for NumPy's AxisError)."""
    layout = layout or (lambda a: a)
    want, werr = outcome(lambda: fn(*[layout(a) for a in args]))
    got, gerr = outcome(lambda: fe(*[layout(to_ember(a, device)) for a in args]))
    if werr is not None:
        assert gerr is not None, f"NumPy raised {werr!r}, ember returned {got!r}"
        expected = ember.AxisError if isinstance(werr, np.exceptions.AxisError) else type(werr)
        assert isinstance(gerr, expected), (gerr, werr)
        return gerr
    assert gerr is None, f"ember raised {gerr!r}, NumPy returned {want!r}"
    g, w = to_numpy(got), np.asarray(want)
    assert g.shape == w.shape
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert np.array_equal(g, w, equal_nan=True)
    return None


ZERO_D = [np.array(2.5), np.array(7, np.int8), np.array(True)]


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "any", "all", "argmax", "argmin"])
@pytest.mark.parametrize("axis", [0, -1, (0,), 1, -2, None, ()])
def test_reductions_of_0d(device, name, axis):
    if name.startswith("arg") and isinstance(axis, tuple):
        return
    for a in ZERO_D:
        if name in ("any", "all") and a.dtype == np.int8:
            a = a != 0
        err = check(
            device,
            lambda x: getattr(ember, name)(x, axis=axis),
            lambda x: getattr(np, name)(x, axis=axis),
            (a,),
        )
        if err is not None:
            assert isinstance(err, ember.AxisError)
            assert isinstance(err, ValueError) and isinstance(err, IndexError)


@pytest.mark.parametrize("name", ["mean", "var", "std"])
@pytest.mark.parametrize("axis", [0, -1, None, ()])
def test_moments_of_0d(device, name, axis):
    check(
        device,
        lambda x: getattr(ember, name)(x, axis=axis),
        lambda x: getattr(np, name)(x, axis=axis),
        (np.array(2.5),),
    )


def test_axis_error_is_numpys():
    assert issubclass(ember.AxisError, ValueError)
    assert issubclass(ember.AxisError, IndexError)


@pytest.mark.parametrize("axis", [0, -1, None, 1])
def test_argsort_of_0d(device, axis):
    a = np.array(3.0)
    check(device, lambda x: ember.argsort(x, axis=axis), lambda x: np.argsort(x, axis=axis), (a,))
    check(
        device,
        lambda x: ember.argpartition(x, 0, axis=axis),
        lambda x: np.argpartition(x, 0, axis=axis),
        (a,),
    )
    check(device, lambda x: ember.sort(x, axis=axis), lambda x: np.sort(x, axis=axis), (a,))
    check(device, lambda x: x.argsort(), lambda x: x.argsort(), (a,))


@pytest.mark.parametrize(
    "a,kw",
    [
        (np.array([True, False, False, True]), {}),
        (np.array([True, False, False, True]), {"n": 2}),
        (np.array([True, False, False, True]), {"n": 0}),
        (np.array([[True, False], [False, False]]), {"axis": 0}),
        (np.array([True, False]), {"prepend": True}),
        (np.array([True, False]), {"append": 0}),
        (np.arange(5) ** 2, {"n": 3}),
        (np.arange(5.0), {"n": 10}),
    ],
)
def test_diff(device, a, kw):
    check(device, lambda x: ember.diff(x, **kw), lambda x: np.diff(x, **kw), (a,))


def test_diff_huge_order(device):
    # NumPy loops n times; ember stops once the result is empty (the same empty result)
    got = ember.diff(to_ember(np.arange(5.0), device), n=2**62)
    assert got.shape == (0,) and got.dtype == ember.float64


def test_diff_positional(device):
    a = np.arange(12.0).reshape(3, 4) ** 2
    check(device, lambda x: ember.diff(x, 2, 0), lambda x: np.diff(x, 2, 0), (a,))


def _xp(a):
    return ember if isinstance(a, ember.ndarray) else np


LAYOUTS = [
    lambda a: a,
    lambda a: _xp(a).permute_dims(a, tuple(range(a.ndim - 1, -1, -1))),
    lambda a: a[:, ::-1],
    lambda a: a[::2, 1:],
    lambda a: _xp(a).permute_dims(a, (1, 0, 2)) if a.ndim == 3 else a[::-1].T,
]


@pytest.mark.parametrize("order", ["C", "F", "A", "K", "c", "f"])
@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_ravel_orders(device, order, layout):
    lay = LAYOUTS[layout]
    for shape in [(4, 6), (2, 3, 4)]:
        a = np.arange(np.prod(shape)).reshape(shape)
        check(
            device, lambda x: ember.ravel(x, order=order), lambda x: np.ravel(x, order), (a,), lay
        )
        check(device, lambda x: x.ravel(order), lambda x: x.ravel(order), (a,), lay)
        check(device, lambda x: x.flatten(order), lambda x: x.flatten(order), (a,), lay)


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_reshape_orders(device, order, layout):
    a, lay = np.arange(24).reshape(4, 6), LAYOUTS[layout]
    for shape in [(6, 4), (24,), (2, -1, 3), (-1,)]:
        check(
            device,
            lambda x, s=shape: ember.reshape(x, s, order=order),
            lambda x, s=shape: np.reshape(x, s, order=order),
            (a,),
            lay,
        )
        check(
            device,
            lambda x, s=shape: x.reshape(s, order=order),
            lambda x, s=shape: x.reshape(s, order=order),
            (a,),
            lay,
        )
    check(
        device,
        lambda x: x.reshape(6, 4, order=order),
        lambda x: x.reshape(6, 4, order=order),
        (a,),
        lay,
    )


def test_reshape_fortran_is_a_view_when_numpy_is(device):
    x = ember.zeros((4, 6), device=device).T  # Fortran-contiguous
    y = ember.reshape(x, (24,), order="F")
    y[0] = 1.0
    assert float(x[0, 0]) == 1.0
    with pytest.raises(ValueError):
        ember.reshape(ember.zeros((4, 6), device=device), (6, 4), order="X")
    with pytest.raises(ValueError):
        ember.reshape(ember.zeros((4, 6), device=device), (6, 4), order="K")
    assert ember.reshape(ember.arange(6, device=device), newshape=(2, 3)).shape == (2, 3)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
@pytest.mark.parametrize(
    "shape,idx,axis",
    [
        ((6,), [7, -8, 0, 5, -1], None),
        ((2, 3), [[5, -5], [3, 2]], 1),
        ((2, 3), [9, -9], 0),
        ((2, 3), 7, None),
        ((2, 3), -7, 1),
        ((0,), [], None),
        ((0,), [1], None),
        ((3, 0), [1], 1),
    ],
)
def test_take_modes(device, mode, shape, idx, axis):
    a = np.arange(int(np.prod(shape))).reshape(shape) * 10
    idx_np = np.array(idx, dtype=np.int64) if isinstance(idx, list) else idx
    check(
        device,
        lambda x: ember.take(x, idx, axis=axis, mode=mode),
        lambda x: np.take(x, idx_np, axis=axis, mode=mode),
        (a,),
    )
    check(
        device,
        lambda x: x.take(idx, axis=axis, mode=mode),
        lambda x: x.take(idx_np, axis=axis, mode=mode),
        (a,),
    )


def test_take_modes_huge_indices(device):
    # NumPy's 'wrap' subtracts the length until in range (2**62 steps here): Python's modulo
    x = to_ember(np.arange(4) * 10, device)
    idx = [2**62 + 1, -(2**62) - 1, 2**63 - 1, -(2**63)]
    want = [(i % 4) * 10 for i in idx]
    assert to_numpy(ember.take(x, idx, mode="wrap")).tolist() == want
    assert to_numpy(ember.take(x, idx, mode="clip")).tolist() == [30, 0, 30, 0]
    with pytest.raises(IndexError):
        ember.take(x, idx)


def test_take_mode_errors_and_out(device):
    x = to_ember(np.arange(6), device)
    with pytest.raises(ValueError, match="mode"):
        ember.take(x, [0], mode="bogus")
    out = ember.zeros(2, dtype=ember.int64, device=device)
    r = ember.take(x, [5, 0], out=out)
    assert r is out
    assert to_numpy(out).tolist() == [5, 0]
    with pytest.raises(ValueError):
        ember.take(x, [5, 0, 1], out=out)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
@pytest.mark.parametrize("shape,axis", [((0, 3), 0), ((0, 3), None), ((3, 0), 1), ((0,), -1)])
def test_empty_axis_raises(device, name, shape, axis):
    a = np.zeros(shape)
    err = check(
        device,
        lambda x: getattr(ember, name)(x, axis=axis),
        lambda x: getattr(np, name)(x, axis=axis),
        (a,),
    )
    assert isinstance(err, ValueError)
    if name in ("max", "min"):
        assert f"zero-size array to reduction operation {name}imum which has no identity" in str(
            err
        )


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
def test_empty_output_does_not_raise(device, name):
    # NumPy: reducing the non-empty axis of a (0, 3) array gives an empty result, no error
    a = np.zeros((0, 3))
    check(
        device,
        lambda x: getattr(ember, name)(x, axis=1),
        lambda x: getattr(np, name)(x, axis=1),
        (a,),
    )
