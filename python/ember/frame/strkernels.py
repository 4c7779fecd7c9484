"""String kernels on the Arrow layout (int64 offsets + UTF-8 bytes), composed of ember ops.

Invariant: a string Column's ``chars`` are compact (offsets[0] == 0, offsets[-1] == len(chars)),
which every constructor and gather in ember.frame keeps. Per-byte work uses ``rows`` (the row of
each byte, from ``repeat``) and per-row sums over bytes use a prefix scan read at the offsets.
"""

from __future__ import annotations

import numpy as np

import ember as _em

from . import dtypes as _dt
from .column import Column

WHITESPACE = b" \t\n\r\x0b\x0c"


def _ar(n, dev):
    return _em.arange(n, dtype=_em.int64, device=dev)


def lens(col):
    return col.offsets[1:] - col.offsets[:-1]


def byte_rows(col):
    n = len(col)
    return _em.repeat(_ar(n, col.device), lens(col))


def row_sums(col, flags):
    """Per-row sum of a per-byte int/bool array (a scan read at the row offsets)."""
    dev = col.device
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    cs = _em.concatenate([zero, _em.cumsum(flags.astype(_em.int64))])
    return _em.take(cs, col.offsets[1:]) - _em.take(cs, col.offsets[:-1])


def from_lengths_and_bytes(new_lens, chars, mask, dev):
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    offsets = _em.concatenate([zero, _em.cumsum(new_lens.astype(_em.int64))])
    return Column(_dt.STRING, offsets=offsets, chars=chars, mask=mask)


def keep_bytes(col, keep):
    """The column with only the bytes where ``keep`` (per byte) is True."""
    dev = col.device
    new_lens = row_sums(col, keep)
    chars = col.chars[keep] if col.chars.shape[0] else col.chars
    return from_lengths_and_bytes(new_lens, chars, col.mask, dev)


def char_starts(col):
    """True at the first byte of each UTF-8 character."""
    return (col.chars & np.uint8(0xC0)) != np.uint8(0x80)


def char_len(col):
    return row_sums(col, char_starts(col))


def _pat_bytes(pat, func):
    if not isinstance(pat, str):
        raise TypeError(
            f"ember.frame.str.{func}: expected a string pattern, got {type(pat).__name__}"
        )
    return np.frombuffer(pat.encode("utf-8"), dtype=np.uint8)


def match_starts(col, pat: np.ndarray):
    """Per byte: does ``pat`` occur starting here (wholly inside the byte's row)? Shifted slice
    compares, then a scan over row starts rejects matches that run into the next row."""
    dev = col.device
    nb = col.chars.shape[0]
    m = pat.shape[0]
    if nb == 0:
        return _em.zeros(0, dtype=_em.bool, device=dev)
    padded = _em.concatenate([col.chars, _em.zeros(m, dtype=_em.uint8, device=dev)])
    ok = padded[:nb] == np.uint8(pat[0])
    for k in range(1, m):
        ok = ok & (padded[k : k + nb] == np.uint8(pat[k]))
    if m > 1:
        # a row starting at i+1..i+m-1 (or the end of the bytes) means the match runs over
        bound = _em.concatenate(
            [_em.zeros(nb, dtype=_em.bool, device=dev), _em.ones(m, dtype=_em.bool, device=dev)]
        )
        inner = col.offsets[1:-1]
        if inner.shape[0]:
            bound[inner] = _em.ones(inner.shape[0], dtype=_em.bool, device=dev)
        for k in range(1, m):
            ok = ok & ~bound[k : k + nb]
    return ok


def contains(col, pat: np.ndarray):
    n = len(col)
    dev = col.device
    if pat.shape[0] == 0:
        return _em.ones(n, dtype=_em.bool, device=dev)
    if col.chars.shape[0] == 0:
        return _em.zeros(n, dtype=_em.bool, device=dev)
    return row_sums(col, match_starts(col, pat)) > 0


def _compare_at(col, pat, starts):
    n = len(col)
    dev = col.device
    m = pat.shape[0]
    ok = lens(col) >= m
    nb = col.chars.shape[0]
    if m == 0:
        return _em.ones(n, dtype=_em.bool, device=dev)
    if nb == 0:
        return _em.zeros(n, dtype=_em.bool, device=dev)
    for k in range(m):
        p = _em.clip(starts + k, 0, nb - 1)
        ok = ok & (_em.take(col.chars, p) == np.uint8(pat[k]))
    return ok


def startswith(col, pat):
    return _compare_at(col, pat, col.offsets[:-1])


def endswith(col, pat):
    return _compare_at(col, pat, col.offsets[1:] - pat.shape[0])


