"""Strings to numbers on the device (``astype`` from str): per-byte digit values weighted by
powers of ten and summed per row with a prefix scan read at the offsets."""

from __future__ import annotations

import numpy as np

import ember as _em

from . import strkernels as K
from .column import Column

_POW10 = np.array([10**k for k in range(19)], dtype=np.int64)


def _bad(col, bad_rows, target, func):
    idx = _em.nonzero(bad_rows)[0]
    if idx.shape[0]:
        first = col.take(idx[:1]).to_pandas()[0]  # host read: the offending value, for the message
        raise ValueError(f"ember.frame.{func}: invalid literal for {target}: {first!r}")


def _parts(col):
    """Per byte: row, position in row, is-digit; per row: length, sign (+1/-1), sign length."""
    dev = col.device
    c = col.chars.astype(_em.int64)
    rows = K.byte_rows(col)
    starts = col.offsets[:-1]
    pos = _em.arange(c.shape[0], dtype=_em.int64, device=dev) - _em.take(starts, rows)
    lens = K.lens(col)
    nb = c.shape[0]
    first = _em.take(col.chars, _em.clip(starts, 0, max(nb - 1, 0))).astype(_em.int64)
    has_sign = ((first == 43) | (first == 45)) & (lens > 0)
    sign = _em.where(has_sign & (first == 45), -1, 1)
    return c, rows, pos, lens, has_sign.astype(_em.int64), sign


def parse_int(col: Column, target, func="astype", errors="raise") -> Column:
    """Integer literals ([sign] digits, up to 18 of them) to ``target``; with
    ``errors="coerce"`` a value that is not one becomes null instead of raising."""
    col = K.strip(col)
    dev = col.device
    valid = col.valid()
    if col.chars.shape[0] == 0:
        if errors == "coerce":
            return Column(target, _em.zeros(len(col), dtype=target, device=dev), valid & ~valid)
        _bad(col, valid, target, func)
        return Column(target, _em.zeros(len(col), dtype=target, device=dev), col.mask)
    c, rows, pos, lens, slen, sign = _parts(col)
    is_digit = (c >= 48) & (c <= 57)
    body = pos >= _em.take(slen, rows)
    ndig = lens - slen
    bad = (K.row_sums(col, body & ~is_digit) > 0) | (ndig <= 0) | (ndig > 18)
    if errors != "coerce":
        _bad(col, bad & valid, target, func)
    from_end = _em.clip(_em.take(lens, rows) - 1 - pos, 0, 18)
    w = _em.take(_em.asarray(_POW10, device=dev), from_end)
    contrib = _em.where(body & is_digit, (c - 48) * w, 0)
    val = K.row_sums(col, contrib) * sign
    info = np.iinfo(target)
    out_of_range = (val < int(info.min)) | (val > min(int(info.max), 2**63 - 1))
    if errors == "coerce":
        keep = valid & ~bad & ~out_of_range
        return Column(target, _em.where(keep, val, 0).astype(target), keep)
    if target.kind == "u" and bool(_em.any((val < 0) & valid)):
        _bad(col, (val < 0) & valid, target, func)
    out_of_range = out_of_range & valid
    if bool(_em.any(out_of_range)):
        _bad(col, out_of_range, target, func)
    return Column(target, _em.where(valid, val, 0).astype(target), col.mask)


