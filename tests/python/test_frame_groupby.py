"""ember.frame group-by against pandas: keys of every kind, nulls, aggregations, transforms."""

from __future__ import annotations

import ember.frame as fd
import numpy as np
import pandas as pd
import pytest
from test_frame_helpers import same

AGGS = [
    "sum",
    "mean",
    "min",
    "max",
    "count",
    "std",
    "var",
    "first",
    "last",
    "median",
    "nunique",
    "prod",
]


def _pdf(n=50, seed=0):
    rng = np.random.default_rng(seed)
    f = rng.normal(size=n).round(3)
    f[rng.random(n) < 0.2] = np.nan
    ks = rng.choice(["x", "yy", "é", "a"], n).astype(object)
    ks[rng.random(n) < 0.1] = None
    kf = rng.choice([0.5, -1.0, 2.0], n)
    kf[rng.random(n) < 0.1] = np.nan
    v = pd.array(rng.integers(-9, 9, n), dtype="Int64")
    v[rng.random(n) < 0.15] = pd.NA
    return pd.DataFrame(
        {
            "ki": rng.integers(0, 5, n),
            "ks": pd.array(ks, dtype="str"),
            "kf": kf,
            "f": f,
            "v": v,
            "w": rng.integers(0, 100, n),
        }
    )


@pytest.mark.parametrize("key", ["ki", "ks", "kf", ["ki", "ks"], ["ks", "kf", "ki"]])
@pytest.mark.parametrize("dropna", [True, False])
def test_groupby_aggs(device, key, dropna):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    keys = key if isinstance(key, list) else [key]
    vals = [c for c in ["f", "v", "w", "kf"] if c not in keys]
    g = df.groupby(key, dropna=dropna)[vals]
    pg = pdf.groupby(key, dropna=dropna)[vals]
    for how in AGGS:
        got = getattr(g, how)()
        exp = getattr(pg, how)()
        same(got, exp)
    if "ks" not in keys:
        for how in ["min", "max", "first", "last", "count", "nunique"]:
            same(
                getattr(df.groupby(key, dropna=dropna)["ks"], how)(),
                getattr(pdf.groupby(key, dropna=dropna)["ks"], how)(),
            )
    same(g.size(), pg.size())
    same(df.groupby(key, dropna=dropna)["f"].sum(), pdf.groupby(key, dropna=dropna)["f"].sum())


def test_groupby_agg_forms(device):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    num = ["f", "v", "w"]
    same(df.groupby("ki")[num].agg("mean"), pdf.groupby("ki")[num].agg("mean"))
    same(
        df.groupby("ki")[["f", "w"]].agg(["sum", "max"]),
        pdf.groupby("ki")[["f", "w"]].agg(["sum", "max"]),
    )
    same(
        df.groupby("ks").agg({"f": "sum", "w": ["min", "max"]}),
        pdf.groupby("ks").agg({"f": "sum", "w": ["min", "max"]}),
    )
    same(
        df.groupby("ks").agg({"f": "mean", "v": "count"}),
        pdf.groupby("ks").agg({"f": "mean", "v": "count"}),
    )
    same(
        df.groupby("ki").agg(total=("w", "sum"), avg=("f", "mean")),
        pdf.groupby("ki").agg(total=("w", "sum"), avg=("f", "mean")),
    )
    same(df.groupby("ki")["f"].agg(["min", "max"]), pdf.groupby("ki")["f"].agg(["min", "max"]))
    same(df.groupby("ki", as_index=False)[num].sum(), pdf.groupby("ki", as_index=False)[num].sum())
    same(
        df.groupby(["ki", "ks"], as_index=False)[["w"]].agg("sum"),
        pdf.groupby(["ki", "ks"], as_index=False)[["w"]].agg("sum"),
    )
    same(df.groupby("ks", sort=False)["w"].sum(), pdf.groupby("ks", sort=False)["w"].sum())
    same(df.groupby(df["ki"])["w"].max(), pdf.groupby(pdf["ki"])["w"].max())
    same(df["w"].groupby(df["ks"]).mean(), pdf["w"].groupby(pdf["ks"]).mean())
    with pytest.raises(KeyError):
        df.groupby("nope")
    with pytest.raises(AttributeError):
        df.groupby("ki").agg("bogus")


def test_groupby_std_ddof_and_var(device):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    num = ["f", "v", "w"]
    same(df.groupby("ki")[num].std(ddof=0), pdf.groupby("ki")[num].std(ddof=0))
    same(df.groupby("ki")[num].var(ddof=2), pdf.groupby("ki")[num].var(ddof=2))


def test_groupby_transform_cumsum_cumcount(device):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    same(
        df.groupby("ki")[["f", "w"]].transform("mean"),
        pdf.groupby("ki")[["f", "w"]].transform("mean"),
    )
    same(df.groupby("ki")["w"].transform("sum"), pdf.groupby("ki")["w"].transform("sum"))
    same(df.groupby("ks")[["f", "w"]].cumsum(), pdf.groupby("ks")[["f", "w"]].cumsum())
    same(df.groupby("ki").cumcount(), pdf.groupby("ki").cumcount())


