"""dask.dataframe over ember.frame partitions: the "ember" dataframe backend and the dispatch
functions ember.dask registers, checked against the same Dask pipeline on pandas partitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

import ember  # noqa: E402
import ember.dask  # noqa: E402
import ember.frame as ef  # noqa: E402
from dask.dataframe.dispatch import (  # noqa: E402
    concat,
    group_split_dispatch,
    hash_object_dispatch,
    is_categorical_dtype,
    make_meta,
    meta_nonempty,
    union_categoricals,
)

N = 240
RNG = np.random.default_rng(7)
KEYS = np.array(["apple", "b", "", "cherry pie", "d", "é", "ggg"], dtype=object)


def _pdf(n=N, seed=0):
    rng = np.random.default_rng(seed)
    f = rng.normal(size=n)
    f[rng.random(n) < 0.1] = np.nan
    return pd.DataFrame(
        {
            "i": rng.integers(-50, 50, n).astype("int64"),
            "f": f,
            "u": rng.integers(0, 9, n).astype("int32"),
            "k": rng.choice(KEYS, n).astype(str),
            "g": rng.integers(0, 5, n).astype("int64"),
        }
    )


def _right():
    return pd.DataFrame(
        {
            "g": np.array([0, 1, 2, 3, 7], dtype="int64"),
            "w": np.array([0.5, 1.5, 2.5, 3.5, 7.5]),
            "name": ["zero", "one", "two", "three", "seven"],
        }
    )


def _pair(pdf, npartitions, device):
    """The same collection with pandas partitions and with ember.frame partitions."""
    p = dd.from_pandas(pdf, npartitions=npartitions)
    return p, p.to_backend("ember", device=device)


def _host(x):
    """A pandas object with plain NumPy/object dtypes, rows in a canonical order."""
    if isinstance(x, (ef.DataFrame, ef.Series, ef.Index)):
        x = x.to_pandas()
    x = x.copy()

    def plain(s):
        if isinstance(s.dtype, pd.StringDtype) or s.dtype == object:
            return s.astype(object).where(s.notna(), None)  # one missing value: None
        if isinstance(s.dtype, pd.api.extensions.ExtensionDtype) and s.dtype.kind in "iufb":
            return s.astype("float64" if s.hasnans else s.dtype.numpy_dtype)
        return s

    def plain_index(idx):
        if isinstance(idx, pd.MultiIndex):
            return pd.MultiIndex.from_arrays(
                [plain(pd.Series(idx.get_level_values(i))) for i in range(idx.nlevels)],
                names=idx.names,
            )
        return pd.Index(plain(pd.Series(idx)), name=idx.name)

    if isinstance(x, pd.DataFrame):
        for c in x.columns:
            x[c] = plain(x[c])
    else:
        x = plain(x)
    x.index = plain_index(x.index)
    return x


def _same(expected, got, device, ordered=False, labels=True):
    """``got`` (an ember result of the ember pipeline) equals ``expected`` (pandas'); rows in
    any order unless ``ordered``; ``labels=False`` ignores the row labels (partition-local)."""
    assert isinstance(got, (ef.DataFrame, ef.Series)), type(got)
    assert got.device == str(ember.Device(device))
    a, b = _host(expected), _host(got)
    if not ordered:
        if isinstance(a, pd.DataFrame):
            # rows by their values first, then by their labels
            a, b = (a.reset_index(), b.reset_index()) if labels else (a, b)
            keys = [c for c in a.columns if c in set(expected.columns)] + [
                c for c in a.columns if c not in set(expected.columns)
            ]
            keys = [c for c in keys if c in a.columns]
            a = a.sort_values(keys, kind="stable").reset_index(drop=True)
            b = b.sort_values(keys, kind="stable").reset_index(drop=True)
        else:
            a, b = a.sort_index(kind="stable"), b.sort_index(kind="stable")
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_dtype=False, check_index_type=False)
    else:
        pd.testing.assert_series_equal(a, b, check_dtype=False, check_index_type=False)


# ---- registration, meta, creation --------------------------------------------------------------
def test_to_backend_partitions_and_meta_are_ember(device):
    pdf = _pdf()
    p, e = _pair(pdf, 4, device)
    assert isinstance(e._meta, ef.DataFrame) and e._meta.device == str(ember.Device(device))
    assert len(e._meta) == 0 and list(e._meta.columns) == list(pdf.columns)
    assert e.divisions == p.divisions
    parts = [e.get_partition(i).compute(scheduler="sync") for i in range(e.npartitions)]
    assert all(isinstance(q, ef.DataFrame) for q in parts)
    assert all(q.device == str(ember.Device(device)) for q in parts)
    out = e.compute(scheduler="threads")
    _same(pdf, out, device, ordered=True)
    # and back: pandas partitions again
    back = e.to_backend("pandas")
    assert isinstance(back._meta, pd.DataFrame)
    pd.testing.assert_frame_equal(_host(back.compute()), _host(pdf))
    # a Series and an Index collection keep ember metas too
    assert isinstance(e.f._meta, ef.Series) and isinstance(e.index._meta, ef.Index)


def test_backend_config_creates_ember_partitions(device):
    data = {"a": np.arange(12), "b": np.linspace(0, 1, 12), "s": list("xyzw") * 3}
    with dask.config.set({"dataframe.backend": "ember", "dataframe.ember.device": device}):
        d = dd.from_dict(data, npartitions=3)
    assert isinstance(d._meta, ef.DataFrame) and d.npartitions == 3
    out = d.compute(scheduler="sync")
    _same(pd.DataFrame(data), out, device, ordered=True)
    assert d.known_divisions and d.divisions == (0, 4, 8, 11)


def test_from_map_and_from_delayed(device):
    def part(i):
        return ef.DataFrame({"x": np.arange(5) + 5 * i, "y": np.full(5, float(i))}, device=device)

    m = dd.from_map(part, range(3))
    assert isinstance(m._meta, ef.DataFrame)
    assert m.x.sum().compute(scheduler="sync") == sum(range(15))
    d = dd.from_delayed([dask.delayed(part)(i) for i in range(3)], meta=part(0).iloc[:0])
    assert isinstance(d._meta, ef.DataFrame)
    _same(pd.concat([part(i).to_pandas() for i in range(3)]), d.compute(), device)
    assert d.y.mean().compute() == pytest.approx(1.0)


def test_meta_dispatch(device):
    df = ef.from_pandas(_pdf(10), device=device)
    m = make_meta(df)
    assert isinstance(m, ef.DataFrame) and len(m) == 0 and m.device == df.device
    assert (m.dtypes == df.dtypes).all()
    ne = meta_nonempty(m)
    assert isinstance(ne, ef.DataFrame) and len(ne) == 2 and ne.device == df.device
    assert (ne.dtypes == df.dtypes).all()
    s = meta_nonempty(make_meta(df["k"]))
    assert isinstance(s, ef.Series) and len(s) == 2 and s.dtype == df["k"].dtype
    idx = make_meta(df.set_index("i").index)
    assert isinstance(idx, ef.Index) and len(idx) == 0
    with dask.config.set({"dataframe.ember.device": device}):
        built = make_meta({"a": "int32", "b": "float64"}, parent_meta=m)
    assert isinstance(built, ef.DataFrame) and list(built.dtypes.astype(str)) == [
        "int32",
        "float64",
    ]
    with pytest.raises(ValueError, match="dataframe.ember.device"):
        with dask.config.set({"dataframe.ember.device": "nonsense"}):
            make_meta({"a": "int32"}, parent_meta=m)


def test_categoricals(device):
    pdf = _pdf()
    pdf["c"] = pd.Categorical(pdf["k"])
    p, e = _pair(pdf, 4, device)
    assert is_categorical_dtype(e._meta["c"]) and not is_categorical_dtype(e._meta["k"])
    _same(pdf, e.compute(), device, ordered=True)
    _same(p.groupby("c").i.sum().compute(), e.groupby("c").i.sum().compute(), device)
    a = ef.Series(pd.Categorical(["y", "y"], categories=["x", "y"]), device=device)
    b = ef.Series(pd.Categorical(["z", "x"]), device=device)
    want = pd.api.types.union_categoricals(
        [pd.Categorical(["y", "y"], categories=["x", "y"]), pd.Categorical(["z", "x"])]
    )
    got = union_categoricals([a, b])
    assert got.dtype == want.dtype and got.device == str(ember.Device(device))
    assert got.to_pandas().tolist() == list(want)


def test_concat_hash_and_group_split(device):
    pdf = _pdf(60)
    df = ef.from_pandas(pdf, device=device)
    parts = [df.iloc[:20], df.iloc[20:45], df.iloc[45:]]
    _same(pdf, concat(parts), device, ordered=True)
    # equal rows hash equally wherever they sit; numbers hash by value (Dask casts keys to
    # float64 first, so 3 and 3.0 must agree)
    h = ember.asnumpy(hash_object_dispatch(df[["k", "g"]], index=False)._col.data)
    hp = np.concatenate(
        [ember.asnumpy(hash_object_dispatch(q[["k", "g"]], index=False)._col.data) for q in parts]
    )
    np.testing.assert_array_equal(h, hp)
    keys = list(zip(pdf["k"], pdf["g"], strict=True))
    by_key = {}
    for key, v in zip(keys, h, strict=True):
        assert by_key.setdefault(key, v) == v
    assert len(set(h.tolist())) == len(set(keys))  # distinct keys: distinct hashes here
    ints = ef.Series(np.array([3, 4, -1], dtype="int64"), device=device)
    floats = ef.Series(np.array([3.0, 4.0, -1.0]), device=device)
    np.testing.assert_array_equal(
        ember.asnumpy(hash_object_dispatch(ints, index=False)._col.data),
        ember.asnumpy(hash_object_dispatch(floats, index=False)._col.data),
    )
    # group_split: rows to partitions, keeping their order inside each
    c = ember.asarray(np.arange(60) % 4, device=device)
    out = group_split_dispatch(df, c, 4, ignore_index=False)
    assert sorted(out) == [0, 1, 2, 3]
    for j in range(4):
        _same(pdf.iloc[j::4], out[j], device, ordered=True)


# ---- operations ---------------------------------------------------------------------------------
def test_elementwise_filter_and_reductions(device):
    pdf = _pdf()
    p, e = _pair(pdf, 4, device)

    def pipeline(d):
        d = d.assign(z=d.i * 2 - d.f / 3 + d.u, up=d.k.str.upper())
        return d[(d.z > -20) & (d.g != 2)]

    _same(pipeline(p).compute(), pipeline(e).compute(scheduler="threads"), device)
    for name in ("sum", "mean", "min", "max", "count", "std"):
        want = getattr(p[["i", "f", "u"]], name)().compute()
        got = getattr(e[["i", "f", "u"]], name)().compute()
        np.testing.assert_allclose(
            got.to_pandas().to_numpy(dtype="float64"), want.to_numpy(dtype="float64")
        )
    assert e.f.sum().compute() == pytest.approx(p.f.sum().compute())
    assert e.k.nunique().compute() == p.k.nunique().compute()
    assert len(e) == len(pdf)
    assert e.f.quantile(0.5).compute() == pytest.approx(p.f.quantile(0.5).compute())


@pytest.mark.parametrize("split_out", [1, 3])
def test_groupby_agg(device, split_out):
    pdf = _pdf()
    p, e = _pair(pdf, 4, device)

    def run(d):
        return d.groupby("k").agg(
            {"i": ["sum", "min", "max"], "f": ["mean", "count"], "u": "max"},
            split_out=split_out,
            shuffle_method="tasks",
        )

    want, got = run(p).compute(), run(e).compute(scheduler="threads")
    want.columns = ["_".join(c) for c in want.columns]
    got.columns = ["_".join(c) for c in got.columns]
    _same(want, got, device)
    _same(p.groupby("g").f.sum().compute(), e.groupby("g").f.sum().compute(), device)
    _same(
        p.groupby(["k", "g"]).i.mean(split_out=split_out).compute(),
        e.groupby(["k", "g"]).i.mean(split_out=split_out).compute(),
        device,
    )


@pytest.mark.parametrize("how", ["inner", "left"])
def test_merge_broadcast_and_hash(device, how):
    pdf, right = _pdf(), _right()
    p, e = _pair(pdf, 4, device)
    pr, er = _pair(right, 2, device)
    want = p.merge(pr, on="g", how=how).compute()
    got = e.merge(er, on="g", how=how, broadcast=True).compute(scheduler="threads")
    _same(want, got, device, labels=False)
    got = e.merge(er, on="g", how=how, shuffle_method="tasks").compute(scheduler="threads")
    _same(want, got, device, labels=False)
    # several keys, hash-shuffled on both (string and integer) columns
    small = pdf.drop_duplicates(["k", "g"]).assign(tag=lambda x: x.i * 10)[["k", "g", "tag"]]
    ps, es = _pair(small, 3, device)
    want = p.merge(ps, on=["k", "g"], how=how).compute()
    got = e.merge(es, on=["k", "g"], how=how, shuffle_method="tasks").compute()
    _same(want, got, device, labels=False)


def test_sort_values_set_index_value_counts_drop_duplicates(device):
    pdf = _pdf()
    p, e = _pair(pdf, 4, device)
    got = e.sort_values("f").compute(scheduler="threads")
    _same(p.sort_values("f").compute(), got, device)
    assert got.to_pandas()["f"].dropna().is_monotonic_increasing
    s = e.set_index("i").compute(scheduler="threads")
    assert s.to_pandas().index.is_monotonic_increasing
    _same(p.set_index("i").compute(), s, device)
    # string keys: divisions from "table" quantiles, partitions by string searchsorted
    got = e.sort_values("k").compute(scheduler="threads")
    assert got.to_pandas()["k"].is_monotonic_increasing
    _same(p.sort_values("k").compute(), got, device)
    _same(p.set_index("k").compute(), e.set_index("k").compute(scheduler="threads"), device)
    # the threaded scheduler's default shuffle is Dask's "disk" one (partd)
    _same(p.k.value_counts().compute(), e.k.value_counts().compute(scheduler="threads"), device)
    _same(
        p.g.value_counts(split_out=2).compute(),
        e.g.value_counts(split_out=2).compute(scheduler="threads"),
        device,
    )
    _same(
        p[["k", "g"]].drop_duplicates().compute(),
        e[["k", "g"]].drop_duplicates(split_out=2).compute(scheduler="threads"),
        device,
    )


# ---- files --------------------------------------------------------------------------------------
def test_parquet_and_csv(device, tmp_path):
    pdf = _pdf()
    p, e = _pair(pdf, 4, device)
    ember.dask.to_parquet(e, tmp_path / "pq")
    with dask.config.set({"dataframe.backend": "ember"}):
        r = dd.read_parquet(tmp_path / "pq", device=device)
        assert isinstance(r._meta, ef.DataFrame) and r.npartitions == 4
        got = r[r.g > 1].compute(scheduler="threads")
        _same(pdf[pdf.g > 1], got, device)
        cols = dd.read_parquet(tmp_path / "pq", columns=["k", "f"], device=device)
        _same(pdf[["k", "f"]], cols.compute(), device)
        pdf.to_csv(tmp_path / "a.csv", index=False)
        pdf.to_csv(tmp_path / "b.csv", index=False)
        c = dd.read_csv(tmp_path / "*.csv", device=device)
        assert isinstance(c._meta, ef.DataFrame) and c.npartitions == 2
        got = c.compute()
    want = dd.read_csv(tmp_path / "*.csv").compute()  # the pandas pipeline ("" reads as NaN)
    _same(want, got, device)
    # the configured device is fixed when the graph is built
    with dask.config.set({"dataframe.backend": "ember", "dataframe.ember.device": device}):
        later = dd.read_parquet(tmp_path / "pq")
    _same(pdf, later.compute(), device)
    # read with pandas what ember wrote
    back = pd.read_parquet(tmp_path / "pq")
    _same(back, ef.from_pandas(back, device=device), device)
    pd.testing.assert_frame_equal(_host(back).rename_axis(None), _host(pdf))  # Dask names it


# ---- distributed ---------------------------------------------------------------------------------
def test_distributed_local_cluster(device):
    distributed = pytest.importorskip("distributed")
    pdf, right = _pdf(), _right()
    p, e = _pair(pdf, 4, device)
    pr, er = _pair(right, 2, device)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            dashboard_address=":0",
            silence_logs=40,
        ) as cluster,
        distributed.Client(cluster),
    ):
        got = e.groupby("k").agg({"i": "sum", "f": "mean"}).compute()
        _same(p.groupby("k").agg({"i": "sum", "f": "mean"}).compute(), got, device)
        # the default shuffle on a cluster is P2P: partitions travel as Arrow tables
        got = e.merge(er, on="g", how="inner").compute()
        want = p.merge(pr, on="g", how="inner").compute()
        _same(want, got, device, labels=False)
        got = e.g.value_counts(split_out=2).compute()
        _same(p.g.value_counts(split_out=2).compute(), got, device)
        got = e.merge(er, on="g", how="left", shuffle_method="tasks").compute()
        want = p.merge(pr, on="g", how="left").compute()
        _same(want, got, device, labels=False)


def test_frames_pickle(device):
    import pickle

    df = ef.from_pandas(_pdf(20), device=device).set_index("i")
    back = pickle.loads(pickle.dumps(df))
    assert isinstance(back, ef.DataFrame) and back.device == df.device
    _same(df.to_pandas(), back, device, ordered=True)


def test_distributed_serializers(device):
    pytest.importorskip("distributed")
    from distributed.protocol import deserialize, serialize

    pdf = _pdf(30)
    pdf["c"] = pd.Categorical(pdf["k"])
    df = ef.from_pandas(pdf, device=device).set_index("i")
    for obj in (df, df["k"], df.index, df.set_index(["k", "g"])["f"]):
        header, frames = serialize(obj)
        # ember's own family: the structure pickled, each array its own frame (no pickle of
        # the arrays)
        assert header["serializer"] == "dask"
        assert len(frames) == len(header["sub-header"]["arrays"]) >= 1
        back = deserialize(header, frames)
        assert type(back) is type(obj) and back.device == obj.device
        if isinstance(obj, ef.Index):
            pd.testing.assert_index_equal(back.to_pandas(), obj.to_pandas())
        else:
            _same(obj.to_pandas(), back, device, ordered=True)


def test_distributed_process_workers():
    """Two worker processes (ember.dask preloaded): partitions cross process boundaries."""
    distributed = pytest.importorskip("distributed")
    pdf, right = _pdf(), _right()
    p, e = _pair(pdf, 4, "cpu")
    pr, er = _pair(right, 2, "cpu")
    with (
        ember.dask.LocalCluster(
            n_workers=2, devices=[], threads_per_worker=1, dashboard_address=":0", silence_logs=40
        ) as cluster,
        distributed.Client(cluster),
    ):
        got = e.groupby("k").agg({"i": "sum", "f": "max"}, split_out=2).compute()
        _same(p.groupby("k").agg({"i": "sum", "f": "max"}).compute(), got, "cpu")
        got = e.merge(er, on="g", how="inner").compute()
        _same(p.merge(pr, on="g", how="inner").compute(), got, "cpu", labels=False)


def test_no_partition_goes_through_pandas(device, monkeypatch):
    """Partitions stay ember columns: a host pandas copy of anything longer than Dask's
    two-row metadata fails the test."""
    from ember.frame import column

    pdf, right = _pdf(), _right()
    p, e = _pair(pdf, 4, device)
    pr, er = _pair(right, 2, device)
    e, er = e.persist(scheduler="sync"), er.persist(scheduler="sync")
    real = column.Column.to_pandas

    def guarded(self, *args, **kwargs):
        assert len(self) <= 8, f"a {len(self)}-row column went to pandas"
        return real(self, *args, **kwargs)

    monkeypatch.setattr(column.Column, "to_pandas", guarded)
    with dask.config.set(scheduler="threads"):
        g = e.groupby("k").agg({"i": "sum", "f": "mean"}, split_out=2, shuffle_method="tasks")
        m = e.merge(er, on="g", how="inner", shuffle_method="tasks")
        s = e.sort_values("f")
        g, m, s = dask.compute(g, m, s)
    monkeypatch.setattr(column.Column, "to_pandas", real)
    _same(p.groupby("k").agg({"i": "sum", "f": "mean"}).compute(), g, device)
    _same(p.merge(pr, on="g", how="inner").compute(), m, device, labels=False)
    _same(p.sort_values("f").compute(), s, device)


def test_frame_additions_match_pandas(device):
    """What Dask needed from ember.frame, checked against pandas."""
    pdf = _pdf(12)
    df = ef.from_pandas(pdf, device=device)
    _same(pdf.take([3, -1, 0]), df.take([3, -1, 0]), device, ordered=True)
    _same(pdf.select_dtypes("number"), df.select_dtypes("number"), device, ordered=True)
    _same(pdf.select_dtypes(exclude="number"), df.select_dtypes(exclude="number"), device, True)
    num = pdf[["i", "f", "u"]]
    _same(num.T, ef.from_pandas(num, device=device).T, device, ordered=True)
    _same(num.sum(skipna=False), df[["i", "f", "u"]].sum(skipna=False), device, ordered=True)
    _same(num.quantile([0.2, 0.7]), ef.from_pandas(num, device=device).quantile([0.2, 0.7]), device)
    s = df["f"]
    _same(np.sqrt(pdf["f"].abs()), np.sqrt(s.abs()), device, ordered=True)
    srt = ef.Series(np.sort(pdf["i"].to_numpy()), device=device)
    np.testing.assert_array_equal(
        ember.asnumpy(srt.searchsorted(df["i"], side="right")),
        np.sort(pdf["i"].to_numpy()).searchsorted(pdf["i"].to_numpy(), side="right"),
    )
    idx = df.set_index("k").index
    assert idx.names == ["k"] and not idx.is_unique and not idx.is_monotonic_increasing
    assert df.set_index("i").sort_index().index.is_monotonic_increasing
    _same(pdf.set_index("k").index.to_frame(), idx.to_frame(), device, ordered=True)
    gp, ge = pdf.groupby("g"), df.groupby("g")
    assert sorted(ge.groups) == sorted(gp.groups)
    for key in gp.groups:
        assert ge.groups[key].to_pandas().tolist() == gp.groups[key].tolist()
        _same(gp.get_group(key), ge.get_group(key), device, ordered=True)
    mi = df.set_index(["k", "g"])
    assert mi.index.names == ["k", "g"]
    _same(pdf.set_index(["k", "g"]), mi, device, ordered=True)
    left = pdf.set_index("k")
    right = pd.DataFrame({"w": [10.0, 20.0]}, index=[1, 2])
    want = left.merge(right, left_on="g", right_index=True, how="left")
    got = ef.from_pandas(left, device=device).merge(
        ef.from_pandas(right, device=device), left_on="g", right_index=True, how="left"
    )
    _same(want, got, device, ordered=True)
    # bad input: pandas' exception types
    with pytest.raises(ValueError, match="axis"):
        df.take([0], axis=1)
    with pytest.raises(ValueError, match="side"):
        srt.searchsorted(df["i"], side="middle")
    with pytest.raises(KeyError):
        ge.get_group(99)
    with pytest.raises(ValueError, match="interpolation"):
        df.quantile(0.5, method="table")


def test_describe_over_ember_partitions():
    """``ddf.describe()``: Dask's meta pass builds an empty float label axis beside text."""
    pdf = pd.DataFrame({"a": np.arange(20), "b": np.arange(20.0) * 2})
    ref = dd.from_pandas(pdf, npartitions=3).describe().compute()
    got = dd.from_pandas(pdf, npartitions=3).to_backend("ember").describe().compute()
    pd.testing.assert_frame_equal(got.to_pandas(), ref)


def test_to_parquet_method_on_ember_partitions(tmp_path):
    """``ddf.to_parquet`` as users call it (Dask's pyarrow writer failed on ember partitions)."""
    pdf = pd.DataFrame({"a": np.arange(20), "b": np.arange(20.0) * 2, "k": ["x", "y"] * 10})
    ddf = dd.from_pandas(pdf, npartitions=3).to_backend("ember")
    assert isinstance(ddf, dd.DataFrame)
    ddf.to_parquet(str(tmp_path / "p"))
    back = pd.read_parquet(str(tmp_path / "p"))
    pd.testing.assert_frame_equal(back.sort_values("a").reset_index(drop=True), pdf)


def test_everyday_calls_over_ember_partitions():
    """Calls that failed on ember partitions in a probe (cumsum, rolling, fillna with a text
    column, clip, corr), against the same pipeline on pandas partitions."""
    pdf = pd.DataFrame({"a": np.arange(40), "b": np.arange(40.0) * 2, "k": ["x", "y"] * 20})
    P = dd.from_pandas(pdf, npartitions=4)
    E = P.to_backend("ember")
    for fn in (lambda X: X.a.cumsum(), lambda X: X.b.rolling(3).mean(),
               lambda X: X.fillna(0).a, lambda X: X.a.clip(5, 10)):  # fmt: skip
        pd.testing.assert_series_equal(fn(E).compute().to_pandas(), fn(P).compute(),
                                       check_dtype=False)  # fmt: skip
    assert float(E.a.corr(E.b).compute()) == pytest.approx(float(P.a.corr(P.b).compute()))
