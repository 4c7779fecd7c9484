"""``Pipeline`` and ``make_pipeline`` (scikit-learn's ``sklearn.pipeline``): transformers
chained in front of a final estimator; parameters reachable as ``step__param``."""

from __future__ import annotations

import numpy as np

import ember

from .base import BaseEstimator, TransformerMixin
from .utils.validation import _host, is_ember, to_device

__all__ = ["FeatureUnion", "Pipeline", "make_pipeline", "make_union"]


class Pipeline(BaseEstimator):
    """Fit every transformer in turn, then the final step on the transformed data."""

    def __init__(self, steps, *, memory=None, verbose=False):
        self.steps = steps
        self.memory = memory
        self.verbose = verbose

    def _validate_steps(self):
        if not isinstance(self.steps, list) or not self.steps:
            raise TypeError(f"Pipeline: steps must be a non-empty list, got {self.steps!r}")
        names = [n for n, _ in self.steps]
        if len(set(names)) != len(names):
            raise ValueError(f"Names provided are not unique: {names!r}")
        for _, t in self.steps[:-1]:
            if t in (None, "passthrough"):
                continue
            if not (hasattr(t, "fit") or hasattr(t, "fit_transform")) or not hasattr(
                t, "transform"
            ):
                raise TypeError(
                    "All intermediate steps should be transformers and implement fit and "
                    f"transform or be the string 'passthrough' '{t!r}' (type {type(t)}) "
                    "doesn't"
                )

    def get_params(self, deep=True):
        out = {"steps": self.steps, "memory": self.memory, "verbose": self.verbose}
        if deep:
            for name, est in self.steps:
                out[name] = est
                if hasattr(est, "get_params"):
                    for k, v in est.get_params(deep=True).items():
                        out[f"{name}__{k}"] = v
        return out

    def set_params(self, **params):
        steps = dict(self.steps)
        for key in list(params):
            if key in steps:
                self.steps = [(n, params.pop(key) if n == key else e) for n, e in self.steps]
        if "steps" in params:
            self.steps = params.pop("steps")
        nested = {}
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name in ("memory", "verbose") and not sub:
                setattr(self, name, value)
                continue
            if name not in dict(self.steps) or not sub:
                raise ValueError(f"Invalid parameter {key!r} for estimator {self}.")
            nested.setdefault(name, {})[sub] = value
        for name, sub in nested.items():
            dict(self.steps)[name].set_params(**sub)
        return self

    @property
    def named_steps(self):
        return dict(self.steps)

    @property
    def _final_estimator(self):
        est = self.steps[-1][1]
        return "passthrough" if est is None else est

    def __getitem__(self, ind):
        if isinstance(ind, slice):
            return Pipeline(self.steps[ind], memory=self.memory, verbose=self.verbose)
        if isinstance(ind, str):
            return self.named_steps[ind]
        return self.steps[ind][1]

    def __len__(self):
        return len(self.steps)

    def _fit_transforms(self, X, y):
        self._validate_steps()
        Xt = X
        for i, (name, t) in enumerate(self.steps[:-1]):
            if t in (None, "passthrough"):
                continue
            # fitted in place, as scikit-learn does without a caching `memory`: the caller's
            # step objects are the fitted ones (pipe.named_steps["pre"] is pre)
            Xt = (
                t.fit_transform(Xt, y)
                if hasattr(t, "fit_transform")
                else (t.fit(Xt, y).transform(Xt))
            )
            self.steps[i] = (name, t)
        return Xt

    def fit(self, X, y=None, **params):
        """Fit the transformers then the final estimator."""
        Xt = self._fit_transforms(X, y)
        last = self._final_estimator
        if last != "passthrough":
            last.fit(Xt, y, **params)
        return self

    def set_output(self, *, transform=None):
        """Sets the output container of every step (scikit-learn's ``Pipeline.set_output``)."""
        for _, step in self.steps:
            if hasattr(step, "set_output"):
                step.set_output(transform=transform)
        return self

    def fit_transform(self, X, y=None, **params):
        Xt = self._fit_transforms(X, y)
        last = self._final_estimator
        if last == "passthrough":
            return Xt
        if hasattr(last, "fit_transform"):
            return last.fit_transform(Xt, y, **params)
        return last.fit(Xt, y, **params).transform(Xt)

    def _transform_upto_last(self, X):
        Xt = X
        for _, t in self.steps[:-1]:
            if t not in (None, "passthrough"):
                Xt = t.transform(Xt)
        return Xt

    def predict(self, X, **params):
        return self.steps[-1][1].predict(self._transform_upto_last(X), **params)

    def fit_predict(self, X, y=None, **params):
        Xt = self._fit_transforms(X, y)
        return self.steps[-1][1].fit_predict(Xt, y, **params)

    def predict_proba(self, X, **params):
        return self.steps[-1][1].predict_proba(self._transform_upto_last(X), **params)

    def decision_function(self, X):
        return self.steps[-1][1].decision_function(self._transform_upto_last(X))

    def transform(self, X):
        Xt = self._transform_upto_last(X)
        last = self._final_estimator
        return Xt if last == "passthrough" else last.transform(Xt)

    def get_feature_names_out(self, input_features=None):
        """The names out of the last transforming step, each step fed the previous step's
        (scikit-learn's ``Pipeline.get_feature_names_out``)."""
        names = input_features
        for name, step in self.steps:
            if step in (None, "passthrough"):
                continue
            if not hasattr(step, "get_feature_names_out"):
                raise AttributeError(
                    f"Estimator {name} does not provide get_feature_names_out. Did you mean "
                    "to call pipeline[:-1].get_feature_names_out()?"
                )
            names = step.get_feature_names_out(names)
        return names

    def score(self, X, y=None, sample_weight=None):
        Xt = self._transform_upto_last(X)
        kw = {} if sample_weight is None else {"sample_weight": sample_weight}
        return self.steps[-1][1].score(Xt, y, **kw)

    @property
    def classes_(self):
        return self.steps[-1][1].classes_

    @property
    def _estimator_type(self):
        return getattr(self.steps[-1][1], "_estimator_type", None)

    @property
    def n_features_in_(self):
        return self.steps[0][1].n_features_in_


