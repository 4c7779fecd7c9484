"""The ``.dt`` accessor: calendar fields from int64 time counts by integer arithmetic on the device
(days -> civil date with the proleptic Gregorian era formula), floor/ceil/round to a frequency."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from . import dtypes as _dt
from .column import Column

_NS_DAY = 86_400 * 10**9


def _fdiv(a, b):
    return _em.floor_divide(a, b)


def civil(days):
    """int64 days since 1970-01-01 -> (year, month, day) int64 arrays."""
    z = days + 719468
    era = _fdiv(z, 146097)
    doe = z - era * 146097
    yoe = _fdiv(doe - _fdiv(doe, 1460) + _fdiv(doe, 36524) - _fdiv(doe, 146096), 365)
    y = yoe + era * 400
    doy = doe - (365 * yoe + _fdiv(yoe, 4) - _fdiv(yoe, 100))
    mp = _fdiv(5 * doy + 2, 153)
    d = doy - _fdiv(153 * mp + 2, 5) + 1
    m = _em.where(mp < 10, mp + 3, mp - 9)
    y = y + (m <= 2).astype(_em.int64)
    return y, m, d


def days_from_civil_jan1(y):
    yp = y - 1
    era = _fdiv(yp, 400)
    yoe = yp - era * 400
    doe = yoe * 365 + _fdiv(yoe, 4) - _fdiv(yoe, 100) + 306
    return era * 146097 + doe - 719468


def _freq_ticks(freq, dtype, func):
    try:
        # .nanos: a fixed frequency's length (pandas 3.0's Day is no Tick, and Timedelta(Day)
        # is refused there); non-fixed ones (MonthEnd, ...) raise ValueError, as pandas does.
        off = pd.tseries.frequencies.to_offset(freq)
        nanos = off.n * 86_400 * 10**9 if off.rule_code == "D" else int(off.nanos)
    except (ValueError, TypeError, AttributeError):
        raise ValueError(f"ember.frame.dt.{func}: Invalid frequency: {freq!r}") from None
    unit_ns = _dt.UNIT_NS[_dt.time_unit(dtype)]
    if nanos % unit_ns:
        raise ValueError(
            f"ember.frame.dt.{func}: frequency {freq!r} is finer than the column's unit ({dtype})"
        )
    return nanos // unit_ns


class DatetimeMethods:
    def __getattr__(self, name):
        # a pandas .dt method this accessor lacks: NotImplementedError naming it
        if name.startswith("_"):
            raise AttributeError(name)
        import pandas as pd

        from .frame_base import UnsupportedError

        if hasattr(pd.Series.dt, name):
            raise UnsupportedError(
                f"ember.frame.Series.dt.{name} is not implemented (pandas' "
                f"Series.dt.{name} has no device version here)"
            )
        raise AttributeError(f"'DatetimeMethods' object has no attribute '{name}'")

    def __init__(self, series):
        if series._col.kind != "time":
            raise AttributeError("Can only use .dt accessor with datetimelike values")
        self._s = series
        self._c = series._col
        self._unit_ns = _dt.UNIT_NS[_dt.time_unit(self._c.dtype)]

    def _field(self, data, dtype=_em.int32):
        c = self._c
        if c.mask is not None and c.has_nulls():
            out = _em.where(c.mask, data.astype(_em.float64), np.nan)
            return self._s._with(Column(np.dtype("float64"), out))
        return self._s._with(Column(np.dtype(dtype), data.astype(dtype)))

    def _require(self, datetime, name):
        if datetime != _dt.is_datetime(self._c.dtype):
            raise AttributeError(
                f"'{'Timedelta' if datetime else 'Datetime'}Properties' object "
                f"has no attribute '{name}'"
            )

    def _days(self):
        return _fdiv(self._c.data, _NS_DAY // self._unit_ns if self._unit_ns <= _NS_DAY else 1)

    def _in_day(self):
        per_day = _NS_DAY // self._unit_ns
        return self._c.data - _fdiv(self._c.data, per_day) * per_day

    @property
    def year(self):
        self._require(True, "year")
        return self._field(civil(self._days())[0])

    @property
    def month(self):
        self._require(True, "month")
        return self._field(civil(self._days())[1])

    @property
    def day(self):
        if _dt.is_timedelta(self._c.dtype):
            return self.days
        return self._field(civil(self._days())[2])

    @property
    def hour(self):
        self._require(True, "hour")
        return self._field(_fdiv(self._in_day(), 3600 * 10**9 // self._unit_ns))

    @property
    def minute(self):
        self._require(True, "minute")
        per = 60 * 10**9 // self._unit_ns
        return self._field(_fdiv(self._in_day(), per) % 60)

    @property
    def second(self):
        self._require(True, "second")
        per = 10**9 // self._unit_ns
        return self._field(_fdiv(self._in_day(), per) % 60)

    @property
    def dayofweek(self):
        self._require(True, "dayofweek")
        return self._field((self._days() + 3) % 7)

    day_of_week = dayofweek
    weekday = dayofweek

    @property
    def dayofyear(self):
        self._require(True, "dayofyear")
        d = self._days()
        y = civil(d)[0]
        return self._field(d - days_from_civil_jan1(y) + 1)

    day_of_year = dayofyear

    @property
    def quarter(self):
        self._require(True, "quarter")
        return self._field(_fdiv(civil(self._days())[1] - 1, 3) + 1)

    @property
    def date(self):
        raise NotImplementedError("ember.frame.dt.date: Python date objects; use dt.floor('D')")

    def normalize(self):
        return self.floor("D")

    def strftime(self, date_format):
        """Text of each time by a strftime format, built on the device (``strftime.py``)."""
        from .strftime import strftime

        self._require(True, "strftime")
        return self._s._with(strftime(self._c, date_format))

    def month_name(self, locale=None):
        return self.strftime("%B")

    def day_name(self, locale=None):
        return self.strftime("%A")

    def floor(self, freq):
        t = _freq_ticks(freq, self._c.dtype, "floor")
        c = self._c
        return self._s._with(Column(c.dtype, _fdiv(c.data, t) * t, c.mask))

    def ceil(self, freq):
        t = _freq_ticks(freq, self._c.dtype, "ceil")
        c = self._c
        return self._s._with(Column(c.dtype, -_fdiv(-c.data, t) * t, c.mask))

    def round(self, freq):
        t = _freq_ticks(freq, self._c.dtype, "round")
        c = self._c
        q = _fdiv(c.data, t)
        r = c.data - q * t
        up = (2 * r > t) | ((2 * r == t) & (q % 2 == 1))  # half to even, as pandas
        return self._s._with(Column(c.dtype, (q + up.astype(_em.int64)) * t, c.mask))

    # timedelta fields
    @property
    def days(self):
        self._require(False, "days")
        return self._td_field(_fdiv(self._c.data, _NS_DAY // self._unit_ns))

    @property
    def seconds(self):
        self._require(False, "seconds")
        per_day = _NS_DAY // self._unit_ns
        rem = self._c.data - _fdiv(self._c.data, per_day) * per_day
        return self._field(_fdiv(rem, 10**9 // self._unit_ns))

    def total_seconds(self):
        self._require(False, "total_seconds")
        out = self._c.data.astype(_em.float64) / (10**9 / self._unit_ns)
        out = _em.where(self._c.valid(), out, np.nan)
        return self._s._with(Column(np.dtype("float64"), out))

    def _td_field(self, data):
        c = self._c
        if c.mask is not None and c.has_nulls():
            return self._field(data)
        return self._s._with(Column(np.dtype("int64"), data.astype(_em.int64)))


def days_from_civil(y, m, d):
    """(year, month, day) int64 arrays -> days since 1970-01-01 (proleptic Gregorian)."""
    y = y - (m <= 2).astype(_em.int64)
    era = _fdiv(y, 400)
    yoe = y - era * 400
    mp = _em.where(m > 2, m - 3, m + 9)
    doy = _fdiv(153 * mp + 2, 5) + d - 1
    doe = yoe * 365 + _fdiv(yoe, 4) - _fdiv(yoe, 100) + doy
    return era * 146097 + doe - 719468


def parse_iso(col: Column, errors="raise", func="to_datetime") -> Column:
    """ISO 8601 text ('YYYY-MM-DD', then optionally ' ' or 'T' with 'HH:MM', ':SS' and '.f' up
    to nine digits) parsed on the device with fixed-position digit gathers; datetime64[us], or
    [ns] when a value has more than six fractional digits (as pandas 3 infers)."""
    from . import strkernels as K

    if errors not in ("raise", "coerce"):
        raise ValueError(f"ember.frame.{func}: errors must be 'raise' or 'coerce', got {errors!r}")
    col = K.strip(col)
    n = len(col)
    dev = col.device
    valid = col.valid()
    lens = K.lens(col)
    starts = col.offsets[:-1]
    nb = col.chars.shape[0]
    if nb == 0:
        c = _em.zeros(8, dtype=_em.uint8, device=dev)
        nb = 8
    else:
        c = col.chars

    def at(k):
        ch = _em.take(c, _em.clip(starts + k, 0, nb - 1)).astype(_em.int64)
        return _em.where(lens > k, ch, -1)

    def digits(ks):
        v = _em.zeros(n, dtype=_em.int64, device=dev)
        ok = _em.ones(n, dtype=_em.bool, device=dev)
        for k in ks:
            ch = at(k)
            ok = ok & (ch >= 48) & (ch <= 57)
            v = v * 10 + (ch - 48)
        return v, ok

    y, ok = digits(range(4))
    mo, ok2 = digits([5, 6])
    d, ok3 = digits([8, 9])
    ok = ok & ok2 & ok3 & (at(4) == 45) & (at(7) == 45)
    has_time = lens > 10
    sep = at(10)
    hh, okh = digits([11, 12])
    mi, okm = digits([14, 15])
    time_ok = ((sep == 32) | (sep == 84)) & okh & okm & (at(13) == 58) & (lens >= 16)
    has_sec = lens > 16
    ss, oks = digits([17, 18])
    sec_ok = oks & (at(16) == 58) & (lens >= 19)
    has_frac = lens > 19
    nfrac = _em.clip(lens - 20, 0, None)
    frac = _em.zeros(n, dtype=_em.int64, device=dev)
    frac_ok = (at(19) == 46) & (nfrac >= 1) & (nfrac <= 9)
    for k in range(9):
        ch = at(20 + k)
        inside = nfrac > k
        frac_ok = frac_ok & (~inside | ((ch >= 48) & (ch <= 57)))
        frac = _em.where(inside, frac * 10 + ch - 48, frac)
    ok = ok & (lens >= 10) & (~has_time | time_ok) & (~has_sec | sec_ok)
    ok = ok & (~has_frac | frac_ok)
    hh = _em.where(has_time, hh, 0)
    mi = _em.where(has_time, mi, 0)
    ss = _em.where(has_sec, ss, 0)
    frac = _em.where(has_frac, frac, 0)
    ok = ok & (mo >= 1) & (mo <= 12) & (d >= 1) & (hh <= 23) & (mi <= 59) & (ss <= 59)
    days = days_from_civil(y, mo, d)
    ok = ok & (civil(days)[2] == d)  # rejects 2021-02-30 and friends
    bad = valid & ~ok
    if errors == "raise" and bool(_em.any(bad)):  # host read: any unparsable value?
        first = col.take(_em.nonzero(bad)[0][:1]).to_pandas()[0]
        raise ValueError(
            f"ember.frame.{func}: time data {first!r} doesn't match ISO 8601 "
            "(YYYY-MM-DD[ HH:MM[:SS[.fffffffff]]])"
        )
    ns = bool(_em.any(valid & ok & has_frac & (nfrac > 6)))  # host read: the result unit
    secs = days * 86400 + hh * 3600 + mi * 60 + ss
    if ns:
        val = secs * 10**9 + frac * _em.take(
            _em.asarray(np.array([10**k for k in range(9, -1, -1)], dtype=np.int64), device=dev),
            _em.clip(nfrac, 0, 9),
        )
        dtype = np.dtype("datetime64[ns]")
    else:
        scale = _em.take(
            _em.asarray(np.array([10**k for k in range(6, -4, -1)], dtype=np.int64), device=dev),
            _em.clip(nfrac, 0, 9),
        )
        up = _em.where(nfrac <= 6, frac * _em.where(nfrac <= 6, scale, 1), 0)
        val = secs * 10**6 + up
        dtype = np.dtype("datetime64[us]")
    keep = valid & ok
    return Column(dtype, _em.where(keep, val, 0), None if bool(_em.all(keep)) else keep)
