"""concat (axis 0 and 1) of frames and columns, and pivot_table/crosstab on group-by codes."""

from __future__ import annotations

import numpy as np

import ember as _em

from . import dtypes as _dt
from .column import Column


def concat_columns(cols) -> Column:
    cols = [c for c in cols]
    # text beside empty non-text pieces (an empty float label axis from a meta): the empty
    # pieces add no rows, so they cannot make the combination impossible
    if len({c.kind == "str" for c in cols}) > 1:
        full = [c for c in cols if len(c)]
        if full and len({c.kind == "str" for c in full}) == 1:
            cols = full
    dev = cols[0].device
    cols = [c.to(dev) for c in cols]
    kinds = {c.kind for c in cols}
    anymask = any(c.mask is not None for c in cols)
    mask = None
    if anymask:
        mask = _em.concatenate(
            [
                c.mask if c.mask is not None else _em.ones(len(c), dtype=_em.bool, device=dev)
                for c in cols
            ]
        )
    if kinds == {"cat"} and all(c.dtype == cols[0].dtype for c in cols):
        data = _em.concatenate([c.data for c in cols])
        return Column(cols[0].dtype, data, mask, categories=cols[0].categories)
    if "cat" in kinds:
        from .cast import astype

        cols = [astype(c, c.categories.dtype) if c.kind == "cat" else c for c in cols]
        return concat_columns(cols)
    if kinds == {"str"}:
        parts = []
        shift = 0
        for i, c in enumerate(cols):
            o = c.offsets if i == 0 else c.offsets[1:]
            parts.append(o + shift if shift else o)
            shift += c.chars.shape[0]
        offsets = _em.concatenate(parts)
        chars = _em.concatenate([c.chars for c in cols])
        return Column(_dt.STRING, offsets=offsets, chars=chars, mask=mask)
    if "str" in kinds:
        raise TypeError(
            "ember.frame.concat: cannot combine string and non-string columns "
            f"({', '.join(sorted(str(c.dtype) for c in cols))})"
        )
    if "time" in kinds:
        dts = {c.dtype for c in cols}
        if len(dts) != 1:
            raise TypeError(
                f"ember.frame.concat: cannot combine time dtypes {sorted(map(str, dts))}"
            )
        return Column(cols[0].dtype, _em.concatenate([c.data for c in cols]), mask)
    dtype = np.result_type(*[c.dtype for c in cols])
    data = _em.concatenate([c.data.astype(dtype) for c in cols])
    return Column(dtype, data, mask)


def concat(objs, axis=0, join="outer", ignore_index=False, keys=None, sort=False):
    """pandas.concat for Series and DataFrames (axis 0: rows, axis 1: columns)."""
    from .dataframe import DataFrame
    from .index import RangeIndex, concat_indexes
    from .series import Series

    if isinstance(objs, dict):
        keys = list(objs) if keys is None else keys
        objs = [objs[k] for k in keys]
    objs = list(objs)
    if keys is not None:
        keys = list(keys)
        if len(keys) != len(objs):
            raise ValueError(
                f"ember.frame.concat: {len(keys)} keys for {len(objs)} objects to concatenate"
            )
        keys = [k for k, o in zip(keys, objs, strict=True) if o is not None]
    objs = [o for o in objs if o is not None]
    if not objs:
        raise ValueError("ember.frame.concat: No objects to concatenate")
    for o in objs:
        if not isinstance(o, (Series, DataFrame)):
            raise TypeError(
                "ember.frame.concat: cannot concatenate object of type "
                f"'{type(o).__name__}'; only Series and DataFrame objs are valid"
            )
    if join not in ("inner", "outer"):
        raise ValueError(f"ember.frame.concat: join must be 'inner' or 'outer', got {join!r}")
    if axis in (1, "columns"):
        from .reshape_more import concat_columns_axis

        return concat_columns_axis(objs, join, ignore_index, keys, sort)
    if keys is not None:
        raise NotImplementedError(
            "ember.frame.concat: keys= along the rows (a hierarchical row index); "
            "keys= is supported with axis=1"
        )
    if axis not in (0, "index"):
        raise ValueError(f"ember.frame.concat: No axis named {axis!r}")
    if all(isinstance(o, Series) for o in objs):
        col = concat_columns([o._col for o in objs])
        names = {o.name for o in objs}
        name = objs[0].name if len(names) == 1 else None
        idx = (
            RangeIndex(len(col), device=col.device)
            if ignore_index
            else concat_indexes([o.index for o in objs])
        )
        return Series._from_column(col, idx, name)
    frames = [o.to_frame() if isinstance(o, Series) else o for o in objs]
    names = []
    for f in frames:
        for k in f._data:
            if k not in names:
                names.append(k)
    if join == "inner":
        names = [k for k in names if all(k in f._data for f in frames)]
    dev = frames[0].device
    data = {}
    for k in names:
        have = [f._data[k] for f in frames if k in f._data]
        proto = have[0].dtype
        if any(k not in f._data for f in frames) and _dt.is_integer(proto):
            proto = np.dtype("float64") if not _dt.is_bool(proto) else proto
        parts = [
            f._data[k] if k in f._data else Column.full_null(proto, len(f), dev) for f in frames
        ]
        data[k] = concat_columns(parts)
    total = sum(len(f) for f in frames)
    idx = (
        RangeIndex(total, device=dev) if ignore_index else concat_indexes([f.index for f in frames])
    )
    return DataFrame._from_columns(data, idx)
