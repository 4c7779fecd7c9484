"""dask.array over ember chunks (ember.dask), with Dask's threaded scheduler: every result is
compared with the same Dask pipeline over NumPy chunks (and NumPy itself), and checked to be an
ember array on the chunks' device; a guard fails any test where a chunk comes back from NumPy."""

from __future__ import annotations

import contextlib

import ember
import ember._array
import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import ember.dask  # noqa: E402

RNG = np.random.default_rng(32)


@pytest.fixture
def dev(device):
    """The device, as the ember backend's device, with Dask's threaded scheduler."""
    with dask.config.set({"array.ember.device": device, "scheduler": "threads"}):
        yield device


@contextlib.contextmanager
def _guard():
    """Fails when a floating NumPy array of chunk size becomes an ember array (a chunk that went
    through NumPy and back) or when an ember array is handed to NumPy through ``__array__``
    (what a GPU chunk would need)."""
    real_asarray = ember._array._asarray
    real_array = ember.ndarray.__array__

    def guarded(obj, dtype, device, copy):
        # (integer and boolean NumPy arrays are index arrays, uploaded as indices)
        if isinstance(obj, np.ndarray) and obj.dtype.kind in "fc" and obj.size >= 6:
            raise AssertionError(f"a NumPy array of shape {obj.shape} was converted to ember")
        return real_asarray(obj, dtype, device, copy)

    def no_array(self, *args, **kwargs):
        raise AssertionError("an ember array was converted to NumPy (__array__)")

    ember._array._asarray = guarded
    ember.ndarray.__array__ = no_array
    try:
        yield
    finally:
        ember._array._asarray = real_asarray
        ember.ndarray.__array__ = real_array


@pytest.fixture
def no_host_round_trip(monkeypatch):
    """Every ``Array.compute()`` of the test runs under the guard."""
    compute = da.Array.compute

    def guarded_compute(self, **kwargs):
        with _guard():
            return compute(self, **kwargs)

    monkeypatch.setattr(da.Array, "compute", guarded_compute)


def test_the_guard_catches_a_round_trip():
    a = RNG.standard_normal((6, 6))
    # CPU chunks: a GPU chunk's np.asarray already raises (ember never copies to the host quietly)
    d = da.from_array(ember.asarray(a, device="cpu"), chunks=3)
    through_numpy = d.map_blocks(lambda b: ember.asarray(np.asarray(b) + 0, device="cpu"))
    with _guard(), pytest.raises(AssertionError, match="converted to ember"):
        through_numpy.compute()


def _pair(shape, dtype="float64", chunks=(3, 2), device="cpu"):
    """The same data as a Dask array of ember chunks on `device` and of NumPy chunks."""
    if np.dtype(dtype).kind == "f":
        a = RNG.standard_normal(shape).astype(dtype)
    elif np.dtype(dtype).kind == "b":
        a = RNG.random(shape) > 0.5
    else:
        a = RNG.integers(-20, 20, shape).astype(dtype)
    x = ember.asarray(a, device=device)
    return da.from_array(x, chunks=chunks), da.from_array(a, chunks=chunks), a


def _check(result, expected, device, rtol=1e-6, atol=1e-9):
    """`result` (computed) is an ember array on `device` equal to `expected` (NumPy)."""
    assert type(result) is ember.ndarray, type(result)
    assert result.device == ember.Device(device)
    got = ember.asnumpy(result)
    expected = np.asarray(expected)
    assert got.shape == expected.shape
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, expected)


def _assert_ember_graph(d, device):
    assert type(d._meta) is ember.ndarray
    assert d._meta.device == ember.Device(device)