def equals(col, pat):
    return startswith(col, pat) & (lens(col) == pat.shape[0])


def map_case(col, upper: bool):
    """ASCII and Latin-1 letters (U+00C0..U+00FE) change case; other scripts are unchanged."""
    c = col.chars
    if c.shape[0] == 0:
        return col
    lo, hi = (97, 122) if upper else (65, 90)
    delta = -32 if upper else 32
    ci = c.astype(_em.int16)
    ascii_hit = (ci >= lo) & (ci <= hi)
    out = _em.where(ascii_hit, ci + delta, ci)
    # Latin-1 supplement: C3 80..9E <-> C3 A0..BE (except x/div signs C3 97 / C3 B7)
    prev = _em.concatenate([_em.zeros(1, dtype=_em.int16, device=col.device), ci[:-1]])
    cont = prev == 0xC3
    if upper:
        l1 = cont & (ci >= 0xA0) & (ci <= 0xBE) & (ci != 0xB7)
        out = _em.where(l1, ci - 32, out)
    else:
        l1 = cont & (ci >= 0x80) & (ci <= 0x9E) & (ci != 0x97)
        out = _em.where(l1, ci + 32, out)
    return Column(_dt.STRING, offsets=col.offsets, chars=out.astype(_em.uint8), mask=col.mask)


def strip(col, to_strip=None, left=True, right=True):
    if col.chars.shape[0] == 0:
        return col
    chars = WHITESPACE if to_strip is None else to_strip.encode("utf-8")
    c = col.chars
    strip_me = _em.zeros(c.shape[0], dtype=_em.bool, device=col.device)
    for b in set(chars):
        strip_me = strip_me | (c == np.uint8(b))
    keep_flag = (~strip_me).astype(_em.int64)
    dev = col.device
    rows = byte_rows(col)
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    cs = _em.concatenate([zero, _em.cumsum(keep_flag)])
    pos = _ar(c.shape[0], dev)
    before = _em.take(cs, pos + 1) - _em.take(_em.take(cs, col.offsets[:-1]), rows)
    after = _em.take(_em.take(cs, col.offsets[1:]), rows) - _em.take(cs, pos)
    keep = _em.ones(c.shape[0], dtype=_em.bool, device=dev)
    if left:
        keep = keep & (before > 0)
    if right:
        keep = keep & (after > 0)
    return keep_bytes(col, keep)


def char_index(col):
    """Per byte: the index of its character within the row; and per row: the char count."""
    dev = col.device
    starts = char_starts(col)
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    cs = _em.concatenate([zero, _em.cumsum(starts.astype(_em.int64))])
    rows = byte_rows(col)
    pos = _ar(col.chars.shape[0], dev)
    idx = _em.take(cs, pos + 1) - _em.take(_em.take(cs, col.offsets[:-1]), rows) - 1
    nchars = _em.take(cs, col.offsets[1:]) - _em.take(cs, col.offsets[:-1])
    return idx, nchars, rows


def slice_chars(col, start=None, stop=None):
    """Python's s[start:stop] on characters of each row (negative bounds count from the end)."""
    if col.chars.shape[0] == 0:
        return col
    idx, nch, rows = char_index(col)

    def resolve(v, default):
        if v is None:
            return default
        if v < 0:
            return _em.clip(nch + v, 0, None)
        return _em.minimum(nch, v)

    s = resolve(start, _em.zeros_like(nch))
    e = resolve(stop, nch)
    keep = (idx >= _em.take(s, rows)) & (idx < _em.take(e, rows))
    return keep_bytes(col, keep)


def concat_rows(parts, dev):
    """Row-wise concatenation of several string columns (same length); nulls propagate."""
    n = len(parts[0])
    ls = [lens(p) for p in parts]
    total_lens = ls[0]
    for x in ls[1:]:
        total_lens = total_lens + x
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    offsets = _em.concatenate([zero, _em.cumsum(total_lens)])
    total = int(offsets[-1]) if n else 0  # host read: output byte count
    mask = None
    for p in parts:
        if p.mask is not None:
            mask = p.mask if mask is None else mask & p.mask
    if total == 0:
        return Column(
            _dt.STRING, offsets=offsets, chars=_em.zeros(0, dtype=_em.uint8, device=dev), mask=mask
        )
    rows = _em.repeat(_ar(n, dev), total_lens)
    within = _ar(total, dev) - _em.take(offsets, rows)
    out = _em.zeros(total, dtype=_em.uint8, device=dev)
    acc = _em.zeros(n, dtype=_em.int64, device=dev)
    for p, lp in zip(parts, ls, strict=False):
        a = _em.take(acc, rows)
        inside = (within >= a) & (within < a + _em.take(lp, rows))
        if p.chars.shape[0]:
            src = _em.clip(_em.take(p.offsets[:-1], rows) + within - a, 0, p.chars.shape[0] - 1)
            out = _em.where(inside, _em.take(p.chars, src), out)
        acc = acc + lp
    return Column(_dt.STRING, offsets=offsets, chars=out.astype(_em.uint8), mask=mask)


