"""DataFrame: named Columns sharing one Index, all on one ember device."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pyarrow as pa

import ember as _em

from .column import Column, from_arrow, from_values
from .frame_base import FrameBase, default_device
from .frame_methods import FrameMethods
from .frame_more import FrameMore
from .index import Index, RangeIndex, as_index


class DataFrame(FrameMore, FrameMethods, FrameBase):
    """A table of device columns (``pandas.DataFrame``'s API)."""

    def __init__(self, data=None, index=None, columns=None, dtype=None, copy=None, device=None):
        del copy
        if isinstance(data, DataFrame):
            dev = str(device) if device is not None else data.device
            cols = {k: c.to(dev) for k, c in data._data.items()}
            idx = data.index.to(dev)
        else:
            dev = str(device) if device is not None else default_device(data)
            cols, idx = _build(data, index, columns, dev)
        if dtype is not None:
            from .cast import astype

            cols = {k: astype(c, dtype, "DataFrame") for k, c in cols.items()}
        if columns is not None and isinstance(data, (dict, DataFrame)):
            cols = {
                k: cols[k] if k in cols else Column.full_null(np.dtype("float64"), len(idx), dev)
                for k in columns
            }
        self._init(cols, idx)

    def _init(self, cols, index):
        object.__setattr__(self, "_data", dict(cols))
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "_devname", index.device)

    @classmethod
    def _from_columns(cls, cols, index=None):
        df = cls.__new__(cls)
        if index is None:
            first = next(iter(cols.values()), None)
            n = len(first) if first is not None else 0
            dev = first.device if first is not None else default_device()
            index = RangeIndex(n, device=dev)
        df._init(cols, index)
        return df

    # ---- facts -------------------------------------------------------------------------------
    @property
    def columns(self):
        """The column labels (host metadata). Tuple labels give a MultiIndex; the axis names and
        the empty axis' dtype are kept where a method recorded them (``_colaxis``)."""
        keys = list(self._data.keys())
        proto = self.__dict__.get("_colaxis")
        if not keys and proto is not None:
            return proto[:0]
        out = pd.Index(keys)
        if proto is not None and proto.nlevels == out.nlevels:
            out = out.set_names(proto.names)
        return out

    @columns.setter
    def columns(self, names):
        names = list(names)
        if len(names) != len(self._data):
            raise ValueError(
                f"ember.frame.DataFrame.columns: Length mismatch: Expected axis "
                f"has {len(self._data)} elements, new values have {len(names)}"
            )
        check_unique_labels(names, "DataFrame.columns")
        object.__setattr__(self, "_data", dict(zip(names, self._data.values(), strict=True)))
        object.__setattr__(self, "_colaxis", None)

    def _with_colaxis(self, proto):
        """Record the column axis' names/dtype (a pandas Index, metadata) and return self."""
        if proto is not None and not isinstance(proto, pd.Index):
            proto = pd.Index(proto)
        object.__setattr__(self, "_colaxis", None if proto is None else proto[:0])
        return self

    @property
    def dtypes(self):
        return pd.Series([c.dtype for c in self._data.values()], index=self.columns, dtype=object)

    def __len__(self):
        return len(self.index)

    @property
    def shape(self):
        return (len(self), len(self._data))

    @property
    def size(self):
        return len(self) * len(self._data)

    @property
    def ndim(self):
        return 2

    @property
    def empty(self):
        return len(self) == 0 or len(self._data) == 0

    @property
    def device(self):
        return self._devname

    def to(self, device):
        device = str(device)
        return DataFrame._from_columns(
            {k: c.to(device) for k, c in self._data.items()}, self.index.to(device)
        )

    def keys(self):
        return self.columns

    def items(self):
        for k in self._data:
            yield k, self[k]

    def __iter__(self):
        return iter(self._data.keys())

    def __contains__(self, key):
        return key in self._data

    # ---- conversions -------------------------------------------------------------------------
    def to_pandas(self, nullable=False):
        data = {k: pd.Series(c.to_pandas(nullable)) for k, c in self._data.items()}
        out = pd.DataFrame(data) if data else pd.DataFrame()
        out.index = self.index.to_pandas()
        if not data:
            out = pd.DataFrame(index=self.index.to_pandas(), columns=self.columns)
        elif self.__dict__.get("_colaxis") is not None:
            out.columns = self.columns
        return out

    def to_arrow(self, preserve_index=None):
        arrays = [c.to_arrow() for c in self._data.values()]
        names = [str(k) for k in self._data]
        if preserve_index or (preserve_index is None and not isinstance(self.index, RangeIndex)):
            arrays.append(self.index._col.to_arrow())
            names.append(self.index.name if self.index.name is not None else "__index_level_0__")
        return pa.table(arrays, names=names)

    def to_numpy(self, dtype=None, na_value=None):
        kw = {} if na_value is None else {"na_value": na_value}
        return self.to_pandas().to_numpy(dtype=dtype, **kw)

    @property
    def values(self):
        """A 2-D ember array on the frame's device (numeric columns only, nulls as NaN)."""
        cols = list(self._data.values())
        for c in cols:
            if c.kind != "num":
                raise TypeError(
                    f"ember.frame.DataFrame.values: column of dtype {c.dtype} has "
                    "no device array; use to_numpy() (a host copy)"
                )
        if not cols:
            return _em.zeros((len(self), 0), device=self.device)
        dt = np.result_type(*[c.dtype for c in cols])
        if dt.kind in "iub" and any(c.mask is not None for c in cols):
            dt = np.dtype("float64")
        arrs = []
        for c in cols:
            a = c.data.astype(dt)
            if c.mask is not None and dt.kind == "f":
                a = _em.where(c.mask, a, np.nan)
            arrs.append(a)
        return _em.stack(arrs, axis=1)

    def __repr__(self):
        return repr(self.to_pandas())  # display: an explicit host copy

    def _repr_html_(self):
        return self.to_pandas()._repr_html_()

    def info(self, buf=None):
        import io as _io

        out = _io.StringIO()
        print(f"<class '{type(self).__module__}.{type(self).__name__}'>", file=out)
        idx = self.index
        if isinstance(idx, RangeIndex):
            print(f"RangeIndex: {len(idx)} entries, {idx.start} to {idx.stop - 1}", file=out)
        else:
            print(f"Index: {len(idx)} entries", file=out)
        print(f"Data columns (total {len(self._data)} columns):", file=out)
        w = max([len(str(k)) for k in self._data] + [6])
        print(f" #   {'Column':<{w}}  Non-Null Count  Dtype", file=out)
        print(f"---  {'-' * w}  --------------  -----", file=out)
        for i, (k, c) in enumerate(self._data.items()):
            nn = len(c) - c.null_count()
            print(f" {i:<3} {str(k):<{w}}  {f'{nn} non-null':<14}  {c.dtype}", file=out)
        counts = pd.Series([str(c.dtype) for c in self._data.values()]).value_counts(sort=False)
        print("dtypes: " + ", ".join(f"{k}({v})" for k, v in counts.items()), file=out)
        print(f"device: {self.device}", file=out)
        text = out.getvalue()
        if buf is None:
            print(text, end="")
        else:
            buf.write(text)

    # ---- selection ---------------------------------------------------------------------------
    def _column(self, key):
        from .series import Series

        if key not in self._data:
            # MultiIndex columns (tuple labels): the first level selects a sub-frame labelled by
            # the remaining levels, as pandas
            sub = {k[1:] if len(k) > 2 else k[1]: c for k, c in self._data.items()
                   if isinstance(k, tuple) and len(k) > 1 and k[0] == key}  # fmt: skip
            if sub:
                return DataFrame._from_columns(sub, self.index)
            raise KeyError(key)
        return Series._from_column(self._data[key], self.index, key)

    def __getitem__(self, key):
        from .series import Series

        if isinstance(key, slice):
            return self.iloc[key] if not isinstance(key.start, str) else self.loc[key]
        if isinstance(key, (Series, np.ndarray, _em.ndarray)) or (
            isinstance(key, list) and key and isinstance(key[0], (bool, np.bool_))
        ):
            from .indexing import _bool_positions

            return self._take(_bool_positions(self, key, "DataFrame.__getitem__"))
        if isinstance(key, (list, tuple, pd.Index)) and not (
            isinstance(key, tuple) and key in self._data
        ):
            missing = [k for k in key if k not in self._data]
            if missing:
                raise KeyError(
                    f"None of [{missing}] are in the [columns]"
                    if len(missing) == len(key)
                    else f"{missing} not in index"
                )
            out = DataFrame._from_columns({k: self._data[k] for k in key}, self.index)
            return out._with_colaxis(self.columns)
        return self._column(key)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        data = self.__dict__.get("_data", {})
        if name in data:
            return self._column(name)
        from .frame_base import unsupported

        raise unsupported("DataFrame", name)

    def __setattr__(self, name, value):
        if name in ("index",):
            object.__setattr__(self, name, value)
        elif name == "columns":
            DataFrame.columns.fset(self, value)
        elif name in self.__dict__.get("_data", {}):
            self[name] = value
        else:
            object.__setattr__(self, name, value)

    def __setitem__(self, key, value):
        if isinstance(key, DataFrame):  # df[bool_frame] = v: v where the mask is True
            out = self.mask(key, value)
            self._data.update(out._data)
            return None
        if isinstance(key, (list, pd.Index)) or (isinstance(key, tuple) and key not in self._data):
            return self._set_columns(list(key), value)
        self._data[key] = self._as_column(value, key)

    def _set_columns(self, keys, value):
        """``df[["a", "b"]] = value``: a DataFrame's columns by position (rows aligned as a
        Series' are), one scalar for all, or a 2-D array's columns."""
        if isinstance(value, DataFrame):
            if len(value._data) != len(keys):
                raise ValueError("Columns must be same length as key")
            cols = [value[c] for c in value._data]
        elif np.isscalar(value) or value is None:
            cols = [value] * len(keys)
        else:
            arr = value if isinstance(value, _em.ndarray) else np.asarray(value)
            if arr.ndim != 2 or arr.shape[1] != len(keys):
                raise ValueError(
                    f"ember.frame.DataFrame.__setitem__: {len(keys)} columns need a 2-D value "
                    f"with {len(keys)} columns, got shape {tuple(arr.shape)}"
                )
            cols = [arr[:, j] for j in range(len(keys))]
        for k, v in zip(keys, cols, strict=True):
            self[k] = v

    def _as_column(self, value, key=None):
        from .series import Series

        n = len(self)
        if isinstance(value, Series):
            value = value.to(self.device)
            if len(value) != n or not value.index.equals(self.index):
                from .align import reindex_column

                return reindex_column(value, self.index, "DataFrame.__setitem__")
            return value._col
        if np.isscalar(value) or value is None:
            if value is None:
                return Column.full_null(np.dtype("float64"), n, self.device)
            return Column.from_scalar(value, n, self.device)
        col = from_values(value, self.device)
        if len(col) != n:
            raise ValueError(
                f"ember.frame.DataFrame: Length of values ({len(col)}) does not "
                f"match length of index ({n})"
            )
        return col

    def _select_columns(self, ckey, positional=False):
        names = list(self._data)
        if isinstance(ckey, slice):
            if positional or not (isinstance(ckey.start, str) or isinstance(ckey.stop, str)):
                chosen = names[ckey] if positional or ckey == slice(None) else names[ckey]
            else:
                i = 0 if ckey.start is None else names.index(ckey.start)
                j = len(names) if ckey.stop is None else names.index(ckey.stop) + 1
                chosen = names[i:j]
            return DataFrame._from_columns({k: self._data[k] for k in chosen}, self.index)
        if isinstance(ckey, (list, tuple, np.ndarray, pd.Index)):
            if len(ckey) and isinstance(ckey[0], (bool, np.bool_)):
                chosen = [k for k, b in zip(names, ckey, strict=False) if b]
            elif positional:
                chosen = [names[i] for i in ckey]
            else:
                chosen = list(ckey)
                for k in chosen:
                    if k not in self._data:
                        raise KeyError(k)
            return DataFrame._from_columns({k: self._data[k] for k in chosen}, self.index)
        if positional:
            return self._column(names[ckey])
        return self._column(ckey)

    def _take(self, idx):
        return DataFrame._from_columns(
            {k: c.take(idx) for k, c in self._data.items()}, self.index.take(idx)
        )

    def _slice(self, start, stop):
        return DataFrame._from_columns(
            {k: c.slice(start, stop) for k, c in self._data.items()}, self.index.slice(start, stop)
        )

    def _row(self, pos):
        """One row as a Series (host values: the row mixes dtypes, as pandas' object row)."""
        from .series import Series

        one = self._slice(pos, pos + 1).to_pandas()
        row = one.iloc[0]
        return Series(row, device=self.device) if row.dtype != object else row

    def copy(self, deep=True):
        out = DataFrame._from_columns(dict(self._data), self.index)
        return out._with_colaxis(self.__dict__.get("_colaxis"))

    def assign(self, **kwargs):
        out = self.copy()
        for k, v in kwargs.items():
            out[k] = v(out) if callable(v) else v
        return out

    def insert(self, loc, column, value, allow_duplicates=False):
        if column in self._data and not allow_duplicates:
            raise ValueError(
                f"ember.frame.DataFrame.insert: cannot insert {column}, already exists"
            )
        items = list(self._data.items())
        items.insert(loc, (column, self._as_column(value, column)))
        object.__setattr__(self, "_data", dict(items))

    def pop(self, item):
        s = self[item]
        del self._data[item]
        return s

    def __delitem__(self, key):
        del self._data[key]

    def drop(self, labels=None, *, axis=0, index=None, columns=None, errors="raise"):
        if labels is not None:
            if axis in (1, "columns"):
                columns = labels
            else:
                index = labels
        out = self
        if columns is not None:
            cols = [columns] if not isinstance(columns, (list, tuple, pd.Index)) else columns
            missing = [c for c in cols if c not in self._data]
            if missing and errors == "raise":
                raise KeyError(f"{missing} not found in axis")
            out = DataFrame._from_columns(
                {k: c for k, c in self._data.items() if k not in cols}, self.index
            )
        if index is not None:
            from .indexing import loc_rows

            labs = index if isinstance(index, (list, tuple)) else [index]
            pos = loc_rows(out, list(labs))
            keep = _em.ones(len(out), dtype=_em.bool, device=out.device)
            keep[pos] = _em.zeros(pos.shape[0], dtype=_em.bool, device=out.device)
            out = out._take(_em.nonzero(keep)[0])
        return out

    def rename(self, mapper=None, *, index=None, columns=None, axis=None, errors="ignore"):
        if mapper is not None:
            if axis in (0, "index"):
                index = mapper
            else:
                columns = mapper
        if index is not None:
            raise NotImplementedError("ember.frame.DataFrame.rename: relabelling the index")
        if columns is None:
            return self.copy()
        fn = columns if callable(columns) else (lambda k: columns.get(k, k))
        if errors == "raise" and isinstance(columns, dict):
            missing = [k for k in columns if k not in self._data]
            if missing:
                raise KeyError(f"{missing} not found in axis")
        names = [fn(k) for k in self._data]
        check_unique_labels(names, "DataFrame.rename")
        cols = dict(zip(names, self._data.values(), strict=True))
        return DataFrame._from_columns(cols, self.index)

    def set_index(self, keys, drop=True, append=False):
        if append:
            raise NotImplementedError("ember.frame.DataFrame.set_index: append=True (MultiIndex)")
        if isinstance(keys, list):
            if len(keys) > 1 and all(isinstance(k, str) or np.isscalar(k) for k in keys):
                from .index import MultiIndex

                missing = [k for k in keys if k not in self._data]
                if missing:
                    raise KeyError(f"None of {missing} are in the columns")
                idx = MultiIndex([self._data[k] for k in keys], list(keys))
                cols = {k: c for k, c in self._data.items() if not (drop and k in keys)}
                return DataFrame._from_columns(cols, idx)._with_colaxis(self.columns)
            if len(keys) != 1:
                raise NotImplementedError(
                    "ember.frame.DataFrame.set_index: several keys that are not column labels"
                )
            keys = keys[0]
        if isinstance(keys, str) or np.isscalar(keys):
            if keys not in self._data:
                raise KeyError(f"None of ['{keys}'] are in the columns")
            idx = Index(self._data[keys], name=keys)
            cols = {k: c for k, c in self._data.items() if not (drop and k == keys)}
            return DataFrame._from_columns(cols, idx)._with_colaxis(self.columns)
        else:
            idx = as_index(keys._col if hasattr(keys, "_col") else keys, self.device)
            if hasattr(keys, "name"):
                idx.name = keys.name
            cols = dict(self._data)
        return DataFrame._from_columns(cols, idx)

    def reset_index(self, drop=False, names=None):
        n = len(self)
        new = RangeIndex(n, device=self.device)
        if drop:
            return DataFrame._from_columns(dict(self._data), new)
        from .index import MultiIndex

        if isinstance(self.index, MultiIndex):
            cols = {
                (nm if nm is not None else f"level_{i}"): c
                for i, (nm, c) in enumerate(
                    zip(self.index.names, self.index._columns, strict=False)
                )
            }
        else:
            name = names or self.index.name
            if name is None:
                name = "index" if "index" not in self._data else "level_0"
            cols = {name: self.index._col}
        cols.update(self._data)
        return DataFrame._from_columns(cols, new)


