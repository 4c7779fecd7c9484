"""Matrix decompositions (scikit-learn's ``sklearn.decomposition``): PCA, TruncatedSVD,
IncrementalPCA, KernelPCA."""

from __future__ import annotations

from ._incremental_pca import IncrementalPCA
from ._kernel_pca import KernelPCA
from ._pca import PCA, TruncatedSVD

__all__ = ["PCA", "IncrementalPCA", "KernelPCA", "TruncatedSVD"]