# ---- chunks, meta, the first example ---------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_from_array_keeps_ember_chunks_and_meta(dev, dtype):
    d, dn, a = _pair((7, 5), dtype, device=dev)
    _assert_ember_graph(d, dev)
    assert d.dtype == dn.dtype == np.dtype(dtype)
    assert d.chunks == ((3, 3, 1), (2, 2, 1))
    for block in d.to_delayed().ravel():
        c = block.compute()
        assert type(c) is ember.ndarray and c.device == ember.Device(dev)
    assert "ember.ndarray" in repr(d)


def test_sum_axis0_compute_stays_on_device(dev, no_host_round_trip):
    d, dn, a = _pair((7, 5), device=dev)
    r = d.sum(axis=0)
    _assert_ember_graph(r, dev)
    _check(r.compute(), dn.sum(axis=0).compute(), dev)


# ---- reductions --------------------------------------------------------------------------------

_REDUCTIONS = ["sum", "mean", "std", "var", "min", "max", "argmin", "argmax", "prod"]


@pytest.mark.parametrize("name", _REDUCTIONS)
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_reductions(dev, no_host_round_trip, name, axis, dtype):
    d, dn, a = _pair((7, 5), dtype, device=dev)
    if name == "prod":
        d, dn = d / 8 if dtype != "int32" else d % 3, dn / 8 if dtype != "int32" else dn % 3
    r = getattr(d, name)(axis=axis)
    _assert_ember_graph(r, dev)
    rtol = 1e-4 if dtype == "float32" else 1e-9
    _check(r.compute(), getattr(dn, name)(axis=axis).compute(), dev, rtol=rtol, atol=1e-5)


@pytest.mark.parametrize("name", ["std", "var"])
def test_ddof_and_keepdims(dev, no_host_round_trip, name):
    d, dn, _ = _pair((6, 7), chunks=(4, 3), device=dev)
    r = getattr(d, name)(axis=1, ddof=1, keepdims=True).compute()
    _check(r, getattr(dn, name)(axis=1, ddof=1, keepdims=True).compute(), dev)


@pytest.mark.parametrize(
    "fn", ["nansum", "nanmean", "nanstd", "nanmin", "nanmax", "nanargmax", "nanvar"]
)
def test_nan_reductions(dev, no_host_round_trip, fn):
    a = RNG.standard_normal((7, 5))
    a[1, 2] = a[4, 0] = np.nan
    d = da.from_array(ember.asarray(a, device=dev), chunks=(3, 2))
    dn = da.from_array(a, chunks=(3, 2))
    _check(getattr(da, fn)(d, axis=0).compute(), getattr(da, fn)(dn, axis=0).compute(), dev)


def test_boolean_reductions_and_counts(dev, no_host_round_trip):
    d, dn, _ = _pair((7, 5), device=dev)
    _check((d > 0).any(axis=0).compute(), (dn > 0).any(axis=0).compute(), dev)
    _check((d > -5).all(axis=1).compute(), (dn > -5).all(axis=1).compute(), dev)
    _check(da.count_nonzero(d > 0, axis=0).compute(), da.count_nonzero(dn > 0, axis=0), dev)
    _check(d.cumsum(axis=0).compute(), dn.cumsum(axis=0).compute(), dev)
    _check(da.moment(d, 3, axis=0).compute(), da.moment(dn, 3, axis=0).compute(), dev)


# ---- elementwise, mixed operands ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_elementwise(dev, no_host_round_trip, dtype):
    d, dn, a = _pair((7, 5), dtype, device=dev)
    e, en, _ = _pair((7, 5), dtype, device=dev)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    _check((d * 2 + 1).compute(), (dn * 2 + 1).compute(), dev, rtol=rtol)
    _check((d - e * d).compute(), (dn - en * dn).compute(), dev, rtol=rtol)
    _check(abs(-d).compute(), abs(-dn).compute(), dev)
    _check((d >= e).compute(), (dn >= en).compute(), dev)
    _check(da.where(d > 0, d, e).compute(), da.where(dn > 0, dn, en).compute(), dev)
    _check(np.maximum(d, e).compute(), np.maximum(dn, en).compute(), dev)
    if dtype != "int64":
        _check(np.sin(d).compute(), np.sin(dn).compute(), dev, rtol=rtol, atol=1e-6)
        _check(da.exp(d / 4).compute(), da.exp(dn / 4).compute(), dev, rtol=rtol)
    _check(d.astype("float32").compute(), dn.astype("float32").compute(), dev, rtol=1e-6)


