"""``.dt.strftime`` on the device: each directive of the (host) format becomes a string column --
fixed-width digits from the civil-date fields, or a name gathered from a small column of month /
weekday names -- and the pieces are concatenated row by row (``strkernels.concat_rows``)."""

from __future__ import annotations

import calendar

import numpy as np

import ember as _em

from . import dtypes as _dt
from . import strkernels as K
from .column import Column, from_values
from .datetime import _NS_DAY, civil, days_from_civil_jan1

_MONTHS = list(calendar.month_name)[1:]
_DAYS = list(calendar.day_name)  # Monday first, as (days + 3) % 7 counts


def _digits(values, width, dev):
    """Zero-padded decimal text of non-negative int64 ``values``, ``width`` digits each."""
    n = values.shape[0]
    pw = _em.asarray(np.array([10**k for k in range(width - 1, -1, -1)], np.int64), device=dev)
    d = _em.floor_divide(values.reshape((n, 1)), pw.reshape((1, width))) % 10 + 48
    chars = d.astype(_em.uint8).reshape((n * width,))
    offsets = _em.arange(n + 1, dtype=_em.int64, device=dev) * width
    return Column(_dt.STRING, offsets=offsets, chars=chars)


def _names(names, idx, dev):
    table = from_values(np.asarray(names, dtype=object), dev)
    return table.take(idx.astype(_em.int64))


def _tokens(fmt):
    """[(is_directive, text)] of a strftime format."""
    out, lit, i = [], [], 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "%" and i + 1 < len(fmt):
            if lit:
                out.append((False, "".join(lit)))
                lit = []
            out.append((True, fmt[i + 1]))
            i += 2
            continue
        lit.append(ch)
        i += 1
    if lit:
        out.append((False, "".join(lit)))
    return out


def strftime(col: Column, fmt: str) -> Column:
    """``col`` (datetime64) formatted by ``fmt``: %Y %m %d %H %M %S %f %y %j %I %p %b %B %a %A
    %h %F %T %D %%; missing times give missing text."""
    if not isinstance(fmt, str):
        raise TypeError(f"ember.frame.dt.strftime: date_format must be a str, got {fmt!r}")
    dev = col.device
    n = len(col)
    unit_ns = _dt.UNIT_NS[_dt.time_unit(col.dtype)]
    per_day = _NS_DAY // unit_ns
    t = _em.where(col.valid(), col.data, 0)
    days = _em.floor_divide(t, per_day)
    in_day = t - days * per_day
    y, m, d = civil(days)
    secs = _em.floor_divide(in_day * unit_ns, 10**9)
    sub_us = _em.floor_divide((in_day * unit_ns) % 10**9, 1000)
    hh = _em.floor_divide(secs, 3600)
    fields = {
        "Y": lambda: _digits(y, 4, dev),
        "m": lambda: _digits(m, 2, dev),
        "d": lambda: _digits(d, 2, dev),
        "H": lambda: _digits(hh, 2, dev),
        "M": lambda: _digits(_em.floor_divide(secs, 60) % 60, 2, dev),
        "S": lambda: _digits(secs % 60, 2, dev),
        "f": lambda: _digits(sub_us, 6, dev),
        "y": lambda: _digits(y % 100, 2, dev),
        "j": lambda: _digits(days - days_from_civil_jan1(y) + 1, 3, dev),
        "I": lambda: _digits(_em.where(hh % 12 == 0, 12, hh % 12), 2, dev),
        "p": lambda: _names(["AM", "PM"], (hh >= 12).astype(_em.int64), dev),
        "b": lambda: _names([s[:3] for s in _MONTHS], m - 1, dev),
        "h": lambda: _names([s[:3] for s in _MONTHS], m - 1, dev),
        "B": lambda: _names(_MONTHS, m - 1, dev),
        "a": lambda: _names([s[:3] for s in _DAYS], (days + 3) % 7, dev),
        "A": lambda: _names(_DAYS, (days + 3) % 7, dev),
    }
    expand = {"F": "%Y-%m-%d", "T": "%H:%M:%S", "D": "%m/%d/%y"}
    parts = []
    for is_dir, text in _tokens(fmt):
        if is_dir and text in expand:
            for sub_dir, sub in _tokens(expand[text]):
                parts.append(fields[sub]() if sub_dir else Column.from_scalar(sub, n, dev))
        elif is_dir and text == "%":
            parts.append(Column.from_scalar("%", n, dev))
        elif is_dir:
            if text not in fields:
                raise ValueError(
                    f"ember.frame.dt.strftime: directive %{text} (supported: "
                    f"{' '.join('%' + k for k in sorted(fields))} %F %T %D %%)"
                )
            parts.append(fields[text]())
        else:
            parts.append(Column.from_scalar(text, n, dev))
    if not parts:
        parts = [Column.from_scalar("", n, dev)]
    out = K.concat_rows(parts, dev) if len(parts) > 1 else parts[0]
    mask = None if col.mask is None else col.valid()
    return Column(_dt.STRING, offsets=out.offsets, chars=out.chars, mask=mask)
