"""Text to durations on the device (``to_timedelta`` of a string column), pandas' forms:
``"1 days 02:03:04.5"``, ``"-1 days +02:00:00"``, ``"02:00:00"``, ``"1.5h"``, ``"30 min"``,
``"1h30m"``, ``"2 days, 01:00:00"``, and a bare integer (nanoseconds).

The separators (spaces, commas) are dropped (so "1 2" reads 12, as in pandas), then each row's
bytes fall into runs of one class: numeric (digits, ``.``, ``:``, signs) or letters. The runs
form a string column of their own: numbers are parsed by ``parse.parse_float``, a number's unit
is the letter run after it (looked up in a table of pandas' unit words, by the group codes),
runs with colons are clocks (H:MM:SS[.f], fields parsed the same way), and each row's parts are
summed with a scatter-add. A row with a run that fits none of this is invalid (an error, or NaT
with ``errors="coerce"``).
"""

from __future__ import annotations

import numpy as np

import ember as _em

from . import dtypes as _dt
from . import strkernels as K
from .column import Column, from_values

_NS = {
    10**9 * 604_800: ["w"],
    10**9 * 86_400: ["d", "day", "days"],
    10**9 * 3_600: ["h", "hr", "hour", "hours"],
    10**9 * 60: ["m", "min", "minute", "minutes"],
    10**9: ["s", "sec", "second", "seconds"],
    10**6: ["ms", "milli", "millis", "millisecond", "milliseconds"],
    10**3: ["us", "micro", "micros", "microsecond", "microseconds", "\u00b5s"],
    1: ["ns", "nano", "nanos", "nanosecond", "nanoseconds"],
}  # pandas' unit words (matched in lower case) and their nanoseconds
_WORDS = [w for ws in _NS.values() for w in ws]
_N, _L, _SEP, _BAD = 0, 1, 2, 3


def _unit_table(dev):
    """(text column of unit words, int64 nanoseconds per word)."""
    ns = [v for v, ws in _NS.items() for _ in ws]
    words = from_values(np.asarray(_WORDS, dtype=object), dev)
    return words, _em.asarray(np.asarray(ns, dtype=np.int64), device=dev)


def _classes(c):
    digit = (c >= 48) & (c <= 57)
    num = digit | (c == 46) | (c == 58) | (c == 43) | (c == 45)
    letter = ((c >= 65) & (c <= 90)) | ((c >= 97) & (c <= 122)) | (c == 0xC2) | (c == 0xB5)
    sep = (c == 32) | (c == 44)
    return _em.where(num, _N, _em.where(letter, _L, _em.where(sep, _SEP, _BAD)))


def _same_row_prev(starts_of_rows_flag, x, fill):
    """x of the previous byte in the same row (``fill`` at a row's first byte)."""
    prev = _em.concatenate([_em.full(1, fill, dtype=x.dtype, device=x.device), x[:-1]])
    return _em.where(starts_of_rows_flag, fill, prev)


def _row_first_flags(col):
    """True at the first byte of each row."""
    nb = col.chars.shape[0]
    flag = _em.zeros(nb + 1, dtype=_em.bool, device=col.device)
    flag[col.offsets[:-1]] = _em.ones(len(col), dtype=_em.bool, device=col.device)
    return flag[:nb]


def _clock_ns(clk):
    """H:MM:SS[.f] runs (optionally signed) -> (int64 nanoseconds, ok)."""
    from .parse import parse_float

    dev = clk.device
    c = clk.chars.astype(_em.int64)
    first = _row_first_flags(clk)
    colon = c == 58
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    cs = _em.concatenate([zero, _em.cumsum(colon.astype(_em.int64))])
    rows = K.byte_rows(clk)
    field = cs[:-1] - _em.take(_em.take(cs, clk.offsets[:-1]), rows)  # colons before the byte
    sign_byte = first & ((c == 43) | (c == 45))
    neg = K.row_sums(clk, first & (c == 45)) > 0
    ok = K.row_sums(clk, colon) == 2
    parts = []
    for k in range(3):
        keep = (field == k) & ~colon & ~sign_byte
        part = parse_float(K.keep_bytes(clk, keep), np.dtype("float64"), "to_timedelta", "coerce")
        ok = ok & part.mask
        parts.append(_em.where(part.mask, part.data, 0.0))
    h, m, s = parts
    ok = ok & (h == _em.floor(h)) & (m == _em.floor(m)) & (h >= 0) & (m >= 0) & (s >= 0)
    total = h.astype(_em.int64) * 3_600_000_000_000 + m.astype(_em.int64) * 60_000_000_000
    total = total + _em.round(s * 1e9).astype(_em.int64)
    return _em.where(neg, -total, total), ok


