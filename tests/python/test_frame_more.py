"""ember.frame's second probe of everyday pandas calls against pandas, on both devices: concat
along the columns, cut/qcut, conversions, Series and DataFrame methods, group-by apply/nth/shift,
reshaping and row-wise apply."""

from __future__ import annotations

import io

import ember
import ember.frame as fd
import numpy as np
import pandas as pd
import pytest
from test_frame_helpers import same


def _pdf(n=12, seed=0):
    rng = np.random.default_rng(seed)
    f = rng.standard_normal(n).round(3)
    f[[1, 7]] = np.nan
    i = pd.array(rng.integers(-3, 9, n), dtype="Int64")
    i[[2]] = pd.NA
    s = pd.array(rng.choice(["ab", "cd", "x", "yyy"], n), dtype="str")
    s[[4]] = None
    t = pd.Series(pd.date_range("2020-01-01", periods=n, freq="17h"))
    t[5] = pd.NaT
    return pd.DataFrame({"i": i, "f": f, "s": s, "t": t, "k": rng.integers(0, 3, n)})


# ---- concat along the columns ------------------------------------------------------------------
def test_concat_axis1_aligns_and_keys(device):
    p = _pdf()
    d = fd.from_pandas(p, device=device)
    a, b = p[["i", "f"]], p[["s", "t"]].iloc[::-1]
    got = fd.concat([d[["i", "f"]], d[["s", "t"]].iloc[::-1]], axis=1)
    same(got, pd.concat([a, b], axis=1))  # same labels in another order: aligned
    x = pd.Series([1, 2, 3], index=[2, 0, 5], name="x")
    y = pd.Series([4.5, 5.5], index=[5, 7], name="y")
    ex, ey = fd.from_pandas(x, device=device), fd.from_pandas(y, device=device)
    same(fd.concat([ex, ey], axis=1), pd.concat([x, y], axis=1))
    same(fd.concat([ex, ey], axis=1, join="inner"), pd.concat([x, y], axis=1, join="inner"))
    same(fd.concat([ex, ey], axis=1, sort=True), pd.concat([x, y], axis=1, sort=True))
    same(fd.concat([ex, ey.rename(None)], axis=1), pd.concat([x, y.rename(None)], axis=1))
    same(
        fd.concat([ex, ey], axis=1, ignore_index=True), pd.concat([x, y], axis=1, ignore_index=True)
    )
    k = fd.concat([d[["i"]], d[["i"]]], axis=1, keys=["l", "r"]).to_pandas()
    pd.testing.assert_frame_equal(k, pd.concat([p[["i"]], p[["i"]]], axis=1, keys=["l", "r"]))
    assert fd.concat([d, d[["f"]].rename(columns={"f": "g"})], axis=1).shape == (12, 6)
    # duplicate labels have no place in ember.frame's column mapping: an error, never a silent
    # half-sized frame
    with pytest.raises(ValueError, match="duplicate column labels"):
        fd.concat([d, d], axis=1)
    with pytest.raises(ValueError, match="duplicate column labels"):
        d.columns = ["a", "a", "b", "c", "d"]
    e = fd.from_pandas(p.iloc[:0], device=device)
    same(
        fd.concat([e[["i"]], e[["f"]]], axis=1),
        pd.concat([p.iloc[:0][["i"]], p.iloc[:0][["f"]]], axis=1),
    )


# ---- cut / qcut --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kw",
    [
        {"bins": 3},
        {"bins": 4, "right": False},
        {"bins": [-5, 0, 2.5, 10]},
        {"bins": [-5, 0, 2.5, 10], "labels": ["lo", "mid", "hi"]},
        {"bins": [-5, 0, 2.5, 10], "labels": False},
        {"bins": 3, "labels": False},
        {"bins": [-3, 0, 8], "include_lowest": True},
        {"bins": [-3, 0, 8], "include_lowest": True, "right": False},
        {"bins": [0, 1, 1, 5], "duplicates": "drop"},
        {"bins": 5, "precision": 1},
    ],
)
@pytest.mark.parametrize("col", ["f", "i", "k"])
def test_cut(device, kw, col):
    p = _pdf(30, 1)
    d = fd.from_pandas(p, device=device)
    got, exp = fd.cut(d[col], **kw), pd.cut(p[col], **kw)
    pd.testing.assert_series_equal(got.to_pandas(), exp, check_dtype=col != "i" or "labels" in kw)
    g2, b2 = fd.cut(d[col], retbins=True, **kw)
    e2, eb = pd.cut(p[col], retbins=True, **kw)
    np.testing.assert_allclose(np.asarray(b2, dtype=float), np.asarray(eb, dtype=float))


