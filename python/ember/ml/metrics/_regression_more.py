"""More regression metrics: median absolute error, pinball loss, Tweedie deviances and D^2.

Targets are ember float64 arrays on y_pred's device (the default device for host inputs);
scores come back as Python floats, ``multioutput='raw_values'`` as the inputs' kind.
"""

from __future__ import annotations

import warnings

import numpy as np

import ember

from ..exceptions import UndefinedMetricWarning
from ..utils._stats import weighted_percentile
from ..utils.validation import _host, device_of, input_kind, is_ember, to_device, to_output

__all__ = [
    "d2_absolute_error_score",
    "d2_pinball_score",
    "d2_tweedie_score",
    "max_error",
    "mean_gamma_deviance",
    "mean_pinball_loss",
    "mean_poisson_deviance",
    "mean_tweedie_deviance",
    "median_absolute_error",
]

_MULTI = ("raw_values", "uniform_average", "variance_weighted")


def _targets(y_true, y_pred, sample_weight, multioutput, who):
    """(y_true, y_pred) as 2-D float64 ember arrays, weights (or None), kind, multioutput."""
    kind = "ember" if input_kind(y_true) == "ember" or input_kind(y_pred) == "ember" else "numpy"
    dev = device_of(y_pred) if is_ember(_host(y_pred)) else device_of(y_true)
    arrs = []
    for v in (y_true, y_pred):
        h = _host(v)
        if not is_ember(h):
            h = np.asarray(h)
            if h.dtype.kind in "OUS":
                raise ValueError(f"{who}: y_true and y_pred must be numeric")
        a = to_device(h, dev).astype(ember.float64)
        arrs.append(a.reshape(-1, 1) if a.ndim == 1 else a)
    a, b = arrs
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            "Found input variables with inconsistent numbers of samples: "
            f"[{a.shape[0]}, {b.shape[0]}]"
        )
    if a.shape[1] != b.shape[1]:
        raise ValueError(
            f"y_true and y_pred have different number of output ({a.shape[1]}!={b.shape[1]})"
        )
    for v in (a, b):
        if v.size and not bool(ember.isfinite(v).all()):
            raise ValueError(f"Input contains NaN or infinity. ({who})")
    w = None
    if sample_weight is not None:
        w = to_device(_host(sample_weight), dev).astype(ember.float64).reshape(-1)
        if w.shape[0] != a.shape[0]:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{a.shape[0]}, {w.shape[0]}]"
            )
    if isinstance(multioutput, str):
        if multioutput not in _MULTI:
            raise ValueError(
                f"Allowed 'multioutput' string values are {_MULTI}. You provided "
                f"multioutput={multioutput!r}"
            )
    elif multioutput is not None:
        mo = np.asarray(ember.asnumpy(multioutput) if is_ember(multioutput) else multioutput)
        if a.shape[1] == 1:
            raise ValueError("Custom weights are useful only in multi-output cases.")
        if mo.shape[0] != a.shape[1]:
            raise ValueError(
                f"There must be equally many custom weights ({mo.shape[0]}) as outputs "
                f"({a.shape[1]})."
            )
        multioutput = mo.astype(np.float64)
    return a, b, w, kind, multioutput


def _avg_rows(v, w):
    if w is None:
        return v.mean(axis=0)
    return (v * w[:, None]).sum(axis=0) / w.sum()


def _finish(errors, multioutput, kind, weights=None):
    if isinstance(multioutput, str):
        if multioutput == "raw_values":
            return to_output(errors, kind)
        if multioutput == "variance_weighted" and weights is not None:
            return float((errors * weights).sum() / weights.sum())
        return float(errors.mean())
    mo = to_device(np.asarray(multioutput), errors.device)
    return float((errors * mo).sum() / mo.sum())


def median_absolute_error(y_true, y_pred, *, multioutput="uniform_average", sample_weight=None):
    """Median of the absolute errors (weighted: scikit-learn's averaged inverted CDF)."""
    a, b, w, kind, mo = _targets(
        y_true, y_pred, sample_weight, multioutput, "median_absolute_error"
    )
    err = ember.abs(b - a)
    out = ember.median(err, axis=0) if w is None else weighted_percentile(err, w, 50.0, True)
    if isinstance(mo, str) and mo == "variance_weighted":
        mo = "uniform_average"
    return _finish(out, mo, kind)


def max_error(y_true, y_pred):
    """The largest absolute residual of single-output regression (scikit-learn's max_error)."""
    a, b, _, _, _ = _targets(y_true, y_pred, None, "uniform_average", "max_error")
    if a.shape[1] != 1:
        raise ValueError("Multioutput not supported in max_error")
    return float(ember.max(ember.abs(b - a)))


def _pinball(a, b, w, alpha):
    diff = a - b
    sign = (diff >= 0).astype(ember.float64)
    loss = alpha * sign * diff - (1 - alpha) * (1 - sign) * diff
    return _avg_rows(loss, w)


def mean_pinball_loss(
    y_true, y_pred, *, sample_weight=None, alpha=0.5, multioutput="uniform_average"
):
    """Mean pinball (quantile) loss at level ``alpha``."""
    _check_alpha(alpha, "mean_pinball_loss")
    a, b, w, kind, mo = _targets(y_true, y_pred, sample_weight, multioutput, "mean_pinball_loss")
    return _finish(_pinball(a, b, w, alpha), mo, kind)


def _check_alpha(alpha, who):
    from ..exceptions import InvalidParameterError, sklearn_compatible

    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, (int, float, np.number))
        or not (0 <= alpha <= 1)
    ):
        raise sklearn_compatible(InvalidParameterError)(
            f"The 'alpha' parameter of {who} must be a float in the range [0.0, 1.0]. Got "
            f"{alpha!r} instead."
        )


