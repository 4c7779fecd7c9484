"""Clustering (scikit-learn's ``sklearn.cluster``): KMeans, MiniBatchKMeans, DBSCAN."""

from __future__ import annotations

from ._dbscan import DBSCAN, dbscan
from ._kmeans import KMeans, MiniBatchKMeans, kmeans_plusplus

__all__ = ["DBSCAN", "KMeans", "MiniBatchKMeans", "dbscan", "kmeans_plusplus"]