def test_cut_more_inputs(device):
    p = _pdf(30, 2)
    d = fd.from_pandas(p, device=device)
    # datetimes, an IntervalIndex of bins, host lists (a Categorical), ember arrays (codes)
    same(fd.cut(d["t"], 4), pd.cut(p["t"], 4), check_dtype=True)
    ii = pd.interval_range(-2, 8, 4)
    same(fd.cut(d["f"], ii), pd.cut(p["f"], ii), check_dtype=True)
    same(
        fd.cut(d["f"], fd.interval_range(-2, 8, 4, closed="left")),
        pd.cut(p["f"], pd.interval_range(-2, 8, 4, closed="left")),
        check_dtype=True,
    )
    c = fd.cut([1, 5, 9, 12], 3)
    assert isinstance(c, fd.Categorical)
    pd.testing.assert_extension_array_equal(c.to_pandas(), pd.cut([1, 5, 9, 12], 3))
    arr = ember.asarray(np.array([0.5, 2.5, 4.0]), device=device)
    codes = fd.cut(arr, [0, 1, 3, 5], labels=False)
    assert isinstance(codes, ember.ndarray)
    assert ember.asnumpy(codes).tolist() == [0, 1, 2]
    # the categories decode to pandas' text of the intervals
    assert fd.cut(d["f"], 3).astype(str).tolist() == pd.cut(p["f"], 3).astype(str).tolist()
    with pytest.raises(ValueError, match="Cannot cut empty array"):
        fd.cut(fd.Series([], dtype="float64", device=device), 3)
    with pytest.raises(ValueError, match="monotonically"):
        fd.cut(d["f"], [3, 1, 2])
    with pytest.raises(ValueError, match="Bin edges must be unique"):
        fd.cut(d["f"], [0, 1, 1, 5])
    with pytest.raises(ValueError, match="Bin labels must be one fewer"):
        fd.cut(d["f"], [0, 1, 5], labels=["a"])
    with pytest.raises(TypeError):
        fd.cut(d["s"], 3)


@pytest.mark.parametrize("q", [4, 3, [0, 0.1, 0.5, 1.0], 10])
def test_qcut(device, q):
    p = _pdf(40, 3)
    d = fd.from_pandas(p, device=device)
    same(fd.qcut(d["f"], q), pd.qcut(p["f"], q), check_dtype=True)
    same(fd.qcut(d["f"], q, labels=False), pd.qcut(p["f"], q, labels=False))
    g, gb = fd.qcut(d["f"], q, retbins=True)
    e, eb = pd.qcut(p["f"], q, retbins=True)
    np.testing.assert_allclose(gb, eb)
    r = pd.Series([1, 1, 1, 1, 2, 3])
    er = fd.from_pandas(r, device=device)
    with pytest.raises(ValueError, match="Bin edges must be unique"):
        fd.qcut(er, 4)
    same(fd.qcut(er, 4, duplicates="drop"), pd.qcut(r, 4, duplicates="drop"), check_dtype=True)
    same(
        fd.qcut(er, 4, labels=["low", "high"], duplicates="drop"),
        pd.qcut(r, 4, labels=["low", "high"], duplicates="drop"),
        check_dtype=True,
    )
    with pytest.raises(ValueError, match="positive integer"):
        fd.qcut(d["f"], 0)


# ---- conversions -------------------------------------------------------------------------------
def test_to_numeric(device):
    cases = [["1", "2", "-30"], ["1.5", " 2 ", "1e3", "-inf"], ["1", None, "3"], ["", "4"]]
    for vals in cases:
        p = pd.Series(vals, dtype="str")
        same(fd.to_numeric(fd.from_pandas(p, device=device)), pd.to_numeric(p), check_dtype=True)
    p = pd.Series(["1", "x", "2.5", None], dtype="str")
    d = fd.from_pandas(p, device=device)
    same(fd.to_numeric(d, errors="coerce"), pd.to_numeric(p, errors="coerce"), check_dtype=True)
    with pytest.raises(ValueError, match="Unable to parse string 'x' at position 1"):
        fd.to_numeric(d)
    with pytest.raises(ValueError, match="invalid error value"):
        fd.to_numeric(d, errors="ignore")
    for vals, how in [
        ([1, 2, 300], "integer"),
        ([1, 2], "unsigned"),
        ([-1, 2], "unsigned"),
        ([1.5, 2.0], "float"),
        ([1e300], "float"),
        ([1.0, 2.0], "integer"),
        ([1.5, 2.0], "integer"),
        ([70000, -1], "signed"),
        ([1, 2], "float"),
    ]:
        p = pd.Series(vals)
        same(
            fd.to_numeric(fd.from_pandas(p, device=device), downcast=how),
            pd.to_numeric(p, downcast=how),
            check_dtype=True,
        )
    t = _pdf()["t"].dropna()
    same(fd.to_numeric(fd.from_pandas(t, device=device)), pd.to_numeric(t), check_dtype=True)
    got = fd.to_numeric(["1", "2"])
    assert isinstance(got, ember.ndarray) and ember.asnumpy(got).tolist() == [1, 2]
    assert fd.to_numeric("3.5") == 3.5


