"""Metrics (scikit-learn's ``sklearn.metrics``)."""

from __future__ import annotations

from ._classification import classification_report, precision_recall_fscore_support
from ._cluster import silhouette_samples, silhouette_score
from ._scores import (
    accuracy_score,
    auc,
    confusion_matrix,
    explained_variance_score,
    f1_score,
    mean_absolute_error,
    mean_squared_error,
    precision_score,
    r2_score,
    recall_score,
    roc_auc_score,
    roc_curve,
    root_mean_squared_error,
)
from .pairwise import (
    cosine_distances,
    cosine_similarity,
    euclidean_distances,
    manhattan_distances,
    pairwise_distances,
)

__all__ = [
    "accuracy_score",
    "auc",
    "classification_report",
    "confusion_matrix",
    "cosine_distances",
    "cosine_similarity",
    "euclidean_distances",
    "explained_variance_score",
    "f1_score",
    "manhattan_distances",
    "mean_absolute_error",
    "mean_squared_error",
    "pairwise_distances",
    "precision_recall_fscore_support",
    "precision_score",
    "r2_score",
    "recall_score",
    "roc_auc_score",
    "roc_curve",
    "root_mean_squared_error",
    "silhouette_samples",
    "silhouette_score",
]
