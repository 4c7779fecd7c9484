"""``TransformedTargetRegressor`` (scikit-learn's ``sklearn.compose``).

The target is transformed (by a transformer, or a ``func``/``inverse_func`` pair wrapped in
``ember.ml.preprocessing.FunctionTransformer``) before the regressor is fitted, and the
regressor's predictions are mapped back by the inverse transform. The target is reshaped to
a column for the transformer and back with ember reshapes; the optional inverse check runs
``ember.allclose`` on every tenth sample, on the target's device.
"""

from __future__ import annotations

import warnings

import ember

from ..base import BaseEstimator, RegressorMixin, clone
from ..utils._param_validation import HasMethods
from ..utils.validation import (
    _host,
    check_array,
    check_is_fitted,
    check_n_features,
    device_of,
    input_kind,
    is_ember,
    to_device,
    to_output,
)

__all__ = ["TransformedTargetRegressor"]


def _ember(a, device):
    return to_device(a if is_ember(a) else _host(a), device)


class TransformedTargetRegressor(RegressorMixin, BaseEstimator):
    """A regressor fitted on ``transformer.transform(y)`` (or ``func(y)``), predicting
    ``inverse_transform(regressor.predict(X))``."""

    _parameter_constraints = {
        "regressor": [HasMethods(["fit", "predict"]), None],
        "transformer": [HasMethods(["transform"]), None],
        "func": [callable, None],
        "inverse_func": [callable, None],
        "check_inverse": ["boolean"],
    }

    def __init__(
        self, regressor=None, *, transformer=None, func=None, inverse_func=None, check_inverse=True
    ):
        self.regressor = regressor
        self.transformer = transformer
        self.func = func
        self.inverse_func = inverse_func
        self.check_inverse = check_inverse

    def _fit_transformer(self, y2):
        who = type(self).__name__
        if self.transformer is not None and (
            self.func is not None or self.inverse_func is not None
        ):
            raise ValueError(
                f"{who}: 'transformer' and functions 'func'/'inverse_func' cannot both be set."
            )
        if self.transformer is not None:
            self.transformer_ = clone(self.transformer)
        else:
            if (self.func is None) != (self.inverse_func is None):
                missing = "inverse_func" if self.inverse_func is None else "func"
                given = "func" if missing == "inverse_func" else "inverse_func"
                raise ValueError(
                    f"{who}: When '{given}' is provided, '{missing}' must also be provided. "
                    f"If '{given}' is None, '{missing}' must also be None."
                )
            from ..preprocessing import FunctionTransformer

            self.transformer_ = FunctionTransformer(
                func=self.func, inverse_func=self.inverse_func, validate=True, check_inverse=False
            )
        self.transformer_.fit(y2)
        if self.check_inverse:
            n = int(y2.shape[0])
            sel = y2[:: max(1, n // 10)]
            back = _ember(
                self.transformer_.inverse_transform(self.transformer_.transform(sel)), sel.device
            ).reshape(sel.shape)
            if not bool(ember.allclose(sel, back.astype(sel.dtype))):
                warnings.warn(
                    "The provided functions or transformer are not strictly inverse of each "
                    "other. If you are sure you want to proceed regardless, set "
                    "'check_inverse=False'",
                    UserWarning,
                    stacklevel=3,
                )

    def fit(self, X, y, **fit_params):
        self._validate_params()
        who = type(self).__name__
        if y is None:
            raise ValueError(f"{who} requires y to be passed, but the target y is None")
        ya = check_array(
            y, estimator=who, input_name="y", ensure_2d=False, device=device_of(X)
        ).astype(ember.float64)
        if ya.ndim > 2:
            raise ValueError(f"{who}: y must be 1-D or 2-D, got shape {tuple(ya.shape)}")
        self._training_dim = ya.ndim
        y2 = ya.reshape(-1, 1) if ya.ndim == 1 else ya
        self._fit_transformer(y2)
        yt = _ember(self.transformer_.transform(y2), ya.device)
        if yt.ndim == 2 and yt.shape[1] == 1 and ya.ndim == 1:
            yt = yt.reshape(-1)
        if self.regressor is None:
            from ..linear_model import LinearRegression

            self.regressor_ = LinearRegression()
        else:
            self.regressor_ = clone(self.regressor)
        Xa = check_array(X, estimator=self)
        if int(Xa.shape[0]) != int(yt.shape[0]):
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{int(Xa.shape[0])}, {int(yt.shape[0])}]"
            )
        check_n_features(self, Xa, reset=True)
        self.regressor_.fit(Xa, yt, **fit_params)
        return self

    def predict(self, X, **predict_params):
        """``inverse_transform`` of the regressor's prediction (1-D for a 1-D training y)."""
        check_is_fitted(self, "regressor_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        pred = _ember(self.regressor_.predict(Xa, **predict_params), Xa.device)
        p2 = pred.reshape(-1, 1) if pred.ndim == 1 else pred
        out = _ember(self.transformer_.inverse_transform(p2), Xa.device)
        if self._training_dim == 1 and out.ndim == 2 and out.shape[1] == 1:
            out = out.reshape(-1)
        return to_output(out, input_kind(X))