def test_groupby_edge_cases(device):
    e = pd.DataFrame({"k": np.array([], dtype=np.int64), "v": np.array([], dtype=np.float64)})
    df = fd.from_pandas(e, device=device)
    same(df.groupby("k").sum(), e.groupby("k").sum())
    one = pd.DataFrame({"k": [1], "v": [2.5]})
    same(
        fd.from_pandas(one, device=device).groupby("k").agg(["sum", "std", "first"]),
        one.groupby("k").agg(["sum", "std", "first"]),
    )
    allnull = pd.DataFrame({"k": [1, 1, 2], "v": [np.nan, np.nan, 1.0]})
    d2 = fd.from_pandas(allnull, device=device)
    for how in ["sum", "mean", "min", "max", "count", "first", "median"]:
        same(getattr(d2.groupby("k"), how)(), getattr(allnull.groupby("k"), how)())
    big = pd.DataFrame({"k": [1, 1, 2], "v": np.array([2**62, 2**62 - 1, 5], dtype=np.int64)})
    assert fd.from_pandas(big, device=device).groupby("k")["v"].sum().tolist() == [2**63 - 1, 5]


def test_pivot_table_crosstab_melt(device):
    pdf = _pdf(40, 2).dropna(subset=["ks"])
    df = fd.from_pandas(pdf, device=device)
    same(
        df.pivot_table(values="w", index="ki", columns="ks", aggfunc="sum"),
        pdf.pivot_table(values="w", index="ki", columns="ks", aggfunc="sum"),
    )
    same(fd.crosstab(df["ki"], df["ks"]), pd.crosstab(pdf["ki"], pdf["ks"]))
    small = pd.DataFrame({"id": [1, 2], "a": [3, 4], "b": [5, 6]})
    same(fd.DataFrame(small, device=device).melt(id_vars="id"), small.melt(id_vars="id"))


@pytest.mark.parametrize("method", ["average", "min", "max", "first", "dense"])
def test_groupby_rank(device, method):
    pdf = _pdf(40, 9)
    pdf["r"] = np.random.default_rng(1).integers(0, 4, len(pdf)).astype(float)
    pdf.loc[3, "r"] = np.nan
    df = fd.from_pandas(pdf, device=device)
    for key in ["ki", "ks"]:
        same(df.groupby(key)["r"].rank(method=method), pdf.groupby(key)["r"].rank(method=method))
        same(
            df.groupby(key)[["r", "w"]].rank(method=method, ascending=False),
            pdf.groupby(key)[["r", "w"]].rank(method=method, ascending=False),
        )
        same(
            df.groupby(key)["r"].rank(method=method, pct=True),
            pdf.groupby(key)["r"].rank(method=method, pct=True),
        )


@pytest.mark.parametrize(
    "kdtype", ["int8", "uint8", "int16", "uint32", "int64", "uint64", "float32", "bool"]
)
def test_key_dtypes_sweep(device, kdtype):
    rng = np.random.default_rng(11)
    n = 30
    raw = rng.integers(0, 5, n)
    keys = (raw % 2 == 0) if kdtype == "bool" else raw.astype(kdtype)
    if kdtype == "uint64":
        keys = keys + np.uint64(2**63)  # above int64's range
    vals = rng.normal(size=n).astype("float32")
    pdf = pd.DataFrame({"k": keys, "v": vals, "i": rng.integers(-50, 50, n).astype("int32")})
    df = fd.from_pandas(pdf, device=device)
    same(
        df.groupby("k").agg({"v": ["sum", "max"], "i": ["mean", "min", "count"]}),
        pdf.groupby("k").agg({"v": ["sum", "max"], "i": ["mean", "min", "count"]}),
    )
    same(df.sort_values(["k", "i"]), pdf.sort_values(["k", "i"], kind="stable"))
    same(df.drop_duplicates("k"), pdf.drop_duplicates("k"))
    same(df["k"].value_counts(), pdf["k"].value_counts())
    dim = pdf.drop_duplicates("k").assign(w=lambda d: np.arange(len(d)))[["k", "w"]]
    same(
        df.merge(fd.from_pandas(dim, device=device), on="k", how="left"),
        pdf.merge(dim, on="k", how="left"),
    )


def test_groupby_iter_head_tail(device):
    pdf = _pdf(30, 4)
    df = fd.from_pandas(pdf, device=device)
    got = [(k, g.to_pandas()) for k, g in df.groupby("ks")]
    exp = list(pdf.groupby("ks"))
    assert [k for k, _ in got] == [k for k, _ in exp]
    for (_, g), (_, e) in zip(got, exp, strict=True):
        same(g, e)
    same(df.groupby("ki").head(2), pdf.groupby("ki").head(2))
    same(df.groupby("ks").tail(1), pdf.groupby("ks").tail(1))
