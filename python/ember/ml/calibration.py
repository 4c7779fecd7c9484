"""Probability calibration (scikit-learn's ``sklearn.calibration``): ``CalibratedClassifierCV``
and ``calibration_curve``.

X is validated once into an ember array on its device and handed to clones of the base
classifier; fold rows are gathered there. The calibrators work on the device too: Platt's
sigmoid is fitted by ember's L-BFGS over the half-binomial loss with Platt's smoothed targets
(scikit-learn's objective, start and ``gtol=1e-6``, so ``a_``/``b_`` agree with it to the
solver's tolerance); isotonic calibration is ``ember.ml.isotonic.IsotonicRegression`` (its
PAVA pass is a host step). A prefitted classifier is calibrated through ``FrozenEstimator``
(``ember.ml.frozen`` or scikit-learn's), as in scikit-learn >= 1.6.
"""

from __future__ import annotations

import inspect
import math
import numbers
import warnings

import numpy as np

import ember

from .base import BaseEstimator, ClassifierMixin, RegressorMixin, check_is_fitted, clone
from .isotonic import IsotonicRegression
from .utils._labels import decode_labels, encode_labels, label_positions
from .utils._optimize import lbfgs_minimize
from .utils._param_validation import HasMethods, StrOptions
from .utils.validation import (
    _host,
    check_array,
    check_classification_targets,
    check_n_features,
    check_X_y,
    column_or_1d,
    input_kind,
    is_ember,
    to_device,
    to_output,
)

__all__ = ["CalibratedClassifierCV", "calibration_curve"]


def _on(a, dev):
    return to_device(a if is_ember(a) else np.asarray(a), dev)


def _is_frozen(est):
    return type(est).__name__ == "FrozenEstimator"


def _response(est, X, dev):
    """decision_function, else predict_proba; binary: the positive column, shape (n, 1)."""
    if hasattr(est, "decision_function"):
        out = _on(est.decision_function(X), dev)
        method = "decision_function"
    elif hasattr(est, "predict_proba"):
        out = _on(est.predict_proba(X), dev)
        method = "predict_proba"
        if out.ndim == 2 and out.shape[1] == 2:
            out = out[:, 1]
    else:
        raise AttributeError(
            f"{type(est).__name__} has none of the following attributes: decision_function, "
            "predict_proba."
        )
    out = out.astype(ember.float64)
    return (out.reshape(-1, 1) if out.ndim == 1 else out), method