def parse_timedelta(col: Column, errors="raise") -> Column:
    """A string column to timedelta64 (``[us]``, or ``[ns]`` when a value needs it, as pandas
    infers); empty text is missing."""
    from .keys import lookup
    from .parse import parse_float

    col = K.strip(col)
    n = len(col)
    dev = col.device
    valid = col.valid() & (K.lens(col) > 0)
    if col.chars.shape[0] == 0:
        return Column(
            np.dtype("timedelta64[s]"),
            _em.zeros(n, dtype=_em.int64, device=dev),
            _em.zeros(n, dtype=_em.bool, device=dev),
        )
    c = col.chars.astype(_em.int64)
    cls = _classes(c)
    bad = K.row_sums(col, cls == _BAD)
    row_ok = bad == 0
    packed = K.keep_bytes(col, cls != _SEP)
    c2 = packed.chars.astype(_em.int64)
    nb = c2.shape[0]
    cls2 = _classes(c2)
    first2 = _row_first_flags(packed)
    start = first2 | (cls2 != _same_row_prev(first2, cls2, -1))
    run_pos = _em.nonzero(start)[0]
    nr = run_pos.shape[0]
    if nr == 0:
        any_valid = _em.zeros(n, dtype=_em.bool, device=dev)
        return Column(
            np.dtype("timedelta64[s]"), _em.zeros(n, dtype=_em.int64, device=dev), any_valid
        )
    offs = _em.concatenate([run_pos, _em.full(1, nb, dtype=_em.int64, device=dev)])
    runs = Column(_dt.STRING, offsets=offs, chars=packed.chars)
    run_row = _em.take(K.byte_rows(packed), run_pos)
    run_cls = _em.take(cls2, run_pos)
    has_colon = K.row_sums(runs, c2 == 58) > 0
    has_dot = K.row_sums(runs, c2 == 46) > 0
    ar = _em.arange(nr, dtype=_em.int64, device=dev)
    nxt = _em.clip(ar + 1, 0, nr - 1)
    prv = _em.clip(ar - 1, 0, nr - 1)
    same_next = (ar + 1 < nr) & (_em.take(run_row, nxt) == run_row)
    same_prev = (ar > 0) & (_em.take(run_row, prv) == run_row)
    runs_in_row = _em.bincount(run_row, minlength=n).astype(_em.int64)
    # units: letter runs looked up (lower case) in pandas' words
    words, ns = _unit_table(dev)
    upos = lookup(words, K.map_case(runs, upper=False))
    unit_ns = _em.where(upos >= 0, _em.take(ns, _em.clip(upos, 0, len(_WORDS) - 1)), 0)
    is_num = (run_cls == _N) & ~has_colon
    is_clock = (run_cls == _N) & has_colon
    num = parse_float(runs, np.dtype("float64"), "to_timedelta", "coerce")
    value = _em.where(num.mask, num.data, 0.0)
    next_unit = _em.take(unit_ns, nxt)
    next_is_unit = same_next & (_em.take(run_cls, nxt) == _L) & (_em.take(upos, nxt) >= 0)
    lone = is_num & (_em.take(runs_in_row, run_row) == 1) & ~has_dot
    num_ok = is_num & num.mask & (next_is_unit | lone)
    scale = _em.where(lone, 1, next_unit)
    part = _em.where(num_ok, _em.round(value * scale.astype(_em.float64)), 0.0).astype(_em.int64)
    prev_is_num = same_prev & _em.take(is_num, prv)
    letter_ok = (run_cls == _L) & (upos >= 0) & prev_is_num
    clock_ok = _em.zeros(nr, dtype=_em.bool, device=dev)
    clock_rows = _em.nonzero(is_clock)[0]
    if clock_rows.shape[0]:
        cns, cok = _clock_ns(runs.take(clock_rows))
        part[clock_rows] = _em.where(cok, cns, 0)
        clock_ok[clock_rows] = cok
    run_ok = num_ok | letter_ok | clock_ok
    row_bad = _em.bincount(run_row, weights=(~run_ok).astype(_em.int64), minlength=n)
    row_ok = row_ok & (row_bad == 0)
    total = _em.zeros(n, dtype=_em.int64, device=dev)
    total = _em.scatter_add(total, 0, run_row, part)
    bad_rows = valid & ~row_ok
    if errors == "raise" and bool(_em.any(bad_rows)):  # host read: an unparsable value?
        pos = int(_em.nonzero(bad_rows)[0][0])
        val = col.take(_em.asarray([pos], device=dev)).to_pandas()[0]
        raise ValueError(f"ember.frame.to_timedelta: could not convert {val!r} to a timedelta")
    keep = valid & row_ok
    if not bool(_em.any(keep)):  # host read: pandas gives seconds when nothing parsed
        return Column(np.dtype("timedelta64[s]"), _em.zeros(n, dtype=_em.int64, device=dev), keep)
    fine = bool(_em.any(keep & (total % 1000 != 0)))  # host read: is nanosecond precision needed?
    fine = fine or bool(
        _em.any(_em.bincount(run_row, weights=(lone & num_ok).astype(_em.int64), minlength=n) > 0)
    )
    mask = None if bool(_em.all(keep)) else keep  # host read: drop an all-valid mask
    if fine:
        return Column(np.dtype("timedelta64[ns]"), _em.where(keep, total, 0), mask)
    us = _em.floor_divide(total, 1000)
    return Column(np.dtype("timedelta64[us]"), _em.where(keep, us, 0), mask)
