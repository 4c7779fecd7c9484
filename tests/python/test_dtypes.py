"""NumPy's data-type functions in python/ember/_dtypes.py (promote_types, issubdtype,
common_type, min_scalar_type, typename, mintypecode) against NumPy."""

from __future__ import annotations

import ember
import numpy as np
from _helpers import em


def test_promote_issubdtype_common_min_scalar_type(device):
    assert ember.promote_types(ember.int8, ember.uint8) == ember.int16
    assert ember.issubdtype(ember.float32, np.floating)
    assert not ember.issubdtype(ember.int32, np.floating)
    assert ember.issubdtype(ember.int32, np.integer) and ember.issubdtype(ember.uint8, np.number)
    assert (
        ember.common_type(em([1], device), em([1.0], device).astype(ember.float32)) == ember.float64
    )
    assert ember.min_scalar_type(10) == ember.uint8


def test_typename_mintypecode():
    assert ember.typename("f") == np.typename("f")
    assert ember.mintypecode(["d", "f"]) == "d"
