"""``MLPClassifier`` and ``MLPRegressor`` (scikit-learn's ``sklearn.neural_network``) on ember
arrays, with hand-written backpropagation in ember ops on X's device.

The model, losses, gradients and solvers follow scikit-learn's exactly: Glorot-uniform
initialisation (factor 2 for logistic, else 6), the L2 term ``alpha/2 |W|^2 / n``, the
canonical output deltas ``a_out - y``, Adam/SGD (momentum, Nesterov, constant/invscaling/
adaptive rates) over mini-batches of ``min(200, n)`` with scikit-learn's stopping rule on the
training loss or, with ``early_stopping``, the validation score. The initial weights and the
per-epoch shuffles are drawn on the host with NumPy's ``RandomState`` seeded as scikit-learn
seeds it (one upload of the weights, and of n indices per epoch), so with an integer
``random_state`` ember trains the same network as scikit-learn up to float rounding. Every
batch step (forward, backward, update) stays on the device; the epoch loss is accumulated there
and read once per epoch. ``solver='lbfgs'`` runs ember's L-BFGS (``utils._optimize``) instead
of SciPy's L-BFGS-B: same objective and ``gtol=tol``, different iterates and ``n_iter_``.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin
from ..exceptions import ConvergenceWarning, sklearn_compatible
from ..utils._labels import decode_labels, encode_labels, encode_with_classes
from ..utils._optimize import lbfgs_minimize
from ..utils._param_validation import Interval, Options, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_sample_weight,
    check_X_y,
    input_kind,
    is_ember,
    to_device,
    to_output,
)
from ._base import ACTIVATIONS, DERIVATIVES, LOSSES

__all__ = ["MLPClassifier", "MLPRegressor"]


class _MaxFun(Exception):
    pass


def _np_random_state(seed):
    """NumPy RandomState as scikit-learn's ``check_random_state`` makes it."""
    if seed is None:
        return np.random.mtrand._rand
    if isinstance(seed, numbers.Integral):
        return np.random.RandomState(int(seed))
    if isinstance(seed, np.random.RandomState):
        return seed
    if hasattr(seed, "integers"):  # a NumPy or ember Generator: derive a seed
        return np.random.RandomState(int(np.asarray(seed.integers(0, 2**31 - 1))))
    raise ValueError(f"{seed!r} cannot be used to seed a numpy.random.RandomState instance")


