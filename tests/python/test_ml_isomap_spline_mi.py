"""ember.ml.manifold.Isomap, ember.ml.preprocessing.SplineTransformer / TargetEncoder and
ember.ml.feature_selection.mutual_info_* against scikit-learn."""

from __future__ import annotations

import itertools
import warnings

import ember
import numpy as np
import pytest
from ember.ml.base import clone
from ember.ml.exceptions import NotFittedError
from ember.ml.feature_selection import mutual_info_classif, mutual_info_regression
from ember.ml.manifold import Isomap
from ember.ml.preprocessing import SplineTransformer, TargetEncoder
from sklearn import feature_selection as skfs
from sklearn import manifold as skm
from sklearn import preprocessing as skp
from sklearn.datasets import make_blobs, make_s_curve
from sklearn.model_selection import KFold, StratifiedKFold


def _np(x):
    return ember.asnumpy(x) if isinstance(x, ember.ndarray) else np.asarray(x)


def _cols_up_to_sign(a, b, atol):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape
    s = np.sign((a * b).sum(axis=0))
    np.testing.assert_allclose(a * s, b, atol=atol)


# -------------------------------------------------------------------------------- Isomap


@pytest.mark.parametrize(
    "kw",
    [
        {"n_neighbors": 8},
        {"n_neighbors": 8, "path_method": "FW"},
        {"n_neighbors": 6, "n_components": 3, "path_method": "D"},
        {"n_neighbors": None, "radius": 0.6},
        {"n_neighbors": 7, "metric": "manhattan"},
    ],
)
def test_isomap_matches_sklearn(device, kw):
    X, _ = make_s_curve(200, random_state=0)
    Xd = ember.asarray(X, device=device)
    a, b = Isomap(**kw).fit(Xd), skm.Isomap(**kw).fit(X)
    assert isinstance(a.embedding_, ember.ndarray)
    assert str(a.embedding_.device) == str(Xd.device)
    np.testing.assert_allclose(_np(a.dist_matrix_), b.dist_matrix_, atol=1e-10)
    _cols_up_to_sign(a.embedding_, b.embedding_, 1e-8)
    assert a.reconstruction_error() == pytest.approx(b.reconstruction_error(), rel=1e-8)
    Q = X[:15] + 0.02
    _cols_up_to_sign(a.transform(ember.asarray(Q, device=device)), b.transform(Q), 1e-8)
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())


def test_isomap_disconnected_graph_and_errors():
    X, _ = make_blobs(90, 2, centers=[[0, 0], [30, 0], [0, 30]], cluster_std=1.0, random_state=1)
    with pytest.warns(UserWarning, match="connected components"):
        a = Isomap(n_neighbors=4).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = skm.Isomap(n_neighbors=4).fit(X)
    np.testing.assert_allclose(a.dist_matrix_, b.dist_matrix_, atol=1e-9)
    _cols_up_to_sign(a.embedding_, b.embedding_, 1e-7)
    with pytest.raises(ValueError, match="Both n_neighbors and radius"):
        Isomap(n_neighbors=5, radius=1.0).fit(X)
    with pytest.raises(ValueError, match="path_method"):
        Isomap(path_method="J").fit(X)
    with pytest.raises(NotFittedError):
        Isomap().transform(X)
    with pytest.raises(NotFittedError):
        Isomap().reconstruction_error()
    assert clone(Isomap(n_neighbors=3)).get_params() == skm.Isomap(n_neighbors=3).get_params()


# --------------------------------------------------------------------- SplineTransformer


_SPLINE_CASES = [
    (deg, nk, kn, ext, ib)
    for deg, nk, kn, ext, ib in itertools.product(
        [1, 2, 3],
        [2, 3, 6],
        ["uniform", "quantile"],
        ["constant", "linear", "continue", "periodic", "error"],
        [True, False],
    )
    if not (ext == "periodic" and nk <= deg)
]


def test_spline_transformer_matches_sklearn_exactly():
    rng = np.random.RandomState(0)
    X, Xt = rng.randn(60, 3), 2 * rng.randn(40, 3)
    for deg, nk, kn, ext, ib in _SPLINE_CASES:
        kw = dict(n_knots=nk, degree=deg, knots=kn, extrapolation=ext, include_bias=ib)
        a, b = SplineTransformer(**kw).fit(X), skp.SplineTransformer(**kw).fit(X)
        assert a.n_features_out_ == b.n_features_out_
        T = X if ext == "error" else Xt
        np.testing.assert_allclose(a.transform(T), b.transform(T), atol=1e-10, err_msg=str(kw))


