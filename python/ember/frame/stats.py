"""pandas' correlation, percent change, aggregation by name and one-hot encoding for ember.frame
(first-contact gaps): ``DataFrame.corr`` / ``Series.corr`` (Pearson over pairwise complete
observations, as pandas: per pair of columns, the rows where both are valid; the sums are
matmuls of the masked columns, so the whole matrix is a few kernels), ``pct_change``,
``Series.agg`` with a name, callable or list, and ``get_dummies``."""

from __future__ import annotations

import math

import ember as _em

__all__ = [
    "corr_frame",
    "corr_series",
    "corrwith",
    "cov_frame",
    "get_dummies",
    "pct_change",
    "series_agg",
]


def _numeric(col):
    return col.kind == "num" and str(col.dtype) != "bool"


def _values_and_valid(col):
    """(float64 values with 0 where missing, float64 validity) of a numeric column."""
    x = col.data.astype(_em.float64)
    ok = col.valid() & ~_em.isnan(x)
    return _em.where(ok, x, 0.0), ok.astype(_em.float64)


def _pearson(X, M, Y, N, min_periods):  # noqa: N803
    """The k x l Pearson matrix of X's columns against Y's over rows valid in both."""
    n = M.T @ N
    sx, sy = (X * M).T @ N, M.T @ (Y * N)
    sxx, syy = (X * X * M).T @ N, M.T @ (Y * Y * N)
    sxy = X.T @ Y  # X and Y are 0 where missing: only rows valid in both contribute
    cov = n * sxy - sx * sy
    var = (n * sxx - sx * sx) * (n * syy - sy * sy)
    r = cov / _em.sqrt(_em.where(var > 0, var, math.nan))
    r = _em.clip(r, -1.0, 1.0)
    return _em.where(n >= max(min_periods, 2), r, math.nan)


def corr_frame(df, method="pearson", min_periods=1, numeric_only=False):
    """The correlation matrix of the numeric columns (a DataFrame)."""
    from .dataframe import DataFrame

    who = "ember.frame.DataFrame.corr"
    if method != "pearson":
        raise NotImplementedError(f"{who}: method={method!r} (pearson only)")
    names = [k for k, c in df._data.items() if _numeric(c)]
    if not numeric_only and len(names) != len(df._data):
        bad = [k for k in df._data if k not in names]
        raise ValueError(f"{who}: could not convert the non-numeric columns {bad} to float")
    cols = [_values_and_valid(df._data[k]) for k in names]
    dev = df.device
    if not cols:
        return DataFrame({}, device=dev)
    X = _em.stack([c[0] for c in cols], axis=1)  # noqa: N806
    M = _em.stack([c[1] for c in cols], axis=1)  # noqa: N806
    r = _pearson(X, M, X, M, min_periods)
    return DataFrame({k: r[:, j] for j, k in enumerate(names)}, index=list(names), device=dev)


def cov_frame(df, min_periods=None, ddof=1, numeric_only=False):
    """The covariance matrix over pairwise complete rows (pandas' ``DataFrame.cov``): per pair,
    ``(sum xy - sum x sum y / n) / (n - ddof)`` from matmuls of the masked columns, each column
    first centred on its own mean (cancellation stays small)."""
    from .dataframe import DataFrame

    who = "ember.frame.DataFrame.cov"
    names = [k for k, c in df._data.items() if _numeric(c) or str(c.dtype) == "bool"]
    if not numeric_only and len(names) != len(df._data):
        bad = [k for k in df._data if k not in names]
        raise ValueError(f"{who}: could not convert the non-numeric columns {bad} to float")
    dev = df.device
    if not names:
        return DataFrame({}, device=dev)
    cols = [_values_and_valid(df._data[k]) for k in names]
    X = _em.stack([c[0] for c in cols], axis=1)  # noqa: N806
    M = _em.stack([c[1] for c in cols], axis=1)  # noqa: N806
    cnt = _em.sum(M, axis=0)
    X = _em.where(M > 0, X - _em.sum(X, axis=0) / _em.where(cnt > 0, cnt, 1.0), 0.0)  # noqa: N806
    n = M.T @ M
    sx, sy = X.T @ M, M.T @ X
    cov = (X.T @ X - sx * sy / _em.where(n > 0, n, 1.0)) / _em.where(n - ddof > 0, n - ddof, 1.0)
    minp = 1 if min_periods is None else min_periods
    cov = _em.where((n >= minp) & (n - ddof > 0), cov, math.nan)
    return DataFrame({k: cov[:, j] for j, k in enumerate(names)}, index=list(names), device=dev)


