"""Estimator protocol of ``ember.ml`` (scikit-learn's ``sklearn.base``).

``BaseEstimator`` reads the constructor's signature for ``get_params``/``set_params`` and
checks the parameters against ``_parameter_constraints`` when ``fit`` starts, so an estimator
works with ``clone``, scikit-learn's ``Pipeline`` and ``GridSearchCV``.
"""

from __future__ import annotations

import copy
import inspect

from .exceptions import NotFittedError, sklearn_compatible
from .utils._param_validation import validate_parameter_constraints

__all__ = [
    "BaseEstimator",
    "ClassNamePrefixFeaturesOutMixin",
    "ClassifierMixin",
    "ClusterMixin",
    "OneToOneFeatureMixin",
    "RegressorMixin",
    "TransformerMixin",
    "check_is_fitted",
    "clone",
    "is_classifier",
    "is_regressor",
]


class BaseEstimator:
    """Base class: parameters are the keyword arguments of ``__init__``, stored unchanged."""

    _parameter_constraints: dict = {}

    @classmethod
    def _get_param_names(cls):
        init = cls.__init__
        if init is object.__init__:
            return []
        sig = inspect.signature(init)
        names = []
        for p in sig.parameters.values():
            if p.name == "self" or p.kind == p.VAR_KEYWORD:
                continue
            if p.kind == p.VAR_POSITIONAL:
                raise RuntimeError(
                    f"{cls.__name__}: estimators must not take *args in __init__ ({sig})"
                )
            names.append(p.name)
        return sorted(names)

    def get_params(self, deep=True):
        """The constructor parameters as a dict (with ``name__sub`` entries when ``deep``)."""
        out = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                for k, v in value.get_params().items():
                    out[f"{key}__{k}"] = v
            out[key] = value
        return out

    def set_params(self, **params):
        """Set constructor parameters (``name__sub`` reaches nested estimators); returns self."""
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested = {}
        for key, value in params.items():
            key, delim, sub = key.partition("__")
            if key not in valid:
                raise ValueError(
                    f"Invalid parameter {key!r} for estimator {self}. Valid parameters are: "
                    f"{self._get_param_names()!r}."
                )
            if delim:
                nested.setdefault(key, {})[sub] = value
            else:
                setattr(self, key, value)
                valid[key] = value
        for key, sub in nested.items():
            valid[key].set_params(**sub)
        return self

    def _validate_params(self):
        validate_parameter_constraints(
            self._parameter_constraints,
            self.get_params(deep=False),
            caller_name=type(self).__name__,
        )

    def __repr__(self):
        defaults = {}
        init = type(self).__init__
        if init is not object.__init__:
            for p in inspect.signature(init).parameters.values():
                defaults[p.name] = p.default
        parts = []
        for k, v in self.get_params(deep=False).items():
            d = defaults.get(k, inspect.Parameter.empty)
            try:
                same = v is d or (type(v) is type(d) and v == d)
            except Exception:
                same = False
            if not same:
                parts.append(f"{k}={v!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __sklearn_clone__(self):
        return clone(self)

    def __sklearn_tags__(self):
        # Only scikit-learn itself calls this, so scikit-learn is importable here.
        from sklearn.utils import Tags, TargetTags

        tags = Tags(estimator_type=None, target_tags=TargetTags(required=False))
        kind = getattr(self, "_estimator_type", None)
        tags.estimator_type = kind
        if kind in ("classifier", "regressor"):
            tags.target_tags.required = True
        tags.target_tags.multi_output = bool(getattr(self, "_multi_output", False))
        tags.input_tags.allow_nan = bool(getattr(self, "_allow_nan", False))
        tags.non_deterministic = bool(getattr(self, "_non_deterministic", False))
        if kind == "classifier":
            from sklearn.utils import ClassifierTags

            tags.classifier_tags = ClassifierTags()
        elif kind == "regressor":
            from sklearn.utils import RegressorTags

            tags.regressor_tags = RegressorTags()
        if isinstance(self, TransformerMixin):
            from sklearn.utils import TransformerTags

            tags.transformer_tags = TransformerTags()
        return tags

    def __getstate__(self):
        return dict(self.__dict__)

    def __setstate__(self, state):
        self.__dict__.update(state)


def clone(estimator, *, safe=True):
    """A new unfitted estimator with the same parameters (deep-copied), as ``sklearn.clone``."""
    if isinstance(estimator, (list, tuple, set, frozenset)):
        return type(estimator)(clone(e, safe=safe) for e in estimator)
    if not hasattr(estimator, "get_params") or isinstance(estimator, type):
        if not safe:
            return copy.deepcopy(estimator)
        raise TypeError(
            f"clone: cannot clone object {estimator!r} (type {type(estimator).__name__}): "
            "it does not implement a 'get_params' method"
        )
    own = getattr(type(estimator), "__sklearn_clone__", None)
    if own is not None and own is not BaseEstimator.__sklearn_clone__:
        return estimator.__sklearn_clone__()  # e.g. FrozenEstimator: itself, fitted
    params = estimator.get_params(deep=False)
    new = type(estimator)(**{k: clone(v, safe=False) for k, v in params.items()})
    cfg = getattr(estimator, "_sklearn_output_config", None)
    if cfg is not None:  # set_output survives cloning, as scikit-learn's
        new._sklearn_output_config = copy.deepcopy(cfg)
    return new


def is_classifier(estimator):
    """True for classifiers (``_estimator_type == 'classifier'``)."""
    return getattr(estimator, "_estimator_type", None) == "classifier"


def is_regressor(estimator):
    """True for regressors (``_estimator_type == 'regressor'``)."""
    return getattr(estimator, "_estimator_type", None) == "regressor"


def check_is_fitted(estimator, attributes=None):
    """Raise ``NotFittedError`` unless ``estimator`` has its trailing-underscore attributes."""
    if isinstance(estimator, type) or not hasattr(estimator, "fit"):
        raise TypeError(f"check_is_fitted: {estimator!r} is not an estimator instance")
    if attributes is not None:
        names = [attributes] if isinstance(attributes, str) else list(attributes)
        fitted = all(hasattr(estimator, a) for a in names)
    else:
        fitted = any(k.endswith("_") and not k.startswith("__") for k in vars(estimator))
    if not fitted:
        raise sklearn_compatible(NotFittedError)(
            f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
            "appropriate arguments before using this estimator."
        )


class ClassifierMixin:
    """``score`` is the mean accuracy."""

    _estimator_type = "classifier"

    def score(self, X, y, sample_weight=None):
        from .metrics import accuracy_score

        return accuracy_score(y, self.predict(X), sample_weight=sample_weight)


class RegressorMixin:
    """``score`` is the coefficient of determination R^2."""

    _estimator_type = "regressor"

    def score(self, X, y, sample_weight=None):
        from .metrics import r2_score

        return r2_score(y, self.predict(X), sample_weight=sample_weight)


class ClusterMixin:
    """``fit_predict`` returns ``labels_``."""

    _estimator_type = "clusterer"

    def fit_predict(self, X, y=None, **kwargs):
        self.fit(X, **kwargs)
        return self.labels_


class TransformerMixin:
    """``fit_transform`` = ``fit`` then ``transform``; ``set_output`` (_set_output.py): a
    subclass's own ``transform``/``fit_transform`` return the configured container."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        from ._set_output import wrap_method

        for name in ("transform", "fit_transform"):
            f = cls.__dict__.get(name)
            if f is not None and not getattr(f, "_ember_set_output", False):
                setattr(cls, name, wrap_method(f))

    def fit_transform(self, X, y=None, **fit_params):
        if y is None:
            return self.fit(X, **fit_params).transform(X)
        return self.fit(X, y, **fit_params).transform(X)

    def set_output(self, *, transform=None):
        """scikit-learn's ``set_output``: "default", "pandas", "polars" or None (unchanged)."""
        from ._set_output import check_container

        check_container(transform, type(self).__name__)
        if transform is not None:
            self._sklearn_output_config = {"transform": transform}
        return self


class OneToOneFeatureMixin:
    """``get_feature_names_out`` for transformers that keep one output column per input."""

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "n_features_in_")
        import numpy as np

        n = self.n_features_in_
        if input_features is None:
            names = getattr(self, "feature_names_in_", None)
            input_features = names if names is not None else [f"x{i}" for i in range(n)]
        if len(input_features) != n:
            raise ValueError(
                f"input_features should have length equal to number of features ({n}), got "
                f"{len(input_features)}"
            )
        return np.asarray([str(f) for f in input_features], dtype=object)


class ClassNamePrefixFeaturesOutMixin:
    """``get_feature_names_out`` = lower-cased class name + index ('pca0', 'pca1', ...)."""

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "_n_features_out")
        import numpy as np

        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}{i}" for i in range(self._n_features_out)], dtype=object)
