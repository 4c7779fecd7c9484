"""ember.sort / argsort / searchsorted / lexsort / partition / argpartition against NumPy: every
dtype, axes, 0-d and empty arrays, views, NaN and -0.0, stable ties (descending too), many short
rows and one long row (the GPU's multi-pass radix path), autograd; on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import ALL_DTYPES, BF16, em, np_dtype, same, to_ember, to_numpy

FLOATS = ["float16", "bfloat16", "float32", "float64"]


def sample(rng, shape, dtype, levels=9):
    """Values with many duplicates (and NaN, +-0.0, +-inf for floating dtypes)."""
    n = int(np.prod(shape))
    if dtype == "bool":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    dt = np_dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        pool = np.array([info.min, info.max, 0, 1, 2, info.max - 1, info.min + 1], dtype=dt)
        v = np.where(rng.random(n) < 0.2, pool[rng.integers(0, len(pool), n)], 0).astype(dt)
        small = rng.integers(0, levels, n).astype(dt)
        return np.where(v == 0, small, v).reshape(shape)
    specials = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, -1.5, 2.25], dtype=np.float64)
    base = np.round(rng.standard_normal(n) * 3).astype(np.float64)
    v = np.where(rng.random(n) < 0.3, specials[rng.integers(0, len(specials), n)], base)
    if dt.kind == "c":
        im = np.where(rng.random(n) < 0.3, specials[rng.integers(0, len(specials), n)], 1.0)
        v = v + 1j * np.round(im)
    return v.astype(dt).reshape(shape)


def host_keys(a):
    """NumPy-sortable keys with the same order as ``a`` (bfloat16 through float32, exactly)."""
    return a.astype(np.float32) if a.dtype == BF16 else a


def ref_argsort(a, axis=-1, descending=False):
    """The stable argsort NumPy would give, descending as the reverse order (NaN first) with ties
    in input order."""
    a = np.moveaxis(host_keys(a), axis, -1)
    if not descending:
        out = np.argsort(a, axis=-1, kind="stable")
    else:
        rows = a.reshape(-1, a.shape[-1]) if a.size else a.reshape(-1, a.shape[-1])
        res = []
        for r in rows:
            if r.dtype.kind == "b":
                keys = (~r,)
            elif r.dtype.kind in "iu":
                keys = (~r,)
            elif r.dtype.kind == "f":
                nan = np.isnan(r)
                keys = (-np.where(nan, 0, r).astype(np.float64), ~nan)
            else:
                re, im = r.real, r.imag
                cls = 2 * np.isnan(re) + np.isnan(im)
                keys = (
                    -np.where(np.isnan(im), 0, im).astype(np.float64),
                    -np.where(np.isnan(re), 0, re).astype(np.float64),
                    -cls,
                )
            res.append(np.lexsort(keys))
        out = np.array(res, dtype=np.int64).reshape(a.shape)
    return np.moveaxis(out, -1, axis)


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.itemsize}") if a.dtype.kind != "b" and a.itemsize <= 8 else a.view("u1")


def check_sort(a, device, axis=-1, descending=False):
    x = to_ember(a, device)
    idx = to_numpy(ember.argsort(x, axis=axis, descending=descending))
    want = ref_argsort(a, axis, descending)
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx, want)
    got = to_numpy(ember.sort(x, axis=axis, descending=descending))
    assert got.dtype == a.dtype and got.shape == a.shape
    # Bit for bit: a stable sort puts every -0.0 and NaN back in a determined place.
    assert np.array_equal(bits(got), bits(np.take_along_axis(a, want, axis=axis)))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_every_dtype(device, dtype, descending):
    rng = np.random.default_rng(hash(dtype) % 1000)
    check_sort(sample(rng, (5, 67), dtype), device, -1, descending)
    check_sort(sample(rng, (300,), dtype, levels=3), device, 0, descending)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64", "complex128"])
def test_nan_and_signed_zero_order(device, dtype):
    vals = [np.nan, 0.0, -0.0, 1.0, -np.inf, np.nan, -0.0, np.inf, -1.0, 0.0]
    a = np.array(vals, dtype=np.float64)
    if dtype.startswith("complex"):
        a = a + 1j * np.array([0, np.nan, 1, 0, 0, np.nan, -0.0, np.nan, 0, 0])
    a = a.astype(dtype)
    got = to_numpy(ember.sort(to_ember(a, device)))
    np.testing.assert_array_equal(got, np.sort(a))
    # -0.0 and 0.0 are equal: a stable sort keeps their input order.
    check_sort(a, device)
    check_sort(a, device, descending=True)


def test_descending_puts_nan_first_and_keeps_ties(device):
    a = np.array([1.0, np.nan, 2.0, -0.0, 2.0, 0.0, np.nan, 1.0], dtype=np.float32)
    x = to_ember(a, device)
    np.testing.assert_array_equal(
        to_numpy(ember.argsort(x, descending=True)), [1, 6, 2, 4, 0, 7, 3, 5]
    )


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, None])
def test_axes(device, axis):
    rng = np.random.default_rng(3)
    a = sample(rng, (4, 5, 6), "float32")
    x = to_ember(a, device)
    if axis is None:
        np.testing.assert_array_equal(
            to_numpy(ember.argsort(x, axis=None)), np.argsort(a, axis=None, kind="stable")
        )
        np.testing.assert_array_equal(to_numpy(ember.sort(x, axis=None)), np.sort(a, axis=None))
        return
    check_sort(a, device, axis)
    check_sort(a, device, axis, descending=True)
    np.testing.assert_array_equal(to_numpy(ember.sort(x, axis)), np.sort(a, axis))


def test_zero_d_raises(device):
    x = ember.asarray(3.0, device=device)
    with pytest.raises(ember.AxisError, match="ember.sort"):
        ember.sort(x)
    # NumPy's argsort reads a 0-d array as 1-d (sort does not)
    np.testing.assert_array_equal(to_numpy(ember.argsort(x)), [0])
    # axis=None flattens, as NumPy.
    np.testing.assert_array_equal(to_numpy(ember.sort(x, axis=None)), [3.0])


@pytest.mark.parametrize("shape,axis", [((0,), 0), ((0, 5), 0), ((0, 5), 1), ((5, 0), 1)])
def test_empty(device, shape, axis):
    a = np.zeros(shape, dtype=np.float32)
    x = to_ember(a, device)
    assert ember.sort(x, axis=axis).shape == shape
    got = ember.argsort(x, axis=axis)
    assert got.shape == shape and got.dtype == ember.int64


@pytest.mark.parametrize("view", ["transposed", "strided", "reversed"])
def test_views(device, view):
    rng = np.random.default_rng(4)
    base = sample(rng, (8, 12), "int16")
    x = to_ember(base, device)
    pick = {
        "transposed": (lambda v: v.T),
        "strided": (lambda v: v[::2, 1::3]),
        "reversed": (lambda v: v[::-1, ::-1]),
    }[view]
    a, xv = pick(base), pick(x)
    for axis in (0, 1):
        np.testing.assert_array_equal(
            to_numpy(ember.argsort(xv, axis=axis)), np.argsort(a, axis=axis, kind="stable")
        )
        np.testing.assert_array_equal(to_numpy(ember.sort(xv, axis=axis)), np.sort(a, axis=axis))
    np.testing.assert_array_equal(to_numpy(x), base)  # the input is untouched


@pytest.mark.parametrize("dtype", ["int8", "uint64", "float16", "bool"])
@pytest.mark.parametrize("descending", [False, True])
def test_stable_ties(device, dtype, descending):
    rng = np.random.default_rng(5)
    a = sample(rng, (20000,), dtype, levels=4)
    check_sort(a, device, descending=descending)


def test_many_short_rows(device):
    # 70000 rows: three bytes of row number on the GPU.
    rng = np.random.default_rng(6)
    a = sample(rng, (70000, 3), "float32")
    check_sort(a, device)
    b = sample(rng, (3000, 37), "int64")
    check_sort(b, device, descending=True)


def test_few_long_rows(device):
    # Rows longer than a GPU block sorts by itself: the multi-block passes, then the row passes.
    rng = np.random.default_rng(14)
    check_sort(sample(rng, (5, 20000), "float32"), device)
    check_sort(sample(rng, (3, 9000), "int64"), device, descending=True)
    check_sort(sample(rng, (300, 9000), "uint8", levels=5), device)


def test_one_long_row(device):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(3_000_000).astype(np.float32)
    a[::1000] = np.nan
    a[1::997] = 0.0
    a[2::991] = -0.0
    x = to_ember(a, device)
    want = np.argsort(a, kind="stable")
    np.testing.assert_array_equal(to_numpy(ember.argsort(x)), want)
    assert np.array_equal(bits(to_numpy(ember.sort(x))), bits(a[want]))


def test_wide_keys(device):
    a = np.array([2**64 - 1, 0, 2**63, 2**63 - 1, 1, 2**64 - 1], dtype=np.uint64)
    check_sort(a, device)
    b = np.array([-(2**63), 2**63 - 1, -1, 0, 1, -(2**63)], dtype=np.int64)
    check_sort(b, device)
    check_sort(b, device, descending=True)


def test_methods_and_kind(device):
    rng = np.random.default_rng(8)
    a = sample(rng, (6, 7), "float64")
    x = to_ember(a, device)
    np.testing.assert_array_equal(to_numpy(x.argsort(axis=0)), np.argsort(a, 0, kind="stable"))
    x.sort(axis=0)
    np.testing.assert_array_equal(to_numpy(x), np.sort(a, axis=0))
    before = to_numpy(x)
    x.sort(descending=True)
    want = np.take_along_axis(before, ref_argsort(before, -1, True), axis=-1)
    np.testing.assert_array_equal(to_numpy(x), want)
    for kind in ("quicksort", "mergesort", "heapsort", "stable"):
        np.testing.assert_array_equal(
            to_numpy(ember.sort(to_ember(a, device), kind=kind)), np.sort(a)
        )
    with pytest.raises(ValueError, match="kind"):
        ember.sort(to_ember(a, device), kind="bogus")
    with pytest.raises(ValueError, match="order"):
        ember.argsort(to_ember(a, device), order="f")
    with pytest.raises(ember.AxisError):
        ember.sort(to_ember(a, device), axis=2)
    with pytest.raises(TypeError, match="axis"):
        ember.sort(to_ember(a, device), axis=1.5)


def test_sort_gradient(device):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((3, 5))
    w = rng.standard_normal((3, 5))
    x = to_ember(a, device)
    x.requires_grad = True
    y = ember.sort(x, axis=0, descending=True)
    (y * to_ember(w, device)).sum().backward()
    order = np.argsort(-a, axis=0, kind="stable")
    want = np.zeros_like(a)
    np.put_along_axis(want, order, w, axis=0)
    np.testing.assert_allclose(to_numpy(x.grad), want)
    np.testing.assert_allclose(to_numpy(y.detach()), -np.sort(-a, axis=0))
    assert not ember.argsort(x).requires_grad


# ---- searchsorted ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_dtypes(device, dtype, side):
    rng = np.random.default_rng(10)
    a = np.sort(host_keys(sample(rng, (50,), dtype)), kind="stable").astype(np_dtype(dtype))
    v = sample(rng, (4, 9), dtype)
    got = ember.searchsorted(to_ember(a, device), to_ember(v, device), side=side)
    want = np.searchsorted(host_keys(a), host_keys(v), side=side)
    assert got.dtype == ember.int64 and got.shape == v.shape
    np.testing.assert_array_equal(to_numpy(got), want)


def test_searchsorted_sorter_scalar_and_promotion(device):
    a = np.array([5, 1, 4, 1, 3], dtype=np.int32)
    s = np.argsort(a, kind="stable")
    x = to_ember(a, device)
    got = ember.searchsorted(
        x, to_ember(np.array([1, 2, 5, 6], np.int32), device), sorter=to_ember(s, device)
    )
    np.testing.assert_array_equal(to_numpy(got), np.searchsorted(a, [1, 2, 5, 6], sorter=s))
    xs = to_ember(np.sort(a), device)
    assert int(ember.searchsorted(xs, 3, side="right")) == 3
    got = ember.searchsorted(xs, 2.5)  # promoted to float64
    assert int(got) == np.searchsorted(np.sort(a), 2.5)
    f = to_ember(np.array([0.5, 1.5, 2.5]), device)
    np.testing.assert_array_equal(
        to_numpy(ember.searchsorted(f, to_ember(a, device))), np.searchsorted([0.5, 1.5, 2.5], a)
    )
    np.testing.assert_array_equal(to_numpy(xs.searchsorted(3, side="left")), 2)
    empty = to_ember(np.zeros(0, np.float32), device)
    np.testing.assert_array_equal(
        to_numpy(ember.searchsorted(empty, f.astype(ember.float32))), [0, 0, 0]
    )


def test_searchsorted_errors(device):
    x = to_ember(np.arange(4.0), device)
    with pytest.raises(ValueError, match="side"):
        ember.searchsorted(x, x, side="middle")
    with pytest.raises(ValueError, match="1-dimensional"):
        ember.searchsorted(x.reshape(2, 2), x)
    with pytest.raises(ValueError, match="sorter"):
        ember.searchsorted(x, x, sorter=to_ember(np.arange(3), device))


# ---- lexsort, partition ------------------------------------------------------------------------


def test_lexsort(device):
    rng = np.random.default_rng(11)
    k1 = rng.integers(0, 3, 40)
    k2 = rng.integers(0, 4, 40).astype(np.float32)
    k3 = rng.integers(0, 2, 40).astype(bool)
    got = ember.lexsort([to_ember(k, device) for k in (k1, k2, k3)])
    np.testing.assert_array_equal(to_numpy(got), np.lexsort((k1, k2, k3)))
    m = rng.integers(0, 3, (2, 5, 6))
    got = ember.lexsort(to_ember(m, device), axis=0)
    np.testing.assert_array_equal(to_numpy(got), np.lexsort(m, axis=0))
    with pytest.raises(ValueError, match="same shape"):
        ember.lexsort([to_ember(k1, device), to_ember(k1[:3], device)])


@pytest.mark.parametrize("kth", [0, 3, -1, [1, 5]])
def test_partition_property(device, kth):
    rng = np.random.default_rng(12)
    a = sample(rng, (4, 9), "float32")
    x = to_ember(a, device)
    p = to_numpy(ember.partition(x, kth, axis=1))
    ip = to_numpy(ember.argpartition(x, kth, axis=1))
    ks = kth if isinstance(kth, list) else [kth]
    srt = np.sort(a, axis=1)
    for k in ks:
        k %= a.shape[1]
        np.testing.assert_array_equal(p[:, k], srt[:, k])
        taken = np.take_along_axis(a, ip, axis=1)
        np.testing.assert_array_equal(taken[:, k], srt[:, k])
        for arr in (p, taken):
            lo, hi = arr[:, :k], arr[:, k + 1 :]
            kv = arr[:, k : k + 1]
            # NaN sorts last: smaller-or-equal before, larger-or-equal (or NaN) after.
            assert np.all((lo <= kv) | np.isnan(kv))
            assert np.all((hi >= kv) | np.isnan(hi))
    assert sorted(ip[0].tolist()) == list(range(9))
    with pytest.raises(ValueError, match="kth"):
        ember.partition(x, 9, axis=1)
    with pytest.raises(ValueError, match="kth"):
        ember.argpartition(x, -10)


def test_partition_method_and_axis_none(device):
    a = np.array([[3, 1, 2], [9, 7, 8]], dtype=np.int32)
    x = to_ember(a, device)
    x.partition(1)
    assert to_numpy(x)[0, 1] == 2 and to_numpy(x)[1, 1] == 8
    p = to_numpy(ember.partition(to_ember(a, device), 2, axis=None))
    assert p.shape == (6,) and p[2] == 3


# ---- scatter-add (take's adjoint), which the GPU computes through a stable sort ---------------


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "uint8", "complex64", "bool"])
def test_add_at_in_input_order(device, dtype):
    rng = np.random.default_rng(13)
    n = 5000
    idx = rng.integers(0, 37, n)
    idx[:1500] = 5  # one long run of repeats
    if dtype == "bool":
        vals = rng.integers(0, 2, n) == 1
    elif dtype == "complex64":
        vals = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    else:
        vals = (rng.standard_normal(n) * 50).astype(dtype)
    base = np.zeros(40, dtype=dtype)
    x = to_ember(base, device)
    ember._core._add_at(x, to_ember(idx, device), to_ember(vals, device), None)
    want = base.copy()
    if dtype == "float16":
        for i, v in zip(idx, vals, strict=True):  # rounded to float16 after each addition
            want[i] = np.float16(np.float32(want[i]) + np.float32(v))
    elif dtype == "bool":
        np.logical_or.at(want, idx, vals)
    else:
        np.add.at(want, idx, vals)
    got = to_numpy(x)
    assert np.array_equal(bits(got), bits(want))


def test_sort_complex(device):
    z = np.array([3 + 1j, 1 - 1j, 1 - 2j, -2 + 0j])
    same(ember.sort_complex(em(z, device)), np.sort_complex(z))
    same(ember.sort_complex(em([3, 1, 2], device)), np.sort_complex(np.array([3, 1, 2])))


A24 = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("axis", [None, 0, (1, 2)])
def test_count_nonzero(device, axis):
    a = (A24 % 3 == 0) * A24
    got = ember.count_nonzero(em(a, device), axis=axis)
    want = np.count_nonzero(a, axis=axis)
    np.testing.assert_array_equal(to_numpy(got), want)
    assert got.dtype == ember.int64


@pytest.mark.parametrize("dtype", ["int16", "uint16", "float16", "bfloat16", "int8", "bool"])
@pytest.mark.parametrize("descending", [False, True])
def test_long_rows_of_narrow_keys(device, dtype, descending):
    # Rows of 1- and 2-byte keys this long sort by counting on the CPU: the values (NaN payloads
    # and signed zeros too) must still be where a stable sort puts them.
    rng = np.random.default_rng(21)
    a = sample(rng, (70000,), dtype, levels=50)
    check_sort(a, device, descending=descending)
    if dtype in ("float16", "int16"):
        b = rng.integers(-(2**15), 2**15, 140000).astype(np.int16)
        if dtype == "float16":
            b = b.view(np.float16)  # every bit pattern: NaN payloads of both signs
        check_sort(b, device, descending=descending)


def test_one_long_row_descending(device):
    rng = np.random.default_rng(22)
    a = rng.standard_normal(1_200_000)
    a[::777] = np.nan
    a[5::1001] = -0.0
    a[6::1003] = 0.0
    check_sort(a, device, descending=True)
    check_sort(rng.integers(-5, 5, 1_100_000).astype(np.int64), device, descending=True)
