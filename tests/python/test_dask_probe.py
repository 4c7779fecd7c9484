"""A first-contact probe of everyday Dask code on ember (array and dataframe backends), with
Dask's threaded scheduler: each pipeline runs on ember chunks/partitions and on NumPy/pandas, the
results must agree, chunks and partitions must stay ember's, and array pipelines run under a
guard that fails on a host round trip (an ember chunk handed to NumPy, a NumPy chunk uploaded)."""

from __future__ import annotations

import contextlib

import ember
import ember._array
import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

import ember.dask  # noqa: E402
import ember.frame as ef  # noqa: E402
from test_dask_frame import _host  # noqa: E402

A = np.random.default_rng(0).standard_normal((12, 10))
B = np.random.default_rng(1).standard_normal((10, 8))
S = np.random.default_rng(2).standard_normal((10, 10)) + 10 * np.eye(10)
T = np.random.default_rng(3).standard_normal((40, 5))
V = np.arange(30) % 7


@contextlib.contextmanager
def _guard():
    real_asarray = ember._array._asarray
    real_array = ember.ndarray.__array__

    def guarded(obj, dtype, device, copy):
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
def dev(device):
    with dask.config.set({"array.ember.device": device, "scheduler": "threads"}):
        yield device


def _x(xp, a=A, chunks=(4, 5), device="cpu"):
    return da.from_array(a if xp == "numpy" else ember.asarray(a, device=device), chunks=chunks)


def _run_pair(fn, device, rtol=1e-6, atol=1e-9, check_meta=True):
    """``fn(xp, device)`` on NumPy (the reference) and on ember (the "ember" array backend),
    computed together; every ember result is an ember array on ``device`` with an ember meta
    (``check_meta=False``: Dask itself gives the collection a NumPy meta, see DASK_NUMPY_META)."""
    with dask.config.set({"array.backend": "numpy"}):
        ref = dask.compute(*fn("numpy", device))
    with dask.config.set({"array.backend": "ember"}):
        objs = fn("ember", device)
        for o in objs:
            assert not check_meta or type(o._meta) is ember.ndarray, type(o._meta)
        with _guard():
            got = dask.compute(*objs)
    for r, g in zip(ref, got, strict=True):
        assert type(g) is ember.ndarray and g.device == ember.Device(device), type(g)
        g = ember.asnumpy(g)
        assert g.shape == np.shape(r)
        if np.asarray(r).dtype.kind in "fc":
            np.testing.assert_allclose(g, r, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, r)


