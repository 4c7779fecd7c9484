"""ember.frame: sorting, duplicates, value_counts, unique, describe, apply, scans, windows."""

from __future__ import annotations

import ember
import ember.frame as fd
import numpy as np
import pandas as pd
import pytest
from test_frame_helpers import same


def _pdf(n=40, seed=0):
    rng = np.random.default_rng(seed)
    f = rng.normal(size=n).round(2)
    f[rng.random(n) < 0.15] = np.nan
    s = rng.choice(["apple", "b", "Ä", "ab", "", "banana"], n).astype(object)
    s[rng.random(n) < 0.1] = None
    i = pd.array(rng.integers(-3, 4, n), dtype="Int64")
    i[rng.random(n) < 0.1] = pd.NA
    return pd.DataFrame(
        {
            "k": rng.integers(0, 4, n),
            "f": f,
            "s": pd.array(s, dtype="str"),
            "i": i,
            "u": rng.integers(0, 3, n).astype(np.uint16),
        }
    )


@pytest.mark.parametrize("na_position", ["last", "first"])
def test_sort_values_multi_key(device, na_position):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    for by, asc in [
        ("f", True),
        ("s", False),
        (["k", "f"], [True, False]),
        (["s", "i", "u"], [False, True, True]),
        (["i", "k"], True),
    ]:
        exp = pdf.sort_values(by, ascending=asc, na_position=na_position, kind="stable")
        got = df.sort_values(by, ascending=asc, na_position=na_position)
        same(got, exp)
    same(
        df.sort_values("f", ignore_index=True),
        pdf.sort_values("f", kind="stable", ignore_index=True),
    )
    same(
        df["s"].sort_values(ascending=False, na_position=na_position),
        pdf["s"].sort_values(ascending=False, kind="stable", na_position=na_position),
    )
    same(df.sort_values("k").sort_index(), pdf.sort_values("k", kind="stable").sort_index())
    with pytest.raises(ValueError):
        df.sort_values(["k", "f"], ascending=[True])
    with pytest.raises(ValueError):
        df.sort_values("k", na_position="middle")
    with pytest.raises(KeyError):
        df.sort_values("zz")


def test_sort_empty_and_one_row(device):
    e = fd.DataFrame(
        {"a": np.array([], dtype=np.int64), "s": pd.array([], dtype="str")}, device=device
    )
    assert len(e.sort_values(["a", "s"])) == 0
    one = fd.DataFrame({"a": [3], "s": ["x"]}, device=device)
    same(one.sort_values("s"), pd.DataFrame({"a": [3], "s": ["x"]}))


def test_nlargest_nsmallest(device):
    pdf = pd.DataFrame({"a": [5, 1, 9, 3, 7], "b": list("abcde")})
    df = fd.DataFrame(pdf, device=device)
    same(df.nlargest(2, "a"), pdf.nlargest(2, "a"))
    same(df["a"].nsmallest(3), pdf["a"].nsmallest(3))


@pytest.mark.parametrize("keep", ["first", "last", False])
def test_duplicates(device, keep):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    for subset in [None, ["k"], ["s"], ["k", "i"], ["f", "s"]]:
        same(
            df.duplicated(subset=subset, keep=keep),
            pdf.duplicated(subset=subset, keep=keep),
            check_dtype=True,
        )
        same(
            df.drop_duplicates(subset=subset, keep=keep),
            pdf.drop_duplicates(subset=subset, keep=keep),
        )
    same(df["s"].drop_duplicates(keep=keep), pdf["s"].drop_duplicates(keep=keep))
    with pytest.raises(ValueError):
        df.drop_duplicates(keep="middle")


def test_value_counts_unique_nunique(device):
    pdf = _pdf(60, 3)
    df = fd.from_pandas(pdf, device=device)
    for c in ["k", "s", "i", "f"]:
        same(df[c].value_counts(), pdf[c].value_counts())
        same(df[c].value_counts(dropna=False), pdf[c].value_counts(dropna=False))
        same(df[c].value_counts(normalize=True), pdf[c].value_counts(normalize=True))
        assert df[c].nunique() == pdf[c].nunique()
        assert df[c].nunique(dropna=False) == pdf[c].nunique(dropna=False)
        got = df[c].unique().to_pandas()
        exp = pd.Series(pdf[c].unique())
        same(got.reset_index(drop=True), exp.rename(c), check_index=False)
    same(df.nunique(), pdf.nunique())
    assert df.value_counts(["k"]).tolist() == pdf.value_counts(["k"]).tolist()


