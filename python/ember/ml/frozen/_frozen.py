"""``FrozenEstimator`` (scikit-learn's ``sklearn.frozen.FrozenEstimator``): a fitted estimator
whose ``fit`` does nothing, e.g. to calibrate a prefitted classifier with
``CalibratedClassifierCV``."""

from __future__ import annotations

from ..base import BaseEstimator, check_is_fitted

__all__ = ["FrozenEstimator"]


class FrozenEstimator(BaseEstimator):
    """Wraps a fitted estimator: attributes are the inner estimator's, ``fit`` is a no-op."""

    def __init__(self, estimator):
        self.estimator = estimator

    def __getattr__(self, name):
        if name.startswith("__") or name == "estimator":
            raise AttributeError(name)
        if name in ("fit_predict", "fit_transform"):
            raise AttributeError(f"{name} is not available for frozen estimators.")
        return getattr(self.estimator, name)

    def __getitem__(self, *args, **kwargs):
        return self.estimator.__getitem__(*args, **kwargs)

    def __sklearn_clone__(self):
        return self

    def __sklearn_is_fitted__(self):
        try:
            check_is_fitted(self.estimator)
            return True
        except (ValueError, AttributeError):
            return False

    def fit(self, X, y=None, *args, **kwargs):
        """No-op (the inner estimator must already be fitted)."""
        check_is_fitted(self.estimator)
        return self

    def set_params(self, **kwargs):
        estimator = kwargs.pop("estimator", None)
        if estimator is not None:
            self.estimator = estimator
        if kwargs:
            raise ValueError(
                "You cannot set parameters of the inner estimator in a frozen estimator since "
                "calling `fit` has no effect. You can use `frozenestimator.estimator.set_params`"
                " to set parameters of the inner estimator."
            )
        return self

    def get_params(self, deep=True):
        return {"estimator": self.estimator}

    def __sklearn_tags__(self):
        import copy

        from sklearn.utils import get_tags

        tags = copy.deepcopy(get_tags(self.estimator))
        tags._skip_test = True
        return tags
