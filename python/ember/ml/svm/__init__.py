"""ember.ml.svm (scikit-learn's sklearn.svm)."""

__all__ = []
