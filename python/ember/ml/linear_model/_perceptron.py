"""``Perceptron``: scikit-learn defines it as ``SGDClassifier(loss='perceptron',
learning_rate='constant', eta0=1, penalty=None)``; this is exactly that, on the existing SGD
machinery (mini-batch steps on the device; see ``_sgd``)."""

from __future__ import annotations

from numbers import Integral, Real

from ..utils._param_validation import Interval, StrOptions
from ._sgd import SGDClassifier

__all__ = ["Perceptron"]


class Perceptron(SGDClassifier):
    """Linear perceptron classifier (one-versus-all for more than two classes)."""

    _parameter_constraints = {
        "penalty": [StrOptions({"l2", "l1", "elasticnet"}), None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "shuffle": ["boolean"],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
        "eta0": [Interval(Real, 0, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "warm_start": ["boolean"],
    }

    # Fixed by the definition, not parameters (``get_params`` reads ``__init__``).
    loss = "perceptron"
    learning_rate = "constant"
    power_t = 0.5
    epsilon = 0.1
    average = False

    def __init__(
        self,
        *,
        penalty=None,
        alpha=0.0001,
        l1_ratio=0.15,
        fit_intercept=True,
        max_iter=1000,
        tol=1e-3,
        shuffle=True,
        verbose=0,
        eta0=1.0,
        n_jobs=None,
        random_state=0,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=5,
        class_weight=None,
        warm_start=False,
    ):
        self.penalty = penalty
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.verbose = verbose
        self.eta0 = eta0
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.class_weight = class_weight
        self.warm_start = warm_start
