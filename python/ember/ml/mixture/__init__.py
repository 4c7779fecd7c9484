"""Mixture models (scikit-learn's ``sklearn.mixture``): GaussianMixture."""

from __future__ import annotations

from ._gaussian_mixture import GaussianMixture

__all__ = ["GaussianMixture"]
