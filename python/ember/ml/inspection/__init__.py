"""Model inspection (scikit-learn's ``sklearn.inspection``): permutation feature importance."""

from __future__ import annotations

from ._permutation_importance import permutation_importance

__all__ = ["permutation_importance"]