class _BaseMLP(BaseEstimator):
    _parameter_constraints = {
        "hidden_layer_sizes": ["array-like", Interval(numbers.Integral, 1, None, closed="left")],
        "activation": [StrOptions({"identity", "logistic", "tanh", "relu"})],
        "solver": [StrOptions({"lbfgs", "sgd", "adam"})],
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
        "batch_size": [StrOptions({"auto"}), Interval(numbers.Integral, 1, None, closed="left")],
        "learning_rate": [StrOptions({"constant", "invscaling", "adaptive"})],
        "learning_rate_init": [Interval(numbers.Real, 0, None, closed="neither")],
        "power_t": [Interval(numbers.Real, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "verbose": ["boolean", numbers.Integral],
        "warm_start": ["boolean"],
        "momentum": [Interval(numbers.Real, 0, 1, closed="both")],
        "nesterovs_momentum": ["boolean"],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="left")],
        "beta_1": [Interval(numbers.Real, 0, 1, closed="left")],
        "beta_2": [Interval(numbers.Real, 0, 1, closed="left")],
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_iter_no_change": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Options(numbers.Real, {np.inf}),
        ],
        "max_fun": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    # ---- network ---------------------------------------------------------------------------

    def _forward(self, W, b, X):
        acts = [X]
        a = X
        L = len(W)
        hidden = ACTIVATIONS[self.activation]
        for i in range(L):
            z = a @ W[i] + b[i]
            a = hidden(z) if i < L - 1 else ACTIVATIONS[self.out_activation_](z)
            acts.append(a)
        return acts

    def _loss_name(self):
        name = getattr(self, "loss", "log_loss")
        if name == "log_loss" and self.out_activation_ == "logistic":
            return "binary_log_loss"
        return name

    def _loss_grad(self, W, b, X, Y, sw):
        """(loss as a 0-d ember array, coef grads, intercept grads) of one batch."""
        acts = self._forward(W, b, X)
        loss = LOSSES[self._loss_name()](Y, acts[-1], sw)
        reg = None
        for w in W:
            s = (w * w).sum()
            reg = s if reg is None else reg + s
        sw_sum = float(X.shape[0]) if sw is None else sw.sum()
        loss = loss + (0.5 * self.alpha) * reg / sw_sum
        delta = acts[-1] - Y
        if sw is not None:
            delta = delta * sw[:, None]
        L = len(W)
        gW, gb = [None] * L, [None] * L
        deriv = DERIVATIVES[self.activation]
        for i in range(L - 1, -1, -1):
            gW[i] = (acts[i].T @ delta + self.alpha * W[i]) / sw_sum
            gb[i] = delta.sum(axis=0) / sw_sum
            if i > 0:
                delta = deriv(acts[i], delta @ W[i].T)
        return loss, gW, gb

    # ---- fitting ---------------------------------------------------------------------------

    def _layer_sizes(self):
        h = self.hidden_layer_sizes
        h = list(h) if hasattr(h, "__iter__") else [h]
        if any(int(v) <= 0 for v in h):
            raise ValueError(f"hidden_layer_sizes must be > 0, got {h}.")
        return [int(v) for v in h]

    def _init_params(self, units, dtype, dev, rs):
        factor = 2.0 if self.activation == "logistic" else 6.0
        W, b = [], []
        for fan_in, fan_out in zip(units[:-1], units[1:], strict=True):
            bound = np.sqrt(factor / (fan_in + fan_out))
            w = rs.uniform(-bound, bound, (fan_in, fan_out))
            c = rs.uniform(-bound, bound, fan_out)
            W.append(ember.asarray(w, device=dev).astype(dtype))
            b.append(ember.asarray(c, device=dev).astype(dtype))
        return W, b

    def _fit(self, X, y, sample_weight=None, incremental=False):
        self._validate_params()
        hidden = self._layer_sizes()
        first = not hasattr(self, "_W") or (not self.warm_start and not incremental)
        Xa, Y = self._validate_input(X, y, incremental, reset=first)
        dev = Xa.device
        sw = None
        if sample_weight is not None:
            sw = check_sample_weight(sample_weight, Xa, Xa.dtype)
        F = int(Xa.shape[1])
        self.n_outputs_ = int(Y.shape[1])
        units = [F, *hidden, self.n_outputs_]
        self._rs = _np_random_state(self.random_state)
        if first:
            self._initialize(units, Xa.dtype, dev)
        elif int(self._W[0].shape[0]) != F:
            raise ValueError(
                f"X has {F} features, but {type(self).__name__} is expecting "
                f"{int(self._W[0].shape[0])} features as input."
            )
        self._W = [to_device(w, dev).astype(Xa.dtype) for w in self._W]
        self._b = [to_device(c, dev).astype(Xa.dtype) for c in self._b]
        if self.solver == "lbfgs":
            self._fit_lbfgs(Xa, Y, sw)
        else:
            self._fit_stochastic(Xa, Y, sw, incremental)
        ok = all(bool(ember.isfinite(p).all()) for p in self._W + self._b)
        if not ok:
            raise ValueError(
                "Solver produced non-finite parameter weights. The input data may contain "
                "large values and need to be preprocessed."
            )
        self._kind = input_kind(X)
        return self

    def _initialize(self, units, dtype, dev):
        self.n_iter_ = 0
        self.t_ = 0
        self.n_layers_ = len(units)
        self.out_activation_ = self._out_activation()
        self._W, self._b = self._init_params(units, dtype, dev, self._rs)
        self.__dict__.pop("_optimizer", None)
        if self.solver != "lbfgs":
            self.loss_curve_ = []
            self._no_improvement_count = 0
            if self.early_stopping:
                self.validation_scores_ = []
                self.best_validation_score_ = -np.inf
                self.best_loss_ = None
            else:
                self.best_loss_ = np.inf
                self.validation_scores_ = None
                self.best_validation_score_ = None

    def _fit_lbfgs(self, X, Y, sw):
        shapes = [tuple(w.shape) for w in self._W] + [tuple(c.shape) for c in self._b]
        sizes = [int(np.prod(s)) for s in shapes]
        offs = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        L = len(self._W)

        def unpack(theta):
            parts = [theta[offs[i] : offs[i + 1]].reshape(shapes[i]) for i in range(len(shapes))]
            return parts[:L], parts[L:]

        count = [0]
        best = [None, np.inf]

        def fun(theta):
            count[0] += 1
            if count[0] > self.max_fun:
                raise _MaxFun
            W, b = unpack(theta)
            loss, gW, gb = self._loss_grad(W, b, X, Y, sw)
            g = ember.concatenate([t.reshape(-1) for t in gW + gb])
            f = float(loss)
            if f < best[1]:
                best[0], best[1] = theta, f
            return f, g

        theta0 = ember.concatenate([t.reshape(-1) for t in self._W + self._b])
        try:
            theta, f, nit, conv = lbfgs_minimize(fun, theta0, max_iter=self.max_iter, gtol=self.tol)
        except _MaxFun:
            theta, f, nit, conv = best[0], best[1], self.max_iter, False
            warnings.warn(
                f"lbfgs failed to converge: the number of function evaluations exceeded "
                f"max_fun={self.max_fun}.",
                sklearn_compatible(ConvergenceWarning),
                stacklevel=4,
            )
        else:
            if not conv:
                warnings.warn(
                    f"lbfgs failed to converge after {nit} iteration(s): STOP: TOTAL NO. OF "
                    "ITERATIONS REACHED LIMIT.\n\nIncrease the number of iterations to improve "
                    f"the convergence (max_iter={self.max_iter}).",
                    sklearn_compatible(ConvergenceWarning),
                    stacklevel=4,
                )
        self.n_iter_ = int(nit)
        self.loss_ = float(f)
        self._W, self._b = unpack(theta)
        self._W = [w.copy() for w in self._W]
        self._b = [c.copy() for c in self._b]

    def _split_validation(self, X, Y, sw):
        from ..model_selection import train_test_split

        # scikit-learn stratifies single-output (binary) classification only
        strat = Y[:, 0] if self._is_clf and self.n_outputs_ == 1 else None
        arrays = (X, Y) if sw is None else (X, Y, sw)
        parts = train_test_split(
            *arrays,
            random_state=self._rs,
            test_size=self.validation_fraction,
            stratify=strat,
        )
        Xt, Xv, Yt, Yv = parts[:4]
        swt, swv = (parts[4], parts[5]) if sw is not None else (None, None)
        if int(Xv.shape[0]) < 2:
            raise ValueError(
                "The validation set is too small. Increase 'validation_fraction' or the size "
                "of your dataset."
            )
        return Xt, Xv, Yt, Yv, swt, swv

    def _fit_stochastic(self, X, Y, sw, incremental):
        if not incremental or not hasattr(self, "_optimizer"):
            self._optimizer = {"lr": float(self.learning_rate_init), "t": 0, "state": None}
        if self.early_stopping and incremental:
            raise ValueError("partial_fit does not support early_stopping=True")
        Xv = Yv = swv = None
        if self.early_stopping:
            X, Xv, Y, Yv, sw, swv = self._split_validation(X, Y, sw)
        n = int(X.shape[0])
        dev = X.device
        if self.batch_size == "auto":
            bs = min(200, n)
        else:
            if self.batch_size > n:
                warnings.warn(
                    "Got `batch_size` less than 1 or larger than sample size. It is going to "
                    "be clipped",
                    UserWarning,
                    stacklevel=4,
                )
            bs = int(np.clip(self.batch_size, 1, n))
        idx_host = np.arange(n, dtype=np.int64)
        self.n_iter_ = 0
        for _ in range(self.max_iter):
            if self.shuffle:
                perm = np.arange(n)
                self._rs.shuffle(perm)
                idx_host = idx_host[perm]
                idx = ember.asarray(idx_host, device=dev)
            acc = None
            for a in range(0, n, bs):
                e = min(a + bs, n)
                if self.shuffle:
                    rows = idx[a:e]
                    Xb, Yb = ember.take(X, rows, axis=0), ember.take(Y, rows, axis=0)
                    swb = None if sw is None else ember.take(sw, rows)
                else:
                    Xb, Yb = X[a:e], Y[a:e]
                    swb = None if sw is None else sw[a:e]
                loss, gW, gb = self._loss_grad(self._W, self._b, Xb, Yb, swb)
                term = loss * float(e - a)
                acc = term if acc is None else acc + term
                self._update(gW, gb)
            self.n_iter_ += 1
            self.loss_ = float(acc) / n
            self.t_ += n
            self.loss_curve_.append(self.loss_)
            if self.verbose:
                print(f"Iteration {self.n_iter_}, loss = {self.loss_:.8f}")
            self._update_no_improvement(Xv, Yv, swv)
            if self.learning_rate == "invscaling" and self.solver == "sgd":
                self._optimizer["lr"] = float(self.learning_rate_init) / (
                    (self.t_ + 1) ** self.power_t
                )
            if self._no_improvement_count > self.n_iter_no_change:
                if self._trigger_stopping():
                    break
                self._no_improvement_count = 0
            if incremental:
                break
            if self.n_iter_ == self.max_iter:
                warnings.warn(
                    f"Stochastic Optimizer: Maximum iterations ({self.max_iter}) reached and "
                    "the optimization hasn't converged yet.",
                    sklearn_compatible(ConvergenceWarning),
                    stacklevel=4,
                )
        if self.early_stopping:
            self._W, self._b = self._best_W, self._best_b

    def _trigger_stopping(self):
        if self.solver == "adam" or self.learning_rate != "adaptive":
            return True
        if self._optimizer["lr"] <= 1e-6:
            return True
        self._optimizer["lr"] /= 5.0
        return False

    def _update(self, gW, gb):
        opt = self._optimizer
        params = self._W + self._b
        grads = gW + gb
        if opt["state"] is None:
            zeros = [ember.zeros_like(p) for p in params]
            opt["state"] = (zeros, [ember.zeros_like(p) for p in params])
        if self.solver == "adam":
            opt["t"] += 1
            t = opt["t"]
            b1, b2 = self.beta_1, self.beta_2
            ms, vs = opt["state"]
            ms = [b1 * m + (1 - b1) * g for m, g in zip(ms, grads, strict=True)]
            vs = [b2 * v + (1 - b2) * (g * g) for v, g in zip(vs, grads, strict=True)]
            opt["state"] = (ms, vs)
            lr = float(opt["lr"] * np.sqrt(1 - b2**t) / (1 - b1**t))
            new = [
                p - lr * m / (ember.sqrt(v) + self.epsilon)
                for p, m, v in zip(params, ms, vs, strict=True)
            ]
        else:
            vel, _ = opt["state"]
            lr, mu = opt["lr"], self.momentum
            upd = [mu * v - lr * g for v, g in zip(vel, grads, strict=True)]
            opt["state"] = (upd, None)
            if self.nesterovs_momentum:
                upd = [mu * v - lr * g for v, g in zip(upd, grads, strict=True)]
            new = [p + u for p, u in zip(params, upd, strict=True)]
        L = len(self._W)
        self._W, self._b = new[:L], new[L:]

    def _update_no_improvement(self, Xv, Yv, swv):
        if self.early_stopping:
            score = self._validation_score(Xv, Yv, swv)
            self.validation_scores_.append(score)
            if self.verbose:
                print(f"Validation score: {score:f}")
            if score < self.best_validation_score_ + self.tol:
                self._no_improvement_count += 1
            else:
                self._no_improvement_count = 0
            if score > self.best_validation_score_:
                self.best_validation_score_ = score
                self._best_W, self._best_b = list(self._W), list(self._b)
        else:
            last = self.loss_curve_[-1]
            if last > self.best_loss_ - self.tol:
                self._no_improvement_count += 1
            else:
                self._no_improvement_count = 0
            if last < self.best_loss_:
                self.best_loss_ = last

    # ---- prediction ------------------------------------------------------------------------

    def _check_X(self, X):
        check_is_fitted(self, "_W")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        dev = self._W[0].device
        return to_device(Xa, dev).astype(self._W[0].dtype)

    def _output(self, X):
        Xa = self._check_X(X)
        return self._forward(self._W, self._b, Xa)[-1]

    @property
    def coefs_(self):
        check_is_fitted(self, "_W")
        return [to_output(w, self._kind) for w in self._W]

    @property
    def intercepts_(self):
        check_is_fitted(self, "_W")
        return [to_output(c, self._kind) for c in self._b]