def check_unique_labels(names, func):
    """ember.frame's columns are a mapping: a label may name one column only (as cuDF's)."""
    seen, dup = set(), []
    for k in names:
        try:
            if k in seen and k not in dup:
                dup.append(k)
            seen.add(k)
        except TypeError:
            continue
    if dup:
        raise ValueError(
            f"ember.frame.{func}: duplicate column labels {dup}; ember.frame (like cuDF) keeps "
            "one column per label: rename them first"
        )


def _build(data, index, columns, dev):
    from .series import Series

    if data is None:
        data = {}
    if isinstance(data, pd.DataFrame):
        check_unique_labels(list(data.columns), "DataFrame")
        cols = {k: from_values(data[k], dev) for k in data.columns}
        return cols, as_index(data.index if index is None else index, dev)
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        cols = {n: from_arrow(data.column(n), dev) for n in data.column_names}
        return cols, as_index(index, dev, data.num_rows)
    if isinstance(data, (np.ndarray, _em.ndarray)) and data.ndim == 2:
        k = data.shape[1]
        names = list(columns) if columns is not None else list(range(k))
        if len(names) != k:
            raise ValueError(
                f"ember.frame.DataFrame: Shape of passed values is {data.shape}, "
                f"indices imply {(data.shape[0], len(names))}"
            )
        arr = data if isinstance(data, _em.ndarray) else _em.asarray(data, device=dev)
        cols = {nm: from_values(arr[:, j], dev) for j, nm in enumerate(names)}
        return cols, as_index(index, dev, data.shape[0])
    if isinstance(data, list) and data and isinstance(data[0], dict):
        return _build(pd.DataFrame(data), index, columns, dev)
    if isinstance(data, list) and data and isinstance(data[0], (list, tuple)):
        return _build(pd.DataFrame(data, columns=columns), index, None, dev)
    if isinstance(data, (list, tuple)) and data and all(isinstance(v, Series) for v in data):
        # one row per Series (pandas' rule): the rows stacked on their device
        from .reshape import concat

        rows = concat([v.to_frame().T for v in data], axis=0)
        names = [v.name for v in data]
        if index is None:
            index = names if all(nm is not None for nm in names) else None
        rows = rows.reset_index(drop=True)
        cols = {k: rows[k]._col for k in rows.columns}
        if columns is not None:
            cols = {k: cols[k] for k in columns}
        return cols, as_index(index, dev, len(data))
    if isinstance(data, (list, tuple)) and not any(
        isinstance(v, (Series, _em.ndarray)) for v in data
    ):  # host values (scalars: one column), as pandas builds them
        return _build(pd.DataFrame(list(data), columns=columns), index, None, dev)
    if not isinstance(data, dict):
        raise TypeError(
            f"ember.frame.DataFrame: data of type {type(data).__name__} is not "
            "supported (a dict, 2-D array, list of dicts, pandas or Arrow table)"
        )
    n = None
    idx = None
    for v in data.values():
        if isinstance(v, Series):
            idx = v.index if idx is None else idx
            n = len(v)
            break
        if not (np.isscalar(v) or v is None):
            n = len(v)
            break
    if n is None:
        n = len(index) if index is not None else (1 if data else 0)
        if data and index is None:
            raise ValueError(
                "ember.frame.DataFrame: If using all scalar values, you must pass an index"
            )
    series = [v.to(dev) for v in data.values() if isinstance(v, Series)]
    if index is not None and series:
        n = len(as_index(index, dev))
    aligned = {}
    if len(series) > 1 and index is None:
        from .align import align_series

        idx, cols_aligned = align_series(series, "DataFrame")
        n = len(idx)
        aligned = {id(s): c for s, c in zip(series, cols_aligned, strict=False)}
    cols = {}
    si = iter(series)
    for k, v in data.items():
        if isinstance(v, Series):
            s = next(si)
            if index is not None:
                from .align import reindex_column

                cols[k] = reindex_column(s, as_index(index, dev, n), "DataFrame")
                continue
            col = aligned.get(id(s), s._col)
            if len(col) != n:
                raise ValueError("ember.frame.DataFrame: All arrays must be of the same length")
            cols[k] = col
        elif np.isscalar(v) or v is None:
            cols[k] = (
                Column.from_scalar(v, n, dev)
                if v is not None
                else Column.full_null(np.dtype("float64"), n, dev)
            )
        else:
            c = from_values(v, dev)
            if len(c) != n:
                raise ValueError("ember.frame.DataFrame: All arrays must be of the same length")
            cols[k] = c
    if index is not None:
        idx = as_index(index, dev, n)
        if len(idx) != n:
            raise ValueError(
                f"ember.frame.DataFrame: Length of values ({n}) does not match "
                f"length of index ({len(idx)})"
            )
    elif idx is None:
        idx = RangeIndex(n, device=dev)
    return cols, idx.to(dev)


DataFrame._add_operators()


def _with_inplace(fn):
    """`fn` also taking pandas' ``inplace=True`` (this frame becomes the result; None back)."""

    @functools.wraps(fn)
    def method(self, *args, inplace=False, **kwargs):
        return self._inplace(fn(self, *args, **kwargs), inplace)

    return method


for _name in ("drop", "rename", "set_index", "reset_index", "where", "mask", "replace", "clip",
              "sort_index"):  # fmt: skip
    setattr(DataFrame, _name, _with_inplace(getattr(DataFrame, _name)))
del _name
