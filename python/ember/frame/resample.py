"""``resample``: time bins as group codes computed on the device, then the group-by reductions.

A row's bin is integer arithmetic on its int64 time count: ``floor((t - left0) / step)`` for bins
closed on the left, ``ceil((t - left0) / step) - 1`` for bins closed on the right, with ``step``
the frequency's length (fixed frequencies: s/min/h/D/W and their multiples), or the calendar
month/quarter/year index (ME/MS/QE/QS/YE/YS). The bin labels and ``left0`` follow pandas' rules
(``closed``/``label`` defaults, ``origin``, ``offset``, the weekly edge adjustment): they depend
only on the first and last timestamps, so pandas computes them on the host from those two values
(two scalar reads; the labels are the result's index, metadata). Every bin between the first and
the last is in the result, empty ones included (sum 0, count 0, mean NaN), as pandas gives.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from . import dtypes as _dt
from .column import from_values
from .groupby import GroupBy, SeriesGroupBy
from .index import Index, MultiIndex

_CALENDAR = {"ME": 1, "MS": 1, "QE-DEC": 3, "QS-JAN": 3, "YE-DEC": 12, "YS-JAN": 12}


def _times(obj, on, level):
    """(time column, name) the bins are computed from: the index, a column, or an index level."""
    if on is not None:
        if not hasattr(obj, "_data") or on not in obj._data:
            raise KeyError(on)
        return obj._data[on], on
    idx = obj.index
    if level is not None:
        if not isinstance(idx, MultiIndex):
            return idx._col, idx.name
        i = level if isinstance(level, int) else idx.names.index(level)
        return idx._columns[i], idx.names[i]
    if isinstance(idx, MultiIndex):
        raise TypeError("ember.frame.resample: Only valid with DatetimeIndex; give on= or level=")
    return idx._col, idx.name


def _step_ticks(off, unit):
    """The frequency's length in ticks of ``unit``, or None for calendar frequencies."""
    code = off.rule_code
    if code == "D":
        nanos = off.n * 86_400 * 10**9
    elif code.startswith("W"):
        nanos = off.n * 7 * 86_400 * 10**9
    else:
        try:
            nanos = int(off.nanos)
        except (ValueError, TypeError, AttributeError):
            return None
    tick = _dt.UNIT_NS[unit]
    if nanos % tick:
        raise ValueError(f"ember.frame.resample: frequency {off} is finer than the unit {unit!r}")
    return nanos // tick


def _month_index(days):
    from .datetime import civil

    y, m, _ = civil(days)
    return (y - 1970) * 12 + (m - 1)


