"""``LogisticRegressionCV``: logistic regression with ``C`` (and the elastic-net ``l1_ratio``)
chosen by cross-validation, built on ember's ``LogisticRegression``.

For each fold (stratified 5-fold by default) and each ``l1_ratio``, one ``LogisticRegression``
with ``warm_start=True`` walks the ``Cs`` path in the given order, each fit starting from the
previous C's coefficients (scikit-learn's regularisation path); its test score is recorded.
The fits run on the input's device: the folds are row gathers of the validated X. With
``refit=True`` the C (and l1_ratio) of the best mean score is refitted on all the data, warm
started (float64 inputs) from the mean of the folds' coefficients at that point; otherwise the
folds' best coefficients and Cs are averaged. Class weights ('balanced') are computed once on
the whole y and handed to every fold, as scikit-learn does. The parameters are scikit-learn
1.9's, with the values its transitional defaults stand for ('l2' penalty, accuracy scoring,
``l1_ratios=None``, the legacy fitted attributes) and without their FutureWarnings.
"""

from __future__ import annotations

import numbers
import warnings
from numbers import Integral

import numpy as np

import ember

from ..utils._labels import encode_labels
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_classification_targets,
    check_n_features,
    check_sample_weight,
    check_X_y,
    input_kind,
    is_ember,
    to_device,
    to_output,
)
from ._logistic import LogisticRegression, compute_class_weight

__all__ = ["LogisticRegressionCV"]