def test_factorize_unique_timedelta_categorical(device):
    p = pd.Series([2.0, np.nan, 1.0, 2.0, 5.0, np.nan])
    d = fd.from_pandas(p, device=device)
    for kw in [{}, {"sort": True}, {"use_na_sentinel": False}]:
        codes, uniq = fd.factorize(d, **kw)
        ecodes, euniq = pd.factorize(p, **kw)
        assert ember.asnumpy(codes).tolist() == ecodes.tolist()
        pd.testing.assert_index_equal(uniq.to_pandas(), euniq)
    s = pd.Series(["b", "a", None, "b"], dtype="str")
    codes, uniq = fd.from_pandas(s, device=device).factorize()
    assert ember.asnumpy(codes).tolist() == pd.factorize(s)[0].tolist()
    assert uniq.tolist() == pd.factorize(s)[1].tolist()
    same(fd.unique(d), pd.Series(pd.unique(p)))
    assert fd.unique(fd.from_pandas(pd.Index([3, 1, 3]), device=device)).tolist() == [3, 1]
    got = fd.unique(ember.asarray([3, 1, 3, 2], device=device))
    assert ember.asnumpy(got).tolist() == [3, 1, 2]
    for unit in ["D", "h", "s", "ms", "ns", None]:
        q = pd.Series([1, 2, 36])
        same(
            fd.to_timedelta(fd.from_pandas(q, device=device), unit=unit),
            pd.to_timedelta(q, unit=unit),
            check_dtype=True,
        )
    q = pd.Series([1.5, np.nan, -0.25])
    same(
        fd.to_timedelta(fd.from_pandas(q, device=device), unit="h"),
        pd.to_timedelta(q, unit="h"),
        check_dtype=True,
    )
    pd.testing.assert_index_equal(
        fd.to_timedelta([1, 2], unit="D").to_pandas(), pd.Index(pd.to_timedelta([1, 2], unit="D"))
    )
    assert fd.to_timedelta("1 day") == pd.Timedelta("1 day")
    c = fd.Categorical(["a", "b", "a", None], device=device)
    pd.testing.assert_extension_array_equal(c.to_pandas(), pd.Categorical(["a", "b", "a", None]))
    c2 = fd.Categorical(["a", "b", "a"], categories=["b", "a", "z"], ordered=True, device=device)
    e2 = pd.Categorical(["a", "b", "a"], categories=["b", "a", "z"], ordered=True)
    pd.testing.assert_extension_array_equal(c2.to_pandas(), e2)
    assert ember.asnumpy(c2.codes).tolist() == e2.codes.tolist() and c2.ordered
    same(fd.Series(c2, device=device), pd.Series(e2), check_dtype=True)
    same(fd.DataFrame({"c": c2}, device=device), pd.DataFrame({"c": e2}), check_dtype=True)
    fc = fd.Categorical.from_codes([0, 1, -1], categories=["x", "y"], device=device)
    pd.testing.assert_extension_array_equal(
        fc.to_pandas(), pd.Categorical.from_codes([0, 1, -1], categories=["x", "y"])
    )


# ---- Series methods ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"limit": 1},
        {"limit_direction": "both"},
        {"limit_direction": "backward", "limit": 2},
        {"limit_direction": "both", "limit_area": "inside"},
        {"limit_direction": "both", "limit_area": "outside"},
        {"method": "index"},
        {"method": "nearest"},
    ],
)
def test_interpolate(device, kw):
    p = pd.Series([np.nan, 1.0, np.nan, np.nan, 4.0, np.nan, 10.0, np.nan, np.nan])
    if kw.get("method") == "index":
        p.index = [0, 1, 2, 5, 6, 7, 10, 11, 12]
    d = fd.from_pandas(p, device=device)
    same(d.interpolate(**kw), p.interpolate(**kw))
    pf = pd.DataFrame({"a": p.to_numpy(), "b": np.arange(9), "c": p.to_numpy()[::-1]})
    if kw.get("method") in ("index", "nearest"):
        return
    same(fd.from_pandas(pf, device=device).interpolate(**kw), pf.interpolate(**kw))
    with pytest.raises(TypeError, match="Cannot interpolate"):
        fd.DataFrame({"a": [1.0, None], "s": ["x", "y"]}, device=device).interpolate()


def test_series_mode_monotonic_combine_first(device):
    for vals in [[3, 1, 1, 3, np.nan], [2.0, np.nan, np.nan], [], ["b", "a", "b", None, "a"]]:
        p = pd.Series(vals, dtype="str" if vals and isinstance(vals[0], str) else "float64")
        d = fd.from_pandas(p, device=device)
        same(d.mode(), p.mode(), check_index=False)
        same(d.mode(dropna=False), p.mode(dropna=False), check_index=False)
    for vals in [[1, 2, 2, 3], [3, 2, 2], [1, np.nan, 2], [], ["a", "b", "b"], ["b", "a"]]:
        p = pd.Series(vals, dtype=object if vals and isinstance(vals[0], str) else "float64")
        d = fd.from_pandas(p, device=device)
        assert d.is_monotonic_increasing == p.is_monotonic_increasing
        assert d.is_monotonic_decreasing == p.is_monotonic_decreasing
    a = pd.Series([1.0, np.nan, 3.0], index=[0, 1, 2])
    b = pd.Series([10.0, 20.0, 40.0], index=[1, 2, 4])
    ea, eb = fd.from_pandas(a, device=device), fd.from_pandas(b, device=device)
    same(ea.combine_first(eb), a.combine_first(b), check_dtype=True)
    same(
        ea.combine_first(fd.from_pandas(b.set_axis([0, 1, 2]), device=device)),
        a.combine_first(b.set_axis([0, 1, 2])),
    )
    i1, i2 = pd.Series([1, 2], index=[0, 1]), pd.Series([3, 4], index=[1, 2])
    same(
        fd.from_pandas(i1, device=device).combine_first(fd.from_pandas(i2, device=device)),
        i1.combine_first(i2),
        check_dtype=True,
    )


