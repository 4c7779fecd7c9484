"""Metrics (scikit-learn's ``sklearn.metrics``)."""

from __future__ import annotations

from ._classification import classification_report, precision_recall_fscore_support
from ._cluster import silhouette_samples, silhouette_score
from ._more import (
    adjusted_mutual_info_score,
    adjusted_rand_score,
    average_precision_score,
    balanced_accuracy_score,
    cohen_kappa_score,
    log_loss,
    matthews_corrcoef,
    mean_absolute_percentage_error,
    mutual_info_score,
    normalized_mutual_info_score,
    precision_recall_curve,
    top_k_accuracy_score,
)
from ._scorer import check_scoring, get_scorer, get_scorer_names, make_scorer
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
    "adjusted_mutual_info_score",
    "adjusted_rand_score",
    "auc",
    "average_precision_score",
    "balanced_accuracy_score",
    "check_scoring",
    "classification_report",
    "cohen_kappa_score",
    "confusion_matrix",
    "cosine_distances",
    "cosine_similarity",
    "euclidean_distances",
    "explained_variance_score",
    "f1_score",
    "get_scorer",
    "get_scorer_names",
    "log_loss",
    "make_scorer",
    "manhattan_distances",
    "matthews_corrcoef",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "mutual_info_score",
    "normalized_mutual_info_score",
    "pairwise_distances",
    "precision_recall_curve",
    "precision_recall_fscore_support",
    "precision_score",
    "r2_score",
    "recall_score",
    "roc_auc_score",
    "roc_curve",
    "root_mean_squared_error",
    "silhouette_samples",
    "silhouette_score",
    "top_k_accuracy_score",
]
