"""Cross decomposition (scikit-learn's ``sklearn.cross_decomposition``): PLSRegression."""

from __future__ import annotations

from ._pls import PLSRegression

__all__ = ["PLSRegression"]