def _sigmoid_ab(F, y, sw):
    """Platt's (A, B) for P(y=1|f) = 1 / (1 + exp(A f + B)) on ember F, y (0/1)."""
    F = F.astype(ember.float64)
    if not bool(ember.isfinite(F).all()):
        raise ValueError(
            "CalibratedClassifierCV: the classifier's decision values contain NaN or infinity "
            "(is a class left without sample weight?)"
        )
    scale = 1.0
    fmax = float(ember.abs(F).max())
    if fmax >= 30:
        scale = fmax
        F = F / scale
    neg = y <= 0
    if sw is None:
        prior0 = float(neg.astype(ember.float64).sum())
        prior1 = float(y.shape[0]) - prior0
    else:
        prior0 = float(ember.where(neg, sw, 0.0).sum())
        prior1 = float(ember.where(neg, 0.0, sw).sum())
    T = ember.where(y > 0, (prior1 + 1.0) / (prior1 + 2.0), 1.0 / (prior0 + 2.0))
    dev = F.device

    def fun(ab):
        raw = -(ab[0] * F + ab[1])
        # half binomial loss log(1 + exp(raw)) - T raw and its derivative sigmoid(raw) - T
        loss = ember.maximum(raw, 0.0) + ember.log1p(ember.exp(-ember.abs(raw))) - T * raw
        e = ember.exp(-ember.abs(raw))
        p = ember.where(raw >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        g = p - T
        if sw is not None:
            loss, g = loss * sw, g * sw
        grad = ember.stack([-(g * F).sum(), -g.sum()])
        return float(loss.sum()), grad

    ab0 = ember.asarray(np.array([0.0, math.log((prior0 + 1.0) / (prior1 + 1.0))]), device=dev)
    ab, _, _, _ = lbfgs_minimize(
        fun, ab0, max_iter=15000, gtol=1e-6, ftol=64 * float(np.finfo(float).eps)
    )
    a, b = ember.asnumpy(ab).tolist()
    return a / scale, b


class _SigmoidCalibration(RegressorMixin, BaseEstimator):
    """Platt's sigmoid on a 1-d score: ``predict(T) = 1 / (1 + exp(a_ T + b_))``."""

    def fit(self, X, y, sample_weight=None):
        F = column_or_1d(X, dtype=ember.float64)
        ya = column_or_1d(y, device=F.device, dtype=ember.float64)
        sw = None if sample_weight is None else _on(sample_weight, F.device).astype(ember.float64)
        self.a_, self.b_ = _sigmoid_ab(F, ya, sw)
        return self

    def predict(self, T):
        t = column_or_1d(T, dtype=ember.float64)
        z = -(self.a_ * t + self.b_)
        e = ember.exp(-ember.abs(z))
        return ember.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


class _CalibratedClassifier:
    """A fitted classifier and one calibrator per class (one for two classes)."""

    def __init__(self, estimator, calibrators, *, classes, method, positions):
        self.estimator = estimator
        self.calibrators = calibrators
        self.classes = classes
        self.method = method
        self._positions = positions

    def _proba(self, Xa):
        dev = Xa.device
        pred, how = _response(self.estimator, Xa, dev)
        n, K = int(Xa.shape[0]), int(self.classes.shape[0])
        if self.method == "temperature":
            proba = self.calibrators[0].predict(_two_columns(pred, how, K))
            proba = ember.where((proba > 1.0) & (proba <= 1.0 + 1e-5), 1.0, proba)
            return proba
        cols = [
            _on(cal.predict(pred[:, j]), dev).astype(ember.float64)
            for j, cal in enumerate(self.calibrators)
        ]
        if K == 2:
            p1 = cols[0]
            proba = ember.stack([1.0 - p1, p1], axis=1)
        else:
            C = ember.stack(cols, axis=1)
            pos = ember.asarray(np.asarray(self._positions[: len(cols)]), device=dev)
            onehot = (pos[:, None] == ember.arange(K, device=dev)[None, :]).astype(ember.float64)
            proba = C @ onehot
            den = proba.sum(axis=1, keepdims=True)
            proba = ember.where(den != 0, proba / ember.where(den != 0, den, 1.0), 1.0 / K)
        proba = ember.where((proba > 1.0) & (proba <= 1.0 + 1e-5), 1.0, proba)
        return proba.reshape(n, K)

    def predict_proba(self, X):
        Xa = check_array(X)
        return to_output(self._proba(Xa), input_kind(X))


def _two_columns(pred, how, K):
    """Binary probabilities of the positive class as (1 - p, p), as scikit-learn's
    temperature scaling takes them."""
    if K == 2 and int(pred.shape[1]) == 1 and how == "predict_proba":
        return ember.concatenate([1.0 - pred, pred], axis=1)
    return pred


def _to_logits(d, eps=1e-12):
    """Logits from decision values or probabilities (scikit-learn's ``_convert_to_logits``)."""
    if d.ndim == 1:
        d = d.reshape(-1, 1)
    if int(d.shape[1]) == 1:
        return ember.concatenate([-d, d], axis=1)
    probs = bool(((d >= 0) & (d <= 1)).all()) and bool(ember.isclose(d.sum(axis=1), 1.0).all())
    return ember.log(d + eps) if probs else d


class _TemperatureScaling(RegressorMixin, BaseEstimator):
    """Temperature scaling: ``predict(X) = softmax(beta_ * logits(X))`` with ``beta_``
    minimising the (weighted) multinomial log-loss, searched as log(beta) in [-10, 10]."""

    def fit(self, X, y, sample_weight=None):
        d = X if is_ember(X) else ember.asarray(np.asarray(X, dtype=np.float64))
        logits = _to_logits(d.astype(ember.float64))
        dev = logits.device
        K = int(logits.shape[1])
        yi = _on(y, dev).reshape(-1).astype(ember.int64)
        onehot = (yi[:, None] == ember.arange(K, device=dev)[None, :]).astype(ember.float64)
        w = None if sample_weight is None else _on(sample_weight, dev).astype(ember.float64)

        def loss(lb):
            z = math.exp(lb) * logits
            m = z.max(axis=1, keepdims=True)
            lse = ember.log(ember.exp(z - m).sum(axis=1)) + m[:, 0]
            per = lse - (z * onehot).sum(axis=1)
            if w is None:
                return float(per.mean())
            return float((per * w).sum() / w.sum())

        # golden-section search (the loss is unimodal in log beta) to scikit-learn's xatol
        lo, hi = -10.0, 10.0
        r = (math.sqrt(5.0) - 1.0) / 2.0
        a, b = hi - r * (hi - lo), lo + r * (hi - lo)
        fa, fb = loss(a), loss(b)
        xatol = 64 * float(np.finfo(np.float64).eps)
        while hi - lo > xatol:
            if fa <= fb:
                hi, b, fb = b, a, fa
                a = hi - r * (hi - lo)
                fa = loss(a)
            else:
                lo, a, fa = a, b, fb
                b = lo + r * (hi - lo)
                fb = loss(b)
        self.beta_ = math.exp(a if fa <= fb else b)
        return self

    def predict(self, X):
        d = X if is_ember(X) else ember.asarray(np.asarray(X, dtype=np.float64))
        z = self.beta_ * _to_logits(d.astype(ember.float64))
        e = ember.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def _fit_calibrator(clf, pred, yi, classes, method, sw, positions, how="decision_function"):
    """Calibrators on the (n, k) responses ``pred`` of ``clf`` for encoded labels ``yi``."""
    K = int(classes.shape[0])
    if method == "temperature":
        cal = _TemperatureScaling().fit(_two_columns(pred, how, K), yi, sw)
        return _CalibratedClassifier(
            clf, [cal], classes=classes, method=method, positions=positions
        )
    cals = []
    for j in range(int(pred.shape[1])):
        k = 1 if K == 2 else int(positions[j])
        target = (yi == k).astype(ember.float64)
        cal = IsotonicRegression(out_of_bounds="clip") if method == "isotonic" else (
            _SigmoidCalibration())  # fmt: skip
        cal.fit(pred[:, j], target, sw)
        cals.append(cal)
    return _CalibratedClassifier(clf, cals, classes=classes, method=method, positions=positions)


def _rows(a, idx, dev):
    if a is None:
        return None
    if is_ember(a):
        return ember.take(a, ember.asarray(np.asarray(idx), device=a.device), axis=0)
    return np.asarray(a)[np.asarray(idx)]


class CalibratedClassifierCV(ClassifierMixin, BaseEstimator):
    """Probability calibration with isotonic regression, Platt's sigmoid or temperature
    scaling, fitted on cross-validation folds (or on a ``FrozenEstimator``'s prefitted
    classifier)."""

    _parameter_constraints = {
        "estimator": [
            HasMethods(["fit", "predict_proba"]),
            HasMethods(["fit", "decision_function"]),
            None,
        ],
        "method": [StrOptions({"isotonic", "sigmoid", "temperature"})],
        "cv": ["cv_object"],
        "n_jobs": [numbers.Integral, None],
        "ensemble": ["boolean", StrOptions({"auto"})],
    }

    def __init__(self, estimator=None, *, method="sigmoid", cv=None, n_jobs=None, ensemble="auto"):
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.n_jobs = n_jobs
        self.ensemble = ensemble

    def _validate_cv(self):
        cv = self.cv
        ok = (
            cv is None
            or (isinstance(cv, numbers.Integral) and not isinstance(cv, bool) and cv >= 2)
            or hasattr(cv, "split")
            or (hasattr(cv, "__iter__") and not isinstance(cv, str))
        )
        if not ok:
            from .exceptions import InvalidParameterError, sklearn_compatible

            raise sklearn_compatible(InvalidParameterError)(
                "The 'cv' parameter of CalibratedClassifierCV must be an int in the range "
                "[2, inf), an object implementing 'split' and 'get_n_splits', an iterable or "
                f"None. Got {cv!r} instead."
            )

    def fit(self, X, y, sample_weight=None, **fit_params):
        """Fit the classifier(s) and their calibrators."""
        cons = dict(self._parameter_constraints)
        cons.pop("cv")
        from .utils._param_validation import validate_parameter_constraints

        validate_parameter_constraints(cons, self.get_params(deep=False), type(self).__name__)
        self._validate_cv()
        who = type(self).__name__
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, who)
        dev = Xa.device
        yk = ya if input_kind(y) == "ember" else (ember.asnumpy(ya) if is_ember(ya) else ya)
        self.classes_, yi = encode_labels(yk, dev)
        K = int(self.classes_.shape[0])
        if self.estimator is None:
            from .svm import LinearSVC

            estimator = LinearSVC(random_state=0)
        else:
            estimator = self.estimator
        ensemble = self.ensemble
        if ensemble == "auto":
            ensemble = not _is_frozen(estimator)
        sw = None
        if sample_weight is not None:
            sw = _on(_host(sample_weight), dev).astype(ember.float64)
            if sw.shape != (int(Xa.shape[0]),):
                raise ValueError(
                    f"sample_weight.shape == {tuple(sw.shape)}, expected ({int(Xa.shape[0])},)!"
                )
        try:
            supports_sw = "sample_weight" in inspect.signature(estimator.fit).parameters
        except (TypeError, ValueError):
            supports_sw = False
        if sw is not None and not supports_sw:
            warnings.warn(
                f"Since {type(estimator).__name__} does not appear to accept sample_weight, "
                "sample weights will only be used for the calibration itself. Be warned that "
                "the result of the calibration is likely to be incorrect.",
                UserWarning,
                stacklevel=2,
            )
        self.calibrated_classifiers_ = []
        if _is_frozen(estimator):
            check_is_fitted(estimator.estimator if hasattr(estimator, "estimator") else estimator)
            pred, how = _response(estimator, Xa, dev)
            pos = self._positions(estimator, dev)
            self.calibrated_classifiers_.append(
                _fit_calibrator(estimator, pred, yi, self.classes_, self.method, sw, pos, how)
            )
        else:
            self._fit_cv(estimator, Xa, ya, yi, sw, supports_sw, ensemble, fit_params)
        first = self.calibrated_classifiers_[0].estimator
        if hasattr(first, "n_features_in_"):
            self.n_features_in_ = first.n_features_in_
        else:
            check_n_features(self, Xa, reset=True)
        names = getattr(first, "feature_names_in_", None)
        if names is not None:
            self.feature_names_in_ = names
        self._K = K
        return self

    def _positions(self, est, dev):
        pos = label_positions(est.classes_, self.classes_, None)
        return np.asarray(pos).tolist()

    def _fit_cv(self, estimator, Xa, ya, yi, sw, supports_sw, ensemble, fit_params):
        from .model_selection._validation import check_cv

        dev = Xa.device
        K = int(self.classes_.shape[0])
        cv = self.cv
        n_folds = cv if isinstance(cv, numbers.Integral) else getattr(cv, "n_splits", None)
        if cv is None:
            n_folds = 5
        if n_folds:
            counts = ember.asnumpy(ember.bincount(yi, minlength=K))
            if (counts < n_folds).any():
                raise ValueError(
                    f"Requesting {n_folds}-fold cross-validation but provided less than "
                    f"{n_folds} examples for at least one class."
                )
        if type(cv).__name__ == "LeaveOneOut":
            raise ValueError(
                "LeaveOneOut cross-validation does not allowall classes to be present in test "
                "splits. Please use a cross-validation generator that allows all classes to "
                "appear in every test and train split."
            )
        splitter = check_cv(cv, ya, classifier=True)
        kw = dict(fit_params)
        if ensemble:
            for train, test in splitter.split(Xa, ya):
                est = clone(estimator)
                fkw = dict(kw)
                if sw is not None and supports_sw:
                    fkw["sample_weight"] = _rows(sw, train, dev)
                est.fit(_rows(Xa, train, dev), _rows(ya, train, dev), **fkw)
                Xt = _rows(Xa, test, dev)
                pred, how = _response(est, Xt, dev)
                self.calibrated_classifiers_.append(
                    _fit_calibrator(
                        est,
                        pred,
                        _rows(yi, test, dev),
                        self.classes_,
                        self.method,
                        _rows(sw, test, dev),
                        self._positions(est, dev),
                        how,
                    )
                )
            return
        est = clone(estimator)
        parts, rows = [], []
        for train, test in splitter.split(Xa, ya):
            f = clone(estimator)
            fkw = dict(kw)
            if sw is not None and supports_sw:
                fkw["sample_weight"] = _rows(sw, train, dev)
            f.fit(_rows(Xa, train, dev), _rows(ya, train, dev), **fkw)
            p, how = _response(f, _rows(Xa, test, dev), dev)
            if K > 2 and int(p.shape[1]) != K:  # a fold missed classes: realign the columns
                pos = ember.asarray(np.asarray(self._positions(f, dev)), device=dev)
                oh = (pos[:, None] == ember.arange(K, device=dev)[None, :]).astype(ember.float64)
                p = p @ oh
            parts.append(p)
            rows.append(np.asarray(test))
        # out-of-fold responses back in row order (the folds partition the rows)
        order = ember.asarray(np.argsort(np.concatenate(rows), kind="stable"), device=dev)
        pred = ember.take(ember.concatenate(parts, axis=0), order, axis=0)
        if sw is not None and supports_sw:
            kw["sample_weight"] = sw
        est.fit(Xa, ya, **kw)
        self.calibrated_classifiers_.append(
            _fit_calibrator(est, pred, yi, self.classes_, self.method, sw, list(range(K)), how)
        )

    def _check(self, X):
        check_is_fitted(self, "calibrated_classifiers_")
        Xa = check_array(X, estimator=self)
        if int(Xa.shape[1]) != self.n_features_in_:
            raise ValueError(
                f"X has {int(Xa.shape[1])} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        return Xa

    def _proba(self, Xa):
        acc = None
        for c in self.calibrated_classifiers_:
            p = c._proba(Xa)
            acc = p if acc is None else acc + p
        return acc / len(self.calibrated_classifiers_)

    def predict_proba(self, X):
        """Mean of the calibrated classifiers' probabilities (columns in ``classes_``
        order)."""
        return to_output(self._proba(self._check(X)), input_kind(X))

    def predict(self, X):
        """The class of largest calibrated probability."""
        idx = ember.argmax(self._proba(self._check(X)), axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))


