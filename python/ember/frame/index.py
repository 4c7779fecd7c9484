"""Index objects: RangeIndex (arithmetic, nothing stored) and Index (a Column of labels)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from .column import Column, from_values


class Index:
    """Row labels held as a device column (what set_index, filters and group-by produce).
    ``freq`` (host metadata, as a DatetimeIndex's) is kept by slices and given to pandas."""

    freq = None

    def __init__(self, data, name=None, device=None, dtype=None):
        if isinstance(data, Column):
            self._column = data
        else:
            dev = device or _em.get_default_device()
            dev = str(dev)
            if isinstance(data, Index):
                self._column = data._col
                name = name if name is not None else data.name
            else:
                self._column = from_values(data, dev, dtype)
        self.name = name

    # shared API
    @property
    def _col(self) -> Column:
        return self._column

    def __len__(self):
        return len(self._col)

    @property
    def size(self):
        return len(self)

    @property
    def shape(self):
        return (len(self),)

    @property
    def dtype(self):
        return self._col.dtype

    @property
    def device(self):
        return self._col.device

    def to(self, device):
        out = Index(self._col.to(device), self.name)
        out.freq = self.freq
        return out

    def take(self, idx):
        return Index(self._col.take(idx), self.name)

    def slice(self, start, stop):
        out = Index(self._col.slice(start, stop), self.name)
        out.freq = self.freq
        return out

    def to_pandas(self):
        out = pd.Index(self._col.to_pandas(), name=self.name)
        if self.freq is not None and isinstance(out, pd.DatetimeIndex):
            out = pd.DatetimeIndex(out, freq=self.freq)
        return out

    def to_numpy(self):
        return self.to_pandas().to_numpy()

    @property
    def values(self):
        return self.to_numpy()

    def tolist(self):
        return self.to_pandas().tolist()

    def __iter__(self):
        return iter(self.tolist())

    @property
    def unit(self):
        """The time unit of a datetime/timedelta index ("ns", "us", "ms", "s"), as pandas'."""
        from . import dtypes as _dt

        col = self.__dict__.get("_column")
        if col is None or col.kind != "time":
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'unit'")
        return _dt.time_unit(col.dtype)

    def isin(self, values):
        """A bool array: which labels are among `values` (pandas' ``Index.isin``)."""
        from .series import Series

        s = Series._from_column(self._col, RangeIndex(0, len(self), device=self._col.device))
        return s.isin(values)._col.data

    def get_slice_bound(self, label, side):
        """pandas' ``Index.get_slice_bound``: the position a label slice starts at (side "left")
        or stops before ("right"); a label the index lacks needs a sorted index."""
        if side not in ("left", "right"):
            raise ValueError(
                f"Invalid value for side kwarg, must be either 'left' or 'right': {side}"
            )
        from .indexing import _bound

        return _bound(self, label, side == "left")

    def slice_locs(self, start=None, end=None, step=None):
        """pandas' ``Index.slice_locs`` (step 1): (start position, stop position)."""
        if step not in (None, 1):
            raise NotImplementedError("ember.frame.Index.slice_locs: a step")
        lo = 0 if start is None else self.get_slice_bound(start, "left")
        hi = len(self) if end is None else self.get_slice_bound(end, "right")
        return lo, max(hi, lo)

    def equals(self, other) -> bool:
        if not isinstance(other, Index) or len(self) != len(other):
            return False
        if isinstance(self, RangeIndex) and isinstance(other, RangeIndex):
            return len(self) == 0 or (self.start, self.step) == (other.start, other.step)
        a, b = self._col, other._col
        if a.kind != b.kind or a.kind == "str":
            from .keys import joint_codes

            if a.kind != b.kind:
                return False
            lc, rc, _ = joint_codes([a], [b])
            return bool(_em.all(lc == rc)) if len(a) else True
        if len(a) == 0:
            return True
        va, vb = a.valid(), b.valid()
        same = (a.data == b.data) | (~va & ~vb)
        return bool(_em.all(same & (va == vb)))

    @property
    def names(self):
        return [self.name]

    @names.setter
    def names(self, value):
        (self.name,) = value

    @property
    def nlevels(self):
        return 1

    def isna(self):
        """bool ember array, True where the label is missing."""
        return self._col.isnull()

    def notna(self):
        return ~self.isna()

    def _sorted_codes(self):
        """Dense codes in label order (None when a label is missing: not monotonic)."""
        col = self._col
        if col.has_nulls():
            return None
        if col.kind in ("num", "time"):
            return col.data
        from .keys import group_codes

        return group_codes([col], dropna=False, need_first=False)[0]

    def _monotonic(self, increasing):
        if len(self) < 2:
            return True
        c = self._sorted_codes()
        if c is None:
            return False
        ok = c[1:] >= c[:-1] if increasing else c[1:] <= c[:-1]
        return bool(_em.all(ok))  # one host read

    @property
    def is_monotonic_increasing(self):
        return self._monotonic(True)

    @property
    def is_monotonic_decreasing(self):
        return self._monotonic(False)

    @property
    def is_unique(self):
        from .keys import group_codes

        return len(self) < 2 or group_codes([self._col], dropna=False)[2] == len(self)

    def astype(self, dtype, copy=True):
        from .cast import astype

        return Index(astype(self._col, dtype, "Index.astype"), self.name)

    def to_frame(self, index=True, name=None):
        """pandas' ``Index.to_frame``: a one-column DataFrame of the labels."""
        from .dataframe import DataFrame

        if name is None:
            name = self.name if self.name is not None else 0
        return DataFrame._from_columns({name: self._col}, self if index else None)

    def __getitem__(self, key):
        """Positions: a slice (step 1) or an integer array / list; a scalar position gives
        the label (a host value)."""
        n = len(self)
        if isinstance(key, slice) and key.step in (None, 1):
            start, stop, _ = key.indices(n)
            return self.slice(start, max(start, stop))
        if isinstance(key, (int, np.integer)):
            pos = int(key) + n if key < 0 else int(key)
            if not 0 <= pos < n:
                raise IndexError(f"index {key} is out of bounds for axis 0 with size {n}")
            return self.slice(pos, pos + 1).to_pandas()[0]
        idx = _em.asarray(key, device=self.device)
        if idx.dtype == _em.bool:
            idx = _em.nonzero(idx)[0]
        return self.take(idx.astype(_em.int64))

    def rename(self, name):
        out = self.__class__.__new__(self.__class__)
        out.__dict__.update(self.__dict__)
        out.name = name
        return out

    def __repr__(self):
        return repr(self.to_pandas())


class RangeIndex(Index):
    """The default index: start + step * position, materialized only when a gather needs it."""

    def __init__(self, start=0, stop=None, step=1, name=None, device=None):
        if stop is None:
            start, stop = 0, start
        if step == 0:
            raise ValueError("ember.frame.RangeIndex: Step must not be zero")
        self.start, self.stop, self.step = int(start), int(stop), int(step)
        self.name = name
        self._device = str(_em.Device(device or _em.get_default_device()))

    def __len__(self):
        return len(range(self.start, self.stop, self.step))

    @property
    def _col(self):
        n = len(self)
        a = _em.arange(n, dtype=_em.int64, device=self._device) * self.step + self.start
        return Column(np.dtype("int64"), a)

    @property
    def dtype(self):
        return np.dtype("int64")

    @property
    def device(self):
        return self._device

    def to(self, device):
        return RangeIndex(self.start, self.stop, self.step, self.name, device)

    def take(self, idx):
        if self.step == 1:  # the common 0..n-1 labels are the positions themselves
            labels = idx if self.start == 0 else idx + self.start
        else:
            labels = idx * self.step + self.start
        return Index(Column(np.dtype("int64"), labels), self.name)

    def slice(self, start, stop):
        r = range(self.start, self.stop, self.step)[start:stop]
        return RangeIndex(r.start, r.stop, r.step, self.name, self._device)

    def to_pandas(self):
        return pd.RangeIndex(self.start, self.stop, self.step, name=self.name)

    def position_of(self, label):
        r = range(self.start, self.stop, self.step)
        try:
            return r.index(label)
        except (ValueError, TypeError):
            raise KeyError(label) from None


def concat_indexes(indexes) -> Index:
    from .reshape import concat_columns

    if all(isinstance(i, RangeIndex) for i in indexes):
        pos = indexes[0].stop
        ok = all(i.step == 1 for i in indexes)
        for i in indexes[1:]:
            ok = ok and i.start == pos
            pos = i.stop
        if ok:
            return RangeIndex(indexes[0].start, pos, 1, indexes[0].name, indexes[0].device)
    if all(isinstance(i, MultiIndex) for i in indexes):
        nl = {i.nlevels for i in indexes}
        if len(nl) != 1:
            raise ValueError("ember.frame.concat: MultiIndexes with different numbers of levels")
        levels = [concat_columns([i._columns[j] for i in indexes]) for j in range(nl.pop())]
        return MultiIndex(levels, indexes[0].names)
    names = {i.name for i in indexes}
    name = indexes[0].name if len(names) == 1 else None
    return Index(concat_columns([i._col for i in indexes]), name)


def as_index(obj, device, n=None):
    if obj is None:
        return RangeIndex(n, device=device)
    if isinstance(obj, Index):
        return obj.to(device)
    if isinstance(obj, pd.RangeIndex):
        return RangeIndex(obj.start, obj.stop, obj.step, obj.name, device)
    if isinstance(obj, pd.Index):
        out = Index(obj, name=obj.name, device=device)
        out.freq = getattr(obj, "freq", None)
        return out
    return Index(obj, device=device)


class MultiIndex(Index):
    """Several label columns (what a multi-key group-by produces)."""

    def __init__(self, columns, names):
        self._columns = list(columns)
        self._names = list(names)
        self.name = None

    @property
    def names(self):
        return self._names

    @names.setter
    def names(self, value):
        self._names = list(value)

    def to_frame(self, index=True, name=None):
        from .dataframe import DataFrame

        names = self.names if name is None else list(name)
        names = [n if n is not None else f"level_{i}" for i, n in enumerate(names)]
        return DataFrame._from_columns(
            dict(zip(names, self._columns, strict=True)), self if index else None
        )

    @property
    def _col(self):
        raise NotImplementedError("ember.frame.MultiIndex: a single label column (use reset_index)")

    @property
    def nlevels(self):
        return len(self._columns)

    def __len__(self):
        return len(self._columns[0])

    @property
    def device(self):
        return self._columns[0].device

    @property
    def dtype(self):
        return np.dtype(object)

    def to(self, device):
        return MultiIndex([c.to(device) for c in self._columns], self.names)

    def take(self, idx):
        return MultiIndex([c.take(idx) for c in self._columns], self.names)

    def slice(self, start, stop):
        return MultiIndex([c.slice(start, stop) for c in self._columns], self.names)

    def to_pandas(self):
        return pd.MultiIndex.from_arrays(
            [pd.Series(c.to_pandas()) for c in self._columns], names=self.names
        )

    def equals(self, other) -> bool:
        if not isinstance(other, MultiIndex) or other.nlevels != self.nlevels:
            return False
        return all(
            Index(a).equals(Index(b)) for a, b in zip(self._columns, other._columns, strict=False)
        )