def corrwith(df, other, drop=False, method="pearson", numeric_only=False):
    """``DataFrame.corrwith``: each column's Pearson correlation with a Series, or with the
    same-named column of another frame (rows matched by label), as pandas' Series by column."""
    import numpy as np
    import pandas as pd

    from .dataframe import DataFrame
    from .series import Series

    who = "ember.frame.DataFrame.corrwith"
    if method != "pearson":
        raise NotImplementedError(f"{who}: method={method!r} (pearson only)")
    dev = df.device
    names = [k for k, c in df._data.items() if _numeric(c)]
    if not numeric_only and len(names) != len(df._data):
        bad = [k for k in df._data if k not in names]
        raise ValueError(f"{who}: could not convert the non-numeric columns {bad} to float")
    if isinstance(other, Series):
        vals = [corr_series(df[k], other) for k in names]
        return Series(pd.Series(vals, index=pd.Index(names), dtype="float64"), device=dev)
    if not isinstance(other, DataFrame):
        raise TypeError(f"{who}: other must be a DataFrame or Series")
    other = other.to(dev)
    left, right = df, other
    if not (len(df) == len(other) and df.index.equals(other.index)):
        from .align import reindex_column
        from .reshape_more import _intersection

        target = _intersection([df.index, other.index], False)

        def realign(f):
            return DataFrame._from_columns(
                {
                    k: reindex_column(Series._from_column(c, f.index), target)
                    for k, c in f._data.items()
                },
                target,
            )

        left, right = realign(df), realign(other)
    both = [k for k in names if k in right._data and _numeric(right._data[k])]
    out = []
    for k in both:
        x, m = _values_and_valid(left._data[k])
        y, n = _values_and_valid(right._data[k])
        r = _pearson(x[:, None], m[:, None], y[:, None], n[:, None], 1)
        out.append(r[0, 0])
    vals = [float(v) for v in _em.asnumpy(_em.stack(out))] if out else []  # host: k results
    labels = list(both)
    if not drop:
        union = pd.Index(list(df._data)).union(pd.Index(list(other._data)))
        extra = [k for k in union.difference(pd.Index(labels)).tolist()]
        labels += extra
        vals += [np.nan] * len(extra)
    return Series(pd.Series(vals, index=pd.Index(labels), dtype="float64"), device=dev)


def corr_series(s, other, method="pearson", min_periods=None):
    """Pearson correlation of two aligned numeric Series (a float)."""
    who = "ember.frame.Series.corr"
    if method != "pearson":
        raise NotImplementedError(f"{who}: method={method!r} (pearson only)")
    from .dataframe import DataFrame

    both = DataFrame({"a": s, "b": other}, device=s.device)  # aligned on the index
    if not (_numeric(both._data["a"]) and _numeric(both._data["b"])):
        raise TypeError(f"{who}: both Series must be numeric")
    x, m = _values_and_valid(both._data["a"])
    y, n = _values_and_valid(both._data["b"])
    r = _pearson(x[:, None], m[:, None], y[:, None], n[:, None], min_periods or 1)
    return float(r[0, 0])


def pct_change(obj, periods=1, fill_method=None, freq=None):
    """``obj / obj.shift(periods) - 1`` (pandas 3: no filling of missing values first)."""
    if fill_method is not None or freq is not None:
        raise NotImplementedError(
            "ember.frame.pct_change: fill_method and freq (pandas 3 removed fill_method)"
        )
    return obj / obj.shift(periods) - 1


def series_agg(s, func):
    """``Series.agg``: a reduction's name, a callable, or a list of them (a Series indexed by
    the names)."""
    from .series import Series

    def one(f):
        if isinstance(f, str):
            m = getattr(s, f, None)
            if m is None or not callable(m):
                raise AttributeError(f"'{f}' is not a valid function for 'Series' object")
            return m()
        if callable(f):
            return f(s)
        raise TypeError(f"ember.frame.Series.agg: func must be a str, callable or list, got {f!r}")

    if isinstance(func, (list, tuple)):
        names = [f if isinstance(f, str) else getattr(f, "__name__", repr(f)) for f in func]
        vals = [one(f) for f in func]
        return Series(vals, index=names, name=s.name, device=s.device)
    return one(func)


def get_dummies(data, prefix=None, prefix_sep="_", dummy_na=False, columns=None, dtype=bool):
    """One indicator column per distinct value (sorted; missing values none unless
    `dummy_na`) of a Series, or of a DataFrame's string/category columns (or `columns`)."""
    from .dataframe import DataFrame
    from .series import Series

    if isinstance(data, Series):
        return DataFrame(_dummies(data, prefix, prefix_sep, dummy_na, dtype), device=data.device)
    if not isinstance(data, DataFrame):
        raise TypeError(
            f"ember.frame.get_dummies: expected a DataFrame or Series, got {type(data).__name__}"
        )
    if columns is None:
        columns = [k for k, c in data._data.items() if c.kind in ("str", "cat")]
    out = {k: data[k] for k in data._data if k not in columns}
    for k in columns:
        p = prefix.get(k, k) if isinstance(prefix, dict) else (prefix if prefix else k)
        out.update(_dummies(data[k], p, prefix_sep, dummy_na, dtype))
    return DataFrame(out, index=data.index, device=data.device)


def _dummies(s, prefix, sep, dummy_na, dtype):
    values = sorted(s.dropna().unique().to_pandas().tolist())  # labels: a host read of uniques
    out = {}
    for v in values:
        name = f"{prefix}{sep}{v}" if prefix is not None else v
        out[name] = (s == v).fillna(False).astype(dtype)
    if dummy_na:
        name = f"{prefix}{sep}nan" if prefix is not None else float("nan")
        out[name] = s.isna().astype(dtype)
    return out
