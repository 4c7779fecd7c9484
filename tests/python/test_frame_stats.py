"""ember.frame's correlation, pct_change, Series.agg, get_dummies and index-only pivot_table
against pandas, on both devices."""

from __future__ import annotations

import ember.frame as fd
import numpy as np
import pandas as pd
import pytest
from test_frame_helpers import same


def _frame():
    rng = np.random.default_rng(3)
    a = rng.standard_normal(40)
    b = 0.5 * a + rng.standard_normal(40)
    b[[3, 9, 17]] = np.nan
    return pd.DataFrame({"a": a, "b": b, "i": rng.integers(0, 9, 40), "k": rng.choice(
        ["x", "y", "z"], 40)})  # fmt: skip


def test_corr_pairwise_complete(device):
    p = _frame()
    d = fd.from_pandas(p, device=device)
    same(d.corr(numeric_only=True), p.corr(numeric_only=True))
    got = d[["a", "b"]].corr(min_periods=39)  # 37 complete rows for (a, b): NaN, as pandas
    same(got, p[["a", "b"]].corr(min_periods=39))
    with pytest.raises(ValueError, match="non-numeric"):
        d.corr()
    assert d["a"].corr(d["b"]) == pytest.approx(p["a"].corr(p["b"]), rel=1e-12)
    assert d["a"].corr(d["a"]) == pytest.approx(1.0)


def test_pct_change_and_agg(device):
    p = _frame()
    d = fd.from_pandas(p, device=device)
    same(d["b"].pct_change(), p["b"].pct_change())
    same(d[["a", "i"]].pct_change(periods=2), p[["a", "i"]].pct_change(periods=2))
    assert d["a"].agg("sum") == pytest.approx(p["a"].agg("sum"))
    same(d["a"].agg(["min", "max", "mean"]), p["a"].agg(["min", "max", "mean"]))
    assert d["i"].agg(lambda s: s.max() - s.min()) == p["i"].max() - p["i"].min()
    with pytest.raises(AttributeError, match="not a valid function"):
        d["a"].agg("nonsense")


def test_get_dummies(device):
    p = _frame()
    d = fd.from_pandas(p, device=device)
    same(fd.get_dummies(d["k"]), pd.get_dummies(p["k"]))
    same(fd.get_dummies(d["k"], prefix="k", dtype=int), pd.get_dummies(p["k"], prefix="k",
                                                                         dtype=int))  # fmt: skip
    same(fd.get_dummies(d), pd.get_dummies(p))
    s = pd.Series(["a", None, "b", "a"])
    same(fd.get_dummies(fd.from_pandas(s, device=device), dummy_na=True),
         pd.get_dummies(s, dummy_na=True))  # fmt: skip


def test_pivot_table_index_only(device):
    p = _frame()
    d = fd.from_pandas(p, device=device)
    same(d.pivot_table(index="k", values="a", aggfunc="sum"),
         p.pivot_table(index="k", values="a", aggfunc="sum"))  # fmt: skip
    same(d.pivot_table(index="k", values=["a", "i"]), p.pivot_table(index="k", values=["a", "i"]))