@pytest.mark.parametrize(
    "fmt", ["%Y/%m", "%Y-%m-%d %H:%M:%S", "%d %b %Y, %A", "%j|%y|%I%p|%B|%a", "%F %T.%f %%", "x"]
)
def test_dt_strftime(device, fmt):
    p = pd.Series(
        pd.to_datetime(
            ["2020-01-02 03:04:05.678901", "1999-12-31 23:59:59", None, "2024-02-29 12:00:00"],
            format="ISO8601",
        )
    )
    d = fd.from_pandas(p, device=device)
    same(d.dt.strftime(fmt), p.dt.strftime(fmt), check_dtype=True)
    same(d.dt.month_name(), p.dt.month_name())
    with pytest.raises(ValueError, match="directive"):
        d.dt.strftime("%U")


# ---- DataFrame methods -------------------------------------------------------------------------
def test_iteration_memory_agg(device):
    p = _pdf()
    d = fd.from_pandas(p, device=device)
    for (gl, gr), (el, er) in zip(d.iterrows(), p.iterrows(), strict=True):
        assert gl == el
        pd.testing.assert_series_equal(gr, er)
    assert repr(list(d.itertuples())) == repr(list(p.itertuples()))
    assert repr(list(d.itertuples(False, None))) == repr(list(p.itertuples(False, None)))
    n = p[["f", "k"]].assign(b=p["k"] > 0)
    same(fd.from_pandas(n, device=device).memory_usage(), n.memory_usage(), check_dtype=True)
    same(fd.from_pandas(n, device=device).memory_usage(index=False), n.memory_usage(index=False))
    q = p[["i", "f", "k"]]
    e = fd.from_pandas(q, device=device)
    same(e.agg(["sum", "mean"]), q.agg(["sum", "mean"]))
    same(e.agg(["min", "max"]), q.agg(["min", "max"]))
    same(e.agg("max"), q.agg("max"))
    same(e.agg({"f": "mean", "k": "max"}), q.agg({"f": "mean", "k": "max"}))
    same(e.agg({"f": ["mean", "min"], "k": "max"}), q.agg({"f": ["mean", "min"], "k": "max"}))
    same(e.aggregate(lambda s: s.max() - s.min()), q.aggregate(lambda s: s.max() - s.min()))


def test_cov_corrwith_idx(device):
    rng = np.random.default_rng(5)
    p = pd.DataFrame(
        {
            "a": rng.standard_normal(30) + 1e4,
            "b": rng.standard_normal(30),
            "c": rng.integers(0, 9, 30),
        }
    )
    p.loc[[3, 8], "b"] = np.nan
    d = fd.from_pandas(p, device=device)
    same(d.cov(), p.cov())
    full = p.dropna()  # pandas applies ddof only to frames without missing values
    same(fd.from_pandas(full, device=device).cov(ddof=0), full.cov(ddof=0))
    same(d.cov(min_periods=29), p.cov(min_periods=29))
    same(d.corrwith(d), p.corrwith(p))
    same(d.corrwith(d["b"]), p.corrwith(p["b"]))
    q = p.iloc[::-1].rename(columns={"c": "z"}) * 2 + 1
    same(d.corrwith(fd.from_pandas(q, device=device)), p.corrwith(q))
    same(d.corrwith(fd.from_pandas(q, device=device), drop=True), p.corrwith(q, drop=True))
    same(d.idxmin(), p.idxmin(), check_dtype=True)
    same(d.idxmax(), p.idxmax(), check_dtype=True)
    with pytest.raises(ValueError, match="non-numeric"):
        fd.from_pandas(_pdf(), device=device).cov()


def test_update_filter_eval_explode(device):
    p = pd.DataFrame(
        {"a": [1, 2, 3], "b": [1.0, np.nan, 3.0], "ab": ["x", "y", "z"]}, index=["r1", "r2", "x3"]
    )
    o = pd.DataFrame({"b": [10.0, np.nan], "zz": [1, 2], "a": [7, 8]}, index=["x3", "r1"])
    for kw in [{}, {"overwrite": False}]:
        d = fd.from_pandas(p, device=device)
        e = p.copy()
        assert d.update(fd.from_pandas(o, device=device), **kw) is None
        e.update(o, **kw)
        same(d, e, check_dtype=True)
    d = fd.from_pandas(p, device=device)
    with pytest.raises(ValueError, match="Data overlaps"):
        d.update(fd.from_pandas(o, device=device), errors="raise")
    for kw in [
        {"items": ["b", "a", "nope"]},
        {"like": "a"},
        {"regex": "^a"},
        {"like": "r", "axis": 0},
        {"regex": "[0-9]$", "axis": "index"},
        {"items": ["x3", "r1"], "axis": 0},
    ]:
        same(d.filter(**kw), p.filter(**kw))
    with pytest.raises(TypeError, match="mutually exclusive"):
        d.filter(items=["a"], like="a")
    same(d.eval("c = a + b"), p.eval("c = a + b"))
    same(d.eval("a * 2 - b"), p.eval("a * 2 - b"))
    same(d.eval("c = a + b\nd = c * 2"), p.eval("c = a + b\nd = c * 2"))
    e = d.copy()
    e.eval("a = a * 10", inplace=True)
    same(e, p.eval("a = a * 10"))
    x = pd.DataFrame({"a": [[1, 2], [3], [], None], "b": [1, 2, 3, 4]})
    got = fd.DataFrame({"a": [[1, 2], [3], [], None], "b": [1, 2, 3, 4]}, device=device)
    # pandas' object column reads None/NaN for a missing/empty list: ember's is a null int
    same(got.explode("a"), x.explode("a").astype({"a": "float64"}))
    same(
        got.explode("a", ignore_index=True),
        x.explode("a", ignore_index=True).astype({"a": "float64"}),
    )