def test_spline_transformer_device_weights_knots_missing(device):
    rng = np.random.RandomState(1)
    X, Xt = rng.randn(50, 2), 1.5 * rng.randn(30, 2)
    Xd = ember.asarray(X, device=device)
    a = SplineTransformer(knots="quantile").fit(Xd)
    out = a.transform(ember.asarray(Xt, device=device))
    assert isinstance(out, ember.ndarray) and str(out.device) == str(Xd.device)
    ref = skp.SplineTransformer(knots="quantile").fit(X).transform(Xt)
    np.testing.assert_allclose(_np(out), ref, atol=1e-10)
    w = rng.rand(50)
    w[:5] = 0
    for kn in ("uniform", "quantile"):
        a = SplineTransformer(knots=kn).fit(X, sample_weight=w)
        b = skp.SplineTransformer(knots=kn).fit(X, sample_weight=w)
        np.testing.assert_allclose(a.transform(Xt), b.transform(Xt), atol=1e-10)
    knots = np.array([[-3.0, -2.0], [0.0, 0.5], [3.0, 2.0]])
    a = SplineTransformer(knots=knots, extrapolation="linear").fit(X)
    b = skp.SplineTransformer(knots=knots, extrapolation="linear").fit(X)
    np.testing.assert_allclose(a.transform(Xt), b.transform(Xt), atol=1e-10)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    a = SplineTransformer(handle_missing="zeros").fit(Xn)
    b = skp.SplineTransformer(handle_missing="zeros").fit(Xn)
    np.testing.assert_allclose(a.transform(Xn), b.transform(Xn), atol=1e-10)
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())


def test_spline_transformer_errors():
    X = np.random.RandomState(0).randn(20, 2)
    with pytest.raises(ValueError, match="beyond the limits of the knots"):
        SplineTransformer(extrapolation="error").fit(X).transform(X * 3)
    with pytest.raises(ValueError, match="Periodic splines require degree < n_knots"):
        SplineTransformer(n_knots=3, degree=3, extrapolation="periodic").fit(X)
    with pytest.raises(ValueError, match="knots must be sorted"):
        SplineTransformer(knots=np.array([[1.0, 1.0], [0.0, 2.0]])).fit(X)
    with pytest.raises(ValueError, match="n_knots"):
        SplineTransformer(n_knots=1).fit(X)
    with pytest.raises(ValueError, match="extrapolation"):
        SplineTransformer(extrapolation="clip").fit(X)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="handle_missing"):
        SplineTransformer().fit(Xn)
    with pytest.raises(NotFittedError):
        SplineTransformer().transform(X)


# -------------------------------------------------------------------------- TargetEncoder


def _te_data(n=200, seed=0):
    rng = np.random.RandomState(seed)
    X = np.c_[rng.randint(0, 5, n), rng.randint(0, 12, n)].astype(float)
    Xs = np.array(["a", "b", "c"], dtype=object)[rng.randint(0, 3, n)][:, None]
    y_cont = 2 * X[:, 0] + rng.randn(n)
    y_bin = (rng.rand(n) < 0.3 + 0.1 * X[:, 0]).astype(int)
    y_multi = np.array(["x", "y", "z"])[rng.randint(0, 3, n)]
    return X, Xs, y_cont, y_bin, y_multi


@pytest.mark.parametrize("smooth", ["auto", 0.0, 5.0])
@pytest.mark.parametrize("target", ["continuous", "binary", "multiclass"])
@pytest.mark.parametrize("strings", [False, True])
def test_target_encoder_matches_sklearn(smooth, target, strings):
    X, Xs, yc, yb, ym = _te_data()
    XX = Xs if strings else X
    y = {"continuous": yc, "binary": yb, "multiclass": ym}[target]
    cv = (
        KFold(4, shuffle=True, random_state=1)
        if target == "continuous"
        else StratifiedKFold(3, shuffle=True, random_state=2)
    )
    a, b = TargetEncoder(smooth=smooth, cv=cv), skp.TargetEncoder(smooth=smooth, cv=cv)
    np.testing.assert_allclose(a.fit_transform(XX, y), b.fit_transform(XX, y), atol=1e-12)
    assert a.target_type_ == b.target_type_ == target
    np.testing.assert_allclose(a.transform(XX[:30]), b.transform(XX[:30]), atol=1e-12)
    for p, q in zip(a.encodings_, b.encodings_, strict=True):
        np.testing.assert_allclose(p, q, atol=1e-12)
    np.testing.assert_allclose(a.target_mean_, b.target_mean_, atol=1e-14)
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())
    if target != "continuous":
        assert list(a.classes_) == list(b.classes_)


