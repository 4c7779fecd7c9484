"""ember.frame merge / join / concat against pandas (all join kinds, null and duplicate keys)."""

from __future__ import annotations

import ember.frame as fd
import numpy as np
import pandas as pd
import pytest
from test_frame_helpers import same


def _frames(seed=0, nl=12, nr=9):
    rng = np.random.default_rng(seed)
    left = pd.DataFrame(
        {
            "k": rng.integers(0, 6, nl),
            "s": pd.array(rng.choice(["a", "b", "ç", None], nl), dtype="str"),
            "lv": rng.normal(size=nl).round(2),
            "common": rng.integers(0, 9, nl),
        }
    )
    right = pd.DataFrame(
        {
            "k": rng.integers(2, 8, nr),
            "s": pd.array(rng.choice(["a", "b", "d", None], nr), dtype="str"),
            "rv": rng.integers(0, 100, nr),
            "common": rng.normal(size=nr).round(2),
        }
    )
    return left, right


@pytest.mark.parametrize("how", ["inner", "left", "right", "outer"])
@pytest.mark.parametrize("on", ["k", "s", ["k", "s"]])
def test_merge_kinds(device, how, on):
    left, right = _frames()
    dl, dr = fd.from_pandas(left, device=device), fd.from_pandas(right, device=device)
    exp = left.merge(right, how=how, on=on)
    got = dl.merge(dr, how=how, on=on)
    same(got, exp)


@pytest.mark.parametrize("how", ["inner", "left", "right", "outer"])
def test_merge_dimension_table(device, how):
    rng = np.random.default_rng(4)
    fact = pd.DataFrame({"key": rng.integers(0, 12, 30), "x": rng.normal(size=30)})
    dim = pd.DataFrame({"key": np.arange(2, 10), "name": pd.array(list("abcdefgh"), dtype="str")})
    got = fd.from_pandas(fact, device=device).merge(
        fd.from_pandas(dim, device=device), on="key", how=how
    )
    same(got, fact.merge(dim, on="key", how=how))
    full = fd.from_pandas(fact[fact.key.between(2, 9)], device=device)
    same(
        full.merge(fd.from_pandas(dim, device=device), on="key", how=how),
        fact[fact.key.between(2, 9)].merge(dim, on="key", how=how),
    )


def test_merge_left_on_right_on_suffixes_indicator(device):
    left, right = _frames(1)
    right2 = right.rename(columns={"k": "key"})
    dl, dr = fd.from_pandas(left, device=device), fd.from_pandas(right2, device=device)
    same(dl.merge(dr, left_on="k", right_on="key"), left.merge(right2, left_on="k", right_on="key"))
    same(
        dl.merge(dr, left_on="k", right_on="key", how="outer", suffixes=("_L", "_R")),
        left.merge(right2, left_on="k", right_on="key", how="outer", suffixes=("_L", "_R")),
    )
    exp = left.merge(right, on="k", how="outer", indicator=True)
    got = fd.merge(dl, fd.from_pandas(right, device=device), on="k", how="outer", indicator=True)
    same(got, exp)
    same(dl.merge(dr, how="cross"), left.merge(right2, how="cross"))
    same(
        dl.merge(dr, left_on="k", right_on="key", sort=True),
        left.merge(right2, left_on="k", right_on="key", sort=True),
    )


def test_merge_edges(device):
    left, right = _frames(2)
    dl, dr = fd.from_pandas(left, device=device), fd.from_pandas(right, device=device)
    empty = right.iloc[:0]
    for how in ["inner", "left", "outer"]:
        same(
            dl.merge(fd.from_pandas(empty, device=device), on="k", how=how),
            left.merge(empty, on="k", how=how),
        )
    lf = pd.DataFrame({"k": [1.0, np.nan, 2.0], "a": [1, 2, 3]})
    rf = pd.DataFrame({"k": [np.nan, 2.0, 2.0], "b": [4, 5, 6]})
    # pandas matches null keys with null keys; rows in left-key order as documented ([nan, 2, 2]
    # from pandas 3.1, [2, nan, 2] from some earlier versions): compared as sets of rows
    got = fd.from_pandas(lf, device=device).merge(fd.from_pandas(rf, device=device), on="k")
    assert got.to_pandas()["k"].isna().tolist() == [True, False, False]
    same(
        got.sort_values(["k", "b"]),
        lf.merge(rf, on="k").sort_values(["k", "b"]),
        check_index=False,
    )
    same(dl.merge(dr[["k", "rv"]]), left.merge(right[["k", "rv"]]))
    with pytest.raises(ValueError):
        dl.merge(dr, on="k", how="sideways")
    with pytest.raises(KeyError):
        dl.merge(dr, on="zz")
    with pytest.raises(ValueError):
        dl.merge(dr, left_on="k", right_on="s")


def test_join_on_index(device):
    left = pd.DataFrame({"a": [1, 2, 3]}, index=pd.Index(["x", "y", "z"], dtype="str"))
    right = pd.DataFrame({"b": [10, 30]}, index=pd.Index(["x", "z"], dtype="str"))
    dl, dr = fd.from_pandas(left, device=device), fd.from_pandas(right, device=device)
    same(dl.join(dr), left.join(right))
    same(dl.join(dr, how="inner"), left.join(right, how="inner"))
    k = pd.DataFrame({"key": ["z", "x", "q"], "v": [1, 2, 3]})
    same(fd.from_pandas(k, device=device).join(dr, on="key"), k.join(right, on="key"))


def test_concat(device):
    left, right = _frames(3)
    a = left[["k", "s", "lv"]]
    b = right[["k", "s", "rv"]]
    da, db = fd.from_pandas(a, device=device), fd.from_pandas(b, device=device)
    same(fd.concat([da, db]), pd.concat([a, b]))
    same(fd.concat([da, db], ignore_index=True), pd.concat([a, b], ignore_index=True))
    same(fd.concat([da, db], join="inner"), pd.concat([a, b], join="inner"))
    same(fd.concat([da["k"], db["k"]]), pd.concat([a["k"], b["k"]]))
    same(
        fd.concat([da, da.rename(columns={"k": "k2", "s": "s2", "lv": "lv2"})], axis=1),
        pd.concat([a, a.rename(columns={"k": "k2", "s": "s2", "lv": "lv2"})], axis=1),
    )
    same(fd.concat([da["k"], da["lv"]], axis=1), pd.concat([a["k"], a["lv"]], axis=1))
    same(fd.concat([da.iloc[:0], da]), pd.concat([a.iloc[:0], a]))
    with pytest.raises(ValueError):
        fd.concat([])
    with pytest.raises(TypeError):
        fd.concat([da, 3])