def test_iloc_setitem(device):
    p = _pdf()[["i", "f", "k"]].copy()
    d = fd.from_pandas(p, device=device)
    for key, val in [
        ((0, 0), 9),
        ((slice(1, 4), 1), 0.5),
        ((slice(None), 2), 7),
        ((2, slice(None)), [1, 2.5, 3]),
        (([0, 5], [0, 2]), -1),
        ((slice(0, 2), slice(1, 3)), np.array([[1.5, 2], [3.5, 4]])),
        ((-1, 1), None),
    ]:
        d.iloc[key] = val
        p.iloc[key] = val
        same(d, p)
    s = pd.Series([1.0, 2.0, 3.0, 4.0])
    es = fd.from_pandas(s, device=device)
    es.iloc[1:3] = 0.0
    s.iloc[1:3] = 0.0
    es.iloc[[0, 3]] = [7.0, 8.0]
    s.iloc[[0, 3]] = [7.0, 8.0]
    same(es, s, check_dtype=True)


def test_read_csv_text_setindex_crosstab(device):
    text = "a,b,c\n1,x,2.5\n3,y,\n"
    same(fd.read_csv(io.StringIO(text), device=device), pd.read_csv(io.StringIO(text)))
    same(fd.read_csv(io.BytesIO(text.encode()), device=device), pd.read_csv(io.StringIO(text)))
    p = pd.DataFrame({"a": [1, 2, 3], "b": [1, 1, 2]})
    d = fd.from_pandas(p, device=device)
    pd.testing.assert_frame_equal(d.set_index(["a", "b"]).to_pandas(), p.set_index(["a", "b"]))
    pd.testing.assert_frame_equal(d.set_index("a").to_pandas(), p.set_index("a"))
    ct = fd.crosstab(d.a, d.b).to_pandas()
    pd.testing.assert_frame_equal(ct, pd.crosstab(p.a, p.b))
    got = fd.crosstab(d.a, d.b, rownames=["R"], colnames=["C"]).to_pandas()
    pd.testing.assert_frame_equal(got, pd.crosstab(p.a, p.b, rownames=["R"], colnames=["C"]))
    got = fd.crosstab(d.a, d.b, values=d.a * 2, aggfunc="sum").to_pandas()
    exp = pd.crosstab(p.a, p.b, values=p.a * 2, aggfunc="sum")
    same(got, exp)


# ---- reshape -----------------------------------------------------------------------------------
def test_stack_unstack(device):
    p = pd.DataFrame({"x": [1.0, np.nan, 3.0], "y": [4.0, 5.0, 6.0]}, index=["a", "b", "c"])
    d = fd.from_pandas(p, device=device)
    pd.testing.assert_series_equal(d.stack().to_pandas(), p.stack())
    pd.testing.assert_series_equal(d.unstack().to_pandas(), p.unstack())
    q = pd.DataFrame(
        {
            "k1": [1, 1, 2, 2, 3],
            "k2": ["u", "v", "u", "w", "v"],
            "v": [1.0, 2.0, 3.0, 4.0, 5.0],
            "n": [1, 2, 3, 4, 5],
        }
    )
    e = fd.from_pandas(q, device=device)
    pd.testing.assert_frame_equal(
        e.set_index(["k1", "k2"]).unstack().to_pandas(),
        q.set_index(["k1", "k2"]).unstack(),
        check_dtype=False,
    )
    same(e.set_index(["k1", "k2"]).unstack(0), q.set_index(["k1", "k2"]).unstack(0))
    same(
        e.set_index(["k1", "k2"]).unstack(fill_value=0),
        q.set_index(["k1", "k2"]).unstack(fill_value=0),
    )
    g = e.groupby(["k1", "k2"])["v"].sum().unstack()
    pd.testing.assert_frame_equal(g.to_pandas(), q.groupby(["k1", "k2"])["v"].sum().unstack())
    g = e.groupby(["k1", "k2"]).sum().unstack()
    pd.testing.assert_frame_equal(
        g.to_pandas(), q.groupby(["k1", "k2"]).sum().unstack(), check_dtype=False
    )
    pd.testing.assert_frame_equal(
        e.set_index(["k1", "k2"])[[]].unstack().to_pandas(), q.set_index(["k1", "k2"])[[]].unstack()
    )
    dup = fd.from_pandas(q.assign(k2="u"), device=device).set_index(["k1", "k2"])
    with pytest.raises(ValueError, match="duplicate entries"):
        dup.unstack()
    with pytest.raises(TypeError, match="object"):
        fd.DataFrame({"a": [1], "b": ["x"]}, device=device).stack()


# ---- group-by ----------------------------------------------------------------------------------
def test_groupby_attr_nth_shift(device):
    p = _pdf(20, 6)
    d = fd.from_pandas(p, device=device)
    g, pg = d.groupby("k"), p.groupby("k")
    same(g.f.sum(), pg.f.sum())
    same(g.i.transform("mean"), pg.i.transform("mean"))
    with pytest.raises(AttributeError):
        _ = g.nope
    for n in [0, 1, -1, [0, -1], 5]:
        same(g.nth(n), pg.nth(n))
        same(g.f.nth(n), pg.f.nth(n))
    same(g[["f", "i"]].nth(0), pg[["f", "i"]].nth(0))
    for periods in [1, -1, 2]:
        same(g.f.shift(periods), pg.f.shift(periods))
        same(g[["f", "i", "s"]].shift(periods), pg[["f", "i", "s"]].shift(periods))
        same(g.f.diff(periods), pg.f.diff(periods))
    same(g[["f", "k"]].shift(1, fill_value=0), pg[["f", "k"]].shift(1, fill_value=0))
    same(g.i.diff(), pg.i.diff())