def test_reductions(device):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    for c in ["k", "f", "i", "u"]:
        for how in ["sum", "mean", "min", "max", "std", "var", "median", "count"]:
            g, e = getattr(df[c], how)(), getattr(pdf[c], how)()
            assert np.isclose(float(g), float(e)), (c, how, g, e)
    assert df["s"].min() == pdf["s"].min() and df["s"].max() == pdf["s"].max()
    num = pdf[["k", "f", "u"]]
    same(fd.from_pandas(num, device=device).sum(), num.sum())
    same(fd.from_pandas(num, device=device).mean(), num.mean())
    assert df["f"].idxmax() == pdf["f"].idxmax()
    assert fd.Series([], dtype="float64", device=device).sum() == 0
    assert np.isnan(fd.Series([np.nan], device=device).mean())


def test_describe(device):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    same(df[["k", "f", "u"]].describe(), pdf[["k", "f", "u"]].describe())
    same(df["f"].describe(), pdf["f"].describe())
    d = df["s"].describe()
    e = pdf["s"].describe()
    assert d["count"] == e["count"] and d["unique"] == e["unique"]


def test_apply_ember_ufuncs(device):
    pdf = pd.DataFrame({"a": [1.0, 4.0, 9.0], "b": [0.0, 1.0, np.nan]})
    df = fd.DataFrame(pdf, device=device)
    same(df["a"].apply(ember.sqrt), pdf["a"].apply(np.sqrt))
    same(df.apply(ember.exp), pdf.apply(np.exp))
    same(df["a"].apply(lambda x: x * 2 + 1), pdf["a"] * 2 + 1)
    with pytest.raises(TypeError):
        df["a"].apply(lambda x: "big" if x > 2 else "small")
    same(df.apply(ember.sqrt, axis=1), pdf.apply(np.sqrt, axis=1))  # one call per row


def test_scans_shift_diff_rank(device):
    pdf = _pdf(30, 5)
    df = fd.from_pandas(pdf, device=device)
    for c in ["f", "k"]:
        s, p = df[c], pdf[c]
        same(s.cumsum(), p.cumsum())
        same(s.cummax(), p.cummax())
        same(s.cummin(), p.cummin())
        same(s.shift(2), p.shift(2))
        same(s.shift(-1), p.shift(-1))
        same(s.diff(), p.diff())
        for m in ["average", "min", "max", "first", "dense"]:
            same(s.rank(method=m), p.rank(method=m))
    same(df["i"].cumsum(), pdf["i"].cumsum())
    same(df["k"].shift(1, fill_value=0), pdf["k"].shift(1, fill_value=0))


@pytest.mark.parametrize("window", [1, 3, 5])
def test_rolling(device, window):
    pdf = _pdf(25, 7)
    df = fd.from_pandas(pdf, device=device)
    for how in ["sum", "mean", "min", "max", "std", "var", "count"]:
        same(getattr(df["f"].rolling(window), how)(), getattr(pdf["f"].rolling(window), how)())
    same(
        df["k"].rolling(window, min_periods=1).mean(),
        pdf["k"].rolling(window, min_periods=1).mean(),
    )


def test_where_mask_isin_between_clip_replace_query(device):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    same(df["f"].where(df["f"] > 0), pdf["f"].where(pdf["f"] > 0))
    same(df["f"].mask(df["f"] > 0, 0.0), pdf["f"].mask(pdf["f"] > 0, 0.0))
    same(df["k"].where(df["k"] > 1, -1), pdf["k"].where(pdf["k"] > 1, -1))
    same(df["s"].where(df["k"] > 1, "zz"), pdf["s"].where(pdf["k"] > 1, "zz"))
    same(df["k"].isin([1, 3]), pdf["k"].isin([1, 3]), check_dtype=True)
    same(df["s"].isin(["b", "ab"]), pdf["s"].isin(["b", "ab"]), check_dtype=True)
    same(df.isin({"k": [0]}), pdf.isin({"k": [0]}))
    same(df["f"].between(-0.5, 0.5), pdf["f"].between(-0.5, 0.5), check_dtype=True)
    same(df["f"].clip(-0.5, 0.5), pdf["f"].clip(-0.5, 0.5))
    same(df["k"].replace(0, 100), pdf["k"].replace(0, 100))
    same(df["s"].replace("b", "B"), pdf["s"].replace("b", "B"))
    same(df["k"].replace([1, 2], [10, 20]), pdf["k"].replace([1, 2], [10, 20]))
    same(df["f"].round(1), pdf["f"].round(1))
    lim = 1  # noqa: F841  (read by the query strings as @lim)
    same(df.query("k > 1 and s == 'b'"), pdf.query("k > 1 and s == 'b'"))
    same(df.query("k <= @lim or f > 0.5"), pdf.query("k <= @lim or f > 0.5"))
    same(
        df.query("s in ['ab', 'b'] and not (u == 1)"),
        pdf.query("s in ['ab', 'b'] and not (u == 1)"),
    )
    same(df.query("k * 2 + u > 4"), pdf.query("k * 2 + u > 4"))
    with pytest.raises(ValueError):
        df.query("k >")