class MLPClassifier(ClassifierMixin, _BaseMLP):
    """Multi-layer perceptron classifier (log-loss; logistic output for two classes and
    multilabel targets, softmax otherwise)."""

    _is_clf = True

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        solver="adam",
        alpha=0.0001,
        batch_size="auto",
        learning_rate="constant",
        learning_rate_init=0.001,
        power_t=0.5,
        max_iter=200,
        shuffle=True,
        random_state=None,
        tol=1e-4,
        verbose=False,
        warm_start=False,
        momentum=0.9,
        nesterovs_momentum=True,
        early_stopping=False,
        validation_fraction=0.1,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        n_iter_no_change=10,
        max_fun=15000,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_init = learning_rate_init
        self.power_t = power_t
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.tol = tol
        self.verbose = verbose
        self.warm_start = warm_start
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.n_iter_no_change = n_iter_no_change
        self.max_fun = max_fun

    def _out_activation(self):
        return "softmax" if self._multiclass else "logistic"

    def _validate_input(self, X, y, incremental, reset):
        who = type(self).__name__
        h = y if is_ember(y) else np.asarray(y)
        multilabel = h.ndim == 2 and h.shape[1] > 1
        if multilabel:
            Xa = check_array(X, estimator=self)
            Y = to_device(h, Xa.device).astype(Xa.dtype)
            if Y.shape[0] != Xa.shape[0]:
                raise ValueError(
                    "Found input variables with inconsistent numbers of samples: "
                    f"[{int(Xa.shape[0])}, {int(Y.shape[0])}]"
                )
            if not bool(((Y == 0) | (Y == 1)).all()):
                raise ValueError(f"{who}: multilabel y must be a 0/1 indicator matrix")
            check_n_features(self, Xa, reset=reset)
            K = int(Y.shape[1])
            if reset or not hasattr(self, "classes_"):
                self.classes_ = np.arange(K)
            self._multiclass = False
            return Xa, Y
        Xa, ya = check_X_y(X, y, estimator=self)
        from ..utils.validation import check_classification_targets

        check_classification_targets(ya, who)
        check_n_features(self, Xa, reset=reset)
        yk = ya if input_kind(y) == "ember" else (ember.asnumpy(ya) if is_ember(ya) else ya)
        dev = Xa.device
        if (reset and not self.__dict__.get("_fixed_classes")) or not hasattr(self, "classes_"):
            self.classes_, yi = encode_labels(yk, dev)
        else:
            new, _ = encode_labels(yk, dev)
            old = ember.asnumpy(self.classes_) if is_ember(self.classes_) else self.classes_
            newh = ember.asnumpy(new) if is_ember(new) else new
            if self.warm_start and set(np.asarray(newh).tolist()) != set(np.asarray(old).tolist()):
                raise ValueError(
                    "warm_start can only be used where `y` has the same classes as in the "
                    f"previous call to fit. Previously got {old}, `y` has {newh}"
                )
            yi = encode_with_classes(yk, self.classes_, dev, who)
        K = int(self.classes_.shape[0])
        self._multiclass = K > 2
        if K > 2:
            ar = ember.arange(K, device=dev)
            Y = (yi[:, None] == ar[None, :]).astype(Xa.dtype)
        elif K == 2:
            Y = yi[:, None].astype(Xa.dtype)
        else:
            Y = ember.zeros((int(Xa.shape[0]), 1), dtype=Xa.dtype, device=dev)
        return Xa, Y

    def fit(self, X, y, sample_weight=None):
        """Train on (X, y); ``y`` holds labels, or a 0/1 indicator matrix (multilabel)."""
        self.__dict__.pop("_fixed_classes", None)
        return self._fit(X, y, sample_weight)

    def partial_fit(self, X, y, sample_weight=None, classes=None):
        """One epoch of sgd/adam on (X, y); the first call needs ``classes``."""
        if self.solver not in ("sgd", "adam"):
            raise AttributeError(f"partial_fit is only available for stochastic optimizers. "
                                 f"{self.solver} is not stochastic.")  # fmt: skip
        if not hasattr(self, "classes_"):
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            c = ember.asnumpy(classes) if is_ember(classes) else np.asarray(classes)
            self.classes_ = np.unique(c)
            self._fixed_classes = True  # the first call knows every class
        return self._fit(X, y, sample_weight, incremental=True)
        return self._fit(X, y, sample_weight, incremental=True)

    def _validation_score(self, X, Y, sw):
        from ..metrics import accuracy_score

        p = self._forward(self._W, self._b, X)[-1]
        if self._multiclass:
            pred, true = ember.argmax(p, axis=1), ember.argmax(Y, axis=1)
        elif self.n_outputs_ == 1:
            pred, true = (p[:, 0] > 0.5).astype(ember.int64), Y[:, 0].astype(ember.int64)
        else:
            pred, true = (p > 0.5).astype(ember.int64), Y.astype(ember.int64)
        return float(accuracy_score(true, pred, sample_weight=sw))

    def predict(self, X):
        """Class labels (multilabel: a 0/1 indicator matrix)."""
        p = self._output(X)
        kind = input_kind(X)
        if self._multiclass:
            return decode_labels(self.classes_, ember.argmax(p, axis=1), kind)
        if int(self.classes_.shape[0]) == 1:  # one class seen: always that class
            return decode_labels(
                self.classes_,
                ember.zeros((int(p.shape[0]),), dtype=ember.int64, device=p.device),
                kind,
            )
        if self.n_outputs_ == 1:
            return decode_labels(self.classes_, (p[:, 0] > 0.5).astype(ember.int64), kind)
        return to_output((p > 0.5).astype(ember.int64), kind)

    def predict_proba(self, X):
        """Class probabilities (columns in ``classes_`` order)."""
        p = self._output(X)
        if self.n_outputs_ == 1:
            p = ember.concatenate([1.0 - p, p], axis=1)
        return to_output(p, input_kind(X))

    def predict_log_proba(self, X):
        p = self._output(X)
        if self.n_outputs_ == 1:
            p = ember.concatenate([1.0 - p, p], axis=1)
        return to_output(ember.log(p), input_kind(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags


class MLPRegressor(RegressorMixin, _BaseMLP):
    """Multi-layer perceptron regressor (squared error, or Poisson deviance with an
    exponential output)."""

    _is_clf = False
    _multi_output = True

    _parameter_constraints = {
        **_BaseMLP._parameter_constraints,
        "loss": [StrOptions({"squared_error", "poisson"})],
    }

    def __init__(
        self,
        loss="squared_error",
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        solver="adam",
        alpha=0.0001,
        batch_size="auto",
        learning_rate="constant",
        learning_rate_init=0.001,
        power_t=0.5,
        max_iter=200,
        shuffle=True,
        random_state=None,
        tol=1e-4,
        verbose=False,
        warm_start=False,
        momentum=0.9,
        nesterovs_momentum=True,
        early_stopping=False,
        validation_fraction=0.1,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        n_iter_no_change=10,
        max_fun=15000,
    ):
        self.loss = loss
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_init = learning_rate_init
        self.power_t = power_t
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.tol = tol
        self.verbose = verbose
        self.warm_start = warm_start
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.n_iter_no_change = n_iter_no_change
        self.max_fun = max_fun

    def _out_activation(self):
        return "exp" if self.loss == "poisson" else "identity"

    def _validate_input(self, X, y, incremental, reset):
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True, multi_output=True)
        check_n_features(self, Xa, reset=reset)
        Y = ya.astype(Xa.dtype)
        if Y.ndim == 1:
            Y = Y[:, None]
        if self.loss == "poisson" and bool((Y < 0).any()):
            raise ValueError(
                "Some value(s) of y are negative which is not allowed for Poisson regression."
            )
        return Xa, Y

    def fit(self, X, y, sample_weight=None):
        """Train on (X, y); y may have several columns."""
        return self._fit(X, y, sample_weight)

    def partial_fit(self, X, y, sample_weight=None):
        """One epoch of sgd/adam on (X, y)."""
        if self.solver not in ("sgd", "adam"):
            raise AttributeError(f"partial_fit is only available for stochastic optimizers. "
                                 f"{self.solver} is not stochastic.")  # fmt: skip
        return self._fit(X, y, sample_weight, incremental=True)

    def _validation_score(self, X, Y, sw):
        from ..metrics import r2_score

        p = self._forward(self._W, self._b, X)[-1]
        if self.n_outputs_ == 1:
            return float(r2_score(Y[:, 0], p[:, 0], sample_weight=sw))
        return float(r2_score(Y, p, sample_weight=sw))

    def predict(self, X):
        p = self._output(X)
        if self.n_outputs_ == 1:
            p = p[:, 0]
        return to_output(p, input_kind(X))