def calibration_curve(y_true, y_prob, *, pos_label=None, n_bins=5, strategy="uniform"):
    """(prob_true, prob_pred): the fraction of positives and the mean predicted probability
    in each non-empty bin of ``y_prob``."""
    who = "calibration_curve"
    yp = column_or_1d(y_prob, dtype=ember.float64)
    dev = yp.device
    if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral) or n_bins < 1:
        raise ValueError(f"{who}: n_bins must be a positive int, got {n_bins!r}")
    yt_h = _host(y_true)
    if (yt_h.shape[0] if hasattr(yt_h, "shape") else len(yt_h)) != yp.shape[0]:
        raise ValueError(
            "Found input variables with inconsistent numbers of samples: "
            f"[{len(yt_h)}, {int(yp.shape[0])}]"
        )
    if is_ember(yt_h):
        labels = ember.asnumpy(ember.unique(yt_h))
    else:
        yt_h = np.asarray(yt_h).reshape(-1)
        labels = np.unique(yt_h)
    if pos_label is None:
        if labels.dtype.kind in "OUS" or not (
            set(labels.tolist()) <= {0, 1} or set(labels.tolist()) <= {-1, 1}
        ):
            raise ValueError(
                f"y_true takes value in {{{', '.join(repr(v) for v in labels.tolist())}}} and "
                "pos_label is not specified: either make y_true take value in {0, 1} or "
                "{-1, 1} or pass pos_label explicitly."
            )
        pos_label = 1
    if float(yp.min()) < 0 or float(yp.max()) > 1:
        raise ValueError("y_prob has values outside [0, 1].")
    if len(labels) > 2:
        raise ValueError(f"Only binary classification is supported. Provided labels {labels}.")
    if is_ember(yt_h):
        pos = (to_device(yt_h, dev) == pos_label).astype(ember.float64)
    else:
        pos = ember.asarray((yt_h == pos_label).astype(np.float64), device=dev)
    if strategy == "quantile":
        q = ember.linspace(0.0, 1.0, n_bins + 1, device=dev) * 100.0
        bins = ember.percentile(yp, q)
    elif strategy == "uniform":
        bins = ember.linspace(0.0, 1.0, n_bins + 1, device=dev)
    else:
        raise ValueError(
            "Invalid entry to 'strategy' input. Strategy must be either 'quantile' or 'uniform'."
        )
    ids = ember.searchsorted(bins[1:-1].astype(ember.float64), yp)
    s = ember.bincount(ids, weights=yp, minlength=n_bins)
    t = ember.bincount(ids, weights=pos, minlength=n_bins)
    c = ember.bincount(ids, minlength=n_bins).astype(ember.float64)
    nz = ember.nonzero(c != 0)[0]
    prob_true = ember.take(t, nz) / ember.take(c, nz)
    prob_pred = ember.take(s, nz) / ember.take(c, nz)
    kind = "ember" if is_ember(y_prob) else "numpy"
    return to_output(prob_true, kind), to_output(prob_pred, kind)