def test_mixed_with_an_ember_array(dev, no_host_round_trip):
    """An ember array operand defers to the Dask array (NotImplemented), on either side."""
    d, dn, a = _pair((6, 4), device=dev)
    b = RNG.standard_normal(4)
    y = ember.asarray(b, device=dev)
    for r, ref in [
        (d + y, dn + b),
        (y + d, b + dn),
        (y * d - d, b * dn - dn),
        (np.add(y, d), b + dn),
    ]:
        assert isinstance(r, da.Array)
        _assert_ember_graph(r, dev)
        _check(r.compute(), ref.compute(), dev)


# ---- linear algebra ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_tensordot_einsum(dev, no_host_round_trip, dtype):
    d, dn, _ = _pair((7, 5), dtype, device=dev)
    e, en, _ = _pair((5, 4), dtype, chunks=(2, 3), device=dev)
    rtol = 1e-4 if dtype == "float32" else 1e-10
    _check((d @ e).compute(), (dn @ en).compute(), dev, rtol=rtol, atol=1e-5)
    _check((d @ d.T).compute(), (dn @ dn.T).compute(), dev, rtol=rtol, atol=1e-5)
    t = da.tensordot(d, d, axes=([0], [0]))
    _check(t.compute(), da.tensordot(dn, dn, axes=([0], [0])).compute(), dev, rtol=rtol, atol=1e-5)
    s = da.einsum("ij,ij->i", d, d)
    _check(s.compute(), da.einsum("ij,ij->i", dn, dn).compute(), dev, rtol=rtol, atol=1e-5)
    _check(da.dot(d, e).compute(), da.dot(dn, en).compute(), dev, rtol=rtol, atol=1e-5)


def test_tall_skinny_qr_and_svd(dev, no_host_round_trip):
    d, dn, a = _pair((40, 4), chunks=(10, 4), device=dev)
    q, r = da.linalg.qr(d)
    _assert_ember_graph(q, dev)
    qc, rc = q.compute(), r.compute()
    _check(qc @ rc, a, dev, rtol=1e-10, atol=1e-10)
    _check(qc.T @ qc, np.eye(4), dev, atol=1e-10)
    u, s, vt = da.linalg.svd(d)
    _check(s.compute(), np.linalg.svd(a, compute_uv=False), dev, rtol=1e-10)
    uc = u.compute()
    _check((uc * s.compute()) @ vt.compute(), a, dev, atol=1e-10)


# ---- reshaping, slicing, joining ---------------------------------------------------------------


def test_rechunk_slicing_reshape(dev, no_host_round_trip):
    d, dn, a = _pair((9, 8), chunks=(4, 3), device=dev)
    r = d.rechunk((2, 5))
    assert r.chunks == ((2, 2, 2, 2, 1), (5, 3))
    _check(r.compute(), a, dev)
    _check(d.rechunk({0: -1}).compute(), a, dev)
    for key in [
        (slice(1, 8, 2), slice(None, None, -1)),
        (slice(None), 3),
        (-1,),
        (Ellipsis, slice(2, 7)),
        (None, slice(0, 5), slice(None, None, 3)),
    ]:
        _check(d[key].compute(), a[key], dev)
    idx = [0, 5, 3, 3, 8]
    _check(d[idx].compute(), a[idx], dev)
    _check(d[:, [7, 0, 2]].compute(), a[:, [7, 0, 2]], dev)
    _check(d[d > 0].compute(), a[a > 0], dev)
    _check(d.reshape(72).compute(), a.reshape(72), dev)
    _check(d.reshape(3, 3, 8).compute(), a.reshape(3, 3, 8), dev)
    _check(d.T.compute(), a.T, dev)
    _check(da.flip(d, 1).compute(), a[:, ::-1], dev)
    _check(d[None].squeeze(0).compute(), a, dev)


