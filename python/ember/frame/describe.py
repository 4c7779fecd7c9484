"""describe and quantile (on the device; only the summary numbers come back to the host)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from . import dtypes as _dt


def _percentiles(percentiles):
    if percentiles is None:
        return [0.25, 0.5, 0.75]
    ps = sorted(set(float(p) for p in percentiles) | {0.5})
    for p in ps:
        if not 0 <= p <= 1:
            raise ValueError(
                f"ember.frame.describe: percentiles should all be in the interval [0, 1], got {p}"
            )
    return ps


def _pct_label(p):
    s = f"{p * 100:.10g}"
    return f"{s}%"


def quantile(series, q=0.5, interpolation="linear"):
    col = series._col
    if col.kind != "num":
        raise TypeError(f"ember.frame.Series.quantile: not supported for dtype {col.dtype}")
    vals = col.data[col.valid()].astype(_em.float64)
    scalar = np.isscalar(q)
    qs = [q] if scalar else list(q)
    if vals.shape[0] == 0:
        out = _em.full(len(qs), np.nan, dtype=_em.float64, device=col.device)
    else:
        qa = _em.asarray(np.asarray(qs, dtype=np.float64), device=col.device)
        out = _em.quantile(vals, qa, method=interpolation)
    if scalar:
        return float(out[0])  # host read: a scalar answer
    from .series import Series

    # the quantiles stay on the column's device
    return Series(out, index=pd.Index(qs), name=series.name, device=col.device)


def describe_numbers(series, percentiles=None):
    ps = _percentiles(percentiles)
    col = series._col
    labels = ["count", "mean", "std", "min"] + [_pct_label(p) for p in ps] + ["max"]
    cnt = series.count()
    if cnt == 0:
        vals = [0.0] + [np.nan] * (len(labels) - 1)
    else:
        qs = quantile(series, ps)
        q = qs.to_pandas().tolist() if hasattr(qs, "to_pandas") else [qs]
        vals = [float(cnt), series.mean(), series.std(), float(series.min())]
        vals += q + [float(series.max())]
    del col
    return labels, vals


def describe_series(series, percentiles=None):
    from .series import Series

    col = series._col
    if col.kind == "num" and not _dt.is_bool(col.dtype):
        labels, vals = describe_numbers(series, percentiles)
        return Series(
            np.asarray(vals, dtype=np.float64),
            index=pd.Index(labels, dtype=object),
            name=series.name,
            device=series.device,
        )
    if col.kind == "time":
        return _describe_times(series, col, percentiles)
    vc = series.value_counts()
    count = series.count()
    top = vc.index.tolist()[0] if len(vc) else np.nan
    freq = int(vc.iloc[0]) if len(vc) else np.nan
    return pd.Series(
        [count, len(vc), top, freq],
        index=["count", "unique", "top", "freq"],
        name=series.name,
        dtype=object,
    )


def _describe_times(series, col, percentiles):
    """pandas' describe of datetimes/timedeltas: count, mean, (std for timedeltas), min,
    percentiles, max, computed on the device on the int64 ticks (linear interpolation, as
    pandas), returned as pandas' object Series."""
    ps = _percentiles(percentiles)
    ticks = col.data[col.valid()]
    n = int(ticks.shape[0])  # host read: the count
    labels = ["count", "mean"]
    is_td = np.dtype(col.dtype).kind == "m"
    if is_td:
        labels.append("std")
    labels += ["min"] + [_pct_label(p) for p in ps] + ["max"]
    if n == 0:
        vals = [0] + [pd.NaT] * (len(labels) - 1)
    else:
        x = ticks.astype(_em.float64)
        qa = _em.asarray(np.asarray([0.0, *ps, 1.0]), device=col.device)
        host = _em.asnumpy(_em.concatenate([
            _em.mean(x)[None], _em.std(x, ddof=1)[None] if n > 1 else _em.full(1, np.nan,
                dtype=_em.float64, device=col.device), _em.quantile(x, qa)]))  # fmt: skip
        unit = np.datetime_data(col.dtype)[0]

        def as_time(v):
            if np.isnan(v):
                return pd.NaT
            t = np.int64(v)  # truncated, as pandas casts its float results
            return pd.Timedelta(t, unit=unit) if is_td else pd.Timestamp(t, unit=unit)

        vals = [n, as_time(host[0])] + ([as_time(host[1])] if is_td else [])
        vals += [as_time(v) for v in host[2:]]
    return pd.Series(vals, index=labels, name=series.name, dtype=object)