def parse_float(col: Column, target, func="astype", errors="raise") -> Column:
    """[sign] digits [. digits] [(e|E) [sign] digits], or nan/inf; 18 significant digits. With
    ``errors="coerce"`` a value that is no number becomes null (NaN) instead of raising."""
    col = K.strip(col)
    dev = col.device
    n = len(col)
    valid = col.valid()
    if col.chars.shape[0] == 0:
        if errors == "coerce":
            return Column(target, _em.full(n, np.nan, dtype=target, device=dev), valid & ~valid)
        _bad(col, valid, target, func)
        return Column(target, _em.zeros(n, dtype=target, device=dev), col.mask)
    low = K.map_case(col, upper=False)
    specials = {}
    for word, v in (("nan", np.nan), ("inf", np.inf), ("infinity", np.inf)):
        for sgn, s in (("", 1.0), ("+", 1.0), ("-", -1.0)):
            hit = K.equals(low, np.frombuffer((sgn + word).encode(), np.uint8))
            specials[(sgn, word)] = (hit, s * v)
    c, rows, pos, lens, slen, sign = _parts(col)
    is_digit = (c >= 48) & (c <= 57)
    is_e = (c == 101) | (c == 69)
    is_dot = c == 46
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    # per byte: how many 'e' / '.' at or before it within its row
    e_cs = _em.concatenate([zero, _em.cumsum(is_e.astype(_em.int64))])
    rowbase_e = _em.take(_em.take(e_cs, col.offsets[:-1]), rows)
    after_e = (
        _em.take(e_cs, _em.arange(c.shape[0], dtype=_em.int64, device=dev) + 1) - rowbase_e
    ) > 0
    d_cs = _em.concatenate([zero, _em.cumsum(is_dot.astype(_em.int64))])
    rowbase_d = _em.take(_em.take(d_cs, col.offsets[:-1]), rows)
    after_dot = (
        _em.take(d_cs, _em.arange(c.shape[0], dtype=_em.int64, device=dev) + 1) - rowbase_d
    ) > 0
    body = pos >= _em.take(slen, rows)
    mant = body & ~after_e & is_digit
    frac = mant & after_dot
    # exponent part: optional sign right after 'e'
    prev = _em.concatenate([_em.zeros(1, dtype=_em.int64, device=dev), c[:-1]])
    e_sign = after_e & ~is_e & ((c == 43) | (c == 45)) & ((prev == 101) | (prev == 69))
    exp_dig = after_e & is_digit
    ok_byte = ~body | mant | (is_dot & ~after_e) | is_e | e_sign | exp_dig
    n_e = K.row_sums(col, is_e)
    n_dot = K.row_sums(col, is_dot & ~after_e)
    n_mant = K.row_sums(col, mant)
    n_exp = K.row_sums(col, exp_dig)
    bad = (K.row_sums(col, ~ok_byte) > 0) | (n_e > 1) | (n_dot > 1) | (n_mant == 0)
    bad = bad | ((n_e == 1) & (n_exp == 0)) | (n_mant > 18) | (n_exp > 4)
    special = None
    for hit, _ in specials.values():
        special = hit if special is None else special | hit
    bad = bad & ~special
    if errors != "coerce":
        _bad(col, bad & valid, target, func)
    # mantissa digits' place value: count the mantissa digits after each one
    m_cs = _em.concatenate([zero, _em.cumsum(mant.astype(_em.int64))])
    row_end_m = _em.take(_em.take(m_cs, col.offsets[1:]), rows)
    after = row_end_m - _em.take(m_cs, _em.arange(c.shape[0], dtype=_em.int64, device=dev) + 1)
    w = _em.take(_em.asarray(_POW10, device=dev), _em.clip(after, 0, 18))
    mantissa = K.row_sums(col, _em.where(mant, (c - 48) * w, 0))
    x_cs = _em.concatenate([zero, _em.cumsum(exp_dig.astype(_em.int64))])
    row_end_x = _em.take(_em.take(x_cs, col.offsets[1:]), rows)
    xafter = row_end_x - _em.take(x_cs, _em.arange(c.shape[0], dtype=_em.int64, device=dev) + 1)
    xw = _em.take(_em.asarray(_POW10, device=dev), _em.clip(xafter, 0, 18))
    expo = K.row_sums(col, _em.where(exp_dig, (c - 48) * xw, 0))
    eneg = K.row_sums(col, e_sign & (c == 45)) > 0
    expo = _em.where(eneg, -expo, expo) - K.row_sums(col, frac)
    m = mantissa.astype(_em.float64)
    # exact powers of ten up to 1e22; split larger exponents into two steps
    e1 = _em.clip(expo, -22, 22)
    e2 = expo - e1
    p1 = _em.power(10.0, _em.abs(e1).astype(_em.float64))
    val = _em.where(e1 >= 0, m * p1, m / p1)
    val = val * _em.power(10.0, e2.astype(_em.float64))
    val = val * sign.astype(_em.float64)
    for hit, v in specials.values():
        val = _em.where(hit, v, val)
    if errors == "coerce":
        keep = valid & ~bad
        return Column(target, _em.where(keep, val, np.nan).astype(target), keep)
    val = _em.where(valid, val, np.nan)
    return Column(target, val.astype(target), col.mask)
