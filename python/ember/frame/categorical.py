"""The ``.cat`` accessor: codes and categories of a category column."""

from __future__ import annotations

import numpy as np

import ember as _em

from .column import Column


class CategoricalAccessor:
    def __init__(self, series):
        if series._col.kind != "cat":
            raise AttributeError("Can only use .cat accessor with a 'category' dtype")
        self._s = series

    @property
    def codes(self):
        c = self._s._col
        codes = _em.where(c.valid(), c.data, -1).astype(
            _em.int8 if len(c.categories) < 128 else _em.int32
        )
        return self._s._with(Column(np.dtype(codes.dtype), codes))

    @property
    def categories(self):
        from .index import Index

        return Index(self._s._col.categories)

    @property
    def ordered(self):
        return bool(self._s.dtype.ordered)