ARRAY_CASES = {
    "ones": lambda xp, d: (da.ones((6, 7), chunks=3), da.zeros((6, 7), chunks=3, dtype="i4")),
    "full_arange": lambda xp, d: (da.full((6, 7), 2.5, chunks=3), da.arange(0, 20, 2, chunks=4)),
    "random": lambda xp, d: (
        (da.random.default_rng(0).normal(size=(2000,), chunks=500).mean() < 0.2).astype("i1"),
        (da.random.randint(0, 5, size=(50,), chunks=10) < 5).all().astype("i1"),
        da.random.random((20, 3), chunks=5).sum(axis=0) * 0,
    ),
    "elementwise": lambda xp, d: (
        np.sin(_x(xp, device=d)),
        da.exp(_x(xp, device=d)) + 1 * _x(xp, device=d) ** 2,
        np.maximum(_x(xp, device=d), 0),
    ),
    "reductions": lambda xp, d: (
        _x(xp, device=d).sum(axis=0),
        _x(xp, device=d).mean(axis=1, keepdims=True),
        _x(xp, device=d).var(axis=0, ddof=1),
        _x(xp, device=d).std(),
        da.nansum(_x(xp, device=d), axis=0),
    ),
    "arg_cum": lambda xp, d: (
        _x(xp, device=d).argmax(axis=0),
        _x(xp, device=d).argmin(),
        _x(xp, device=d).cumsum(axis=1),
        _x(xp, device=d).cumprod(axis=0),
    ),
    "products": lambda xp, d: (
        _x(xp, device=d).T,
        _x(xp, device=d).dot(_x(xp, B, (5, 4), d)),
        da.einsum("ij,jk->ik", _x(xp, device=d), _x(xp, B, (5, 4), d)),
    ),
    "where_join": lambda xp, d: (
        da.where(_x(xp, device=d) > 0, _x(xp, device=d), -1.0),
        da.concatenate([_x(xp, device=d), _x(xp, device=d)], axis=1),
        da.stack([_x(xp, device=d), _x(xp, device=d)], axis=0),
    ),
    "indexing": lambda xp, d: (
        _x(xp, device=d)[[0, 5, 3, 11]],
        _x(xp, device=d)[:, np.array([1, 7, 2])],
        _x(xp, device=d)[_x(xp, device=d) > 0],
        _x(xp, device=d)[_x(xp, device=d)[:, 0] > 0],
        _x(xp, device=d)[_x(xp, device=d) > 0].compute_chunk_sizes() * 2,
    ),
    "blocks": lambda xp, d: (
        _x(xp, device=d).rechunk((6, 3)),
        _x(xp, chunks=(4, 10), device=d).map_blocks(lambda b: b.sum(axis=1), drop_axis=1),
        _x(xp, device=d).map_blocks(
            lambda b: b[None], new_axis=0, chunks=((1,), (4, 4, 4), (5, 5))
        ),
        _x(xp, device=d).map_overlap(lambda b: b + b.mean(), depth=1, boundary="reflect"),
        _x(xp, device=d).reshape((120,)),
    ),
    "stats": lambda xp, d: (
        da.histogram(_x(xp, device=d), bins=5, range=(-3, 3))[0],
        da.unique(_x(xp, V, 8, d)),
        da.bincount(_x(xp, V, 8, d)),
        da.percentile(_x(xp, device=d).ravel(), [10, 50, 90]),
        da.topk(_x(xp, device=d).ravel(), 5),
    ),
    "linalg_qr_svd": lambda xp, d: (
        da.linalg.qr(_x(xp, T, (10, 5), d))[0] @ da.linalg.qr(_x(xp, T, (10, 5), d))[1],
        da.linalg.svd(_x(xp, T, (10, 5), d))[1],
    ),
    "linalg_triangular": lambda xp, d: (
        da.linalg.lstsq(_x(xp, T, (10, 5), d), _x(xp, np.arange(40.0), 10, d))[0],
        da.linalg.cholesky(_x(xp, S @ S.T, 5, d), lower=True),
        da.linalg.solve_triangular(da.triu(_x(xp, S, 5, d)), _x(xp, B, 5, d)),
    ),
    "linalg_lu": lambda xp, d: (
        da.linalg.solve(_x(xp, S, 5, d), _x(xp, B[:, :3], (5, 3), d)),
        da.linalg.inv(_x(xp, S, 5, d)),
        *da.linalg.lu(_x(xp, S, 5, d)),
    ),
    "persist": lambda xp, d: (_x(xp, device=d).persist() + 1,),
}


# Dask builds these collections as Array(graph, name, chunks, dtype) without a meta (a NumPy
# meta whatever the chunks are: boolean masks of the array's shape, histogram counts); their
# chunks are still ember's, which _run_pair checks.
DASK_NUMPY_META = {"indexing", "stats"}


@pytest.mark.parametrize("case", sorted(ARRAY_CASES))
def test_array_probe(dev, case):
    _run_pair(ARRAY_CASES[case], dev, check_meta=case not in DASK_NUMPY_META)


def test_linspace_eye_are_numpy_then_to_backend(dev):
    # Dask makes linspace/eye from NumPy whatever the backend (as with CuPy): to_backend moves
    # the chunks (an explicit upload)
    with dask.config.set({"array.backend": "ember"}):
        lin, eye = da.linspace(0, 1, 11, chunks=4), da.eye(6, chunks=3)
    assert type(lin._meta) is np.ndarray
    lin, eye = lin.to_backend("ember", device=dev), eye.to_backend("ember", device=dev)
    assert type(lin._meta) is ember.ndarray and type(eye._meta) is ember.ndarray
    got_lin, got_eye = dask.compute(lin, eye)
    assert type(got_lin) is ember.ndarray and got_lin.device == ember.Device(dev)
    np.testing.assert_allclose(ember.asnumpy(got_lin), np.linspace(0, 1, 11))
    np.testing.assert_array_equal(ember.asnumpy(got_eye), np.eye(6))


def test_store_into_ember_array(dev):
    x = _x("ember", device=dev)
    target = ember.empty((12, 10), device=dev)
    with _guard():
        da.store(x, target, lock=False)
    np.testing.assert_allclose(ember.asnumpy(target), A)


