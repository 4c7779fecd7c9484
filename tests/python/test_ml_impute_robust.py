"""ember.ml's SimpleImputer, RobustScaler, normalize and Normalizer against scikit-learn's,
on both devices (NumPy in, NumPy out; ember in, ember out on its device)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.ml import impute, preprocessing
from sklearn import impute as skimpute
from sklearn import preprocessing as skp


def _data():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((30, 4)) * [1, 10, 0.1, 3]  # noqa: N806
    X[rng.random((30, 4)) < 0.2] = np.nan
    X[:, 2][[1, 4, 7]] = 2.5  # a most frequent value
    return X


def _n(x):
    return ember.asnumpy(x) if isinstance(x, ember.ndarray) else np.asarray(x)


@pytest.mark.parametrize("strategy", ["mean", "median", "most_frequent", "constant"])
def test_simple_imputer(device, strategy):
    X = _data()  # noqa: N806
    X[:, 3] = np.nan  # an empty feature: dropped, as scikit-learn
    kw = (
        {"strategy": strategy, "fill_value": -1.0}
        if strategy == "constant"
        else {"strategy": strategy}
    )
    with pytest.warns(UserWarning, match="Skipping features without any observed values"):
        ours = impute.SimpleImputer(**kw).fit(ember.asarray(X, device=device))
    theirs = skimpute.SimpleImputer(**kw).fit(X)
    np.testing.assert_allclose(
        _n(ours.statistics_), theirs.statistics_.astype(float), equal_nan=True
    )
    got = ours.transform(ember.asarray(X, device=device))
    assert isinstance(got, ember.ndarray) and got.device.type == device
    np.testing.assert_allclose(_n(got), theirs.transform(X))
    extra = {"fill_value": 2.0} if strategy == "constant" else {}
    kw = {"strategy": strategy, "keep_empty_features": True, **extra}
    np.testing.assert_allclose(
        impute.SimpleImputer(**kw).fit_transform(X),
        skimpute.SimpleImputer(**kw).fit_transform(X),
    )


def test_simple_imputer_marker_and_errors():
    X = np.array([[1.0, -1.0], [-1.0, 3.0], [5.0, 3.0]])  # noqa: N806
    ours = impute.SimpleImputer(missing_values=-1.0, strategy="mean").fit_transform(X)
    np.testing.assert_allclose(ours, skimpute.SimpleImputer(missing_values=-1.0).fit_transform(X))
    with pytest.raises(ValueError, match="strategy"):
        impute.SimpleImputer(strategy="mode").fit(X)
    with pytest.raises(Exception, match="not fitted"):
        impute.SimpleImputer().transform(X)


@pytest.mark.parametrize("kw", [{}, {"quantile_range": (10.0, 90.0)}, {"with_centering": False},
                                {"unit_variance": True}])  # fmt: skip
def test_robust_scaler(device, kw):
    X = _data()  # noqa: N806
    ours = preprocessing.RobustScaler(**kw).fit(ember.asarray(X, device=device))
    theirs = skp.RobustScaler(**kw).fit(X)
    if theirs.center_ is not None:
        np.testing.assert_allclose(_n(ours.center_), theirs.center_)
    np.testing.assert_allclose(_n(ours.scale_), theirs.scale_, rtol=1e-12)
    got = ours.transform(ember.asarray(X, device=device))
    np.testing.assert_allclose(_n(got), theirs.transform(X), rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(_n(ours.inverse_transform(got)), X, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_normalize(device, norm):
    X = np.nan_to_num(_data())  # noqa: N806
    X[3] = 0.0  # a zero row stays zero
    for axis in (0, 1):
        got = preprocessing.normalize(ember.asarray(X, device=device), norm=norm, axis=axis)
        np.testing.assert_allclose(_n(got), skp.normalize(X, norm=norm, axis=axis), rtol=1e-12)
    np.testing.assert_allclose(preprocessing.Normalizer(norm).fit_transform(X),
                               skp.Normalizer(norm=norm).fit_transform(X), rtol=1e-12)  # fmt: skip
    with pytest.raises(ValueError, match="not a supported norm"):
        preprocessing.normalize(X, norm="l3")
