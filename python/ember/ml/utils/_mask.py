"""The missing-value mask the imputers share (scikit-learn's ``_get_mask``)."""

from __future__ import annotations

import math

import ember


def missing_mask(X, missing_values):
    """Where ``X`` holds ``missing_values`` (NaN or None: ``isnan``), on X's device."""
    mv = missing_values
    if mv is None or (isinstance(mv, float) and math.isnan(mv)):
        return ember.isnan(X)
    return X == mv