def _auto_names(steps):
    names = [type(s).__name__.lower() if not isinstance(s, str) else s for s in steps]
    counts = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    seen = {}
    out = []
    for n, s in zip(names, steps, strict=True):
        if counts[n] > 1:
            seen[n] = seen.get(n, 0) + 1
            n = f"{n}-{seen[n]}"
        out.append((n, s))
    return out


def make_pipeline(*steps, memory=None, verbose=False):
    """A Pipeline naming each step after its lower-cased class name."""
    return Pipeline(_auto_names(steps), memory=memory, verbose=verbose)


class FeatureUnion(TransformerMixin, BaseEstimator):
    """Fit every transformer on the same X and concatenate their outputs side by side (ember
    outputs are joined on their device; host outputs as NumPy). A transformer may be 'drop'
    or 'passthrough'; ``transformer_weights`` scale each block."""

    def __init__(
        self,
        transformer_list,
        *,
        n_jobs=None,
        transformer_weights=None,
        verbose=False,
        verbose_feature_names_out=True,
    ):
        self.transformer_list = transformer_list
        self.n_jobs = n_jobs
        self.transformer_weights = transformer_weights
        self.verbose = verbose
        self.verbose_feature_names_out = verbose_feature_names_out

    def get_params(self, deep=True):
        out = {
            "transformer_list": self.transformer_list,
            "n_jobs": self.n_jobs,
            "transformer_weights": self.transformer_weights,
            "verbose": self.verbose,
            "verbose_feature_names_out": self.verbose_feature_names_out,
        }
        if deep:
            for name, t in self.transformer_list:
                out[name] = t
                if hasattr(t, "get_params"):
                    for k, v in t.get_params(deep=True).items():
                        out[f"{name}__{k}"] = v
        return out

    def set_params(self, **params):
        names = [n for n, _ in self.transformer_list]
        nested = {}
        for key, value in params.items():
            name, delim, sub = key.partition("__")
            if not delim and name in names:
                self.transformer_list = [
                    (n, value if n == name else t) for n, t in self.transformer_list
                ]
            elif not delim:
                if name not in self.get_params(deep=False):
                    raise ValueError(f"Invalid parameter {name!r} for estimator {self}.")
                setattr(self, name, value)
            elif name in names:
                nested.setdefault(name, {})[sub] = value
            else:
                raise ValueError(f"Invalid parameter {name!r} for estimator {self}.")
        for name, sub in nested.items():
            dict(self.transformer_list)[name].set_params(**sub)
        return self

    def _validate(self):
        names = [n for n, _ in self.transformer_list]
        if len(set(names)) != len(names):
            raise ValueError(f"Names provided are not unique: {names!r}")
        for name in names:
            if "__" in name:
                raise ValueError(f"Estimator names must not contain __: got [{name!r}]")
        for _, t in self.transformer_list:
            if t in ("drop", "passthrough"):
                continue
            if not (hasattr(t, "fit") or hasattr(t, "fit_transform")) or not hasattr(
                t, "transform"
            ):
                raise TypeError(
                    "All estimators should implement fit and transform. "
                    f"'{t!r}' (type {type(t)}) doesn't"
                )
        w = self.transformer_weights or {}
        bad = set(w) - set(names)
        if bad:
            raise ValueError(
                f'Attempting to weight transformer "{sorted(bad)[0]}", but it is not present in '
                f"transformer_list."
            )

    def _hstack(self, blocks, X):
        if not blocks:
            n = X.shape[0] if hasattr(X, "shape") else len(X)
            return np.zeros((n, 0))
        if any(is_ember(b) for b in blocks):
            dev = next(b.device for b in blocks if is_ember(b))
            return ember.concatenate([to_device(b, dev) for b in blocks], axis=1)
        return np.hstack([b.toarray() if hasattr(b, "toarray") else np.asarray(b) for b in blocks])

    def _blocks(self, X, y, fit):
        w = self.transformer_weights or {}
        out, fitted = [], []
        for name, t in self.transformer_list:
            if t == "drop":
                fitted.append((name, t))
                continue
            if t == "passthrough":
                B = _host(X)
            elif fit:  # in place, as scikit-learn's FeatureUnion
                B = (
                    t.fit_transform(X, y)
                    if hasattr(t, "fit_transform")
                    else t.fit(X, y).transform(X)
                )
            else:
                B = t.transform(X)
            if hasattr(B, "ndim") and B.ndim == 1:
                B = B.reshape(-1, 1)
            if name in w:
                B = B * w[name]
            fitted.append((name, t))
            out.append(B)
        if fit:
            self.transformer_list = fitted
        return out

    def fit(self, X, y=None, **params):
        self.fit_transform(X, y)
        return self

    def set_output(self, *, transform=None):
        """Sets the output container of the union and of every transformer."""
        super().set_output(transform=transform)
        for _, t in self.transformer_list:
            if hasattr(t, "set_output"):
                t.set_output(transform=transform)
        return self

    def fit_transform(self, X, y=None, **params):
        """Fit every transformer and concatenate the transformed blocks."""
        self._validate()
        out = self._hstack(self._blocks(X, y, True), X)
        if hasattr(X, "shape") and len(X.shape) == 2:
            self.n_features_in_ = int(X.shape[1])
        return out

    def transform(self, X):
        return self._hstack(self._blocks(X, None, False), X)

    @property
    def named_transformers(self):
        from .utils import Bunch

        return Bunch(**dict(self.transformer_list))

    def get_feature_names_out(self, input_features=None):
        names = []
        for name, t in self.transformer_list:
            if t == "drop":
                continue
            if t == "passthrough":
                sub = input_features
                if sub is None:
                    sub = [f"x{i}" for i in range(self.n_features_in_)]
            else:
                sub = t.get_feature_names_out(input_features)
            names.extend(f"{name}__{s}" if self.verbose_feature_names_out else str(s) for s in sub)
        return np.asarray(names, dtype=object)


def make_union(*transformers, n_jobs=None, verbose=False):
    """A FeatureUnion naming each transformer after its lower-cased class name."""
    return FeatureUnion(_auto_names(transformers), n_jobs=n_jobs, verbose=verbose)
