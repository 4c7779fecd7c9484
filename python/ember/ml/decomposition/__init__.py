"""Matrix decompositions (scikit-learn's ``sklearn.decomposition``): PCA, TruncatedSVD,
IncrementalPCA, KernelPCA, NMF, FactorAnalysis, FastICA."""

from __future__ import annotations

from ._factor_analysis import FactorAnalysis
from ._fastica import FastICA
from ._incremental_pca import IncrementalPCA
from ._kernel_pca import KernelPCA
from ._nmf import NMF, non_negative_factorization
from ._pca import PCA, TruncatedSVD

__all__ = [
    "FactorAnalysis",
    "FastICA",
    "NMF",
    "PCA",
    "IncrementalPCA",
    "KernelPCA",
    "TruncatedSVD",
    "non_negative_factorization",
]

from ._mini_batch_sparse_pca import MiniBatchSparsePCA  # noqa: E402
from ._sparse_pca import SparsePCA  # noqa: E402

__all__ += ["MiniBatchSparsePCA", "SparsePCA"]