def test_concatenate_stack(dev, no_host_round_trip):
    d, dn, a = _pair((5, 4), device=dev)
    e, en, b = _pair((5, 4), device=dev)
    _check(da.concatenate([d, e], axis=0).compute(), np.concatenate([a, b], 0), dev)
    _check(da.concatenate([d, e, d], axis=1).compute(), np.concatenate([a, b, a], 1), dev)
    _check(da.stack([d, e]).compute(), np.stack([a, b]), dev)
    _check(da.stack([d, e], axis=2).compute(), np.stack([a, b], axis=2), dev)
    _check(da.block([[d, e]]).compute(), np.block([[a, b]]), dev)


# ---- map_blocks, blockwise, map_overlap ----------------------------------------------------------


def test_map_blocks_blockwise_map_overlap(dev, no_host_round_trip):
    d, dn, a = _pair((9, 8), chunks=(4, 3), device=dev)
    m = d.map_blocks(lambda b: ember.tanh(b) * 2)
    _assert_ember_graph(m, dev)
    _check(m.compute(), np.tanh(a) * 2, dev, rtol=1e-12)
    s = d.map_blocks(lambda b: b.sum(axis=1, keepdims=True), chunks=(d.chunks[0], (1,) * 3))
    _check(s.compute(), dn.map_blocks(lambda b: b.sum(1, keepdims=True)).compute(), dev)
    b = da.blockwise(lambda x, y: x * y, "ij", d, "ij", d.T.T, "ij", dtype=d.dtype)
    _check(b.compute(), a * a, dev)

    def smooth(block):
        return (block[:-2] + block[1:-1] + block[2:]) / 3

    def smooth_same(block):
        out = ember.zeros_like(block)
        out[1:-1] = smooth(block)
        return out

    o = d.map_overlap(smooth_same, depth={0: 1, 1: 0}, boundary="none")
    on = dn.map_overlap(
        lambda b: np.pad(smooth(b), ((1, 1), (0, 0))), depth={0: 1, 1: 0}, boundary="none"
    )
    _check(o.compute()[1:-1], on.compute()[1:-1], dev)
    r = d.map_overlap(lambda b: b + 1, depth=1, boundary="reflect")
    _check(r.compute(), a + 1, dev)


def test_map_overlap_with_ember_ndimage(dev, no_host_round_trip):
    """A filter over chunk borders: ember.ndimage on ember chunks against SciPy on NumPy
    chunks, through the same Dask pipeline."""
    scipy_ndimage = pytest.importorskip("scipy.ndimage")
    uniform_filter = getattr(ember.ndimage, "uniform_filter", None)
    if uniform_filter is None:
        pytest.skip("ember.ndimage.uniform_filter is not there yet")
    d, dn, a = _pair((12, 10), chunks=(5, 4), device=dev)
    kw = {"depth": 1, "boundary": "reflect"}
    # meta= spares Dask's probe call on an empty array (ember.ndimage raises on empty input)
    r = d.map_overlap(lambda b: uniform_filter(b, size=3), meta=d._meta, **kw)
    _assert_ember_graph(r, dev)
    ref = dn.map_overlap(lambda b: scipy_ndimage.uniform_filter(b, size=3), **kw).compute()
    _check(r.compute(), ref, dev, rtol=1e-12, atol=1e-12)


def test_sizeof_counts_the_data(device):
    from dask.sizeof import sizeof

    assert sizeof(ember.ones((100, 10), dtype="float32", device=device)) == 4000