def test_groupby_apply(device):
    p = _pdf(20, 7)[["i", "f", "k", "s"]]
    d = fd.from_pandas(p, device=device)
    g, pg = d.groupby("k"), p.groupby("k")
    same(g.apply(lambda x: x.f.sum()), pg.apply(lambda x: x.f.sum()))
    same(g.apply(lambda x: len(x)), pg.apply(lambda x: len(x)))
    same(g.apply(lambda x: x.f * 2), pg.apply(lambda x: x.f * 2))
    same(g.apply(lambda x: x[["f", "i"]].sum()), pg.apply(lambda x: x[["f", "i"]].sum()))
    same(g.apply(lambda x: x.head(2)), pg.apply(lambda x: x.head(2)))
    same(
        g.apply(lambda x: x.sort_values("f").tail(1)),
        pg.apply(lambda x: x.sort_values("f").tail(1)),
    )
    same(g.f.apply(lambda x: x.max()), pg.f.apply(lambda x: x.max()))
    same(g.f.apply(lambda x: x.cumsum()), pg.f.apply(lambda x: x.cumsum()))
    gk, pk = d.groupby("k", group_keys=False), p.groupby("k", group_keys=False)
    same(gk.apply(lambda x: x.head(1)), pk.apply(lambda x: x.head(1)))
    m = d.groupby(["k", "s"])
    pm = p.groupby(["k", "s"])
    same(m.apply(lambda x: x.f.mean()), pm.apply(lambda x: x.f.mean()))
    with pytest.raises(ValueError, match="include_groups"):
        g.apply(len, include_groups=True)
    seen = []
    g.apply(lambda x: seen.append(x.device))
    assert set(seen) == {d.device}  # each group is a slice on the frame's device


def test_dataframe_apply_rows(device):
    p = pd.DataFrame({"a": [1, 2, 3], "b": [1.5, np.nan, 2.0]})
    d = fd.from_pandas(p, device=device)
    same(d.apply(lambda r: r["a"] + r["b"], axis=1), p.apply(lambda r: r["a"] + r["b"], axis=1))
    same(d.apply(lambda r: r * 2, axis=1), p.apply(lambda r: r * 2, axis=1))
    same(d.apply(lambda r: r.sum(), axis=1), p.apply(lambda r: r.sum(), axis=1))
    same(
        d.apply(lambda r: [r["a"], r["a"] * 2], axis=1, result_type="expand"),
        p.apply(lambda r: [r["a"], r["a"] * 2], axis=1, result_type="expand"),
    )
    same(d.apply(np.sum, axis=1, raw=True), p.apply(np.sum, axis=1, raw=True))
    same(
        d.apply(lambda r: 1, axis=1, result_type="broadcast"),
        p.apply(lambda r: 1, axis=1, result_type="broadcast"),
    )
    m = pd.DataFrame({"n": [1, 2], "s": ["x", "yy"]})
    em = fd.from_pandas(m, device=device)
    same(em.apply(lambda r: r["s"] * r["n"], axis=1), m.apply(lambda r: r["s"] * r["n"], axis=1))
    names = []
    d.apply(lambda r: names.append(r.name), axis=1)
    assert names == [0, 1, 2]
    with pytest.raises(TypeError, match="expand"):
        d.apply(lambda r: [1, 2], axis=1)


def test_to_timedelta_text(device):
    vals = [
        "1 days 02:03:04.5",
        "02:00:00",
        "1h",
        "1.5h",
        "30min",
        "-1 days +02:00:00",
        "2 days",
        "10s",
        "3ms",
        "1W",
        "-2h",
        " 5 min ",
        "1 day, 02:00:00",
        "x",
        "",
        None,
        "1 hour",
        "-1 days 02:00:00",
        "-02:00:00",
        "25:00:00",
        "1 days 2 hours",
        "1h30m",
        "+3s",
        "7 us",
        "1T",
        "1.5",
        "1 Min",
        "h",
        "1::2",
    ]
    p = pd.Series(vals, dtype="str")
    d = fd.from_pandas(p, device=device)
    same(fd.to_timedelta(d, errors="coerce"), pd.to_timedelta(p, errors="coerce"), check_dtype=True)
    for v in [["1h", "2 days"], ["00:00:01.0000015", "3"], ["12"], ["1h", None]]:
        q = pd.Series(v, dtype="str")
        same(
            fd.to_timedelta(fd.from_pandas(q, device=device)), pd.to_timedelta(q), check_dtype=True
        )
    with pytest.raises(ValueError, match="'x'"):
        fd.to_timedelta(d)
    with pytest.raises(ValueError, match="unit must not be specified"):
        fd.to_timedelta(d, unit="s")


