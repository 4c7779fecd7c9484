"""Shared checks for the ember.frame tests (compare against pandas) and a self-test."""

from __future__ import annotations

import numpy as np
import pandas as pd


def norm(obj):
    """pandas object with nullable ints/bools as float64/object (NaN for missing)."""
    if isinstance(obj, pd.DataFrame):
        out = obj.copy()
        for k in out.columns:
            out[k] = norm(out[k])
        return out
    if isinstance(obj, pd.MultiIndex):
        return obj
    if isinstance(obj, pd.Index):
        return (
            pd.Index(norm(pd.Series(obj)).to_numpy(), name=obj.name)
            if not isinstance(obj, pd.RangeIndex)
            else obj
        )
    s = obj
    dt = s.dtype
    if isinstance(dt, pd.api.extensions.ExtensionDtype) and dt.kind in "iuf":
        return pd.Series(s.to_numpy(dtype="float64", na_value=np.nan), index=s.index, name=s.name)
    if isinstance(dt, pd.BooleanDtype):
        return pd.Series(s.to_numpy(dtype=object, na_value=np.nan), index=s.index, name=s.name)
    if isinstance(dt, np.dtype) and dt.kind in "iu":
        return s.astype("float64")
    return s


def same(ours, expected, check_dtype=False, check_index=True):
    """ours (ember.frame object) equals the pandas object ``expected``."""
    got = ours.to_pandas() if hasattr(ours, "to_pandas") else ours
    if isinstance(expected, pd.DataFrame):
        assert list(got.columns) == list(expected.columns), (
            list(got.columns),
            list(expected.columns),
        )
        g, e = (got, expected) if check_dtype else (norm(got), norm(expected))
        if not check_index:
            g = g.reset_index(drop=True)
            e = e.reset_index(drop=True)
        else:
            g.index = norm(g.index)
            e.index = norm(e.index)
        pd.testing.assert_frame_equal(
            g, e, check_dtype=check_dtype, check_index_type=False, check_column_type=False
        )
    else:
        g, e = (got, expected) if check_dtype else (norm(got), norm(expected))
        if not check_index:
            g = g.reset_index(drop=True)
            e = e.reset_index(drop=True)
        else:
            g.index = norm(g.index)
            e.index = norm(e.index)
        pd.testing.assert_series_equal(g, e, check_dtype=check_dtype, check_index_type=False)


def test_norm_treats_na_and_nan_alike():
    a = pd.Series([1, None], dtype="Int64")
    b = pd.Series([1.0, np.nan])
    pd.testing.assert_series_equal(norm(a), b)
