"""pivot_table / crosstab (group-by on two keys, then one scatter per column label) and melt."""

from __future__ import annotations

import numpy as np

import ember as _em

from .column import Column
from .index import Index, RangeIndex
from .keys import factorize


def _spread(row_col, col_col, val_col, fill_value):
    """Rows keyed by row_col's distinct values, one column per distinct col_col value."""
    from .dataframe import DataFrame

    rcodes, rfirst = factorize(row_col)
    ccodes, cfirst = factorize(col_col)
    nrows = rfirst.shape[0]
    labels = col_col.take(cfirst).to_pandas().tolist()  # host read: the new column names
    cols = {}
    dev = row_col.device
    for j, lab in enumerate(labels):
        sel = _em.nonzero(ccodes == j)[0]
        pos = _em.full(nrows, -1, dtype=_em.int64, device=dev)
        pos[_em.take(rcodes, sel)] = sel
        c = val_col.take(pos, nullable=True)
        if val_col.kind == "num" and val_col.dtype.kind == "f":
            c = Column(
                c.dtype,
                _em.where(pos >= 0, c.data, np.nan),
                None if val_col.mask is None else c.mask,
            )
        if fill_value is not None:
            from .missing import fillna

            c = fillna(c, fill_value)
        cols[lab] = c
    return DataFrame._from_columns(cols, Index(row_col.take(rfirst)))


def pivot_table(df, values=None, index=None, columns=None, aggfunc="mean", fill_value=None):
    if columns is None:  # pandas' index-only table: a sorted groupby of the values
        if index is None:
            raise ValueError("ember.frame.pivot_table: give index= (and optionally columns=)")
        keys = index if isinstance(index, list) else [index]
        if values is None:
            vals = [k for k, c in df._data.items() if k not in keys and c.kind == "num"]
        else:
            vals = values if isinstance(values, list) else [values]
        g = df.groupby(keys if len(keys) > 1 else keys[0])
        out = g[vals].agg(aggfunc) if aggfunc != "size" else g.size().to_frame("size")
        return out if fill_value is None else out.fillna(fill_value)
    if index is None:
        raise NotImplementedError("ember.frame.pivot_table: columns= without index=")
    if isinstance(index, list) or isinstance(columns, list):
        if (isinstance(index, list) and len(index) > 1) or (
            isinstance(columns, list) and len(columns) > 1
        ):
            raise NotImplementedError("ember.frame.pivot_table: several index/columns keys")
        index = index[0] if isinstance(index, list) else index
        columns = columns[0] if isinstance(columns, list) else columns
    if values is None:
        values = [k for k in df._data if k not in (index, columns)]
        if len(values) != 1:
            raise NotImplementedError("ember.frame.pivot_table: several value columns")
        values = values[0]
    if isinstance(values, list):
        if len(values) != 1:
            raise NotImplementedError("ember.frame.pivot_table: several value columns")
        values = values[0]
    g = df.groupby([index, columns], as_index=False)
    agg = g[[values]].agg(aggfunc) if aggfunc != "size" else g.size()
    vname = values if aggfunc != "size" else "size"
    out = _spread(agg._data[index], agg._data[columns], agg._data[vname], fill_value)
    out.index.name = index
    import pandas as pd

    return out._with_colaxis(pd.Index([], name=columns))


def crosstab(
    index,
    columns,
    values=None,
    rownames=None,
    colnames=None,
    aggfunc=None,
    margins=False,
    margins_name="All",
    dropna=True,
    normalize=False,
):
    """pandas' ``crosstab`` of two Series: counts (or ``aggfunc`` of ``values``) per pair of
    values, rows and columns sorted; the axes are named by the Series (or rownames/colnames)."""
    from .dataframe import DataFrame

    if margins:
        raise NotImplementedError("ember.frame.crosstab: margins=True")
    if (values is None) != (aggfunc is None):
        raise ValueError(
            "values cannot be used without an aggfunc."
            if aggfunc is None
            else "aggfunc cannot be used without values."
        )
    rname = rownames[0] if rownames else index.name
    cname = colnames[0] if colnames else columns.name
    cols = {"__r": index._col, "__c": columns._col}
    if values is not None:
        cols["__v"] = values._col
    df = DataFrame._from_columns(cols, index.index)
    g = df.groupby(["__r", "__c"], as_index=False, dropna=dropna)
    if values is None:
        agg, vname, fill = g.size(), "size", 0
    else:
        agg, vname, fill = g[["__v"]].agg(aggfunc), "__v", None
    out = _spread(agg._data["__r"], agg._data["__c"], agg._data[vname], fill)
    out.index.name = rname
    if normalize:
        tot = float(sum(out[k].sum() for k in out._data))
        out = out / tot
    import pandas as pd

    return out._with_colaxis(pd.Index([], name=cname))


def melt(df, id_vars=None, value_vars=None, var_name=None, value_name="value"):
    from .dataframe import DataFrame
    from .reshape import concat_columns

    ids = [] if id_vars is None else ([id_vars] if isinstance(id_vars, str) else list(id_vars))
    vals = (
        [k for k in df._data if k not in ids]
        if value_vars is None
        else ([value_vars] if isinstance(value_vars, str) else list(value_vars))
    )
    n = len(df)
    dev = df.device
    cols = {}
    for k in ids:
        cols[k] = concat_columns([df._data[k]] * len(vals)) if vals else df._data[k].slice(0, 0)
    var = concat_columns([Column.from_scalar(str(v), n, dev) for v in vals])
    cols[var_name or "variable"] = var
    cols[value_name] = concat_columns([df._data[v] for v in vals])
    return DataFrame._from_columns(cols, RangeIndex(n * len(vals), device=dev))
