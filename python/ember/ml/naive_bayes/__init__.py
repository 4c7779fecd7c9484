"""Naive Bayes classifiers (scikit-learn's ``sklearn.naive_bayes``)."""

from __future__ import annotations

from ._naive_bayes import BernoulliNB, GaussianNB, MultinomialNB

__all__ = ["BernoulliNB", "GaussianNB", "MultinomialNB"]

from ._nb_more import CategoricalNB, ComplementNB  # noqa: E402

__all__ += ["CategoricalNB", "ComplementNB"]