def test_empty_frames(device):
    p = pd.DataFrame({"a": pd.Series([], dtype="float64"), "b": pd.Series([], dtype="int64")})
    d = fd.from_pandas(p, device=device)
    same(d.stack(), p.stack())
    assert list(d.iterrows()) == [] and list(d.itertuples()) == []
    same(d.agg(["sum", "max"]), p.agg(["sum", "max"]))
    same(d.interpolate(), p.interpolate())
    same(d.groupby("b").apply(lambda g: g.a.sum()), p.groupby("b").apply(lambda g: g.a.sum()))
    same(d.groupby("b").a.apply(lambda g: g.sum()), p.groupby("b").a.apply(lambda g: g.sum()))
    same(d.groupby("b").nth(0), p.groupby("b").nth(0))
    same(d.groupby("b").a.shift(), p.groupby("b").a.shift())
    same(d.cov(), p.cov())
    same(d.memory_usage(), p.memory_usage())
    same(d.ewm(span=2).mean(), p.ewm(span=2).mean())
    same(d.expanding().sum(), p.expanding().sum())
    same(d.eval("c = a + b"), p.eval("c = a + b"))
    same(d.a.mode(), p.a.mode())
    same(fd.to_numeric(d.a), pd.to_numeric(p.a))
    with pytest.raises(ValueError, match="Bin edges must be unique"):
        fd.qcut(d.a, 2)
    with pytest.raises(ValueError, match="empty"):
        d.idxmax()


def test_index_assignment_list_construction_and_inplace(device):
    """``obj.index = [...]`` converts and checks the length (it stored the list before), a
    DataFrame from a list of Series or of scalars, and pandas' ``inplace=True``."""
    pdf = pd.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.0, 6.0]})
    df = fd.from_pandas(pdf, device=device)
    df.index = ["x", "y", "z"]
    pdf.index = ["x", "y", "z"]
    pd.testing.assert_frame_equal(df.to_pandas(), pdf)
    with pytest.raises(ValueError, match="Length mismatch: Expected axis has 3 elements"):
        df.index = [1, 2]
    s = fd.Series([1.0, 2.0, 3.0], device=device)
    s.index = np.array([0.5, 1.5, 2.5])
    pd.testing.assert_series_equal(s.to_pandas(), pd.Series([1.0, 2.0, 3.0], index=[0.5, 1.5, 2.5]))
    a = fd.Series([1.0, 2.0], name="p", device=device)
    rows = fd.DataFrame([a, a * 2], index=["r1", "r2"])
    ref = pd.DataFrame([a.to_pandas(), (a * 2).to_pandas()], index=["r1", "r2"])
    pd.testing.assert_frame_equal(rows.to_pandas(), ref, check_column_type=False)
    pd.testing.assert_frame_equal(
        fd.DataFrame([1, 2, 3], columns=["c"]).to_pandas(), pd.DataFrame([1, 2, 3], columns=["c"])
    )
    d2 = fd.from_pandas(pdf, device=device)
    p2 = pdf.copy()
    assert d2.set_index("a", inplace=True) is None
    p2.set_index("a", inplace=True)
    pd.testing.assert_frame_equal(d2.to_pandas(), p2)
    d2.reset_index(inplace=True)
    p2.reset_index(inplace=True)
    d2.rename(columns={"b": "B"}, inplace=True)
    p2.rename(columns={"b": "B"}, inplace=True)
    d2.drop(columns=["a"], inplace=True)
    p2.drop(columns=["a"], inplace=True)
    pd.testing.assert_frame_equal(d2.to_pandas(), p2)


def test_concat_text_with_an_empty_numeric_piece(device):
    a = fd.Series([1.0, 2.0], index=["x", "y"], device=device)
    e = fd.Series([], dtype="float64", device=device)
    got = fd.concat([e, a])
    assert got.index.to_pandas().tolist() == ["x", "y"]
    with pytest.raises(TypeError, match="cannot combine string and non-string"):
        fd.concat([fd.Series(["u"], device=device), fd.Series([1.0], device=device)])


def test_squeeze_signatures_and_fillna_without_missing(device):
    frames = [{"a": [1]}, {"a": [1, 2]}, {"a": [1], "b": [2]}, {"a": [1, 2], "b": [3, 4]}]
    for pdf in map(pd.DataFrame, frames):
        got, ref = fd.from_pandas(pdf, device=device).squeeze(), pdf.squeeze()
        assert type(got).__name__ == type(ref).__name__
        if hasattr(ref, "shape") and ref.shape:
            assert got.shape == ref.shape
        else:
            assert got == ref
    s = fd.Series([3.0, 1.0, 2.0], device=device)
    ps = s.to_pandas()
    pd.testing.assert_series_equal(s.cumsum(0, True).to_pandas(), ps.cumsum(0, True))
    pd.testing.assert_series_equal(s.clip(1.5, 2.5, axis=0).to_pandas(), ps.clip(1.5, 2.5, axis=0))
    with pytest.raises(ValueError, match="win_type='hann' is not supported"):
        s.rolling(2, win_type="hann")
    text = fd.DataFrame({"k": ["u", "v"], "x": [1.0, None]}, device=device)
    pd.testing.assert_frame_equal(text.fillna(0).to_pandas(), text.to_pandas().fillna(0))


def test_first_level_selection_of_multiindex_columns(device):
    p = pd.DataFrame({"k": ["x", "y", "x"], "a": [1, 2, 3], "b": [1.0, 2.0, 3.0]})
    e = fd.from_pandas(p, device=device)
    spec = {"a": ["min", "max"], "b": ["sum"]}
    got, ref = e.groupby("k").agg(spec), p.groupby("k").agg(spec)
    pd.testing.assert_frame_equal(got["a"].to_pandas(), ref["a"])
    pd.testing.assert_frame_equal(got["b"].to_pandas(), ref["b"])
    with pytest.raises(KeyError):
        got["c"]


