"""loc / iloc: row selectors turned into positions (a slice, an int64 gather array or one row)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from . import dtypes as _dt
from .column import Column, from_values


def _is_bool_like(key):
    from .series import Series

    if isinstance(key, Series):
        return key.dtype == np.dtype(bool)
    if isinstance(key, _em.ndarray):
        return key.dtype == _em.bool
    if isinstance(key, np.ndarray):
        return key.dtype == bool
    if isinstance(key, list) and key and all(isinstance(k, (bool, np.bool_)) for k in key):
        return True
    return False


def _bool_positions(obj, key, func):
    from .series import Series

    n = len(obj)
    if isinstance(key, Series):
        if len(key) != n or not key.index.equals(obj.index):
            raise NotImplementedError(
                f"ember.frame.{func}: a boolean Series whose index "
                "differs from the frame's (alignment)"
            )
        c = key._col
        plain = c.mask is None and c.data.dtype == _em.bool
        m = c.data if plain else c.data & c.valid()
    else:
        m = from_values(key, obj.device).data
        if m.shape[0] != n:
            raise IndexError(
                f"ember.frame.{func}: Boolean index has wrong length: {m.shape[0]} instead of {n}"
            )
    return _em.nonzero(m)[0]


def iloc_rows(obj, key):
    """int -> int; slice -> ('slice', start, stop) or gather array; list/array/bool -> array."""
    n = len(obj)
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        k = int(key)
        if k < -n or k >= n:
            raise IndexError(
                f"ember.frame.iloc: single positional indexer is out-of-bounds "
                f"(position {k}, length {n})"
            )
        return k % n
    if isinstance(key, slice):
        start, stop, step = key.indices(n)
        if step == 1:
            return ("slice", start, max(stop, start))
        return _em.asarray(np.arange(start, stop, step, dtype=np.int64), device=obj.device)
    if _is_bool_like(key):
        return _bool_positions(obj, key, "iloc")
    idx = from_values(key, obj.device).data
    if np.dtype(idx.dtype).kind not in "iu":
        raise IndexError(
            f"ember.frame.iloc: positional indexers must be integers, got {np.dtype(idx.dtype)}"
        )
    idx = idx.astype(_em.int64)
    if idx.shape[0] and bool(_em.any((idx < -n) | (idx >= n))):
        raise IndexError("ember.frame.iloc: positional indexers are out-of-bounds")
    return _em.where(idx < 0, idx + n, idx)


def _label_positions(index, label):
    from .index import RangeIndex
    from .ops import binary

    if isinstance(index, RangeIndex):
        return index.position_of(label)
    try:
        eq = binary(index._col, label, "eq")
    except TypeError:
        raise KeyError(label) from None
    pos = _em.nonzero(eq.data & eq.valid())[0]
    k = pos.shape[0]
    if k == 0:
        raise KeyError(label)
    if k == 1:
        return int(pos[0])
    return pos


def loc_rows(obj, key):
    from .index import RangeIndex
    from .keys import lookup

    index = obj.index
    if isinstance(key, slice):
        if key.step not in (None, 1):
            raise NotImplementedError("ember.frame.loc: label slices with a step")
        n = len(obj)
        start = 0 if key.start is None else _bound(index, key.start, True)
        stop = n if key.stop is None else _bound(index, key.stop, False)
        return ("slice", start, max(stop, start))
    if _is_bool_like(key):
        return _bool_positions(obj, key, "loc")
    if isinstance(key, (list, np.ndarray, _em.ndarray, pd.Index)) or hasattr(key, "_col"):
        labels = key._col if hasattr(key, "_col") else from_values(key, obj.device)
        if isinstance(index, RangeIndex) and labels.kind == "num":
            pos = labels.data.astype(_em.int64) - index.start
            ok = (pos >= 0) & (pos % index.step == 0)
            pos = _em.floor_divide(pos, index.step)
            ok = ok & (pos < len(index))
        else:
            pos = lookup(index._col, labels)
            ok = pos >= 0
        if len(labels) and not bool(_em.all(ok)):
            raise KeyError(
                f"ember.frame.loc: labels not in the index: "
                f"{labels.take(_em.nonzero(~ok)[0]).to_pandas().tolist()}"
            )
        return pos
    return _label_positions(index, key)


def _bound(index, label, left):
    """A label slice's start (``left``) or exclusive stop. A label the index lacks is allowed
    when the index is sorted (pandas' ``slice_locs``): the first position >= it, or past the
    last position <= it; otherwise KeyError."""
    try:
        return _first_pos(index, label) if left else _last_pos(index, label) + 1
    except KeyError:
        pos = _sorted_position(index, label, left)
        if pos is None:
            raise
        return pos


def _sorted_position(index, label, left):
    from .index import RangeIndex

    n = len(index)
    if isinstance(index, RangeIndex):
        if index.step <= 0 or not isinstance(label, (int, float, np.integer, np.floating)):
            return None
        q = (label - index.start) / index.step
        pos = int(np.ceil(q)) if left else int(np.floor(q)) + 1
        return min(max(pos, 0), n)
    col = index._col
    if col.kind not in ("num", "time") or col.mask is not None or n == 0:
        return None
    data = col.data
    try:
        if col.kind == "time":
            v = np.datetime64(pd.Timestamp(label), _dt.time_unit(col.dtype)).astype(np.int64)
        else:
            v = np.asarray(label, dtype=np.dtype(col.dtype))
    except (TypeError, ValueError):
        return None
    if n > 1 and not bool(_em.all(data[1:] >= data[:-1])):  # host read: sorted?
        return None
    probe = _em.asarray(np.asarray([v]).astype(np.dtype(data.dtype)), device=data.device)
    side = "left" if left else "right"
    return int(_em.searchsorted(data, probe, side=side)[0])


def _first_pos(index, label):
    p = _label_positions(index, label)
    return p if isinstance(p, int) else int(p[0])


def _last_pos(index, label):
    p = _label_positions(index, label)
    return p if isinstance(p, int) else int(p[-1])


def _apply_rows(obj, rows):
    if isinstance(rows, tuple):
        return obj._slice(rows[1], rows[2])
    return obj._take(rows)


def _row_scalar(series, pos):
    one = series._col.slice(pos, pos + 1)
    return pd.Series(one.to_pandas()).iloc[0]  # host read of one value


class _Indexer:
    def __init__(self, obj):
        self.obj = obj

    def _get(self, key, rows_fn):
        from .series import Series

        obj = self.obj
        if isinstance(obj, Series):
            if isinstance(key, tuple):
                raise IndexError("ember.frame: Too many indexers for a Series")
            rows = rows_fn(obj, key)
            if isinstance(rows, int):
                return _row_scalar(obj, rows)
            return _apply_rows(obj, rows)
        if isinstance(key, tuple):
            if len(key) != 2:
                raise IndexError("ember.frame: Too many indexers")
            rkey, ckey = key
        else:
            rkey, ckey = key, slice(None)
        frame = obj._select_columns(ckey, positional=rows_fn is iloc_rows)
        single_col = not hasattr(frame, "_data")
        rows = rows_fn(obj, rkey)
        if isinstance(rows, int):
            if single_col:
                return _row_scalar(frame, rows)
            return frame._row(rows)
        return _apply_rows(frame, rows)


class ILoc(_Indexer):
    def __getitem__(self, key):
        return self._get(key, iloc_rows)

    def __setitem__(self, key, value):
        """Positional assignment: a scalar, or values shaped like the selection (rows of one
        column, the columns of one row, or a 2-D block / DataFrame)."""
        obj = self.obj
        if not hasattr(obj, "_data"):
            if isinstance(key, tuple):
                raise IndexError("ember.frame: Too many indexers for a Series")
            obj._col = set_positions(obj._col, iloc_rows(obj, key), value)
            return
        rkey, ckey = key if isinstance(key, tuple) and len(key) == 2 else (key, slice(None))
        names = list(obj._data)
        if isinstance(ckey, (int, np.integer)):
            chosen = [names[int(ckey)]]
        elif isinstance(ckey, slice):
            chosen = names[ckey]
        elif _is_bool_like(ckey):
            chosen = [k for k, b in zip(names, list(ckey), strict=True) if b]
        else:
            chosen = [names[int(i)] for i in ckey]
        rows = iloc_rows(obj, rkey)
        for j, k in enumerate(chosen):
            obj._data[k] = set_positions(obj._data[k], rows, _part(value, j, len(chosen), rows))


class Loc(_Indexer):
    def __getitem__(self, key):
        return self._get(key, loc_rows)

    def __setitem__(self, key, value):
        from .series import Series

        obj = self.obj
        if isinstance(obj, Series):
            obj._col = setitem_rows(obj, key, value)
            return
        if isinstance(key, tuple) and len(key) == 2:
            rkey, ckey = key
            if ckey in obj._data:
                s = obj[ckey]
                obj._data[ckey] = setitem_rows(s, rkey, value)
                return
            raise NotImplementedError("ember.frame.DataFrame.loc: setting a new column by rows")
        raise NotImplementedError("ember.frame.DataFrame.loc: setting whole rows")


def setitem_rows(series, key, value) -> Column:
    """The column of ``series`` with the rows chosen by ``key`` (loc rules) set to ``value``."""
    return set_positions(series._col, loc_rows(series, key), value)


def _part(value, j, ncols, rows):
    """Column ``j``'s share of an iloc assignment's value."""
    if np.isscalar(value) or value is None or value is pd.NA:
        return value
    if hasattr(value, "_data"):  # a DataFrame: its j-th column
        return list(value._data.values())[j]
    if hasattr(value, "_col"):
        return value._col
    ndim = getattr(value, "ndim", None) or np.ndim(value)
    if ndim == 2:
        return value[:, j]
    if isinstance(rows, int) and ncols > 1:  # one row: one value per column
        v = value[j]
        return v.item() if hasattr(v, "item") else v
    return value


def set_positions(col, rows, value) -> Column:
    """``col`` with the rows at ``rows`` (an int, ("slice", start, stop) or an int64 array) set
    to ``value``: a scalar, None/NA (missing), or values (one per row) scattered into place."""
    from .missing import choose, scalar_column

    n = len(col)
    dev = col.device
    if isinstance(rows, int):
        rows = _em.asarray([rows], dtype=_em.int64, device=dev)
    elif isinstance(rows, tuple):
        rows = _em.arange(rows[1], rows[2], dtype=_em.int64, device=dev)
    m = rows.shape[0]
    hit = _em.zeros(n, dtype=_em.bool, device=dev)
    hit[rows] = _em.ones(m, dtype=_em.bool, device=dev)
    if value is None or value is pd.NA:
        return col.with_mask(col.valid() & ~hit)
    if np.isscalar(value) or isinstance(value, (pd.Timestamp, pd.Timedelta)):
        return choose(~hit, col, scalar_column(value, col))
    vals = value if isinstance(value, Column) else from_values(value, dev)
    if len(vals) != m:
        raise ValueError(
            f"ember.frame: setting {m} rows with {len(vals)} values (shapes must match)"
        )
    src = _em.full(n, -1, dtype=_em.int64, device=dev)
    src[rows] = _em.arange(m, dtype=_em.int64, device=dev)
    other = vals.take(_em.clip(src, 0, max(m - 1, 0))) if m else col
    return choose(~hit, col, other)
