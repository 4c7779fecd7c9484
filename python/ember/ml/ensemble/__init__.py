"""ember.ml.ensemble (scikit-learn's sklearn.ensemble)."""

__all__ = []
