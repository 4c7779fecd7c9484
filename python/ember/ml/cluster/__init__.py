"""Clustering (scikit-learn's ``sklearn.cluster``): KMeans, MiniBatchKMeans, DBSCAN,
AgglomerativeClustering, SpectralClustering, MeanShift, Birch, OPTICS."""

from __future__ import annotations

from ._agglomerative import AgglomerativeClustering
from ._birch import Birch
from ._dbscan import DBSCAN, dbscan
from ._kmeans import KMeans, MiniBatchKMeans, kmeans_plusplus
from ._mean_shift import MeanShift, estimate_bandwidth, get_bin_seeds
from ._optics import OPTICS, cluster_optics_dbscan, cluster_optics_xi, compute_optics_graph
from ._spectral import SpectralClustering

__all__ = [
    "AgglomerativeClustering",
    "Birch",
    "DBSCAN",
    "KMeans",
    "MeanShift",
    "MiniBatchKMeans",
    "OPTICS",
    "SpectralClustering",
    "cluster_optics_dbscan",
    "cluster_optics_xi",
    "compute_optics_graph",
    "dbscan",
    "estimate_bandwidth",
    "get_bin_seeds",
    "kmeans_plusplus",
]

from ._affinity_propagation import AffinityPropagation, affinity_propagation  # noqa: E402

__all__ += ["AffinityPropagation", "affinity_propagation"]