def test_target_encoder_unknown_missing_device_and_errors(device):
    X, _, yc, _, _ = _te_data()
    cats = [np.arange(3.0), np.arange(5.0)]  # values outside are unknown
    a = TargetEncoder(categories=cats, cv=KFold(3))
    b = skp.TargetEncoder(categories=cats, cv=KFold(3))
    np.testing.assert_allclose(a.fit_transform(X, yc), b.fit_transform(X, yc), atol=1e-12)
    np.testing.assert_allclose(a.transform(X), b.transform(X), atol=1e-12)
    Xn = X.copy()
    Xn[::7, 1] = np.nan
    a, b = TargetEncoder(cv=KFold(3)), skp.TargetEncoder(cv=KFold(3))
    np.testing.assert_allclose(a.fit_transform(Xn, yc), b.fit_transform(Xn, yc), atol=1e-12)
    np.testing.assert_allclose(a.transform(Xn), b.transform(Xn), atol=1e-12)
    Xd = ember.asarray(X, device=device)
    out = TargetEncoder(cv=KFold(3)).fit_transform(Xd, yc)
    assert isinstance(out, ember.ndarray) and str(out.device) == str(Xd.device)
    np.testing.assert_allclose(
        _np(out), skp.TargetEncoder(cv=KFold(3)).fit_transform(X, yc), atol=1e-12
    )
    with pytest.raises(ValueError, match="smooth"):
        TargetEncoder(smooth=-1.0).fit(X, yc)
    with pytest.raises(ValueError, match="target_type"):
        TargetEncoder(target_type="ordinal").fit(X, yc)
    with pytest.raises(ValueError, match="Unknown label type"):
        TargetEncoder().fit(X, np.c_[yc, yc])
    with pytest.raises(ValueError, match="cover each sample index exactly once"):
        TargetEncoder(cv=[(np.arange(100), np.arange(100))]).fit_transform(X, yc)
    with pytest.raises(NotFittedError):
        TargetEncoder().transform(X)
    with pytest.warns(FutureWarning, match="deprecated"):
        TargetEncoder(shuffle=False).fit_transform(X, yc)
    assert (
        clone(TargetEncoder(smooth=2.0)).get_params() == skp.TargetEncoder(smooth=2.0).get_params()
    )


# ------------------------------------------------------------------------ mutual_info_*


def _mi_data(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 4)
    X[:, 3] = rng.randint(0, 4, n)
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * X[:, 3] + 0.1 * rng.randn(n)
    yc = (X[:, 0] + X[:, 3] > 1).astype(int) + (X[:, 1] > 0)
    return X, y, yc


@pytest.mark.parametrize(
    "discrete", ["auto", [3], np.array([False, False, False, True])], ids=["auto", "idx", "mask"]
)
@pytest.mark.parametrize("k", [3, 6])
def test_mutual_info_matches_sklearn(discrete, k):
    X, y, yc = _mi_data()
    kw = dict(discrete_features=discrete, n_neighbors=k)
    # The same random_state draws the same noise: equal up to rounding.
    np.testing.assert_allclose(
        mutual_info_regression(X, y, random_state=0, **kw),
        skfs.mutual_info_regression(X, y, random_state=0, **kw),
        atol=1e-12,
    )
    np.testing.assert_allclose(
        mutual_info_classif(X, yc, random_state=4, **kw),
        skfs.mutual_info_classif(X, yc, random_state=4, **kw),
        atol=1e-12,
    )


def test_mutual_info_device_discrete_and_errors(device):
    X, y, yc = _mi_data(n=200)
    Xd = ember.asarray(X, device=device)
    out = mutual_info_regression(Xd, y, random_state=1)
    assert isinstance(out, ember.ndarray) and str(out.device) == str(Xd.device)
    ref = skfs.mutual_info_regression(X, y, random_state=1)
    np.testing.assert_allclose(_np(out), ref, atol=1e-12)
    # An ember Generator draws its own noise (on the device): close, not equal.
    g = ember.random.default_rng(0)
    np.testing.assert_allclose(_np(mutual_info_regression(Xd, y, random_state=g)), ref, atol=0.02)
    Xi = np.random.RandomState(0).randint(0, 3, (100, 3))
    yi = np.random.RandomState(1).randint(0, 2, 100)
    np.testing.assert_allclose(
        mutual_info_classif(Xi, yi, discrete_features=True),
        skfs.mutual_info_classif(Xi, yi, discrete_features=True),
        atol=1e-12,
    )
    with pytest.raises(ValueError, match="n_neighbors"):
        mutual_info_regression(X, y, n_neighbors=0)
    with pytest.raises(ValueError, match="discrete_features"):
        mutual_info_regression(X, y, discrete_features="yes")
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        mutual_info_regression(X, y[:-1])
    with pytest.raises(ValueError, match="Unknown label type"):
        mutual_info_classif(X, y)


@pytest.mark.parametrize(
    "est", [Isomap(n_neighbors=4), SplineTransformer(), TargetEncoder()], ids=repr
)
def test_sklearn_estimator_checks(est):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, on_fail=None)
    failed = {
        r["check_name"]: str(r["exception"])[:200] for r in results if r["status"] == "failed"
    }
    assert not failed, failed
    assert len(results) > 30
