"""Multiclass strategies (scikit-learn's ``sklearn.multiclass``): one-vs-rest and one-vs-one."""

from __future__ import annotations

from ._multiclass import OneVsOneClassifier, OneVsRestClassifier

__all__ = ["OneVsOneClassifier", "OneVsRestClassifier"]
