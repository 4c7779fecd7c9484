"""The WRITEABLE flag (ndarray.flags) as NumPy's: broadcast views are read-only, views of a
read-only array are read-only, and every write path (setitem, in-place operators, out=, fill,
copyto, put, ...) raises ValueError; NumPy views and DLPack exports stay read-only; float NaN
and infinities written into integer arrays raise as in NumPy. On both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_ember, to_numpy


def read_only(device):
    base = to_ember(np.arange(3.0), device)
    return base, ember.broadcast_to(base, (2, 3))


def test_broadcast_to_is_read_only(device):
    base, b = read_only(device)
    assert not b.flags.writeable
    assert not b.flags["WRITEABLE"] and not b.flags["W"]
    assert base.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        b += 1
    with pytest.raises(ValueError, match="read-only"):
        b[0, 0] = 5.0
    assert np.array_equal(to_numpy(base), np.arange(3.0))
    # the same as NumPy: the flag can be set again, then writes go to the base
    nb = np.broadcast_to(np.arange(3.0), (2, 3))
    with pytest.raises(ValueError):
        nb += 1


@pytest.mark.parametrize(
    "write",
    [
        lambda b: b.__setitem__(0, 1.0),
        lambda b: b.__setitem__((slice(None), 1), 1.0),
        lambda b: b.__setitem__([0], 1.0),
        lambda b: b.__setitem__(b > 0, 1.0),
        lambda b: b.__setitem__(..., ember.zeros((2, 3), device=b.device)),
        lambda b: b.__iadd__(1.0),
        lambda b: b.__imul__(2.0),
        lambda b: b.fill(0.0),
        lambda b: ember.copyto(b, 1.0),
        lambda b: ember.add(b, 1.0, out=b) if _has_out() else b.__isub__(1.0),
        lambda b: ember.put(b, [0], [1.0]),
        lambda b: ember.place(b, b > 0, [1.0]),
        lambda b: ember.putmask(b, b > 0, 1.0),
        lambda b: b.sort(),
        lambda b: ember.take(ember.arange(3.0, device=b.device), [0, 1, 2], out=b[0]),
    ],
)
def test_every_write_path_raises(device, write):
    base, b = read_only(device)
    with pytest.raises(ValueError, match="read-only"):
        write(b)
    assert np.array_equal(to_numpy(base), np.arange(3.0))


def _has_out():
    try:
        ember.add(ember.zeros(1), 1.0, out=ember.zeros(1))
    except TypeError:
        return False
    return True


def test_views_inherit(device):
    base, b = read_only(device)
    views = [b[0], b[:, ::2], b.T, b[None], b.view(), ember.squeeze(b[None]), b[..., 1]]
    views += [ember.expand_dims(b, 0), b[...], b.swapaxes(0, 1), b.detach(), b[0].reshape(3)]
    views += [b[0].ravel(), ember.reshape(b[0], (3, 1)), b.view(ember.int64)]
    for v in views:
        assert not v.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            v[...] = 0.0
    # copies and casts are new, writeable arrays (reshape and ravel copy a broadcast view)
    for c in [b.copy(), b.astype(ember.float32), b + 1, ember.asarray(b, copy=True)]:
        assert c.flags.writeable
        c[...] = 0.0
    for c in [b.reshape(6), b.ravel(), b.flatten()]:
        assert c.flags.writeable
        c[...] = 0.0


def test_set_flag(device):
    x = to_ember(np.arange(4.0), device)
    x.flags.writeable = False
    v = x[1:]
    assert not v.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        x[0] = 1.0
    x.flags["WRITEABLE"] = True
    x[0] = 7.0
    assert float(x[0]) == 7.0
    with pytest.raises(KeyError):
        x.flags["NOPE"]
    with pytest.raises(ValueError):
        x.flags["C_CONTIGUOUS"] = False


def test_layout_flags_as_numpy(device):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = to_ember(a, device)
    for key in [..., (slice(None), slice(None, None, 2)), (0,), (slice(None), 0, slice(1, 2))]:
        for rev in (False, True):
            want, got = a[key], x[key]
            if rev:
                want = np.transpose(want)
                got = ember.permute_dims(got, tuple(reversed(range(got.ndim))))
            assert got.flags.c_contiguous == want.flags.c_contiguous
            assert got.flags.f_contiguous == want.flags.f_contiguous
            assert got.flags["C"] == want.flags["C"] and got.flags["F"] == want.flags["F"]
    # on the CPU to_ember shares a NumPy array's memory; on a GPU it copies into a new block
    assert x.flags.owndata == (device != "cpu")
    z = ember.zeros((2, 3), device=device)
    assert z.flags.owndata
    assert not z[1:].flags.owndata and not z[:, :2].flags.owndata
    assert ember.zeros((0, 3), device=device).flags.c_contiguous
    assert "WRITEABLE : True" in repr(x.flags)


def test_broadcast_arrays(device):
    x = to_ember(np.arange(3.0), device)
    y = to_ember(np.ones((2, 3)), device)
    bx, by = ember.broadcast_arrays(x, y)
    assert bx.shape == by.shape == (2, 3)
    assert not bx.flags.writeable
    assert by.flags.writeable  # already of the common shape: as it is
    by[0, 0] = 5.0


def test_numpy_views_are_read_only():
    base, b = read_only("cpu")
    for a in (np.asarray(b), ember.asnumpy(b), np.asarray(b[0])):
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a[...] = 1
    assert np.asarray(base).flags.writeable
    assert np.array(b).flags.writeable  # a copy
    assert memoryview(b).readonly
    assert not memoryview(base).readonly


def test_dlpack_export_read_only():
    base, b = read_only("cpu")
    # a legacy capsule cannot mark memory read-only: NumPy refuses, so does ember
    with pytest.raises(BufferError):
        b.__dlpack__()
    b.__dlpack__(max_version=(1, 0))
    n = np.from_dlpack(b)
    assert not n.flags.writeable
    assert np.array_equal(n, np.broadcast_to(np.arange(3.0), (2, 3)))
    assert np.from_dlpack(b, copy=True).flags.writeable
    assert np.from_dlpack(base).flags.writeable


def test_optimizer_steps_unaffected(device):
    w = ember.nn.Parameter(to_ember(np.ones(3, np.float32), device))
    opt = ember.optim.SGD([w], lr=0.5)
    (w * w).sum().backward()
    opt.step()
    assert np.allclose(to_numpy(w), 0.0)


# ---- float NaN and infinities into integer arrays --------------------------------------------


INT_DTYPES = ["int8", "uint8", "int32", "int64", "uint64"]


def np_error(f):
    try:
        f()
    except Exception as e:
        return type(e)
    return None


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), -float("inf"), 300.0, -1.0, 1e300, 2.0**63, 2.0**64, -5.5, 7.9],
)
def test_python_float_into_int(device, dtype, value):
    a = np.zeros(3, dtype)
    x = ember.zeros(3, dtype=getattr(ember, dtype), device=device)
    for write in (
        lambda z: z.__setitem__(0, value),
        lambda z: z.__setitem__([0], value),
        lambda z: z.__setitem__(slice(None), value),
        lambda z: z.fill(value),
    ):
        want = np_error(lambda w=write: w(a))
        if want is None:
            write(x)
            assert np.array_equal(to_numpy(x), a)
        else:
            with pytest.raises(want):
                write(x)


def test_nan_messages(device):
    x = ember.zeros(3, dtype=ember.int32, device=device)
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        x[0] = float("nan")
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        x[ember.asarray([True, False, True], device=device)] = np.nan
    with pytest.raises(OverflowError, match="cannot convert float infinity to integer"):
        x[1:] = np.float32("-inf")
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        x[0] = np.float64("nan")
    assert np.array_equal(to_numpy(x), np.zeros(3))
    # a boolean array takes NaN (True), as NumPy's
    b = ember.zeros(2, dtype=ember.bool, device=device)
    b[0] = float("nan")
    assert to_numpy(b).tolist() == [True, False]


def test_float_array_into_int_casts(device):
    # NumPy casts arrays unsafely (with a RuntimeWarning for NaN): no error
    x = ember.zeros(3, dtype=ember.int64, device=device)
    x[:] = to_ember(np.array([1.5, -2.5, 3.0]), device)
    assert to_numpy(x).tolist() == [1, -2, 3]
    x[:] = to_ember(np.array([np.nan, 1.0, 2.0]), device)
    assert to_numpy(x)[1:].tolist() == [1, 2]
    assert ember.full(2, np.nan, dtype=ember.int32, device=device).shape == (2,)