def test_map_and_setitem(device):
    p = pd.Series(["a", "b", None, "c", "a"], dtype="str")
    s = fd.Series(p, device=device)
    same(s.map({"a": 1, "b": 2}), p.map({"a": 1, "b": 2}))
    same(s.map({"a": "x", "c": "z"}), p.map({"a": "x", "c": "z"}))
    q = pd.Series([3, 1, 2, 3])
    t = fd.Series(q, device=device)
    same(t.map({3: 30.5, 1: 10.5}), q.map({3: 30.5, 1: 10.5}))
    same(
        t.map(pd.Series(["three", "one"], index=[3, 1])),
        q.map(pd.Series(["three", "one"], index=[3, 1])),
    )
    t[t > 1] = 0
    q[q > 1] = 0
    same(t, q)
    pdf = pd.DataFrame({"v": [1, 2, 3, 4], "w": [1.0, 2.0, 3.0, 4.0]})
    df = fd.DataFrame(pdf, device=device)
    df.loc[df["v"] > 2, "w"] = -1.0
    pdf.loc[pdf["v"] > 2, "w"] = -1.0
    same(df, pdf)


def test_empty_and_categorical_keys(device):
    e = fd.Series([], dtype="str", device=device)
    assert len(e.str.upper()) == 0 and len(e.value_counts()) == 0 and e.nunique() == 0
    assert len(e.str.contains("a")) == 0
    p = pd.DataFrame(
        {
            "c": pd.Categorical(["b", "a", "b", None]),
            "v": [1, 2, 3, 4],
            "b": [True, False, True, True],
        }
    )
    d = fd.from_pandas(p, device=device)
    same(d.groupby("c")[["v"]].sum(), p.groupby("c")[["v"]].sum())
    same(d.sort_values(["c", "b"]), p.sort_values(["c", "b"], kind="stable"))
    same(d.drop_duplicates("c"), p.drop_duplicates("c"))
    same(d["c"].value_counts(), p["c"].value_counts())


def test_at_iat_sample(device):
    pdf = pd.DataFrame({"a": [1, 2, 3, 4], "s": ["w", "x", "y", "z"]}, index=[10, 20, 30, 40])
    df = fd.from_pandas(pdf, device=device)
    assert df.at[20, "s"] == pdf.at[20, "s"] and df.iat[2, 0] == pdf.iat[2, 0]
    smp = df.sample(3, random_state=0)
    assert len(smp) == 3 and len(set(smp.index.tolist())) == 3
    back = pdf.loc[smp.index.tolist()]
    same(smp, back)
    assert smp.index.tolist() == df.sample(3, random_state=0).index.tolist()
    assert len(df.sample(frac=0.5)) == 2 and len(df.sample(10, replace=True)) == 10
    with pytest.raises(ValueError):
        df.sample(10)


def test_sort_key_and_apply_reductions(device):
    pdf = pd.DataFrame(
        {"s": pd.array(["b", "A", "c", "B"], dtype="str"), "v": [3.0, 1.0, 2.0, 4.0]}
    )
    df = fd.from_pandas(pdf, device=device)
    same(
        df.sort_values("s", key=lambda s: s.str.lower()),
        pdf.sort_values("s", key=lambda s: s.str.lower(), kind="stable"),
    )
    same(df["v"].sort_values(key=lambda s: -s), pdf["v"].sort_values(key=lambda s: -s))
    num = df[["v"]]
    same(num.apply(ember.sum), pdf[["v"]].apply(np.sum))
    same(num.apply(ember.max), pdf[["v"]].apply(np.max))
    with pytest.raises(TypeError):
        df.sort_values("s", key=3)
