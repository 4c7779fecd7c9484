"""``merge_asof``: each left row joined with the last (``backward``), first (``forward``) or
closest (``nearest``) right row by an ordered key, within equal ``by`` keys.

On the device: the left and right ``on`` values get dense ranks from one ``unique`` of both;
``by`` keys get shared codes (``keys.joint_codes``); a composite ``code * (m + 1) + rank``
orders the right rows by (by, on), and one ``searchsorted`` per direction finds each left row's
partner, kept when its code equals the left row's and it lies within ``tolerance``. The columns
are then gathered as merge does (``joins._assemble``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from .joins import _assemble
from .keys import joint_codes

_DIRECTIONS = ("backward", "forward", "nearest")


def _names(one, left_one, right_one, what):
    if one is not None:
        if left_one is not None or right_one is not None:
            raise pd.errors.MergeError(
                f"ember.frame.merge_asof: Can only pass {what} OR left_{what} and right_{what}"
            )
        return one, one
    return left_one, right_one


def _as_list(v):
    return [] if v is None else ([v] if not isinstance(v, (list, tuple)) else list(v))


def _on_values(df, name, side):
    col = df._data[name]
    if col.kind not in ("num", "time") or col.dtype == np.dtype(bool):
        raise pd.errors.MergeError(
            f"ember.frame.merge_asof: incompatible merge keys: {side} key {name!r} has dtype "
            f"{col.dtype}; it must be numeric or datetime-like"
        )
    if col.has_nulls():  # host read: one bool
        raise ValueError(f"Merge keys contain null values on {side} side")
    v = col.data
    if v.shape[0] > 1 and not bool(_em.all(v[1:] >= v[:-1])):  # host read: one bool
        raise ValueError(f"{side} keys must be sorted")
    return col, v


def _tolerance(tol, col):
    if tol is None:
        return None
    if col.kind == "time":
        if not isinstance(tol, (pd.Timedelta, np.timedelta64)) and not hasattr(tol, "value"):
            raise pd.errors.MergeError("incompatible tolerance, must be compat with type dtype")
        td = pd.Timedelta(tol)
        if td < pd.Timedelta(0):
            raise pd.errors.MergeError("tolerance must be positive")
        unit = np.datetime_data(col.dtype)[0]
        return int(td / pd.Timedelta(1, unit=unit))
    if isinstance(tol, (pd.Timedelta, np.timedelta64)) or not np.isscalar(tol):
        raise pd.errors.MergeError("key must be integer, timestamp or float")
    if tol < 0:
        raise pd.errors.MergeError("tolerance must be positive")
    return tol


def merge_asof(
    left,
    right,
    on=None,
    left_on=None,
    right_on=None,
    left_index=False,
    right_index=False,
    by=None,
    left_by=None,
    right_by=None,
    suffixes=("_x", "_y"),
    tolerance=None,
    allow_exact_matches=True,
    direction="backward",
):
    """pandas' ``merge_asof`` (both frames sorted by their ``on`` key; index keys are not
    supported)."""
    if left_index or right_index:
        raise NotImplementedError("ember.frame.merge_asof: left_index/right_index")
    if direction not in _DIRECTIONS:
        raise pd.errors.MergeError(f"direction invalid: {direction}")
    lon, ron = _names(on, left_on, right_on, "on")
    if lon is None or ron is None:
        raise pd.errors.MergeError("ember.frame.merge_asof: on (or left_on and right_on) needed")
    lby, rby = _names(by, left_by, right_by, "by")
    lby, rby = _as_list(lby), _as_list(rby)
    if len(lby) != len(rby):
        raise pd.errors.MergeError("left_by and right_by must be the same length")
    for k in [lon, *lby]:
        if k not in left._data:
            raise KeyError(k)
    for k in [ron, *rby]:
        if k not in right._data:
            raise KeyError(k)
    if right.device != left.device:
        right = right.to(left.device)
    dev = left.device
    lcol, lv = _on_values(left, lon, "left")
    rcol, rv = _on_values(right, ron, "right")
    if (lcol.kind == "time") != (rcol.kind == "time") or (
        lcol.kind == "time" and lcol.dtype != rcol.dtype
    ):  # (datetimes of different units would compare ticks of different sizes)
        raise pd.errors.MergeError(
            f"incompatible merge keys [0] {lcol.dtype} and {rcol.dtype}, must be the same type"
        )
    tol = _tolerance(tolerance, lcol)
    nl, nr = lv.shape[0], rv.shape[0]
    li = _em.arange(nl, dtype=_em.int64, device=dev)
    if nl == 0 or nr == 0:
        ri = _em.full(nl, -1, dtype=_em.int64, device=dev)
        return _assemble(left, right, li, ri, [lon, *lby], [ron, *rby], suffixes, False, dev,
                         (True, False))  # fmt: skip
    both = _em.concatenate([lv, rv]) if lv.dtype == rv.dtype else _em.concatenate(
        [lv.astype(_em.float64), rv.astype(_em.float64)])  # fmt: skip
    uniq, rank = _em.unique(both, return_inverse=True)
    m = uniq.shape[0] + 1
    rank = rank.reshape(-1).astype(_em.int64)
    if lby:
        lc, rc, _ = joint_codes([left._data[k] for k in lby], [right._data[k] for k in rby])
    else:
        lc = _em.zeros(nl, dtype=_em.int64, device=dev)
        rc = _em.zeros(nr, dtype=_em.int64, device=dev)
    kl = lc * m + rank[:nl]
    kr = rc * m + rank[nl:]
    ro = _em.argsort(kr, stable=True)
    sr = _em.take(kr, ro)

    def partner(side, step):
        pos = _em.searchsorted(sr, kl, side=side) + step
        ok = (pos >= 0) & (pos < nr)
        pc = _em.clip(pos, 0, nr - 1)
        ok = ok & (_em.take(sr, pc) // m == lc)
        return _em.take(ro, pc), ok

    if direction in ("backward", "nearest"):
        bi, bok = partner("right" if allow_exact_matches else "left", -1)
    if direction in ("forward", "nearest"):
        fi, fok = partner("left" if allow_exact_matches else "right", 0)
    lvf = lv.astype(_em.float64) if lv.dtype.kind == "f" or rv.dtype.kind == "f" else lv

    def dist(idx):
        return _em.abs(lvf - _em.take(rv, idx).astype(lvf.dtype))

    if direction == "backward":
        ri, ok = bi, bok
    elif direction == "forward":
        ri, ok = fi, fok
    else:  # the closer one; a tie goes backward, as pandas
        use_f = fok & (~bok | (dist(fi) < dist(bi)))
        ri, ok = _em.where(use_f, fi, bi), bok | fok
    if tol is not None:
        ok = ok & (dist(ri) <= tol)
    ri = _em.where(ok, ri, -1)
    return _assemble(left, right, li, ri, [lon, *lby], [ron, *rby], suffixes, False, dev,
                     (True, False))  # fmt: skip