# ---- percentile, quantile ----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_percentile(dev, method):
    d, dn, a = _pair((40,), chunks=(40,), device=dev)
    q = [5, 25, 50, 75, 95]
    r = da.percentile(d, q, method=method)
    _assert_ember_graph(r, dev)
    # one chunk: exact NumPy; several chunks: Dask's merge, compared with Dask over NumPy
    _check(r.compute(), np.percentile(a, q, method=method), dev)
    d4, dn4 = d.rechunk(10), dn.rechunk(10)
    ref = da.percentile(dn4, q, method=method).compute()
    _check(da.percentile(d4, q, method=method).compute(), ref, dev)


def test_quantile_2d(dev):
    d, dn, a = _pair((7, 6), chunks=(7, 3), device=dev)
    r = da.quantile(d, [0.1, 0.9], axis=0)
    _check(r.compute(), np.quantile(a, [0.1, 0.9], axis=0), dev)


# ---- the "ember" backend -----------------------------------------------------------------------


def test_backend_creation(dev, no_host_round_trip):
    with dask.config.set({"array.backend": "ember"}):
        for x, ref in [
            (da.ones((5, 4), chunks=2), np.ones((5, 4))),
            (da.zeros((7,), chunks=3, dtype="int32"), np.zeros(7, "int32")),
            (da.full((3, 5), 2.5, chunks=(2, 2)), np.full((3, 5), 2.5)),
            (da.arange(3, 20, 2, chunks=4), np.arange(3, 20, 2)),
            (da.arange(10, chunks=4, dtype="float32"), np.arange(10, dtype="float32")),
        ]:
            _assert_ember_graph(x, dev)
            _check(x.compute(), ref, dev)
        e = da.empty((4, 3), chunks=2)
        assert e.compute().shape == (4, 3) and type(e.compute()) is ember.ndarray
        _check((da.ones((6, 6), chunks=4) * 3).sum(axis=0).compute(), np.full(6, 18.0), dev)
    # device= picks another device than the backend's
    with dask.config.set({"array.backend": "ember", "array.ember.device": "cpu"}):
        x = da.ones(5, chunks=2, device=dev)
        _assert_ember_graph(x, dev)


def test_backend_random(dev, no_host_round_trip):
    with dask.config.set({"array.backend": "ember"}):
        rng = da.random.default_rng(42)
        x = rng.normal(2.0, 3.0, size=(300, 40), chunks=(100, 20))
        _assert_ember_graph(x, dev)
        c = x.compute()
        _check(c, c, dev)
        assert abs(float(c.mean()) - 2.0) < 0.1 and abs(float(c.std()) - 3.0) < 0.1
        # the same seed gives the same chunks; another seed others; chunks are independent
        again = da.random.default_rng(42).normal(2.0, 3.0, size=(300, 40), chunks=(100, 20))
        np.testing.assert_array_equal(ember.asnumpy(again.compute()), ember.asnumpy(c))
        other = ember.asnumpy(da.random.default_rng(7).normal(size=(300, 40), chunks=(100, 20)))
        assert not np.allclose(other, ember.asnumpy(c))
        blocks = ember.asnumpy(c)
        assert not np.allclose(blocks[:100, :20], blocks[100:200, :20])
        u = rng.random(50, chunks=20).compute()
        assert 0 <= float(u.min()) and float(u.max()) < 1 and u.device == ember.Device(dev)
        i = rng.integers(0, 10, size=60, chunks=25, dtype="int32").compute()
        assert i.dtype == ember.int32 and 0 <= int(i.min()) and int(i.max()) < 10
        p = rng.permutation(9).compute()
        np.testing.assert_array_equal(np.sort(ember.asnumpy(p)), np.arange(9))
        # the legacy RandomState functions
        r = da.random.RandomState(3).uniform(1, 2, size=(20,), chunks=7).compute()
        assert type(r) is ember.ndarray and 1 <= float(r.min()) and float(r.max()) < 2
        s = da.random.normal(size=10, chunks=4)
        _assert_ember_graph(s, dev)
        k = da.random.randint(0, 5, size=12, chunks=5).compute()
        assert type(k) is ember.ndarray and int(k.max()) < 5