def repeat_byte(byte, counts, dev):
    total_lens = counts.astype(_em.int64)
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    offsets = _em.concatenate([zero, _em.cumsum(total_lens)])
    total = int(offsets[-1]) if counts.shape[0] else 0  # host read: output byte count
    return Column(
        _dt.STRING, offsets=offsets, chars=_em.full(total, byte, dtype=_em.uint8, device=dev)
    )


def replace(col, pat: np.ndarray, repl: np.ndarray, n=-1):
    """Literal, non-overlapping (left to right for patterns that cannot overlap themselves)."""
    dev = col.device
    m = pat.shape[0]
    r = repl.shape[0]
    nb = col.chars.shape[0]
    if m == 0 or nb == 0:
        return col
    starts = match_starts(col, pat)
    if m > 1:
        # drop a match that starts inside an earlier one (greedy non-overlap for one step)
        pos = _ar(nb, dev)
        inside = _em.zeros(nb, dtype=_em.bool, device=dev)
        for k in range(1, m):
            prev = _em.concatenate([_em.zeros(k, dtype=_em.bool, device=dev), starts[:-k]])
            inside = inside | prev
        starts = starts & ~inside
        del pos
    if n is not None and n >= 0:
        rows = byte_rows(col)
        zero = _em.zeros(1, dtype=_em.int64, device=dev)
        cs = _em.concatenate([zero, _em.cumsum(starts.astype(_em.int64))])
        before = _em.take(cs, _ar(nb, dev) + 1) - _em.take(_em.take(cs, col.offsets[:-1]), rows)
        starts = starts & (before <= n)
    covered = _em.zeros(nb, dtype=_em.bool, device=dev)
    for k in range(m):
        covered = covered | _em.concatenate(
            [_em.zeros(k, dtype=_em.bool, device=dev), starts[: nb - k]]
        )
    w = _em.where(starts, r, _em.where(covered, 0, 1)).astype(_em.int64)
    new_lens = row_sums(col, w)
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    woff = _em.concatenate([zero, _em.cumsum(w)])
    total = int(woff[-1])  # host read: output byte count
    src = _em.repeat(_ar(nb, dev), w)
    within = _ar(total, dev) - _em.take(woff, src)
    orig = _em.take(col.chars, src)
    if r:
        rep = _em.take(_em.asarray(repl, device=dev), _em.clip(within, 0, r - 1))
        chars = _em.where(_em.take(starts, src), rep, orig).astype(_em.uint8)
    else:
        chars = orig
    return from_lengths_and_bytes(new_lens, chars, col.mask, dev)


def split_fields(col, pat: np.ndarray, n=-1):
    """Per byte: field number and whether it belongs to a separator; per row: field count."""
    dev = col.device
    m = pat.shape[0]
    nb = col.chars.shape[0]
    nrows = len(col)
    if nb == 0:
        return None, None, _em.ones(nrows, dtype=_em.int64, device=dev)
    starts = match_starts(col, pat)
    if m > 1:
        inside = _em.zeros(nb, dtype=_em.bool, device=dev)
        for k in range(1, m):
            inside = inside | _em.concatenate(
                [_em.zeros(k, dtype=_em.bool, device=dev), starts[:-k]]
            )
        starts = starts & ~inside
    rows = byte_rows(col)
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    cs = _em.concatenate([zero, _em.cumsum(starts.astype(_em.int64))])
    pos = _ar(nb, dev)
    rowbase = _em.take(_em.take(cs, col.offsets[:-1]), rows)
    upto = _em.take(cs, pos + 1) - rowbase  # separators starting at or before this byte
    if n is not None and n > 0:
        starts = starts & (upto <= n)
        cs = _em.concatenate([zero, _em.cumsum(starts.astype(_em.int64))])
        rowbase = _em.take(_em.take(cs, col.offsets[:-1]), rows)
        upto = _em.take(cs, pos + 1) - rowbase
    covered = _em.zeros(nb, dtype=_em.bool, device=dev)
    for k in range(m):
        covered = covered | _em.concatenate(
            [_em.zeros(k, dtype=_em.bool, device=dev), starts[: nb - k]]
        )
    # a separator's own bytes count with the field before it
    field = upto - _em.where(covered, 1, 0)
    field = _em.where(covered, field, upto)
    nfields = row_sums(col, starts) + 1
    return field, covered, nfields
