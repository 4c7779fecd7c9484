"""merge / join: shared key codes (keys.joint_codes), a stable sort of the right codes, and
searchsorted ranges expanded into gather maps with repeat + a scan; columns are then gathered."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from . import dtypes as _dt
from .column import Column
from .index import RangeIndex
from .keys import argsort_columns, joint_codes

_HOWS = ("inner", "left", "right", "outer", "cross")


def _ar(n, dev):
    return _em.arange(n, dtype=_em.int64, device=dev)


def _match(lc, rc, k, dev):
    """For each left code: (right rows ordered by code, start of its run, run length); codes are
    dense in [0, k), so a histogram and its scan replace a binary search."""
    ro = _em.argsort(rc, stable=True)
    counts = (
        _em.bincount(rc, minlength=k).astype(_em.int64)
        if rc.shape[0]
        else _em.zeros(k, dtype=_em.int64, device=dev)
    )
    starts = _em.cumsum(counts) - counts
    if lc.shape[0] == 0 or k == 0:
        z = _em.zeros(lc.shape[0], dtype=_em.int64, device=dev)
        return ro, z, z
    return ro, _em.take(starts, lc), _em.take(counts, lc)


def _expand(lo, cnt, ro, dev, keep_unmatched):
    """Gather maps (left rows, right rows; -1 = no partner) in left order, and whether the left
    map is the identity (every left row once, in order)."""
    nl = lo.shape[0]
    nr = ro.shape[0]
    if nl and nr and int(_em.max(cnt)) <= 1:  # host read: unique right keys need no expansion
        ri = _em.take(ro, _em.clip(lo, 0, nr - 1))
        if keep_unmatched:
            return _ar(nl, dev), _em.where(cnt > 0, ri, -1), True
        li = _em.nonzero(cnt > 0)[0]
        return li, _em.take(ri, li), li.shape[0] == nl
    eff = _em.where(cnt > 0, cnt, 1) if keep_unmatched else cnt
    li = _em.repeat(_ar(nl, dev), eff)
    total = li.shape[0]
    if total == 0:
        return li, li, False
    if nr == 0:
        return li, _em.full(total, -1, dtype=_em.int64, device=dev), keep_unmatched and total == nl
    base = _em.cumsum(eff) - eff
    within = _ar(total, dev) - _em.take(base, li)
    pos = _em.take(lo, li) + within
    ri = _em.take(ro, _em.clip(pos, 0, nr - 1))
    if keep_unmatched:
        ri = _em.where(_em.take(cnt, li) > 0, ri, -1)
    return li, ri, keep_unmatched and total == nl  # every left row exactly once


def _key_lists(left, right, on, left_on, right_on, func):
    if on is not None:
        if left_on is not None or right_on is not None:
            raise ValueError(
                f'ember.frame.{func}: Can only pass argument "on" OR "left_on" '
                'and "right_on", not a combination of both.'
            )
        on = [on] if not isinstance(on, (list, tuple)) else list(on)
        return on, on
    if left_on is None and right_on is None:
        common = [k for k in left._data if k in right._data]
        if not common:
            raise pd.errors.MergeError(
                f"ember.frame.{func}: No common columns to perform merge on."
            )
        return common, common
    if left_on is None or right_on is None:
        raise pd.errors.MergeError(
            f'ember.frame.{func}: Must pass "right_on" OR '
            '"right_index" with left_on (and vice versa)'
        )
    lo = [left_on] if not isinstance(left_on, (list, tuple)) else list(left_on)
    ro = [right_on] if not isinstance(right_on, (list, tuple)) else list(right_on)
    if len(lo) != len(ro):
        raise ValueError(f"ember.frame.{func}: len(right_on) must equal len(left_on)")
    return lo, ro


def _check_key_types(lcols, rcols, lnames, rnames):
    for a, b, ln, rn in zip(lcols, rcols, lnames, rnames, strict=False):
        ka = "str" if a.kind == "str" else ("time" if a.kind == "time" else "x")
        kb = "str" if b.kind == "str" else ("time" if b.kind == "time" else "x")
        if a.kind == "cat":
            ka = "str" if a.categories.kind == "str" else "x"
        if b.kind == "cat":
            kb = "str" if b.categories.kind == "str" else "x"
        if ka != kb:
            raise ValueError(
                f"ember.frame.merge: You are trying to merge on {a.dtype} and "
                f"{b.dtype} columns for key '{ln}'/'{rn}'. If you wish to proceed "
                "you should use pd.concat"
            )


def merge(
    left,
    right,
    how="inner",
    on=None,
    left_on=None,
    right_on=None,
    left_index=False,
    right_index=False,
    sort=False,
    suffixes=("_x", "_y"),
    indicator=False,
    validate=None,
):
    from .dataframe import DataFrame
    from .reshape import concat_columns
    from .series import Series

    func = "merge"
    if isinstance(right, Series):
        if right.name is None:
            raise ValueError("ember.frame.merge: Cannot merge a Series without a name")
        right = right.to_frame()
    if not isinstance(right, DataFrame):
        raise TypeError(
            f"ember.frame.merge: Can only merge Series or DataFrame objects, a "
            f"{type(right).__name__} was passed"
        )
    if how not in _HOWS:
        raise ValueError(f"ember.frame.merge: 'how' must be one of {_HOWS}, got {how!r}")
    if left_index or right_index:
        left, right, left_on, right_on, on = _index_keys(
            left, right, left_index, right_index, left_on, right_on, on
        )
    if validate is not None:
        raise NotImplementedError("ember.frame.merge: validate=")
    if right.device != left.device:
        right = right.to(left.device)
    dev = left.device
    nl, nr = len(left), len(right)
    if how == "cross":
        if on is not None or left_on is not None or right_on is not None:
            raise pd.errors.MergeError(
                "ember.frame.merge: Can not pass on, right_on, left_on "
                "or set right_index=True or left_index=True with "
                "how='cross'"
            )
        li = _em.repeat(_ar(nl, dev), nr) if nr else _ar(0, dev)
        ri = (_em.tile(_ar(nr, dev), nl) if nl else _ar(0, dev)) if nr else _ar(0, dev)
        return _assemble(left, right, li, ri, [], [], suffixes, indicator, dev, (False, False))
    lnames, rnames = _key_lists(left, right, on, left_on, right_on, func)
    for k in lnames:
        if k not in left._data:
            raise KeyError(k)
    for k in rnames:
        if k not in right._data:
            raise KeyError(k)
    lcols = [left._data[k] for k in lnames]
    rcols = [right._data[k] for k in rnames]
    _check_key_types(lcols, rcols, lnames, rnames)
    if nl == 0 or nr == 0:
        lc = _em.zeros(nl, dtype=_em.int64, device=dev)
        rc = _em.ones(nr, dtype=_em.int64, device=dev)
        k = 2
    else:
        lc, rc, k = joint_codes(lcols, rcols)
    if how in ("inner", "left", "outer"):
        ro, lo, cnt = _match(lc, rc, k, dev)
        li, ri, ident = _expand(lo, cnt, ro, dev, keep_unmatched=how != "inner")
        idents = (ident, False)
        if how == "outer":
            matched = _em.zeros(nr, dtype=_em.bool, device=dev)
            good = ri >= 0
            hit = _em.take(ri, _em.nonzero(good)[0])
            matched[hit] = _em.ones(hit.shape[0], dtype=_em.bool, device=dev)
            extra = _em.nonzero(~matched)[0]
            li = _em.concatenate([li, _em.full(extra.shape[0], -1, dtype=_em.int64, device=dev)])
            ri = _em.concatenate([ri, extra])
            idents = (False, False)
    else:  # right: the left join seen from the right
        lo_, lo2, cnt = _match(rc, lc, k, dev)
        ri, li, ident = _expand(lo2, cnt, lo_, dev, keep_unmatched=True)
        idents = (False, ident)
    out = _assemble(left, right, li, ri, lnames, rnames, suffixes, indicator, dev, idents)
    if left_index or right_index:
        _index_result(out, left, right, li, ri, left_index, right_index)
    if how == "outer" or sort:
        keys = [out._data[k] if k in out._data else None for k in lnames]
        if any(k is None for k in keys):
            keys = [concat_columns([c.take(li, nullable=True)]) for c in lcols]
        order = argsort_columns(keys, [True] * len(keys), "last")
        out = out._take(order)
        if not (left_index or right_index):  # index joins keep their (reordered) labels
            out.index = RangeIndex(len(out), device=dev)
    return out


def _coalesce(a: Column, b: Column):
    from .missing import choose

    return choose(a.valid(), a, b)


def _assemble(left, right, li, ri, lnames, rnames, suffixes, indicator, dev, idents):
    from .dataframe import DataFrame

    shared_keys = [k for k, r in zip(lnames, rnames, strict=False) if k == r]
    lsuf, rsuf = suffixes if suffixes is not None else ("", "")
    lsuf = lsuf or ""
    rsuf = rsuf or ""
    overlap = (set(left._data) & set(right._data)) - set(shared_keys)
    if overlap and not lsuf and not rsuf:
        raise ValueError(
            f"ember.frame.merge: columns overlap but no suffix specified: "
            f"{sorted(map(str, overlap))}"
        )
    lnull = bool(_em.any(li < 0)) if li.shape[0] else False  # host read: any unmatched rows?
    rnull = bool(_em.any(ri < 0)) if ri.shape[0] else False
    cols = {}

    def gather(c, idx, has_null, ident):
        if ident:
            return c
        return c.take(idx, nullable=True) if has_null else c.take(idx)

    for k, c in left._data.items():
        col = gather(c, li, lnull, idents[0])
        if k in shared_keys and lnull:
            col = _coalesce(col, gather(right._data[k], ri, rnull, idents[1]))
        name = f"{k}{lsuf}" if k in overlap else k
        cols[name] = col
    for k, c in right._data.items():
        if k in shared_keys:
            continue
        name = f"{k}{rsuf}" if k in overlap else k
        cols[name] = gather(c, ri, rnull, idents[1])
    if indicator:
        code = _em.where(li < 0, 1, _em.where(ri < 0, 0, 2)).astype(_em.int32)
        cats = pd.Index(["left_only", "right_only", "both"], dtype=_dt.STRING)
        from .column import from_pandas_index

        name = indicator if isinstance(indicator, str) else "_merge"
        cols[name] = Column(
            pd.CategoricalDtype(cats), code, None, None, None, from_pandas_index(cats, dev)
        )
    return DataFrame._from_columns(cols, RangeIndex(li.shape[0], device=dev))


def _index_result(out, left, right, li, ri, left_index, right_index):
    """pandas' index of an index join: the joined key for index-on-index, else the index of
    the side joined on columns (its rows' labels); the temporary key column is dropped."""
    from .index import Index

    key = out._data.pop("__ember_index_key__", None)
    if left_index and right_index:
        out.index = Index(key, name=left.index.name)
        return
    src, idx = (left.index, li) if right_index else (right.index, ri)
    nullable = bool(_em.any(idx < 0)) if idx.shape[0] else False  # host read
    out.index = Index(src._col.take(idx, nullable=nullable), name=src.name)


def _index_keys(left, right, left_index, right_index, left_on, right_on, on):
    """Turn index joins into column joins on a temporary key column."""
    tmp = "__ember_index_key__"
    if left_index:
        left = left.copy()
        left._data[tmp] = left.index._col
        left_on = tmp
    if right_index:
        right = right.copy()
        right._data[tmp] = right.index._col
        right_on = tmp
    if left_index and not right_index:
        right_on = right_on if right_on is not None else on
    if right_index and not left_index:
        left_on = left_on if left_on is not None else on
    return left, right, left_on, right_on, None


def join(left, other, on=None, how="left", lsuffix="", rsuffix="", sort=False):
    """DataFrame.join: ``other``'s index against ``on`` (a column) or ``left``'s index."""
    from .series import Series

    if isinstance(other, Series):
        other = other.to_frame()
    if on is None:
        out = merge(
            left,
            other,
            how=how,
            left_index=True,
            right_index=True,
            sort=sort,
            suffixes=(lsuffix, rsuffix),
        )
        return out  # merge keeps the joined key as the index
    return merge(
        left, other, how=how, left_on=on, right_index=True, sort=sort, suffixes=(lsuffix, rsuffix)
    )


_ = np