def test_backend_random_class_pickles_by_reference(dev):
    import pickle

    from ember.dask import _random

    cls = _random.generator_class(dev)
    assert pickle.loads(pickle.dumps(cls)) is cls
    g = cls(5)
    h = pickle.loads(pickle.dumps(g))
    np.testing.assert_array_equal(ember.asnumpy(g.random(4)), ember.asnumpy(h.random(4)))
    with pytest.raises(AttributeError):
        _random.Nothing_cpu  # noqa: B018


def test_to_backend_ember_keeps_ember_graphs(dev, no_host_round_trip):
    d, dn, a = _pair((6, 5), device=dev)
    assert d.to_backend("ember") is d
    assert d.to_backend("ember", device=dev) is d
    with pytest.raises(ValueError, match="No backend dispatch registered"):
        d.to_backend("no-such-backend")


def test_to_backend_numpy_and_store(dev):
    d, dn, a = _pair((6, 5), device=dev)
    h = d.to_backend("numpy")  # the explicit host copy
    assert type(h._meta) is np.ndarray
    target = np.zeros((6, 5))
    da.store(h, target)
    np.testing.assert_array_equal(target, a)
    back = da.from_array(a, chunks=3).to_backend("ember", device=dev)
    _check(back.compute(), a, dev)


# ---- tokens ------------------------------------------------------------------------------------


def test_tokenize(dev):
    from dask.base import tokenize

    a = RNG.standard_normal((5, 3))
    x = ember.asarray(a, device=dev, copy=True)
    assert tokenize(x) == tokenize(x) == tokenize(ember.asarray(a, device=dev, copy=True))
    y = ember.asarray(a, device=dev, copy=True)
    y[4, 2] = y[4, 2] + 1e-12
    assert tokenize(y) != tokenize(x)
    assert tokenize(x.astype("float32")) != tokenize(x)
    assert tokenize(x.reshape(3, 5)) != tokenize(x)
    assert tokenize(x[:, 1:]) == tokenize(ember.asarray(a[:, 1:].copy(), device=dev))
    assert da.from_array(x, chunks=2).name == da.from_array(x, chunks=2).name


def test_device_digest_is_content_hash():
    """The on-device digest (used for GPU arrays), checked on CPU arrays: equal bytes, equal
    digest; any byte changed, the word order swapped or the length changed, a new digest."""
    from ember.dask._tokenize import device_digest

    a = RNG.integers(0, 2**63, 37, dtype=np.uint64)
    x = ember.asarray(a)
    base = device_digest(x)
    assert base == device_digest(ember.asarray(a.copy()))
    b = a.copy()
    b[[3, 9]] ^= np.uint64(1 << 63)  # top bit of two words: no linear cancellation
    assert device_digest(ember.asarray(b)) != base
    assert device_digest(ember.asarray(a[::-1].copy())) != base
    assert device_digest(ember.asarray(a[:-1].copy())) != base
    u8 = ember.asarray(a).view(ember.uint8)[:-3]  # a tail of 5 bytes past the last word
    v = ember.asnumpy(u8).copy()
    v[-1] ^= 1
    assert device_digest(u8) != device_digest(ember.asarray(v))
    nc = ember.asarray(a.reshape(37, 1)[::2])  # non-contiguous source
    assert device_digest(nc) == device_digest(ember.asarray(a[::2].copy()))


# ---- what has to hold on ember's side ------------------------------------------------------------


