"""Clustering (scikit-learn's ``sklearn.cluster``): KMeans, MiniBatchKMeans, DBSCAN,
AgglomerativeClustering."""

from __future__ import annotations

from ._agglomerative import AgglomerativeClustering
from ._dbscan import DBSCAN, dbscan
from ._kmeans import KMeans, MiniBatchKMeans, kmeans_plusplus

__all__ = [
    "AgglomerativeClustering",
    "DBSCAN",
    "KMeans",
    "MiniBatchKMeans",
    "dbscan",
    "kmeans_plusplus",
]
