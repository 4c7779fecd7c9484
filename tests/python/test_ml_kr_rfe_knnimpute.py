"""KernelRidge, SelectFromModel, RFE and KNNImputer against scikit-learn, on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.ml.feature_selection import RFE, SelectFromModel
from ember.ml.impute import KNNImputer
from ember.ml.kernel_ridge import KernelRidge
from ember.ml.linear_model import Lasso, LinearRegression, Ridge

sk_kr = pytest.importorskip("sklearn.kernel_ridge")
sk_fs = pytest.importorskip("sklearn.feature_selection")
sk_lm = pytest.importorskip("sklearn.linear_model")
sk_imp = pytest.importorskip("sklearn.impute")


def _data(n=30, d=5, t=None, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, d))
    w = r.normal(size=(d,) if t is None else (d, t))
    y = X @ w + 0.1 * r.normal(size=(n,) if t is None else (n, t))
    return X, y


def _np(a):
    return ember.asnumpy(a) if isinstance(a, ember.ndarray) else np.asarray(a)


# ---------------------------------------------------------------- KernelRidge


@pytest.mark.filterwarnings("ignore:Singular matrix")
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid", "laplacian", "cosine"])
def test_kernel_ridge_kernels(device, kernel):
    X, y = _data(25, 4)
    kw = dict(alpha=0.7, kernel=kernel, degree=2, coef0=0.5)
    if kernel != "linear":
        kw["gamma"] = 0.2
    ref = sk_kr.KernelRidge(**kw).fit(X, y)
    Xe, ye = ember.asarray(X, device=device), ember.asarray(y, device=device)
    m = KernelRidge(**kw).fit(Xe, ye)
    assert isinstance(m.dual_coef_, ember.ndarray) and str(m.dual_coef_.device) == str(Xe.device)
    np.testing.assert_allclose(_np(m.dual_coef_), ref.dual_coef_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(_np(m.X_fit_), X)
    p = m.predict(Xe[:7])
    assert str(p.device) == str(Xe.device)
    np.testing.assert_allclose(_np(p), ref.predict(X[:7]), rtol=1e-8, atol=1e-8)


def test_kernel_ridge_multitarget_alpha_precomputed_numpy():
    X, Y = _data(20, 3, t=2, seed=1)
    ref = sk_kr.KernelRidge(alpha=[0.3, 2.0], kernel="rbf").fit(X, Y)
    m = KernelRidge(alpha=[0.3, 2.0], kernel="rbf").fit(X, Y)
    assert isinstance(m.dual_coef_, np.ndarray) and m.dual_coef_.shape == (20, 2)
    np.testing.assert_allclose(m.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(m.predict(X[:4]), ref.predict(X[:4]), rtol=1e-8, atol=1e-8)
    K = X @ X.T
    ref = sk_kr.KernelRidge(kernel="precomputed").fit(K, Y[:, 0])
    m = KernelRidge(kernel="precomputed").fit(K, Y[:, 0])
    np.testing.assert_allclose(m.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(m.predict(K[:3]), ref.predict(K[:3]), rtol=1e-8, atol=1e-8)
    sw = np.linspace(0.5, 2.0, 20)
    ref = sk_kr.KernelRidge(alpha=0.5, kernel="poly").fit(X, Y, sample_weight=sw)
    m = KernelRidge(alpha=0.5, kernel="poly").fit(X, Y, sample_weight=sw)
    np.testing.assert_allclose(m.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-8)


def test_kernel_ridge_float32(device):
    X, y = _data(15, 3, seed=3)
    Xe = ember.asarray(X.astype(np.float32), device=device)
    m = KernelRidge(alpha=1.0, kernel="rbf", gamma=0.5).fit(Xe, ember.asarray(y, device=device))
    ref = sk_kr.KernelRidge(alpha=1.0, kernel="rbf", gamma=0.5).fit(X, y)
    assert m.dual_coef_.dtype == ember.float32
    np.testing.assert_allclose(_np(m.predict(Xe)), ref.predict(X), rtol=1e-4, atol=1e-4)


def test_kernel_ridge_callable_and_errors():
    X, y = _data(10, 3, seed=2)

    def k(a, b):
        return float((a * b).sum()) + 1.0

    ref = sk_kr.KernelRidge(kernel=k).fit(X, y)
    m = KernelRidge(kernel=k).fit(X, y)
    np.testing.assert_allclose(m.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-8)
    with pytest.raises(ValueError):
        KernelRidge(kernel="nope").fit(X, y)
    with pytest.raises(ValueError):
        KernelRidge(alpha=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="penalties"):
        KernelRidge(alpha=[1.0, 2.0, 3.0]).fit(X, np.c_[y, y])
    with pytest.raises(ValueError):
        KernelRidge().fit(X, y).predict(X[:, :2])
    with pytest.raises(ember.ml.exceptions.NotFittedError):
        KernelRidge().predict(X)


# ---------------------------------------------------------------- SelectFromModel / RFE


@pytest.mark.parametrize("threshold", [None, "mean", "median", "1.25*mean", "0.5*median", 0.3])
def test_select_from_model_thresholds(device, threshold):
    X, y = _data(40, 8, seed=3)
    ref = sk_fs.SelectFromModel(sk_lm.Lasso(alpha=0.05), threshold=threshold).fit(X, y)
    Xe, ye = ember.asarray(X, device=device), ember.asarray(y, device=device)
    m = SelectFromModel(Lasso(alpha=0.05), threshold=threshold).fit(Xe, ye)
    np.testing.assert_array_equal(m.get_support(), ref.get_support())
    assert m.threshold_ == pytest.approx(ref.threshold_, rel=1e-6)
    out = m.transform(Xe)
    assert isinstance(out, ember.ndarray) and str(out.device) == str(Xe.device)
    np.testing.assert_allclose(_np(out), ref.transform(X))


def test_select_from_model_max_features_prefit_and_errors():
    X, y = _data(40, 8, seed=4)
    for mf, thr in [(3, None), (3, "median"), (0, None)]:
        ref = sk_fs.SelectFromModel(sk_lm.Ridge(), max_features=mf, threshold=thr).fit(X, y)
        m = SelectFromModel(Ridge(), max_features=mf, threshold=thr).fit(X, y)
        np.testing.assert_array_equal(m.get_support(), ref.get_support())
    est = LinearRegression().fit(X, y)
    ref = sk_fs.SelectFromModel(sk_lm.LinearRegression().fit(X, y), prefit=True)
    m = SelectFromModel(est, prefit=True)
    np.testing.assert_array_equal(m.fit(X, y).get_support(), ref.fit(X, y).get_support())
    assert isinstance(m.transform(X), np.ndarray)
    from ember.ml.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        SelectFromModel(Ridge(), prefit=True).fit(X, y)
    with pytest.raises(ValueError, match="max_features"):
        SelectFromModel(Ridge(), max_features=20).fit(X, y)
    with pytest.raises(ValueError, match="threshold"):
        SelectFromModel(Ridge(), threshold="bogus").fit(X, y).transform(X)
    with pytest.raises(ValueError):
        SelectFromModel(KNNImputer()).fit(X, y).transform(X)


@pytest.mark.parametrize("nsel,step", [(3, 1), (None, 2), (0.5, 0.3), (1, 10), (5, 1)])
def test_rfe_matches(device, nsel, step):
    X, y = _data(40, 9, seed=5)
    ref = sk_fs.RFE(sk_lm.Ridge(alpha=0.5), n_features_to_select=nsel, step=step).fit(X, y)
    Xe, ye = ember.asarray(X, device=device), ember.asarray(y, device=device)
    m = RFE(Ridge(alpha=0.5), n_features_to_select=nsel, step=step).fit(Xe, ye)
    np.testing.assert_array_equal(m.support_, ref.support_)
    np.testing.assert_array_equal(m.ranking_, ref.ranking_)
    assert m.n_features_ == ref.n_features_
    np.testing.assert_allclose(_np(m.estimator_.coef_), ref.estimator_.coef_, rtol=1e-6, atol=1e-9)
    p = m.predict(Xe)
    assert str(p.device) == str(Xe.device)
    np.testing.assert_allclose(_np(p), ref.predict(X), rtol=1e-6, atol=1e-9)
    assert m.score(Xe, ye) == pytest.approx(ref.score(X, y), rel=1e-6)


def test_rfe_multioutput_linear_regression_and_errors():
    X, Y = _data(30, 6, t=2, seed=6)
    for order in (1, 2):
        ref = sk_fs.SelectFromModel(sk_lm.LinearRegression(), norm_order=order).fit(X, Y)
        m = SelectFromModel(LinearRegression(), norm_order=order).fit(X, Y)
        np.testing.assert_array_equal(m.get_support(), ref.get_support())
        assert m.threshold_ == pytest.approx(ref.threshold_, rel=1e-8)
    ref = sk_fs.RFE(sk_lm.LinearRegression(), n_features_to_select=2).fit(X, Y)
    m = RFE(LinearRegression(), n_features_to_select=2).fit(X, Y)
    np.testing.assert_array_equal(m.ranking_, ref.ranking_)
    assert isinstance(m.transform(X), np.ndarray) and m.transform(X).shape == (30, 2)
    with pytest.raises(ValueError):
        RFE(Ridge(), step=0).fit(X, Y[:, 0])
    with pytest.raises(ValueError):
        RFE(Ridge(), n_features_to_select=-1).fit(X, Y[:, 0])
    with pytest.raises(ValueError, match="coef_"):
        RFE(KNNImputer(), n_features_to_select=2).fit(X, Y[:, 0])
    with pytest.raises(ember.ml.exceptions.NotFittedError):
        RFE(Ridge()).transform(X)


# ---------------------------------------------------------------- KNNImputer


def _nan_data(n=25, d=5, seed=7, frac=0.25):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, d))
    X[r.random(X.shape) < frac] = np.nan
    return X


@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("k", [1, 3, 30])
def test_knn_imputer_matches(device, weights, k):
    X = _nan_data()
    X[2, :] = np.nan  # a row with no observed feature: column means
    Y = _nan_data(9, seed=8, frac=0.4)
    ref = sk_imp.KNNImputer(n_neighbors=k, weights=weights).fit(X)
    m = KNNImputer(n_neighbors=k, weights=weights).fit(ember.asarray(X, device=device))
    for Z in (X, Y):
        Ze = ember.asarray(Z, device=device)
        out = m.transform(Ze)
        assert isinstance(out, ember.ndarray) and str(out.device) == str(Ze.device)
        np.testing.assert_allclose(_np(out), ref.transform(Z), rtol=0, atol=1e-10)


@pytest.mark.parametrize("add_indicator", [False, True])
@pytest.mark.parametrize("keep_empty", [False, True])
def test_knn_imputer_empty_features_indicator(add_indicator, keep_empty):
    X = _nan_data(seed=9)
    X[:, 1] = np.nan
    Y = _nan_data(6, seed=10)
    kw = dict(n_neighbors=4, add_indicator=add_indicator, keep_empty_features=keep_empty)
    ref = sk_imp.KNNImputer(**kw).fit(X)
    m = KNNImputer(**kw).fit(X)
    for Z in (X, Y):
        out = m.transform(Z)
        assert isinstance(out, np.ndarray)
        np.testing.assert_allclose(out, ref.transform(Z), rtol=0, atol=1e-10)
    names = m.get_feature_names_out()
    assert names.shape[0] == m.transform(X).shape[1]
    if not keep_empty:  # scikit-learn drops the empty feature's name even when it keeps it
        np.testing.assert_array_equal(names, ref.get_feature_names_out())


def test_knn_imputer_missing_value_marker_and_errors():
    X = _nan_data(seed=11)
    Xm = np.where(np.isnan(X), -1.0, X)
    ref = sk_imp.KNNImputer(missing_values=-1.0, n_neighbors=2).fit_transform(Xm)
    out = KNNImputer(missing_values=-1.0, n_neighbors=2).fit_transform(Xm)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-10)
    with pytest.raises(ValueError):
        KNNImputer(n_neighbors=0).fit(X)
    with pytest.raises(ValueError):
        KNNImputer(weights="bogus").fit(X)
    with pytest.raises(ValueError):
        KNNImputer().fit(X).transform(X[:, :3])
    with pytest.raises(ValueError):
        KNNImputer().fit(np.where(np.isnan(X), np.inf, X))
    with pytest.raises(ember.ml.exceptions.NotFittedError):
        KNNImputer().transform(X)