def test_series_of_device_scalars_stays_on_their_device(device):
    """Dask's describe builds a Series from per-partition 0-d arrays: stacked where they are."""
    vals = [ember.asarray(1.5, device=device), ember.asarray(2, device=device), 3]
    s = fd.Series(vals, index=["a", "b", "c"])
    assert s.device == str(ember.Device(device))
    same(s, pd.Series([1.5, 2.0, 3.0], index=["a", "b", "c"]), check_dtype=True)


def test_describe_include_pivot_to_records(device):
    p = pd.DataFrame(
        {
            "a": [1, 2, 3, 4],
            "b": [1.5, np.nan, 3.0, 4.0],
            "k": ["x", "y", "x", "z"],
            "j": [1, 1, 2, 2],
        }
    )
    d = fd.from_pandas(p, device=device)
    pd.testing.assert_frame_equal(d.describe(include="all"), p.describe(include="all"))
    pt = p.assign(t=pd.date_range("2024-01-01", periods=4), td=pd.to_timedelta([1, 2, 3, 10], "h"))
    dt_ = fd.from_pandas(pt, device=device)
    pd.testing.assert_frame_equal(dt_.describe(include="all"), pt.describe(include="all"))
    assert dt_["td"].describe().equals(pt["td"].describe())
    pd.testing.assert_frame_equal(d.describe(include=["object"]), p.describe(include=["object"]))
    same(d.describe(exclude=["object"]), p.describe(exclude=["object"]))
    same(d.pivot(index="a", columns="k", values="b"), p.pivot(index="a", columns="k", values="b"))
    dup = fd.from_pandas(
        pd.DataFrame({"i": [1, 1], "c": ["x", "x"], "v": [1.0, 2.0]}), device=device
    )
    with pytest.raises(ValueError, match="duplicate"):
        dup.pivot(index="i", columns="c", values="v")
    got, want = d.to_records(), p.to_records()
    assert got.dtype == want.dtype and got.tolist().__repr__() == want.tolist().__repr__()


def test_merge_asof_against_pandas(device):
    rng = np.random.default_rng(0)
    l = pd.DataFrame({"t": np.sort(rng.integers(0, 50, 30)), "g": rng.choice(["a", "b", "c"], 30),
                      "x": rng.normal(size=30)})  # fmt: skip
    r = pd.DataFrame({"t": np.sort(rng.integers(0, 50, 20)), "g": rng.choice(["a", "b"], 20),
                      "x": rng.normal(size=20)})  # fmt: skip
    el, er = fd.from_pandas(l, device=device), fd.from_pandas(r, device=device)
    for kw in [
        dict(on="t"),
        dict(on="t", by="g"),
        dict(on="t", direction="forward"),
        dict(on="t", by="g", direction="nearest"),
        dict(on="t", allow_exact_matches=False),
        dict(on="t", tolerance=2),
        dict(on="t", by="g", direction="nearest", tolerance=3, suffixes=("_l", "_r")),
    ]:
        got = fd.merge_asof(el, er, **kw)
        assert got.device == str(ember.Device(device))
        same(got, pd.merge_asof(l, r, **kw))
    # datetime keys with a Timedelta tolerance, float keys
    lt = l.assign(t=pd.Timestamp("2024-01-01") + pd.to_timedelta(l["t"], unit="s"))
    rt = r.assign(t=pd.Timestamp("2024-01-01") + pd.to_timedelta(r["t"], unit="s"))
    kw = dict(on="t", by="g", tolerance=pd.Timedelta("2s"))
    same(fd.merge_asof(fd.from_pandas(lt, device=device), fd.from_pandas(rt, device=device),
                       **kw), pd.merge_asof(lt, rt, **kw))  # fmt: skip
    lf, rf = l.assign(t=l["t"] * 0.5), r.assign(t=r["t"] * 0.5)
    got = fd.merge_asof(fd.from_pandas(lf, device=device), fd.from_pandas(rf, device=device),
                        on="t", direction="nearest")  # fmt: skip
    same(got, pd.merge_asof(lf, rf, on="t", direction="nearest"))
    with pytest.raises(ValueError, match="sorted"):
        fd.merge_asof(fd.from_pandas(l.iloc[::-1], device=device), er, on="t")


def test_groupby_rolling_against_pandas(device):
    p = pd.DataFrame(
        {"k": list("xyxzyxx"), "a": [1, 2, 3, 4, 5, 6, 7], "b": [1.0, np.nan, 3, 4, 5, 6, np.nan]},
        index=[10, 11, 12, 13, 14, 15, 16],
    )
    d = fd.from_pandas(p, device=device)
    for how in ["sum", "mean", "min", "max", "count", "std", "var", "median"]:
        for w, mp in [(2, None), (3, 1)]:
            got = getattr(d.groupby("k")["a"].rolling(w, min_periods=mp), how)()
            same(got, getattr(p.groupby("k")["a"].rolling(w, min_periods=mp), how)())
    got = d.groupby("k")[["a", "b"]].rolling(2, min_periods=1).mean()
    same(got, p.groupby("k")[["a", "b"]].rolling(2, min_periods=1).mean())
    with pytest.raises(ValueError, match="window"):
        d.groupby("k")["a"].rolling(-1)
