"""DataFrame.apply(axis=1): a function of the row's fields built of elementwise operations runs
once over whole columns on the device (ember.frame.apply_vec); anything else keeps pandas' row
loop. Results equal pandas' (values, dtype, index) either way."""

from __future__ import annotations

import math

import ember.frame as fd
import numpy as np
import pandas as pd
import pytest


def _pdf(n=40):
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "a": rng.integers(0, 10, n),
            "b": rng.normal(size=n),
            "c": rng.integers(-3, 3, n).astype(np.int32),
        },
        index=pd.RangeIndex(100, 100 + n),
    )


FUNCS = [
    lambda r: r.a * 2 + np.sqrt(abs(r["b"])),
    lambda r: r.a > 3,
    lambda r: r["c"] // 2,
    lambda r: 7,
    lambda r: r.a if r.a > 3 else 0,  # a truth test per value: the row loop
    lambda r: max(r.a, r.b),  # Python's max: the row loop
    lambda r: r.sum(),  # a row method: the row loop
]


@pytest.mark.parametrize("i", range(len(FUNCS)))
def test_apply_rows_equals_pandas(i, device):
    p = _pdf()
    d = fd.from_pandas(p, device=device)
    got = d.apply(FUNCS[i], axis=1).to_pandas()
    pd.testing.assert_series_equal(got, p.apply(FUNCS[i], axis=1), check_index_type=False)


def test_nulls_read_nan_and_int_rows_stay_int(device):
    p = pd.DataFrame({"a": pd.array([1, None, 3], dtype="Int64"), "b": [1.0, 2.0, 3.0]})
    d = fd.from_pandas(p, device=device)
    got = d.apply(lambda r: r.a + r.b, axis=1).to_pandas()
    np.testing.assert_allclose(got.to_numpy(dtype=float), [2.0, np.nan, 6.0])
    q = pd.DataFrame({"x": [1, 2, 3], "y": [4, 5, 6]})
    g = fd.from_pandas(q, device=device).apply(lambda r: r.x * r.y, axis=1).to_pandas()
    pd.testing.assert_series_equal(g, q.apply(lambda r: r.x * r.y, axis=1), check_index_type=False)


def test_side_effects_happen_once_when_vectorized(device):
    """Like cuDF's compiled apply, the function runs once over whole columns: a side effect it
    makes happens once (pandas' loop would make it per row); a function that assigns a global
    or a closed-over name is never tried that way."""
    seen = []

    def f(r):
        seen.append(1)
        return r.x + 1

    d = fd.from_pandas(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), device=device)
    np.testing.assert_array_equal(d.apply(f, axis=1).to_pandas().to_numpy(), [2.0, 3.0, 4.0])
    assert len(seen) == 1
    count = 0

    def g(r):
        nonlocal count
        count += 1
        return r.x * 2

    np.testing.assert_array_equal(d.apply(g, axis=1).to_pandas().to_numpy(), [2.0, 4.0, 6.0])
    assert count == 3


def _piecewise(v):
    if v > 1.0:
        return v * v
    return -v


def _with_math(v):
    return math.sqrt(abs(v)) + 1


@pytest.mark.parametrize("fn", [_piecewise, _with_math])
def test_series_apply_compiles_scalar_python_functions(fn, device):
    """Series.apply of a def of one number (if/else, math): compiled by ember.vectorize and run
    on the device, as cuDF compiles it with Numba; equal to pandas' per-value calls."""
    s = pd.Series([0.5, 2.0, 3.0, -1.0], index=[3, 4, 5, 6])
    got = fd.Series(s, device=device).apply(fn).to_pandas()
    pd.testing.assert_series_equal(got, s.apply(fn), check_index_type=False)


def test_series_apply_refuses_what_cannot_compile(device):
    def to_text(v):
        return {"a": v}[v]

    with pytest.raises(TypeError, match="vectorize"):
        fd.Series([1.0, 2.0], device=device).apply(to_text)
