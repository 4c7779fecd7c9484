"""Matrix decompositions (scikit-learn's ``sklearn.decomposition``): PCA, TruncatedSVD."""

from __future__ import annotations

from ._pca import PCA, TruncatedSVD

__all__ = ["PCA", "TruncatedSVD"]
