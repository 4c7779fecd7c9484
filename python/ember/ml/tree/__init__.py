"""ember.ml.tree (scikit-learn's sklearn.tree)."""

__all__ = []