class Resampler(GroupBy):
    """``DataFrame.resample(rule)`` / ``Series.resample(rule)``: a group-by whose groups are the
    time bins (see the module docstring). Reductions are GroupBy's: sum, mean, min, max, count,
    first, last, size, median, std, var, prod, nunique, agg."""

    def __init__(
        self,
        obj,
        rule,
        on=None,
        closed=None,
        label=None,
        origin="start_day",
        offset=None,
        level=None,
    ):
        times, name = _times(obj, on, level)
        if not _dt.is_datetime(times.dtype):
            raise TypeError(
                "Only valid with DatetimeIndex, TimedeltaIndex or PeriodIndex, but got an "
                f"instance of {times.dtype}"
            )
        off = pd.tseries.frequencies.to_offset(rule)
        code = off.rule_code
        ends = ("ME", "QE", "YE", "BME", "BQE", "BYE", "W")
        default_right = code in ends or code.split("-")[0] in ends
        closed = closed or ("right" if default_right else "left")
        label = label or ("right" if default_right else "left")
        if closed not in ("left", "right") or label not in ("left", "right"):
            raise ValueError("ember.frame.resample: closed/label must be 'left' or 'right'")
        unit = _dt.time_unit(times.dtype)
        step = _step_ticks(off, unit)
        calendar = step is None
        if calendar and (code not in _CALENDAR or off.n != 1):
            raise NotImplementedError(
                f"ember.frame.resample: rule {rule!r} (fixed frequencies s/min/h/D/W and "
                "multiples, and ME/MS/QE/QS/YE/YS)"
            )
        if calendar and (closed, label) != (("right",) * 2 if default_right else ("left",) * 2):
            raise NotImplementedError(
                f"ember.frame.resample: closed={closed!r}, label={label!r} for rule {rule!r}"
            )
        valid = times.valid()
        t = times.data
        dev = times.device
        tv = t[valid] if times.mask is not None else t
        if tv.shape[0]:
            ends_t = [int(_em.min(tv)), int(_em.max(tv))]  # two host reads: the time range
        else:
            ends_t = []
        probe = pd.Series(
            np.zeros(len(ends_t)), index=pd.DatetimeIndex(np.asarray(ends_t).view(times.dtype))
        )
        labels = (
            probe.resample(rule, closed=closed, label=label, origin=origin, offset=offset)
            .sum()
            .index
        )  # pandas' label rules on the first/last timestamp (host metadata)
        m = len(labels)
        if m == 0:
            codes = _em.full(len(times), -1, dtype=_em.int64, device=dev)
        elif calendar:
            per_day = 86_400 * 10**9 // _dt.UNIT_NS[unit]
            months = _month_index(_em.floor_divide(t, per_day))
            first = np.asarray(labels[:1]).astype("datetime64[D]").astype(np.int64)
            m0 = int(_em.asnumpy(_month_index(_em.asarray(first, device=dev)))[0])
            per = _CALENDAR[code]  # months a bin: calendar quarters/years start in January
            codes = _em.floor_divide(months, per) - m0 // per
        else:
            l0 = int(np.asarray(labels[:1]).astype(times.dtype).view(np.int64)[0])
            left0 = l0 if label == "left" else l0 - step
            if code.startswith("W") and closed == "right":
                left0 += 86_400 * 10**9 // _dt.UNIT_NS[unit] - 1  # pandas' end-of-day edges
            if closed == "left":
                codes = _em.floor_divide(t - left0, step)
            else:
                codes = -_em.floor_divide(-(t - left0), step) - 1
        codes = _em.where(valid, codes, -1)
        self._obj = obj
        self._as_index = True
        self._dropna = True
        self._sort = True
        self._key_names = [on] if on is not None else []
        self._key_cols = []
        self._selection = None
        self._first_rows = None
        self._codes, self.ngroups = codes, m
        idx = Index(from_values(np.asarray(labels), dev), name=name)
        self._fixed_index = idx
        if m == 0 or bool(_em.all(valid)):  # host read: any NaT rows to leave out?
            self._rows, self._gid = None, codes
            idx.freq = labels.freq  # pandas drops the freq when NaT rows were left out
        else:
            self._rows = _em.nonzero(valid)[0]
            self._gid = _em.take(codes, self._rows)

    def _result_index(self):
        return self._fixed_index

    def ohlc(self):
        """open/high/low/close per bin: first, max, min, last."""
        from .dataframe import DataFrame

        cols = {}
        for k in self._value_names():
            c = self._obj._data[k]
            for name, how in (
                ("open", "first"),
                ("high", "max"),
                ("low", "min"),
                ("close", "last"),
            ):
                cols[(k, name)] = self._agg_col(c, how)
        return DataFrame._from_columns(cols, self._result_index())


def resample_frame(
    df, rule, on=None, closed=None, label=None, origin="start_day", offset=None, level=None
):
    return Resampler(df, rule, on, closed, label, origin, offset, level)


def resample_series(s, rule, closed=None, label=None, origin="start_day", offset=None, level=None):
    """A Series resampler: the group-by of the Series' one column over the time bins."""
    from .dataframe import DataFrame

    name = s.name if s.name is not None else 0
    frame = DataFrame._from_columns({name: s._col}, s.index)
    parent = Resampler(frame, rule, None, closed, label, origin, offset, level)
    return SeriesGroupBy(s, None, parent=parent)
