"""ember.ml MLPClassifier/MLPRegressor, IsotonicRegression, CalibratedClassifierCV,
calibration_curve and permutation_importance against scikit-learn.

The MLPs draw their initial weights and epoch shuffles as scikit-learn does, so sgd/adam
training is compared number for number; L-BFGS (another solver) and early stopping (another
validation split) by quality. Isotonic regression, Platt scaling, calibration of a
deterministic classifier and permutation importances of a deterministic model are exact."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pandas as pd
import pytest
from ember.ml import clone
from ember.ml.calibration import CalibratedClassifierCV, _SigmoidCalibration, calibration_curve
from ember.ml.exceptions import InvalidParameterError, NotFittedError
from ember.ml.frozen import FrozenEstimator
from ember.ml.inspection import permutation_importance
from ember.ml.isotonic import IsotonicRegression, check_increasing, isotonic_regression
from ember.ml.linear_model import LinearRegression, LogisticRegression
from ember.ml.naive_bayes import GaussianNB
from ember.ml.neural_network import MLPClassifier, MLPRegressor
from sklearn import calibration as scal
from sklearn import inspection as sinsp
from sklearn import isotonic as siso
from sklearn import neural_network as snn
from sklearn.datasets import make_classification, make_regression
from sklearn.frozen import FrozenEstimator as SkFrozen
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.naive_bayes import GaussianNB as SkGaussianNB


def _n(a):
    return ember.asnumpy(a) if isinstance(a, ember.ndarray) else np.asarray(a)


@pytest.fixture(autouse=True)
def _no_convergence_noise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _same_net(a, b, rtol=1e-9, atol=1e-11):
    assert len(a.coefs_) == len(b.coefs_)
    for x, y in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_, strict=True):
        np.testing.assert_allclose(_n(x), y, rtol=rtol, atol=atol)
    assert a.n_iter_ == b.n_iter_
    assert a.out_activation_ == b.out_activation_ and a.n_layers_ == b.n_layers_


# ---- MLP --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        dict(solver="adam", hidden_layer_sizes=(8, 5)),
        dict(solver="adam", activation="tanh", alpha=0.01, batch_size=64),
        dict(solver="sgd", activation="logistic", learning_rate_init=0.1),
        dict(solver="sgd", nesterovs_momentum=False, learning_rate="invscaling"),
        dict(solver="sgd", momentum=0.0, shuffle=False, activation="identity"),
    ],
)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_mlp_classifier_trains_like_sklearn(kw, n_classes):
    X, y = make_classification(240, 6, n_informative=4, n_classes=n_classes, random_state=0)
    params = {"hidden_layer_sizes": (10,), "max_iter": 8, "random_state": 1, **kw}
    a = MLPClassifier(**params).fit(X, y)
    b = snn.MLPClassifier(**params).fit(X, y)
    _same_net(a, b)
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-10)
    assert a.best_loss_ == pytest.approx(b.best_loss_, rel=1e-10)
    assert a.t_ == b.t_
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.predict_log_proba(X), b.predict_log_proba(X), rtol=1e-8)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.classes_, b.classes_)


@pytest.mark.parametrize("act", ["relu", "tanh", "logistic", "identity"])
def test_mlp_regressor_trains_like_sklearn(device, act):
    X, y = make_regression(200, 4, noise=1.0, random_state=0)
    y = y / 100
    params = dict(hidden_layer_sizes=(12, 6), activation=act, max_iter=15, random_state=0)
    Xe, ye = ember.asarray(X, device=device), ember.asarray(y, device=device)
    a = MLPRegressor(**params).fit(Xe, ye)
    b = snn.MLPRegressor(**params).fit(X, y)
    _same_net(a, b)
    assert isinstance(a.coefs_[0], ember.ndarray)
    p = a.predict(Xe)
    assert isinstance(p, ember.ndarray) and str(p.device) == str(Xe.device) and p.shape == (200,)
    np.testing.assert_allclose(_n(p), b.predict(X), rtol=1e-9, atol=1e-12)
    assert a.loss_ == pytest.approx(b.loss_, rel=1e-10)


def test_mlp_float32_stays_float32():
    X, y = make_classification(200, 6, n_classes=3, n_informative=4, random_state=1)
    X = X.astype(np.float32)
    a = MLPClassifier(max_iter=5, random_state=0).fit(X, y)
    b = snn.MLPClassifier(max_iter=5, random_state=0).fit(X, y)
    assert a.coefs_[0].dtype == np.float32 and a.predict_proba(X).dtype == np.float32
    _same_net(a, b, rtol=1e-4, atol=1e-6)


def test_mlp_regressor_multioutput_poisson_and_weights():
    X, y = make_regression(150, 5, n_targets=2, random_state=2)
    y = y / 100
    params = dict(hidden_layer_sizes=(7,), max_iter=10, random_state=3)
    a = MLPRegressor(**params).fit(X, y)
    b = snn.MLPRegressor(**params).fit(X, y)
    _same_net(a, b)
    assert a.predict(X).shape == (150, 2)
    yp = np.exp(X[:, 0] / 3)
    a = MLPRegressor(loss="poisson", **params).fit(X, yp)
    b = snn.MLPRegressor(loss="poisson", **params).fit(X, yp)
    _same_net(a, b)
    assert a.out_activation_ == "exp"
    w = np.random.default_rng(0).uniform(0.2, 2.0, 150)
    a = MLPRegressor(**params).fit(X, y[:, 0], sample_weight=w)
    b = snn.MLPRegressor(**params).fit(X, y[:, 0], sample_weight=w)
    _same_net(a, b)
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-10)


def test_mlp_classifier_multilabel_and_strings():
    X, _ = make_classification(200, 5, random_state=4)
    Y = np.c_[X[:, 0] > 0, X[:, 1] > 0.3, X[:, 0] + X[:, 2] > 0].astype(int)
    params = dict(hidden_layer_sizes=(9,), max_iter=10, random_state=5)
    a = MLPClassifier(**params).fit(X, Y)
    b = snn.MLPClassifier(**params).fit(X, Y)
    _same_net(a, b)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-9)
    X, y = make_classification(200, 5, n_classes=3, n_informative=3, random_state=6)
    labels = np.array(["cat", "dog", "eel"])[y]
    a = MLPClassifier(**params).fit(X, labels)
    b = snn.MLPClassifier(**params).fit(X, labels)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_mlp_partial_fit_and_warm_start_like_sklearn():
    X, y = make_classification(200, 5, n_classes=3, n_informative=3, random_state=7)
    params = dict(hidden_layer_sizes=(6,), random_state=0)
    a, b = MLPClassifier(**params), snn.MLPClassifier(**params)
    for _ in range(3):
        a.partial_fit(X[:150], y[:150], classes=[0, 1, 2])
        b.partial_fit(X[:150], y[:150], classes=[0, 1, 2])
    _same_net(a, b)
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-10)
    a = MLPRegressor(max_iter=3, warm_start=True, **params)
    b = snn.MLPRegressor(max_iter=3, warm_start=True, **params)
    yr = X[:, 0] - X[:, 1]
    for _ in range(2):
        a.fit(X, yr)
        b.fit(X, yr)
    _same_net(a, b)
    assert len(a.loss_curve_) == 6
    with pytest.raises(AttributeError, match="stochastic"):
        MLPClassifier(solver="lbfgs").partial_fit(X, y, classes=[0, 1, 2])


def test_mlp_lbfgs_and_early_stopping_quality():
    X, y = make_regression(200, 4, noise=1.0, random_state=0)
    y = y / 100
    params = dict(hidden_layer_sizes=(10,), solver="lbfgs", max_iter=300, random_state=0)
    a = MLPRegressor(**params).fit(X, y)
    b = snn.MLPRegressor(**params).fit(X, y)
    assert a.score(X, y) > 0.999 and abs(a.score(X, y) - b.score(X, y)) < 1e-3
    assert a.loss_ < 3 * b.loss_ and a.n_iter_ <= 300
    assert not hasattr(a, "loss_curve_")
    Xc, yc = make_classification(300, 6, n_classes=3, n_informative=4, random_state=1)
    a = MLPClassifier(solver="lbfgs", max_iter=200, random_state=0).fit(Xc, yc)
    b = snn.MLPClassifier(solver="lbfgs", max_iter=200, random_state=0).fit(Xc, yc)
    assert a.score(Xc, yc) >= b.score(Xc, yc) - 0.02
    # another validation split than scikit-learn's: compare the quality reached
    Xc, yc = make_classification(600, 6, n_classes=3, n_informative=4, random_state=1)
    params = dict(
        hidden_layer_sizes=(20,),
        early_stopping=True,
        random_state=0,
        max_iter=200,
        learning_rate_init=0.01,
    )
    a = MLPClassifier(**params).fit(Xc, yc)
    b = snn.MLPClassifier(**params).fit(Xc, yc)
    assert len(a.validation_scores_) == a.n_iter_ < 200 and a.best_loss_ is None
    assert a.best_validation_score_ == max(a.validation_scores_)
    assert abs(a.score(Xc, yc) - b.score(Xc, yc)) < 0.06
    a = MLPRegressor(**params).fit(X, y)
    assert a.best_validation_score_ > 0.9 and a.score(X, y) > 0.9


def test_mlp_params_and_errors():
    X, y = make_classification(60, 4, random_state=0)
    est = MLPClassifier(hidden_layer_sizes=(3, 2), alpha=0.1, max_iter=5)
    assert clone(est).get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        est.predict(X)
    with pytest.raises(ValueError, match="hidden_layer_sizes must be > 0"):
        MLPClassifier(hidden_layer_sizes=(4, 0)).fit(X, y)
    for bad in (dict(activation="softplus"), dict(solver="newton"), dict(alpha=-1.0),
                dict(learning_rate_init=0.0), dict(batch_size=0), dict(momentum=1.5)):  # fmt: skip
        with pytest.raises(InvalidParameterError, match=next(iter(bad))):
            MLPClassifier(**bad).fit(X, y)
    with pytest.raises(InvalidParameterError, match="loss"):
        MLPRegressor(loss="huber").fit(X, y)
    with pytest.raises(ValueError, match="Unknown label type"):
        MLPClassifier(max_iter=2).fit(X, y + 0.5)
    with pytest.raises(ValueError, match="negative"):
        MLPRegressor(loss="poisson", max_iter=2).fit(X, y - 1.0)
    est.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3])
    with pytest.warns(UserWarning, match="batch_size"):
        MLPRegressor(batch_size=500, max_iter=1).fit(X, y)
    with pytest.raises(ValueError, match="validation set is too small"):
        MLPRegressor(early_stopping=True, validation_fraction=0.01).fit(X, y)


# ---- isotonic regression -------------------------------------------------------------------


def _iso_data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    x[::7] = x[3]  # ties
    y = x + rng.normal(size=n)
    w = rng.uniform(0.1, 2.0, n)
    return x, y, w


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(increasing=False),
        dict(increasing="auto", out_of_bounds="clip"),
        dict(y_min=-1.0, y_max=0.5, out_of_bounds="clip"),
    ],
)
def test_isotonic_regression_exact(device, kw):
    x, y, w = _iso_data()
    xe, ye = ember.asarray(x, device=device), ember.asarray(y, device=device)
    a = IsotonicRegression(**kw).fit(xe, ye, sample_weight=w)
    b = siso.IsotonicRegression(**kw).fit(x, y, sample_weight=w)
    np.testing.assert_allclose(_n(a.X_thresholds_), b.X_thresholds_, rtol=1e-14)
    np.testing.assert_allclose(_n(a.y_thresholds_), b.y_thresholds_, rtol=1e-12, atol=1e-14)
    assert (a.X_min_, a.X_max_) == (b.X_min_, b.X_max_)
    assert a.increasing_ == b.increasing_
    t = np.linspace(-4.0, 4.0, 77)
    p = a.predict(ember.asarray(t, device=device))
    assert isinstance(p, ember.ndarray) and str(p.device) == str(xe.device)
    np.testing.assert_allclose(_n(p), b.predict(t), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.transform(t.reshape(-1, 1)), b.transform(t.reshape(-1, 1)))


def test_isotonic_functions_and_errors():
    x, y, w = _iso_data(1)
    np.testing.assert_allclose(isotonic_regression(y), siso.isotonic_regression(y), atol=1e-14)
    np.testing.assert_allclose(
        isotonic_regression(y, sample_weight=w, y_min=-0.5, increasing=False),
        siso.isotonic_regression(y, sample_weight=w, y_min=-0.5, increasing=False),
        atol=1e-14,
    )
    assert check_increasing(x, y) == siso.check_increasing(x, y)
    assert check_increasing(x, -y) == siso.check_increasing(x, -y)
    with pytest.warns(UserWarning, match="Confidence interval"):
        check_increasing(np.arange(5.0), np.array([1.0, 3, 2, 4, 0]))
    est = IsotonicRegression(out_of_bounds="raise").fit(x, y)
    with pytest.raises(ValueError, match="below the interpolation range"):
        est.predict([x.min() - 1])
    with pytest.raises(ValueError, match="1d array or 2d array with 1 feature"):
        IsotonicRegression().fit(np.c_[x, x], y)
    with pytest.raises(InvalidParameterError, match="out_of_bounds"):
        IsotonicRegression(out_of_bounds="wrap").fit(x, y)
    with pytest.raises(NotFittedError):
        IsotonicRegression().predict(x)
    one = IsotonicRegression().fit([1.0, 1.0], [2.0, 4.0])
    np.testing.assert_allclose(one.predict([1.0]), [3.0])


# ---- calibration ---------------------------------------------------------------------------


def test_sigmoid_calibration_matches_platt():
    rng = np.random.default_rng(0)
    for scale in (3.0, 100.0):  # the second is rescaled (|f| >= 30), as scikit-learn
        f = rng.normal(size=300) * scale
        y = (f / scale + rng.normal(size=300) > 0).astype(float)
        w = rng.uniform(0.5, 2.0, 300)
        a = _SigmoidCalibration().fit(f, y, w)
        b = scal._SigmoidCalibration().fit(f, y, w)
        assert a.a_ == pytest.approx(b.a_, rel=1e-5) and a.b_ == pytest.approx(b.b_, rel=1e-5)
        np.testing.assert_allclose(_n(a.predict(f)), b.predict(f), atol=1e-6)


@pytest.mark.parametrize("method", ["sigmoid", "isotonic", "temperature"])
@pytest.mark.parametrize("ensemble", [True, False])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_calibrated_classifier_exact(method, ensemble, n_classes):
    X, y = make_classification(300, 6, n_informative=4, n_classes=n_classes, random_state=0)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    a = CalibratedClassifierCV(GaussianNB(), method=method, ensemble=ensemble, cv=3)
    b = scal.CalibratedClassifierCV(SkGaussianNB(), method=method, ensemble=ensemble, cv=3)
    a.fit(X, y, sample_weight=w)
    b.fit(X, y, sample_weight=w)
    assert len(a.calibrated_classifiers_) == len(b.calibrated_classifiers_)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-6)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.classes_, b.classes_)
    assert a.n_features_in_ == 6


def test_calibrated_classifier_device_frozen_and_default(device):
    X, y = make_classification(300, 5, random_state=2)
    Xe, ye = ember.asarray(X, device=device), ember.asarray(y, device=device)
    base = LogisticRegression().fit(Xe, ye)
    sk_base = SkGaussianNB().fit(X, y)
    for frozen in (FrozenEstimator(base), SkFrozen(GaussianNB().fit(X, y))):
        est = CalibratedClassifierCV(frozen, method="isotonic").fit(Xe, ye)
        p = est.predict_proba(Xe)
        assert isinstance(p, ember.ndarray) and str(p.device) == str(Xe.device)
        assert len(est.calibrated_classifiers_) == 1
        assert est.calibrated_classifiers_[0].estimator is frozen
    ref = scal.CalibratedClassifierCV(SkFrozen(sk_base)).fit(X, y)
    ours = CalibratedClassifierCV(FrozenEstimator(GaussianNB().fit(X, y))).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    # default estimator: LinearSVC, calibrated by Platt's sigmoid on 5 stratified folds
    ours = CalibratedClassifierCV().fit(X, y)
    ref = scal.CalibratedClassifierCV().fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-3)


def test_calibrated_classifier_errors():
    X, y = make_classification(60, 4, random_state=3)
    with pytest.raises(NotFittedError):
        CalibratedClassifierCV(GaussianNB()).predict_proba(X)
    with pytest.raises(InvalidParameterError, match="method"):
        CalibratedClassifierCV(GaussianNB(), method="beta").fit(X, y)
    with pytest.raises(InvalidParameterError, match="cv"):
        CalibratedClassifierCV(GaussianNB(), cv=1).fit(X, y)
    y2 = y.copy()
    y2[:3] = 2
    with pytest.raises(ValueError, match="Requesting 5-fold cross-validation"):
        CalibratedClassifierCV(GaussianNB()).fit(X, y2)
    with pytest.raises(ValueError, match="not fitted"):
        CalibratedClassifierCV(FrozenEstimator(GaussianNB())).fit(X, y)
    est = CalibratedClassifierCV(GaussianNB(), cv=2).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict_proba(X[:, :2])
    c = clone(CalibratedClassifierCV(GaussianNB(), method="isotonic", cv=4))
    assert c.get_params()["method"] == "isotonic" and c.cv == 4


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_calibration_curve_exact(strategy):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=500)
    yt = (rng.uniform(size=500) < p).astype(int)
    for bins in (3, 7, 10):
        a = calibration_curve(yt, p, n_bins=bins, strategy=strategy)
        b = scal.calibration_curve(yt, p, n_bins=bins, strategy=strategy)
        np.testing.assert_allclose(a[0], b[0], rtol=1e-12)
        np.testing.assert_allclose(a[1], b[1], rtol=1e-12)
    labels = np.array(["no", "yes"])[yt]
    a = calibration_curve(labels, p, pos_label="yes", strategy=strategy)
    b = scal.calibration_curve(labels, p, pos_label="yes", strategy=strategy)
    np.testing.assert_allclose(a[0], b[0])
    ae = calibration_curve(ember.asarray(yt), ember.asarray(p), strategy=strategy)
    assert isinstance(ae[0], ember.ndarray)
    ref = scal.calibration_curve(yt, p, strategy=strategy)
    np.testing.assert_allclose(_n(ae[0]), ref[0], rtol=1e-12)
    np.testing.assert_allclose(_n(ae[1]), ref[1], rtol=1e-12)
    with pytest.raises(ValueError, match="pos_label is not specified"):
        calibration_curve(labels, p)
    with pytest.raises(ValueError, match="outside"):
        calibration_curve(yt, p + 1)
    with pytest.raises(ValueError, match="Only binary"):
        calibration_curve(np.arange(500) % 3, p, pos_label=1)
    with pytest.raises(ValueError, match="strategy"):
        calibration_curve(yt, p, strategy="kmeans")


# ---- permutation importance ----------------------------------------------------------------


def test_permutation_importance_exact(device):
    X, y = make_regression(200, 5, noise=1.0, random_state=0)
    sk = SkLinearRegression().fit(X, y)
    ref = sinsp.permutation_importance(sk, X, y, n_repeats=4, random_state=3)
    out = permutation_importance(sk, X, y, n_repeats=4, random_state=3)
    np.testing.assert_array_equal(out.importances, ref.importances)
    np.testing.assert_array_equal(out.importances_mean, ref.importances_mean)
    np.testing.assert_array_equal(out.importances_std, ref.importances_std)
    Xe, ye = ember.asarray(X, device=device), ember.asarray(y, device=device)
    ours = LinearRegression().fit(Xe, ye)
    out = permutation_importance(ours, Xe, ye, n_repeats=4, random_state=3)
    assert out.importances.shape == (5, 4)
    np.testing.assert_allclose(out.importances, ref.importances, rtol=1e-9, atol=1e-12)
    # the caller's X is left as it was
    np.testing.assert_array_equal(_n(Xe), X)


def test_permutation_importance_frames_weights_and_metrics():
    X, y = make_regression(150, 4, noise=1.0, random_state=1)
    df = pd.DataFrame(X, columns=list("abcd"))
    sk = SkLinearRegression().fit(df, y)
    w = np.random.default_rng(0).uniform(0.5, 2.0, 150)
    scoring = ["r2", "neg_mean_squared_error"]
    out = permutation_importance(sk, df, y, scoring=scoring, n_repeats=3, random_state=0)
    ref = sinsp.permutation_importance(sk, df, y, scoring=scoring, n_repeats=3, random_state=0)
    assert set(out) == set(ref)
    for k in scoring:
        np.testing.assert_allclose(out[k].importances, ref[k].importances, rtol=1e-12)
    out = permutation_importance(sk, X, y, sample_weight=w, n_repeats=2, random_state=5)
    ref = sinsp.permutation_importance(sk, X, y, sample_weight=w, n_repeats=2, random_state=5)
    np.testing.assert_allclose(out.importances, ref.importances, rtol=1e-12)
    rs = np.random.RandomState(4)
    out = permutation_importance(sk, X, y, random_state=rs, max_samples=60)
    assert out.importances.shape == (4, 5)
    assert np.argmax(out.importances_mean) == np.argmax(np.abs(sk.coef_) * X.std(axis=0))


def test_permutation_importance_errors():
    X, y = make_regression(50, 3, random_state=2)
    sk = SkLinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="max_samples"):
        permutation_importance(sk, X, y, max_samples=51)
    with pytest.raises(ValueError, match="max_samples"):
        permutation_importance(sk, X, y, max_samples=1.5)
    with pytest.raises(ValueError, match="n_repeats"):
        permutation_importance(sk, X, y, n_repeats=0)
    with pytest.raises(ValueError, match="scoring"):
        permutation_importance(sk, X, y, scoring="no_such_metric")


# ---- scikit-learn's estimator checks -------------------------------------------------------

_EXPECTED_FAILURES: set = set()


@pytest.mark.parametrize(
    "est",
    [
        # scikit-learn's own test parameters for its MLPs
        MLPClassifier(max_iter=100, random_state=0),
        MLPRegressor(max_iter=100, random_state=0),
        CalibratedClassifierCV(GaussianNB(), cv=3),
    ],
    ids=lambda e: type(e).__name__,
)
def test_sklearn_estimator_checks(est):
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(est, on_fail=None)
    failed = {
        (type(est).__name__, r["check_name"]): str(r["exception"])[:300]
        for r in results
        if r["status"] == "failed"
    }
    unexpected = {k: v for k, v in failed.items() if k not in _EXPECTED_FAILURES}
    assert not unexpected, unexpected
    assert len(results) > 30


def test_clone_keeps_a_frozen_estimator_fitted():
    from ember.ml.base import clone
    from ember.ml.calibration import CalibratedClassifierCV
    from ember.ml.frozen import FrozenEstimator
    from ember.ml.naive_bayes import GaussianNB

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = (X[:, 0] > 0).astype(int)
    base = GaussianNB().fit(X, y)
    cal = clone(CalibratedClassifierCV(FrozenEstimator(base)))
    inner = cal.get_params()["estimator"]
    assert isinstance(inner, FrozenEstimator) and inner.estimator is base
    cal.fit(X, y)  # the frozen model is used as fitted, not refitted
    assert cal.predict_proba(X).shape == (60, 2)
