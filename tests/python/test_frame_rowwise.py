"""Row-wise DataFrame reductions (``df.sum(axis=1)`` and friends) against pandas: integer,
float (with NaN), bool and nullable integer columns, skipna, min_count, ddof, numeric_only, and
the TypeError for text columns."""

from __future__ import annotations

import ember.frame as fd
import numpy as np
import pandas as pd
import pytest


def _pdf():
    rng = np.random.default_rng(3)
    x = rng.normal(size=12)
    x[[1, 4]] = np.nan
    y = rng.normal(size=12)
    y[[4, 7]] = np.nan
    return pd.DataFrame(
        {
            "i": rng.integers(-5, 5, 12),
            "x": x,
            "y": y,
            "b": rng.random(12) > 0.5,
        }
    )


def _same(got, want):
    pd.testing.assert_series_equal(
        got.to_pandas(), want, check_dtype=False, check_names=False, rtol=1e-12
    )


@pytest.mark.parametrize(
    "how", ["sum", "prod", "mean", "min", "max", "std", "var", "median", "count", "any", "all"]
)
@pytest.mark.parametrize("skipna", [True, False])
@pytest.mark.parametrize("cols", [["i", "x", "y", "b"], ["i"], ["i", "b"], ["x"]])
def test_rowwise_against_pandas(how, skipna, cols, device):
    p = _pdf()[cols]
    d = fd.from_pandas(p, device=device)
    kw = {} if how == "count" else {"skipna": skipna}
    _same(getattr(d, how)(axis=1, **kw), getattr(p, how)(axis=1, **kw))
    if how in ("any", "all", "count"):
        return
    _same(getattr(d, how)(axis="columns", **kw), getattr(p, how)(axis="columns", **kw))


@pytest.mark.parametrize("min_count", [1, 2, 3])
def test_min_count_and_ddof(min_count, device):
    p = _pdf()[["x", "y"]]
    d = fd.from_pandas(p, device=device)
    _same(d.sum(axis=1, min_count=min_count), p.sum(axis=1, min_count=min_count))
    _same(d.prod(axis=1, min_count=min_count), p.prod(axis=1, min_count=min_count))
    _same(d.std(axis=1, ddof=0), p.std(axis=1, ddof=0))
    _same(d.var(axis=1, ddof=2), p.var(axis=1, ddof=2))


def test_nullable_integers_and_text(device):
    p = pd.DataFrame(
        {
            "a": pd.array([1, None, 3, None], dtype="Int64"),
            "c": pd.array([4, 5, None, None], dtype="Int64"),
            "s": ["p", "q", "r", "s"],
        }
    )
    d = fd.from_pandas(p, device=device)
    for how in ("sum", "mean", "max", "count"):
        got = getattr(d, how)(axis=1, numeric_only=True).to_pandas()
        want = getattr(p, how)(axis=1, numeric_only=True)
        # ember has no Float64 extension dtype: a missing float result is NaN, pandas' is <NA>
        pd.testing.assert_series_equal(
            got.astype("float64"), want.astype("float64"), check_names=False
        )
    _same(d.count(axis=1), p.count(axis=1))
    with pytest.raises(TypeError, match="DataFrame.sum.*'s'.*numeric_only"):
        d.sum(axis=1)
    with pytest.raises(TypeError):
        p.sum(axis=1)