def test_lu_float32_keeps_dtype(dev):
    s32 = S.astype("float32")
    x = _x("ember", s32, 5, dev)
    with _guard():
        p, lo, up = dask.compute(*da.linalg.lu(x))
        inv = da.linalg.inv(x).compute()
    assert p.dtype == lo.dtype == up.dtype == inv.dtype == np.float32
    assert p.device == ember.Device(dev)
    np.testing.assert_allclose(ember.asnumpy(p @ lo @ up), s32, atol=1e-5)
    np.testing.assert_allclose(ember.asnumpy(inv), np.linalg.inv(S), rtol=1e-4, atol=1e-6)


def test_numpy_linalg_unchanged(dev):
    # the ember branches leave NumPy chunks on SciPy
    x = _x("numpy", S, 5)
    np.testing.assert_allclose(da.linalg.inv(x).compute(), np.linalg.inv(S), rtol=1e-8)
    p, lo, up = dask.compute(*da.linalg.lu(x))
    assert type(p) is np.ndarray
    np.testing.assert_allclose(p @ lo @ up, S, atol=1e-9)


# ---- dataframe ----------------------------------------------------------------------------------

N = 400
_rng = np.random.default_rng(0)
PDF = pd.DataFrame(
    {
        "i": _rng.integers(-50, 50, N).astype("int64"),
        "f": _rng.normal(size=N),
        "g": _rng.integers(0, 5, N).astype("int64"),
        "k": _rng.choice(["apple", "b", "cherry", "d"], N),
        "t": pd.date_range("2024-01-01", periods=N, freq="h"),
    }
)
RIGHT = pd.DataFrame({"g": [0, 1, 2, 3, 7], "w": [0.5, 1.5, 2.5, 3.5, 7.5]})


def _d(backend, device, pdf=PDF, n=4):
    d = dd.from_pandas(pdf, npartitions=n)
    return d if backend == "pandas" else d.to_backend("ember", device=device)


def _norm(x, ordered):
    x = _host(x)
    if isinstance(x, pd.DataFrame):
        for c in x.columns:
            if isinstance(x[c].dtype, pd.CategoricalDtype):  # (categories' string dtypes differ)
                x[c] = x[c].astype(str).astype(object)
    if isinstance(x, pd.DataFrame) and not ordered:
        return x.sort_values(list(x.columns)).reset_index(drop=True)
    if isinstance(x, pd.Series) and not ordered:
        return x.sort_values().reset_index(drop=True)
    return x


FRAME_CASES = {
    "assign": lambda b, d: _d(b, d).assign(h=lambda x: x.f * 2 + x.i),
    "query": lambda b, d: _d(b, d).query("f > 0 and g < 3"),
    "agg_named": lambda b, d: (
        _d(b, d).groupby("g").agg(s=("f", "sum"), m=("i", "max"), c=("f", "count"))
    ),
    "agg_multiple": lambda b, d: (
        _d(b, d).groupby("g").agg({"f": ["sum", "mean"], "i": ["min", "max"]})
    ),
    "agg_string_key": lambda b, d: _d(b, d).groupby("k").f.sum(),
    "apply_meta": lambda b, d: (
        _d(b, d).groupby("g").apply(lambda x: x.f.sum() - x.i.sum(), meta=("x", "f8"))
    ),
    "merge_on_column": lambda b, d: _d(b, d).merge(_d(b, d, RIGHT, 2), on="g", how="left"),
    "set_index": lambda b, d: _d(b, d).set_index("i"),
    "sort_values": lambda b, d: _d(b, d).sort_values("f"),
    "drop_duplicates": lambda b, d: _d(b, d)[["g", "k"]].drop_duplicates(),
    "value_counts": lambda b, d: _d(b, d).k.value_counts(),
    "map_partitions": lambda b, d: _d(b, d).map_partitions(lambda p: p.assign(z=p.f + 1)),
    "categorize": lambda b, d: _d(b, d).categorize(columns=["k"]),
    "dt_str": lambda b, d: _d(b, d).assign(
        h=lambda x: x.t.dt.hour, u=lambda x: x.k.str.upper(), n=lambda x: x.k.str.len()
    ),
    "rolling": lambda b, d: _d(b, d)[["f", "i"]].rolling(5).sum(),
    "describe": lambda b, d: _d(b, d)[["f", "i"]].describe(),
    "cumsum_where": lambda b, d: _d(b, d).f.where(_d(b, d).f > 0).fillna(0).cumsum(),
}
ORDERED = {"sort_values", "rolling", "describe", "cumsum_where"}


