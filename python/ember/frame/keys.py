"""Keys: the sort-based primitives under sort_values, group-by, joins, unique and duplicates.

Every column reduces to an int64/float "sort key" on the device (numbers as they are, strings
ranked by successive stable sorts of 8-byte big-endian words, categories by code), and several
columns reduce to one dense int64 code per row by combining codes pairwise and re-densifying with
a stable argsort plus a scan over "differs from the previous row" flags.
"""

from __future__ import annotations

import ember as _em

from . import dtypes as _dt
from .column import Column


def _i64(n, device, fill=None):
    if fill is None:
        return _em.arange(n, dtype=_em.int64, device=device)
    return _em.full(n, fill, dtype=_em.int64, device=device)


def string_ranks(col: Column, with_order=False):
    """Dense int64 ranks of a string column in code-point (UTF-8 byte) order; nulls rank as ''."""
    n = len(col)
    dev = col.device
    if n == 0 or col.chars.shape[0] == 0:
        z = _i64(n, dev, 0)
        if with_order:
            return z, _i64(n, dev), _em.zeros(max(n - 1, 0), dtype=_em.bool, device=dev)
        return z
    starts = col.offsets[:-1]
    ends = col.offsets[1:]
    lens = ends - starts
    if col.mask is not None:
        lens = _em.where(col.mask, lens, 0)
        ends = starts + lens
    maxlen = int(_em.max(lens))  # host read: how many 8-byte words to compare
    nwords = max(1, (maxlen + 7) // 8)
    words = [_word_at(col.chars, starts + 8 * k, ends, dev) for k in range(nwords)]
    order = _em.argsort(lens, stable=True)
    for w in reversed(words):
        order = _em.take(order, _em.argsort(_em.take(w, order), stable=True))
    slens = _em.take(lens, order)
    differs = slens[1:] != slens[:-1]
    for w in words:
        sw = _em.take(w, order)
        differs = differs | (sw[1:] != sw[:-1])
    if with_order:
        return _scatter_ranks(order, differs, dev), order, differs
    return _scatter_ranks(order, differs, dev)


_U = _em.uint64


def _u(v, dev):
    return _em.asarray(v, dtype=_U, device=dev)


def _word_at(chars, p, ends, dev):
    """Per row: the 8 bytes at byte offset ``p`` (zero past ``ends``) as a big-endian uint64, so
    that comparing words compares the bytes in order. Two aligned 8-byte loads and shifts."""
    nb = chars.shape[0]
    pad = (8 - nb % 8) % 8 + 16
    buf = _em.concatenate([chars, _em.zeros(pad, dtype=_em.uint8, device=dev)]).view(_U)
    last = buf.shape[0] - 1
    q = _em.clip(_em.floor_divide(p, 8), 0, last - 1)
    r = (p - q * 8).astype(_U) * _u(8, dev)
    lo = _em.take(buf, q)
    hi = _em.take(buf, q + 1)
    rr = _em.where(r == 0, _u(8, dev), r)  # keep shift counts below 64; r == 0 is lo itself
    x = _em.where(r == 0, lo, (lo >> rr) | (hi << (_u(64, dev) - rr)))
    rem = _em.clip(ends - p, 0, 8).astype(_U) * _u(8, dev)
    full = rem >= _u(64, dev)
    keep = (_u(1, dev) << _em.where(full, _u(0, dev), rem)) - _u(1, dev)
    x = _em.where(full, x, x & keep)
    m1, m2 = _u(0x00FF00FF00FF00FF, dev), _u(0x0000FFFF0000FFFF, dev)
    x = ((x & m1) << _u(8, dev)) | ((x >> _u(8, dev)) & m1)
    x = ((x & m2) << _u(16, dev)) | ((x >> _u(16, dev)) & m2)
    return (x << _u(32, dev)) | (x >> _u(32, dev))


def _scatter_ranks(order, differs, dev):
    n = order.shape[0]
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    rs = _em.concatenate([zero, _em.cumsum(differs.astype(_em.int64))])
    ranks = _i64(n, dev, 0)
    ranks[order] = rs
    return ranks


def sort_key(col: Column):
    """An array whose order is the column's order (null rows hold arbitrary values)."""
    k = col.kind
    if k == "str":
        return string_ranks(col)
    if k == "cat":
        return col.data
    if _dt.is_bool(col.dtype):
        return col.data.astype(_em.uint8)
    return col.data


def factorize(col: Column, sort=True):
    """(codes, first): dense int64 codes in value order (-1 for nulls) and, per code, the index of
    its first row.  ``sort`` is accepted for pandas' spelling; codes are always value-ordered."""
    del sort
    n = len(col)
    dev = col.device
    if col.kind == "str" and n and not col.has_nulls():
        # the ranks are already dense codes; the first row of a run in the stable order is the
        # first occurrence of that string
        ranks, order, differs = string_ranks(col, with_order=True)
        start = _em.concatenate([_em.ones(1, dtype=_em.bool, device=dev), differs])
        return ranks, _em.take(order, _em.nonzero(start)[0])
    key = sort_key(col)
    valid = col.valid()
    return _factorize_key(key, valid, n, dev)


def _factorize_key(key, valid, n, dev):
    if valid is not None and n and bool(_em.all(valid)):  # host read: skip the null handling
        valid = None
    if valid is None:
        return _factorize_dense(key, n, dev)
    idx = _em.nonzero(valid)[0]
    v = _em.take(key, idx)
    m = idx.shape[0]
    codes = _i64(n, dev, -1)
    if m == 0:
        return codes, _i64(0, dev)
    cv, first = _factorize_dense(v, m, dev)
    codes[idx] = cv
    return codes, _em.take(idx, first)


def _factorize_dense(v, m, dev):
    """Codes of every element of ``v`` (no nulls) and the index of each code's first element."""
    if m == 0:
        return _i64(0, dev), _i64(0, dev)
    order = _em.argsort(v, stable=True)
    sv = _em.take(v, order)
    start = _em.concatenate([_em.ones(1, dtype=_em.bool, device=dev), sv[1:] != sv[:-1]])
    gid = _em.cumsum(start.astype(_em.int64)) - 1
    codes = _i64(m, dev, 0)
    codes[order] = gid
    first = _em.take(order, _em.nonzero(start)[0])
    return codes, first


def _direct_codes(key, valid, n, dev, values_out=None):
    """Dense codes of integer keys by direct addressing when their range is small (no sort):
    mark the values present, scan the marks into ranks, gather. None when the range is wide.
    ``values_out`` (a list) receives the distinct key values in order (O(range), no row pass)."""
    if n == 0 or key.dtype not in (
        _em.int8,
        _em.int16,
        _em.int32,
        _em.int64,
        _em.uint8,
        _em.uint16,
        _em.uint32,
        _em.uint64,
    ):
        return None
    kv = key if valid is None else key[valid]
    if kv.shape[0] == 0:
        return None
    lo, hi = int(_em.min(kv)), int(_em.max(kv))  # host reads: the key range
    span = hi - lo + 1
    if span > max(2 * n, 1 << 16):
        return None
    off = key - key.dtype.type(lo) if key.dtype == _em.uint64 else key - lo
    off = off.astype(_em.int64, copy=False)
    if valid is not None:
        off = _em.where(valid, off, span)
    present = _em.zeros(span + 1, dtype=_em.bool, device=dev)
    present[off] = True
    rank = _em.cumsum(present[:span], dtype=_em.int64) - 1
    k = int(rank[-1]) + 1  # host read: the number of distinct keys
    if valid is None:
        codes = _em.take(rank, off)
    else:
        codes = _em.take(_em.concatenate([rank, _em.full(1, -1, dtype=_em.int64, device=dev)]), off)
    if values_out is not None:
        vals = _em.nonzero(present[:span])[0]
        if key.dtype == _em.uint64:
            vals = vals.astype(_em.uint64) + key.dtype.type(lo)
        else:
            vals = (vals + lo).astype(key.dtype)
        values_out.append(vals)
    return codes, k


def _codes_only(col, values_out=None):
    """(codes with -1 for nulls, number of distinct values) -- no first rows needed.
    ``values_out`` as in ``_direct_codes`` (filled only when the key has no nulls)."""
    n = len(col)
    dev = col.device
    if col.kind in ("num", "time", "cat") and not _dt.is_float(col.dtype):
        key = col.data if not _dt.is_bool(col.dtype) else col.data.astype(_em.uint8)
        valid = None if col.mask is None else col.mask
        if valid is not None and n and bool(_em.all(valid)):  # host read
            valid = None
        out = values_out if valid is None else None
        got = _direct_codes(key, valid, n, dev, out)
        if got is not None:
            return got
    codes, first = factorize(col)
    return codes, first.shape[0]


def first_rows(codes, g, dev):
    """Index of the first row of each group (codes >= 0; -1 rows ignored)."""
    keep = _em.nonzero(codes >= 0)[0]
    c = _em.take(codes, keep)
    if c.shape[0] == 0:
        return _i64(0, dev)
    order = _em.argsort(c, stable=True)
    counts = _em.bincount(c, minlength=g).astype(_em.int64)
    starts = _em.cumsum(counts) - counts
    return _em.take(keep, _em.take(order, starts))


def group_codes(cols, dropna=True, need_first=True, values_out=None):
    """Rows -> dense group codes over several key columns, ordered by the key tuple (nulls after
    the values of their key). Returns (codes with -1 for rows dropped by ``dropna``, first row of
    each group -- None unless ``need_first`` -- and the number of groups). ``values_out`` (a
    list) receives each group's key value (in the key's storage dtype) when one integer-like key
    without nulls was coded by direct addressing, else stays empty."""
    n = len(cols[0])
    dev = cols[0].device
    if len(cols) == 1 and need_first:
        codes, first = factorize(cols[0])
        k = first.shape[0]
        if dropna or n == 0:
            return codes, first, k
        nullpos = _em.nonzero(codes < 0)[0]
        if nullpos.shape[0] == 0:
            return codes, first, k
        return _em.where(codes < 0, k, codes), _em.concatenate([first, nullpos[:1]]), k + 1
    if len(cols) == 1:
        codes, k = _codes_only(cols[0], values_out)
        if dropna or n == 0 or not bool(_em.any(codes < 0)):  # host read: a null group?
            return codes, None, k
        return _em.where(codes < 0, k, codes), None, k + 1
    combined = None
    dropped = None
    for col in cols:
        codes, k = _codes_only(col)
        isnull = codes < 0
        if dropna:
            dropped = isnull if dropped is None else dropped | isnull
        codes = _em.where(isnull, k, codes)
        if combined is None:
            combined = codes
            width = k + 1
        else:
            combined = combined * (k + 1) + codes
            width = width * (k + 1)
            got = _direct_codes(combined, None, n, dev) if width <= max(2 * n, 1 << 16) else None
            if got is None:
                combined, _ = _factorize_key(combined, None, n, dev)
            else:
                combined, width = got[0], got[1]
    valid = None if dropped is None else ~dropped
    if not need_first:
        got = _direct_codes(combined, valid, n, dev) if n else None
        if got is not None:
            return got[0], None, got[1]
    codes, first = _factorize_key(combined, valid, n, dev)
    return codes, (first if need_first else None), first.shape[0]


def argsort_columns(cols, ascending, na_position="last"):
    """Stable multi-key row order: one stable sort per key, last key first (lexsort)."""
    n = len(cols[0])
    dev = cols[0].device
    order = _i64(n, dev)
    for col, asc in reversed(list(zip(cols, ascending, strict=False))):
        key = sort_key(col)
        valid = col.valid()
        if col.kind == "num" and _dt.is_float(col.dtype):
            key = _em.where(valid, key, 0)
        kk = _em.take(key, order)
        order = _em.take(order, _em.argsort(kk, stable=True, descending=not asc))
        if not col.has_nulls():  # host read: no null flags to order
            continue
        nulls = _em.take(~valid, order).astype(_em.uint8)
        if na_position == "first":
            nulls = 1 - nulls
        order = _em.take(order, _em.argsort(nulls, stable=True))
    return order


def joint_codes(left_cols, right_cols):
    """Group codes shared by two tables' key columns (null keys match null keys, as pandas)."""
    from .reshape import concat_columns

    nl = len(left_cols[0])
    both = [concat_columns([a, b]) for a, b in zip(left_cols, right_cols, strict=False)]
    codes, _, k = group_codes(both, dropna=False, need_first=False)
    return codes[:nl], codes[nl:], k


def lookup(table: Column, col: Column):
    """Position of each value of ``col`` in ``table`` (distinct values), -1 when absent/null."""
    lc, rc, k = joint_codes([table], [col])
    dev = col.device
    inv = _i64(k, dev, -1)
    inv[lc] = _i64(len(table), dev)
    pos = _em.take(inv, rc)
    return _em.where(col.valid(), pos, -1)
