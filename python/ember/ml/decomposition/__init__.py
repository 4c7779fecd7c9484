"""Matrix decompositions (scikit-learn's ``sklearn.decomposition``): PCA, TruncatedSVD,
IncrementalPCA, KernelPCA, NMF."""

from __future__ import annotations

from ._incremental_pca import IncrementalPCA
from ._kernel_pca import KernelPCA
from ._nmf import NMF, non_negative_factorization
from ._pca import PCA, TruncatedSVD

__all__ = [
    "NMF",
    "PCA",
    "IncrementalPCA",
    "KernelPCA",
    "TruncatedSVD",
    "non_negative_factorization",
]
