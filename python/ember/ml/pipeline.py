"""``Pipeline`` and ``make_pipeline`` (scikit-learn's ``sklearn.pipeline``): transformers
chained in front of a final estimator; parameters reachable as ``step__param``."""

from __future__ import annotations

from .base import BaseEstimator, clone

__all__ = ["Pipeline", "make_pipeline"]


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
            t = clone(t)
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


def make_pipeline(*steps, memory=None, verbose=False):
    """A Pipeline naming each step after its lower-cased class name."""
    names = [type(s).__name__.lower() for s in steps]
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
    return Pipeline(out, memory=memory, verbose=verbose)
