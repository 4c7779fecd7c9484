"""``DataFrame.apply(func, axis=1)`` as array code: a function of a row's named fields made of
elementwise operations (``lambda r: r.a * 2 + np.sqrt(r["b"])``) is called ONCE with a row
stand-in whose fields are the whole columns (ember arrays on the frame's device, in the dtype
pandas' row would have: the columns' common dtype, nulls as NaN), so it runs as a few device
kernels instead of one Python call per row.

Anything else the function does with its row (a truth test on a value, ``row.sum()``,
``row.index``, iteration, ``math.sqrt``, a non-array result) raises inside that one call and the
caller falls back to pandas' row-by-row semantics. As cuDF's compiled ``apply``, a vectorized
function runs once, so a side effect it makes (appending to a list) happens once; functions that
assign a global or closed-over name or an attribute/item are never tried that way."""

from __future__ import annotations

import dis

import numpy as np

import ember as _em

from . import dtypes as _dt
from .column import Column


class _NotVectorizable(Exception):
    pass


class _Row:
    """The stand-in row: ``row.a`` / ``row["a"]`` give column ``a``; nothing else is known."""

    __slots__ = ("_cols", "_names")

    def __init__(self, cols):
        object.__setattr__(self, "_cols", cols)

    def __getitem__(self, key):
        try:
            return self._cols[key]
        except (KeyError, TypeError):
            raise _NotVectorizable(f"row[{key!r}]") from None

    def __getattr__(self, name):
        cols = object.__getattribute__(self, "_cols")
        if name in cols:
            return cols[name]
        raise _NotVectorizable(f"row.{name}")

    def __setattr__(self, name, value):
        raise _NotVectorizable("writing into the row")

    def __len__(self):
        raise _NotVectorizable("len(row)")

    def __iter__(self):
        raise _NotVectorizable("iterating over the row")

    def __bool__(self):
        raise _NotVectorizable("a truth test of the row")

    def __array__(self, *args, **kwargs):
        raise _NotVectorizable("the row as an array")


def _writes_outside(func):
    code = getattr(func, "__code__", None)
    if code is None:
        return True
    for ins in dis.get_instructions(code):
        if ins.opname in ("STORE_GLOBAL", "STORE_DEREF", "DELETE_GLOBAL", "DELETE_DEREF"):
            return True
        if ins.opname in ("STORE_ATTR", "STORE_SUBSCR", "DELETE_SUBSCR"):
            return True  # could be writing into some object outside the call
    return False


def try_rows(df, func, args, kwargs):
    """The result column of ``func`` over all rows at once, or None (then pandas' row loop)."""
    if not callable(func) or _writes_outside(func):
        return None
    cols = list(df._data.items())
    if not cols or any(c.kind != "num" for _, c in cols) or len(df) == 0:
        return None
    common = np.result_type(*[np.dtype(c.dtype) for _, c in cols])
    if any(c.mask is not None for _, c in cols) and common.kind in "iub":
        common = np.dtype("float64")  # a null in an integer row reads NaN in pandas' row
    fields = {}
    for name, c in cols:
        data = c.data.astype(common, copy=False)
        if c.mask is not None:
            data = _em.where(c.mask, data, np.nan)
        fields[name] = data
    n = len(df)
    try:
        with _em.errstate(all="ignore"):
            out = func(_Row(fields), *args, **kwargs)
    except Exception:  # any use the stand-in cannot answer: pandas' row loop decides
        return None
    if isinstance(out, (bool, int, float, np.number, np.bool_)):
        out = _em.full(n, out, device=df.device)
    if not isinstance(out, _em.ndarray) or out.shape != (n,) or out.dtype.kind not in "biuf":
        return None
    return Column(_dt.normalize(np.dtype(out.dtype)), out)