@pytest.mark.parametrize("case", sorted(FRAME_CASES))
def test_frame_probe(device, case):
    with dask.config.set(scheduler="threads"):
        ref = FRAME_CASES[case]("pandas", device)
        obj = FRAME_CASES[case]("ember", device)
        assert isinstance(obj._meta, (ef.DataFrame, ef.Series)), type(obj._meta)
        expected, got = dask.compute(ref, obj)
    assert isinstance(got, (ef.DataFrame, ef.Series)), type(got)
    assert got.device == str(ember.Device(device))
    a, g = _norm(expected, case in ORDERED), _norm(got, case in ORDERED)
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(g, a, check_dtype=False, check_index_type=False, rtol=1e-9)
    else:
        pd.testing.assert_series_equal(g, a, check_dtype=False, check_index_type=False, rtol=1e-9)


def test_frame_scalars(device):
    p, e = _d("pandas", device), _d("ember", device)
    with dask.config.set(scheduler="threads"):
        assert e.k.nunique().compute() == p.k.nunique().compute()
        assert e.map_partitions(len).sum().compute() == N
        np.testing.assert_allclose(float(e.f.sum().compute()), p.f.sum().compute())


def test_read_many_files_and_to_parquet(device, tmp_path):
    for j in range(3):
        part = PDF.iloc[j * 130 : (j + 1) * 130]
        part.to_csv(tmp_path / f"p{j}.csv", index=False)
        part.to_parquet(tmp_path / f"p{j}.parquet")
    with dask.config.set({"dataframe.backend": "ember", "scheduler": "threads"}):
        with dask.config.set({"dataframe.ember.device": device}):
            c = dd.read_csv(str(tmp_path / "*.csv"))
            q = dd.read_parquet(str(tmp_path / "*.parquet"))
    assert c.npartitions == 3 and isinstance(c._meta, ef.DataFrame)
    got_c, got_q = dask.compute(c, q, scheduler="threads")
    assert isinstance(got_c, ef.DataFrame) and isinstance(got_q, ef.DataFrame)
    ref_c = pd.concat([pd.read_csv(tmp_path / f"p{j}.csv") for j in range(3)])
    pd.testing.assert_frame_equal(
        _host(got_c).reset_index(drop=True), _host(ref_c).reset_index(drop=True), check_dtype=False
    )
    assert _host(got_q)["f"].tolist() == PDF["f"].iloc[:390].tolist()
    q.to_parquet(str(tmp_path / "out"))
    back = pd.read_parquet(tmp_path / "out")
    np.testing.assert_allclose(np.sort(back["f"].to_numpy()), np.sort(PDF["f"].to_numpy()[:390]))


def test_values_and_to_dask_array_are_ember_arrays(device):
    e = _d("ember", device)[["f", "i"]]
    v = e.values
    assert isinstance(v, da.Array) and type(v._meta) is ember.ndarray
    x = e.to_dask_array(lengths=True)
    assert x.chunks[0] == (100, 100, 100, 100) and type(x._meta) is ember.ndarray
    with dask.config.set(scheduler="threads"):
        s = x.sum(axis=0).compute()
    assert type(s) is ember.ndarray
    np.testing.assert_allclose(ember.asnumpy(s), PDF[["f", "i"]].to_numpy().sum(axis=0))


# Gaps in ember.frame that Dask reached (fixed in the 8th session)
FRAME_GAPS = {
    "groupby_std": (
        lambda b, d: _d(b, d).groupby("g").f.std(),
        "ember.frame DataFrame.__setitem__ with a list of columns and a DataFrame value",
    ),
    "merge_on_index": (
        lambda b, d: (
            _d(b, d)
            .set_index("g")
            .merge(_d(b, d, RIGHT, 2).set_index("g"), left_index=True, right_index=True)
        ),
        "ember.frame .loc[a:b] on a sorted index with labels that are not in it",
    ),
    "resample": (
        lambda b, d: _d(b, d).set_index("t").f.resample("1D").mean(),
        "ember.frame .loc[a:b] on a sorted index with labels that are not in it",
    ),
}


@pytest.mark.parametrize("case", sorted(FRAME_GAPS))
def test_frame_gaps(case):
    fn, _why = FRAME_GAPS[case]
    with dask.config.set(scheduler="threads"):
        expected = fn("pandas", "cpu").compute()
        got = fn("ember", "cpu").compute()  # fixed: a reopened gap must fail, not xfail
    pd.testing.assert_series_equal(
        _norm(got, False), _norm(expected, False), check_dtype=False, check_index_type=False
    ) if isinstance(expected, pd.Series) else pd.testing.assert_frame_equal(
        _norm(got, False), _norm(expected, False), check_dtype=False, check_index_type=False
    )