class LogisticRegressionCV(LogisticRegression):
    """Logistic regression whose inverse regularisation ``C`` is chosen by cross-validation."""

    _parameter_constraints = {
        k: v
        for k, v in LogisticRegression._parameter_constraints.items()
        if k not in ("C", "warm_start", "l1_ratio", "penalty")
    }
    _parameter_constraints.update(
        {
            "Cs": [Interval(Integral, 1, None, closed="left"), "array-like"],
            "l1_ratios": ["array-like", None],
            "cv": "no_validation",  # an int, a splitter or an iterable of splits (check_cv)
            "scoring": [str, callable, None],
            "refit": ["boolean"],
            "penalty": [StrOptions({"l1", "l2", "elasticnet", "deprecated"})],
            "use_legacy_attributes": ["boolean"],
        }
    )

    def __init__(
        self,
        *,
        Cs=10,
        l1_ratios=None,
        fit_intercept=True,
        cv=None,
        dual=False,
        penalty="l2",
        scoring=None,
        solver="lbfgs",
        tol=1e-4,
        max_iter=100,
        class_weight=None,
        n_jobs=None,
        verbose=0,
        refit=True,
        intercept_scaling=1.0,
        random_state=None,
        use_legacy_attributes=True,
    ):
        self.Cs = Cs
        self.l1_ratios = l1_ratios
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.dual = dual
        self.penalty = penalty
        self.scoring = scoring
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.refit = refit
        self.intercept_scaling = intercept_scaling
        self.random_state = random_state
        self.use_legacy_attributes = use_legacy_attributes

    def _penalty_and_ratios(self):
        """(penalty, l1_ratios_) as scikit-learn resolves them; 'deprecated' derives the
        penalty from ``l1_ratios`` (scikit-learn 1.8's rule)."""
        ratios = self.l1_ratios
        if ratios is not None:
            ratios = list(np.asarray(ratios, dtype=object).reshape(-1))
        if self.penalty == "deprecated":
            if ratios is None or all(r == 0 for r in ratios):
                penalty = "l2"
            elif all(r == 1 for r in ratios):
                penalty = "l1"
            else:
                penalty = "elasticnet"
        else:
            penalty = self.penalty
        if penalty == "elasticnet":
            if (
                not ratios
                or any(not isinstance(r, numbers.Number) or isinstance(r, bool) for r in ratios)
                or any(not 0 <= r <= 1 for r in ratios)
            ):
                raise ValueError(
                    "l1_ratios must be an array-like of numbers between 0 and 1; got "
                    f"(l1_ratios={self.l1_ratios!r})"
                )
            return penalty, ratios
        if ratios is not None and self.penalty != "deprecated":
            warnings.warn(
                f"l1_ratios parameter is only used when penalty is 'elasticnet'. Got "
                f"(penalty={penalty})",
                UserWarning,
                stacklevel=3,
            )
        return penalty, ([None] if ratios is None else ratios)

    def _inner(self, C, l1_ratio, penalty, class_weight):
        r = {"l2": 0.0, "l1": 1.0}.get(penalty, l1_ratio)
        return LogisticRegression(
            C=float(C),
            l1_ratio=float(r),
            fit_intercept=self.fit_intercept,
            intercept_scaling=self.intercept_scaling,
            class_weight=class_weight,
            random_state=self.random_state,
            solver=self.solver,
            tol=self.tol,
            max_iter=self.max_iter,
            verbose=self.verbose,
            warm_start=True,
        )

    def _scorer(self):
        from ..model_selection._validation import get_scorer

        return get_scorer(self.scoring if self.scoring is not None else "accuracy")

    def fit(self, X, y, sample_weight=None):
        """Cross-validate the ``Cs`` path; sets ``C_``, ``Cs_``, ``scores_``, ``coef_``,
        ``intercept_``, ``classes_``, ``coefs_paths_``, ``n_iter_``."""
        from ..model_selection._split import _safe_index
        from ..model_selection._validation import check_cv

        self._validate_params()
        penalty, ratios = self._penalty_and_ratios()
        if penalty in ("l1", "elasticnet") and self.solver != "saga":
            raise ValueError(
                f"Solver {self.solver} supports only 'l2' or None penalties, got {penalty} penalty."
            )
        if self.dual:
            raise ValueError("LogisticRegressionCV: dual=True is only for liblinear; use False")
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, type(self).__name__)
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        dev = Xa.device
        classes, _ = encode_labels(ya, dev)
        ch = ember.asnumpy(classes) if is_ember(classes) else np.asarray(classes)
        K = len(ch)
        if K < 2:
            raise ValueError(
                "This solver needs samples of at least 2 classes in the data, but the data "
                f"contains only one class: {ch[0]!r}."
            )
        if isinstance(self.Cs, numbers.Integral):
            Cs = np.logspace(-4, 4, int(self.Cs))
        else:
            Cs = np.asarray(self.Cs, dtype=np.float64).reshape(-1)
            if Cs.size == 0 or not np.all(Cs > 0):
                raise ValueError(f"LogisticRegressionCV: Cs must be positive, got {self.Cs!r}")
        sw = None if sample_weight is None else check_sample_weight(sample_weight, Xa)
        cw = self.class_weight
        if isinstance(cw, dict):
            if not set(cw) <= set(ch.tolist()):
                raise ValueError(
                    "The given class_weight dict must have the class labels as keys; "
                    f"classes={ch} but key={cw.keys()}"
                )
        elif cw == "balanced":  # weights of the whole data, the same for every fold
            wts = compute_class_weight(
                "balanced",
                classes=ch,
                y=ya,
                # n weights for the per-class totals (host copy of a 1-D vector).
                sample_weight=None if sw is None else ember.asnumpy(sw),
            )
            cw = dict(zip(ch.tolist(), wts.tolist(), strict=True))
        yh = ember.asnumpy(ya) if is_ember(ya) else np.asarray(ya)
        folds = list(check_cv(self.cv, yh, classifier=True).split(Xa, yh))
        scorer = self._scorer()
        nc = 1 if K == 2 else K
        d = int(Xa.shape[1])
        n_f, n_c, n_r = len(folds), len(Cs), len(ratios)
        scores = np.empty((n_f, n_c, n_r))
        n_iter = np.zeros((n_f, n_c, n_r), dtype=np.int32)
        paths = []  # per fold: per C: per ratio: (nc, d [+1]) on the device
        for f, (train, test) in enumerate(folds):
            Xtr, ytr = _safe_index(Xa, train), _safe_index(ya, train)
            Xte, yte = _safe_index(Xa, test), _safe_index(ya, test)
            swtr = None if sw is None else _safe_index(sw, train)
            swte = None if sw is None else _safe_index(sw, test)
            per_c = [[None] * n_r for _ in range(n_c)]
            for r, ratio in enumerate(ratios):
                lr = self._inner(Cs[0], ratio, penalty, cw)
                for c, C in enumerate(Cs):
                    lr.set_params(C=float(C))
                    lr.fit(Xtr, ytr, sample_weight=swtr)
                    if int(lr.coef_.shape[0]) != nc:
                        raise ValueError(
                            f"LogisticRegressionCV: the training part of fold {f} lacks a "
                            "class; use fewer folds or a stratified splitter"
                        )
                    per_c[c][r] = self._flat(lr)
                    scores[f, c, r] = float(scorer(lr, Xte, yte, sample_weight=swte))
                    n_iter[f, c, r] = int(lr.n_iter_[0])
            paths.append(per_c)
        # (n_folds, n_Cs, n_ratios, nc, n_dof) on the device
        P = ember.stack([ember.stack([ember.stack(pc) for pc in pf]) for pf in paths])
        self.classes_ = classes if kind == "ember" else ch
        self.Cs_ = Cs
        self.l1_ratios_ = np.asarray(ratios)
        if self.refit:
            total = scores.sum(axis=0)  # (n_Cs, n_ratios)
            ci, ri = np.unravel_index(int(np.argmax(total)), total.shape)
            best_C, best_r = float(Cs[ci]), ratios[ri]
            final = self._inner(best_C, best_r, penalty, cw)
            if Xa.dtype == ember.float64:
                init = P[:, ci, ri].mean(axis=0)  # the folds' mean: the refit's warm start
                final.coef_ = init[:, :d]
                # nc starting intercepts (a host copy of nc numbers, as LogisticRegression
                # reads it)
                b0 = ember.asnumpy(init[:, d]) if self.fit_intercept else np.zeros(nc)
                final.intercept_ = b0
            # In float32 the refit starts from zero: from a start this close to the optimum,
            # L-BFGS's relative-decrease test (64 float32 eps) stops it before the gradient
            # is small, leaving the coefficients ~1e-2 off.
            final.fit(Xa, ya, sample_weight=sw)
            W = to_device(final.coef_, dev)
            b = to_device(final.intercept_, dev)
            C_list, r_list = [best_C], [best_r]
        else:
            flat = scores.reshape(n_f, -1)
            best = np.argmax(flat, axis=1)
            bc, br = np.unravel_index(best, (n_c, n_r))
            w = ember.stack([P[f, int(bc[f]), int(br[f])] for f in range(n_f)]).mean(axis=0)
            W = w[:, :d]
            b = w[:, d] if self.fit_intercept else ember.zeros((nc,), dtype=w.dtype, device=dev)
            C_list = [float(np.mean(Cs[bc]))]
            r_list = [float(np.mean(np.asarray(ratios, dtype=float)[br]))]
            if penalty != "elasticnet":
                r_list = [0.0]
        self.coef_ = to_output(W, kind)
        self.intercept_ = to_output(b, kind)
        self._set_path_attributes(P, scores, n_iter, ch, C_list, r_list, penalty, kind)
        return self

    def _flat(self, lr):
        """A fitted path point as (nc, d + 1) with the intercepts last (or (nc, d))."""
        W = lr.coef_
        if not self.fit_intercept:
            return W
        b = lr.intercept_
        return ember.concatenate([W, b[:, None]], axis=1)

    def _set_path_attributes(self, P, scores, n_iter, ch, C_list, r_list, penalty, kind):
        n_f, n_c, n_r = scores.shape
        keep_ratio_axis = self.l1_ratios is not None
        K = len(ch)
        keys = ch[1:] if K == 2 else ch
        if self.use_legacy_attributes:
            paths, sc, it = P, scores, n_iter[None]
            if not keep_ratio_axis:
                paths, sc, it = P[:, :, 0], scores[:, :, 0], it[:, :, :, 0]
            self.scores_ = {k: sc.copy() for k in keys}
            self.coefs_paths_ = {k: to_output(paths[..., j, :], kind) for j, k in enumerate(keys)}
            self.n_iter_ = it
            reps = 1 if K == 2 else K
            self.C_ = np.tile(np.asarray(C_list, dtype=np.float64), reps)
            r_dtype = object if None in r_list else None
            self.l1_ratio_ = np.tile(np.asarray(r_list, dtype=r_dtype), reps)
            return
        self.C_ = float(C_list[0])
        if keep_ratio_axis:
            self.l1_ratio_ = float(r_list[0])
        else:
            self.l1_ratio_ = 1.0 if penalty == "l1" else 0.0
        # (n_folds, n_ratios, n_Cs, n_classes, n_dof) and (n_folds, n_ratios, n_Cs)
        self.coefs_paths_ = to_output(ember.swapaxes(P, 1, 2), kind)
        self.scores_ = np.swapaxes(scores, 1, 2).copy()
        self.n_iter_ = np.swapaxes(n_iter, 1, 2).copy()

    def score(self, X, y, sample_weight=None):
        """The ``scoring`` metric (accuracy by default) of the predictions on X."""
        return float(self._scorer()(self, X, y, sample_weight=sample_weight))