def _explained(num, den, mo, kind):
    """1 - num/den per output, scikit-learn's finite conventions (1 when both are zero, 0 when
    only the denominator is)."""
    nz_num = num != 0
    nz_den = den != 0
    safe = ember.where(nz_den, den, 1.0)
    score = ember.where(nz_den, 1 - num / safe, ember.where(nz_num, 0.0, 1.0))
    if isinstance(mo, str) and mo == "variance_weighted":
        if not bool(nz_den.any()):
            return _finish(score, "uniform_average", kind)
        return _finish(score, mo, kind, weights=den)
    return _finish(score, mo, kind)


def d2_pinball_score(
    y_true, y_pred, *, sample_weight=None, alpha=0.5, multioutput="uniform_average"
):
    """D^2 of the pinball loss: the fraction of it explained relative to the best constant
    (the weighted ``alpha``-quantile of y_true)."""
    _check_alpha(alpha, "d2_pinball_score")
    a, b, w, kind, mo = _targets(y_true, y_pred, sample_weight, multioutput, "d2_pinball_score")
    if a.shape[0] < 2:
        warnings.warn(
            "D^2 score is not well-defined with less than two samples.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return float("nan")
    num = _pinball(a, b, w, alpha)
    ww = w if w is not None else ember.ones((a.shape[0],), dtype=ember.float64, device=a.device)
    q = weighted_percentile(a, ww, alpha * 100, True)
    den = _pinball(a, ember.broadcast_to(q[None, :], a.shape), w, alpha)
    return _explained(num, den, mo, kind)


def d2_absolute_error_score(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average"):
    """D^2 of the absolute error (``d2_pinball_score`` at alpha=0.5)."""
    return d2_pinball_score(
        y_true, y_pred, sample_weight=sample_weight, alpha=0.5, multioutput=multioutput
    )


def _deviance(a, b, power):
    p = power
    if p < 0:
        return 2 * (
            ember.where(a > 0, a, 0.0) ** (2 - p) / ((1 - p) * (2 - p))
            - a * b ** (1 - p) / (1 - p)
            + b ** (2 - p) / (2 - p)
        )
    if p == 0:
        return (a - b) ** 2
    if p == 1:
        safe = ember.where(a == 0, 1.0, a)
        xlogy = ember.where(a == 0, 0.0, a * ember.log(safe / b))
        return 2 * (xlogy - a + b)
    if p == 2:
        return 2 * (ember.log(b / a) + a / b - 1)
    return 2 * (
        a ** (2 - p) / ((1 - p) * (2 - p)) - a * b ** (1 - p) / (1 - p) + b ** (2 - p) / (2 - p)
    )


def _check_power(power, who):
    from ..exceptions import InvalidParameterError, sklearn_compatible

    ok = (
        not isinstance(power, bool)
        and isinstance(power, (int, float, np.number))
        and (power <= 0 or power >= 1)
    )
    if not ok:
        raise sklearn_compatible(InvalidParameterError)(
            f"The 'power' parameter of {who} must be a float in the range (-inf, 0.0] or a "
            f"float in the range [1.0, inf). Got {power!r} instead."
        )


def _tweedie_checked(y_true, y_pred, sample_weight, power, who):
    _check_power(power, who)
    a, b, w, _, _ = _targets(y_true, y_pred, sample_weight, None, who)
    if a.shape[1] != 1:
        raise ValueError(f"Multioutput not supported in {who}")
    msg = f"Mean Tweedie deviance error with power={power} can only be used on "
    if power < 0:
        if bool((b <= 0).any()):
            raise ValueError(msg + "strictly positive y_pred.")
    elif 1 <= power < 2:
        if bool((a < 0).any()) or bool((b <= 0).any()):
            raise ValueError(msg + "non-negative y and strictly positive y_pred.")
    elif power >= 2:
        if bool((a <= 0).any()) or bool((b <= 0).any()):
            raise ValueError(msg + "strictly positive y and y_pred.")
    return a, b, w


def mean_tweedie_deviance(y_true, y_pred, *, sample_weight=None, power=0):
    """Mean Tweedie deviance of the given ``power`` (0 normal, 1 Poisson, 2 gamma, ...)."""
    a, b, w = _tweedie_checked(y_true, y_pred, sample_weight, power, "mean_tweedie_deviance")
    return float(_avg_rows(_deviance(a, b, power), w)[0])


def mean_poisson_deviance(y_true, y_pred, *, sample_weight=None):
    """Mean Poisson deviance (Tweedie power 1)."""
    return mean_tweedie_deviance(y_true, y_pred, sample_weight=sample_weight, power=1)


def mean_gamma_deviance(y_true, y_pred, *, sample_weight=None):
    """Mean gamma deviance (Tweedie power 2)."""
    return mean_tweedie_deviance(y_true, y_pred, sample_weight=sample_weight, power=2)


def d2_tweedie_score(y_true, y_pred, *, sample_weight=None, power=0):
    """D^2 of the Tweedie deviance relative to the (weighted) mean of y_true."""
    a, b, w = _tweedie_checked(y_true, y_pred, sample_weight, power, "d2_tweedie_score")
    if a.shape[0] < 2:
        warnings.warn(
            "D^2 score is not well-defined with less than two samples.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return float("nan")
    num = _avg_rows(_deviance(a, b, power), w)
    mean = _avg_rows(a, w)
    den = _avg_rows(_deviance(a, ember.broadcast_to(mean[None, :], a.shape), power), w)
    return float(1 - num[0] / den[0])
