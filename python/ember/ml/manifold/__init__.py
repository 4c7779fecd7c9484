"""ember.ml.manifold (scikit-learn's sklearn.manifold)."""

__all__ = []