def test_ember_defers_to_dask(dev):
    x = ember.asarray(RNG.standard_normal((4, 3)), device=dev)
    d = da.ones((4, 3), chunks=2)
    for op in [
        "__add__",
        "__radd__",
        "__sub__",
        "__mul__",
        "__truediv__",
        "__matmul__",
        "__lt__",
        "__eq__",
        "__pow__",
        "__floordiv__",
        "__mod__",
        "__and__",
    ]:
        assert getattr(x, op)(d) is NotImplemented, op
    assert x.__array_ufunc__(np.add, "__call__", x, d) is NotImplemented
    assert x.__array_function__(np.concatenate, (ember.ndarray, da.Array), ([x, d],), {}) is (
        NotImplemented
    )
    assert np.dtype(x.dtype) == np.float64
    assert np.dtype(ember.ones(2, dtype="int16", device=dev).dtype) == np.int16
    # NumPy functions on ember arrays run ember's, on the device (what Dask calls on chunks)
    s = np.sum(x, axis=0, keepdims=True)
    assert type(s) is ember.ndarray and s.device == x.device
    z = np.zeros_like(x, shape=(2, 5), dtype="int32")
    assert type(z) is ember.ndarray and z.shape == (2, 5) and z.dtype == ember.int32
    assert z.device == x.device
    f = np.full_like(x, 3.0, "float32", shape=())
    assert f.shape == () and f.dtype == ember.float32
    # like= puts new arrays on like's device; an ember array keeps its own
    assert np.asarray([1, 2], like=x).device == x.device
    assert np.empty(3, like=x).device == x.device
    assert np.asarray(x, like=ember.empty((), device="cpu")) is not None


def test_ember_defers_to_other_ufunc_containers():
    """NEP 13 beyond Dask: a pandas Series operand gets the operation; a function argument is
    still converted as ember.asarray converts it."""
    pd = pytest.importorskip("pandas")
    s = pd.Series([1.0, 2.0, 3.0])
    x = ember.asarray([1.0, 2.0, 4.0], device="cpu")  # pandas computes on the host
    r = x + s
    assert isinstance(r, pd.Series)
    np.testing.assert_array_equal(r.to_numpy(), [2.0, 4.0, 7.0])
    assert float(ember.sum(s)) == 6.0
    with pytest.raises(TypeError, match="ember.asarray"):
        ember.add(x, s)


def test_like_shape_errors():
    x = ember.ones(3)
    with pytest.raises(ValueError, match="order"):
        ember.zeros_like(x, order="X")
    with pytest.raises(TypeError):
        ember.ones_like(x, shape=(2.5,))


def test_shuffle_takes_with_host_indices(dev, no_host_round_trip):
    """da.shuffle regroups rows with take_lookup and NumPy index arrays."""
    d, dn, a = _pair((10, 3), chunks=(3, 3), device=dev)
    idx = np.array([0, 1, 1, 2, 0, 2, 1, 0, 2, 1])
    indexer = [np.flatnonzero(idx == k).tolist() for k in range(3)]
    r = da.shuffle(d, indexer, axis=0)
    ref = da.shuffle(dn, indexer, axis=0).compute()
    _check(r.compute(), ref, dev)


def test_backend_entry_point(tmp_path):
    """The entry point an installed ember declares (in pyproject.toml's table
    [project.entry-points."dask.array.backends"]: ember = "ember.dask.backend:Ember...") lets
    ``array.backend = "ember"`` work in a fresh process that never imported ember.dask."""
    import os
    import subprocess
    import sys

    info = tmp_path / "ember_entry_point-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ember-entry-point\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[dask.array.backends]\nember = ember.dask.backend:EmberBackendEntrypoint\n"
    )
    code = (
        "import sys, dask, dask.array as da\n"
        "with dask.config.set({'array.backend': 'ember'}):\n"
        "    x = da.ones((4, 3), chunks=2) * 2\n"
        "assert 'ember.dask' in sys.modules\n"
        "r = x.sum(axis=0).compute()\n"
        "print(type(x._meta).__module__, type(r).__module__, r.tolist())\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *sys.path])
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ember", "ember", "[8.0,", "8.0,", "8.0]"]
