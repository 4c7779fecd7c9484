"""pandas calls Dask makes on partitions, against pandas: column-list and boolean-frame
assignment, label slices with labels a sorted index lacks, Index.get_slice_bound/slice_locs/
unit/isin, Series.reindex and NumPy ufuncs of a frame."""

from __future__ import annotations

import ember.frame as fd
import numpy as np
import pandas as pd
import pytest


def _pdf():
    return pd.DataFrame(
        {"a": [1.0, -2.0, 3.0, -4.0], "b": [5.0, 6.0, -7.0, 8.0], "c": [1, 2, 3, 4]},
        index=[10, 20, 30, 40],
    )


def test_assign_column_lists_and_boolean_frames(device):
    p, d = _pdf(), fd.from_pandas(_pdf(), device=device)
    p[["a", "b"]] = p[["a", "b"]] ** 2
    d[["a", "b"]] = d[["a", "b"]] ** 2
    pd.testing.assert_frame_equal(d.to_pandas(), p, check_index_type=False)
    p2, d2 = _pdf()[["a", "b"]], fd.from_pandas(_pdf()[["a", "b"]], device=device)
    p2[p2 < 0] = 0
    d2[d2 < 0] = 0
    pd.testing.assert_frame_equal(d2.to_pandas(), p2, check_index_type=False)
    d3 = fd.from_pandas(_pdf(), device=device)
    d3[["x", "y"]] = 1.5
    assert d3.to_pandas()[["x", "y"]].to_numpy().tolist() == [[1.5, 1.5]] * 4
    with pytest.raises(ValueError, match="same length"):
        d3[["a", "b"]] = d3[["a"]]


@pytest.mark.parametrize(
    "sl", [slice(15, 35), slice(5, 25), slice(20, 40), slice(41, 50), slice(None, 25)]
)
def test_label_slices_on_a_sorted_index(sl, device):
    p, d = _pdf(), fd.from_pandas(_pdf(), device=device)
    pd.testing.assert_frame_equal(d.loc[sl].to_pandas(), p.loc[sl], check_index_type=False)
    lo = None if sl.start is None else d.index.get_slice_bound(sl.start, "left")
    assert d.index.slice_locs(sl.start, sl.stop) == p.index.slice_locs(sl.start, sl.stop)
    if lo is not None:
        assert lo == p.index.get_slice_bound(sl.start, "left")


def test_datetime_index_and_unsorted_errors(device):
    t = pd.DataFrame({"v": range(5)}, index=pd.date_range("2024-01-01", periods=5, freq="2D"))
    d = fd.from_pandas(t, device=device)
    got = d.loc["2024-01-02":"2024-01-06"].to_pandas()
    pd.testing.assert_frame_equal(
        got, t.loc["2024-01-02":"2024-01-06"], check_index_type=False, check_freq=False
    )
    assert d.index.unit == t.index.unit
    assert bool(d.index.isin(t.index[:3]).sum() == 3)
    u = fd.from_pandas(pd.DataFrame({"v": [1, 2]}, index=[3, 1]), device=device)
    with pytest.raises(KeyError):
        u.loc[2:3]


def test_reindex_and_ufuncs(device):
    s = pd.Series([1.0, 2.0, 3.0], index=[10, 20, 30])
    e = fd.Series(s, device=device)
    pd.testing.assert_series_equal(
        e.reindex([20, 40, 10], fill_value=0).to_pandas(),
        s.reindex([20, 40, 10], fill_value=0),
        check_index_type=False,
    )
    got = e.reindex([20, 40]).to_pandas()
    assert got.iloc[0] == 2.0 and np.isnan(got.iloc[1])
    p = _pdf()[["a", "b"]].abs()
    d = fd.from_pandas(p, device=device)
    pd.testing.assert_frame_equal(np.sqrt(d).to_pandas(), np.sqrt(p), check_index_type=False)
    pd.testing.assert_frame_equal(
        np.power(d, 2).to_pandas(), np.power(p, 2), check_index_type=False
    )
    with pytest.raises(TypeError, match="numeric columns"):
        np.sqrt(fd.DataFrame({"s": ["x"]}, device=device))
