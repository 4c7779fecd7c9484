"""Clustering (scikit-learn's ``sklearn.cluster``): KMeans, MiniBatchKMeans, DBSCAN,
AgglomerativeClustering."""

from __future__ import annotations

from ._agglomerative import AgglomerativeClustering
from ._dbscan import DBSCAN, dbscan
from ._kmeans import KMeans, MiniBatchKMeans, kmeans_plusplus
from ._spectral import SpectralClustering

__all__ = [
    "AgglomerativeClustering",
    "DBSCAN",
    "KMeans",
    "MiniBatchKMeans",
    "SpectralClustering",
    "dbscan",
    "kmeans_plusplus",
]
