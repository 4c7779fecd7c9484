"""ember.ml's cross-validated estimators (RidgeCV, LogisticRegressionCV) and
metrics.classification_report against scikit-learn on the same data: chosen alphas/C equal,
values within tolerances, report strings identical."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from ember.ml import linear_model as eml
from ember.ml import metrics as em
from ember.ml.exceptions import NotFittedError, UndefinedMetricWarning
from ember.ml.model_selection import KFold, StratifiedKFold
from sklearn import linear_model as skl
from sklearn import metrics as skm
from sklearn.datasets import make_classification
from sklearn.model_selection import KFold as SkKFold


def _n(a):
    return ember.asnumpy(a) if isinstance(a, ember.ndarray) else np.asarray(a)


def _e(x, device):
    return ember.asarray(x, device=device)


def _reg(n, d, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.linspace(0.5, 3, d)
    y = X @ rng.normal(size=d) + rng.normal(size=n) + 1.5
    Y = np.stack([y, 0.2 * y + 2 * rng.normal(size=n)], axis=1)
    w = rng.integers(1, 5, n) * 0.5
    return X.astype(dtype), y.astype(dtype), Y.astype(dtype), w


ALPHAS = np.logspace(-3, 3, 13)


# ---- RidgeCV ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(60, 5), (12, 30)], ids=["tall", "wide"])
@pytest.mark.parametrize("gcv_mode", [None, "svd", "eigen"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_ridge_cv_loo(device, shape, gcv_mode, fit_intercept, weighted):
    X, y, Y, w = _reg(*shape)
    sw = w if weighted else None
    for target in (y, Y):
        kw = dict(alphas=ALPHAS, fit_intercept=fit_intercept, gcv_mode=gcv_mode)
        a = eml.RidgeCV(store_cv_results=True, **kw).fit(
            _e(X, device), _e(target, device), sample_weight=None if sw is None else _e(sw, device)
        )
        b = skl.RidgeCV(store_cv_results=True, **kw).fit(X, target, sample_weight=sw)
        assert a.alpha_ == b.alpha_
        # (rel 1e-6: the wide weighted case is ill-conditioned at the smallest alphas)
        assert a.best_score_ == pytest.approx(float(b.best_score_), rel=1e-6)
        assert isinstance(a.coef_, ember.ndarray) and a.coef_.shape == b.coef_.shape
        np.testing.assert_allclose(_n(a.coef_), b.coef_, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(_n(a.intercept_), b.intercept_, rtol=1e-7, atol=1e-9)
        assert a.cv_results_.shape == b.cv_results_.shape
        np.testing.assert_allclose(_n(a.cv_results_), b.cv_results_, rtol=1e-5, atol=1e-8)
        pred = a.predict(_e(X, device))
        assert str(pred.device) == str(_e(X, device).device)
        np.testing.assert_allclose(_n(pred), b.predict(X), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("scoring", ["r2", "neg_mean_absolute_error", "neg_mean_squared_error"])
@pytest.mark.parametrize("weighted", [False, True])
def test_ridge_cv_loo_scoring_and_per_target(scoring, weighted):
    X, y, Y, w = _reg(50, 4, seed=1)
    sw = w if weighted else None
    for apt in (False, True):
        kw = dict(alphas=ALPHAS, scoring=scoring, alpha_per_target=apt, store_cv_results=True)
        a = eml.RidgeCV(**kw).fit(X, Y, sample_weight=sw)
        b = skl.RidgeCV(**kw).fit(X, Y, sample_weight=sw)
        np.testing.assert_array_equal(a.alpha_, b.alpha_)
        np.testing.assert_allclose(a.best_score_, b.best_score_, rtol=1e-8)
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(a.cv_results_, b.cv_results_, rtol=1e-8, atol=1e-10)
    a = eml.RidgeCV(alphas=ALPHAS, alpha_per_target=True).fit(X, Y)
    b = skl.RidgeCV(alphas=ALPHAS, alpha_per_target=True).fit(X, Y)
    assert isinstance(a.alpha_, np.ndarray) and a.alpha_.shape == (2,)
    np.testing.assert_array_equal(a.alpha_, b.alpha_)
    assert a.alpha_[0] != a.alpha_[1]  # the two targets want different penalties
    np.testing.assert_allclose(a.best_score_, b.best_score_, rtol=1e-8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ridge_cv_dtypes(device, dtype):
    X, y, _, _ = _reg(80, 6, seed=2, dtype=dtype)
    a = eml.RidgeCV(alphas=ALPHAS, store_cv_results=True).fit(_e(X, device), _e(y, device))
    b = skl.RidgeCV(alphas=ALPHAS, store_cv_results=True).fit(X, y)
    assert a.alpha_ == b.alpha_
    assert _n(a.coef_).dtype == b.coef_.dtype == dtype
    assert _n(a.cv_results_).dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(_n(a.coef_), b.coef_, rtol=tol, atol=tol)
    assert a.intercept_ == pytest.approx(float(b.intercept_), rel=tol, abs=tol)
    assert a.best_score_ == pytest.approx(float(b.best_score_), rel=1e-6)
    a = eml.RidgeCV(alphas=ALPHAS).fit(X, y)  # NumPy in, NumPy out
    assert isinstance(a.coef_, np.ndarray) and isinstance(a.intercept_, float)


@pytest.mark.parametrize("cv", [3, 5, "splitter"])
@pytest.mark.parametrize("scoring", [None, "neg_mean_squared_error"])
def test_ridge_cv_kfold(device, cv, scoring):
    X, y, _, w = _reg(60, 5, seed=3)
    ours = KFold(4, shuffle=True, random_state=0) if cv == "splitter" else cv
    folds = list(ours.split(X)) if cv == "splitter" else cv
    a = eml.RidgeCV(alphas=ALPHAS, cv=ours, scoring=scoring).fit(
        _e(X, device), _e(y, device), sample_weight=_e(w, device)
    )
    b = skl.RidgeCV(alphas=ALPHAS, cv=folds, scoring=scoring).fit(X, y, sample_weight=w)
    assert a.alpha_ == b.alpha_
    assert a.best_score_ == pytest.approx(float(b.best_score_), rel=1e-8)
    np.testing.assert_allclose(_n(a.coef_), b.coef_, rtol=1e-8, atol=1e-10)
    assert float(a.intercept_) == pytest.approx(float(b.intercept_), rel=1e-8)
    assert not hasattr(a, "cv_results_")


def test_ridge_cv_errors():
    X, y, Y, _ = _reg(20, 3)
    with pytest.raises(NotFittedError):
        eml.RidgeCV().predict(X)
    with pytest.raises(ValueError, match=r"alphas\[0\] == 0.0, must be > 0.0"):
        eml.RidgeCV(alphas=[0.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match=r"alphas\[0\] == -1.0, must be >= 0.0"):
        eml.RidgeCV(alphas=[-1.0, 1.0], cv=3).fit(X, y)
    with pytest.raises(TypeError, match=r"alphas\[1\] must be an instance of float, not str"):
        eml.RidgeCV(alphas=[1.0, "a"]).fit(X, y)
    with pytest.raises(ValueError, match="'alphas' parameter of RidgeCV"):
        eml.RidgeCV(alphas=-2.0).fit(X, y)
    with pytest.raises(ValueError, match="cv!=None and store_cv_results=True are incompatible"):
        eml.RidgeCV(cv=3, store_cv_results=True).fit(X, y)
    with pytest.raises(ValueError, match="cv!=None and alpha_per_target=True are incompatible"):
        eml.RidgeCV(cv=3, alpha_per_target=True).fit(X, Y)
    with pytest.raises(ValueError, match="'gcv_mode' parameter of RidgeCV"):
        eml.RidgeCV(gcv_mode="qr").fit(X, y)
    with pytest.raises(ValueError, match="not a valid scoring value"):
        eml.RidgeCV(scoring="nope").fit(X, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        eml.RidgeCV().fit(X, y[:-1])


# ---- LogisticRegressionCV ------------------------------------------------------------------


def _sk_lrcv(**kw):
    """scikit-learn's LogisticRegressionCV with the legacy attributes and accuracy scoring that
    its transitional defaults stand for (their FutureWarnings silenced)."""
    kw = {"scoring": None, "l1_ratios": None, "use_legacy_attributes": True, **kw}
    if kw.get("penalty", "l2") == "l2" and kw["l1_ratios"] is None:
        kw.pop("penalty", None)
    return skl.LogisticRegressionCV(**kw)


def _fit_sk(est, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", UserWarning)
        return est.fit(*args, **kw)


def _clf(n_classes, seed=0, weights=None):
    X, y = make_classification(
        240,
        6,
        n_informative=4,
        n_classes=n_classes,
        weights=weights,
        flip_y=0.05,
        random_state=seed,
    )
    X = (X - X.mean(0)) / X.std(0)
    return X, y


def _check_lrcv(a, b, X, Xa, tight=True):
    np.testing.assert_array_equal(a.C_, b.C_)
    np.testing.assert_allclose(a.Cs_, b.Cs_)
    np.testing.assert_array_equal(_n(a.classes_), b.classes_)
    assert list(a.scores_) == list(b.scores_)
    for k in b.scores_:
        np.testing.assert_allclose(a.scores_[k], b.scores_[k], atol=1e-12 if tight else 0.03)
        paths_tol = 1e-4 if tight else 5e-3
        np.testing.assert_allclose(_n(a.coefs_paths_[k]), b.coefs_paths_[k], atol=paths_tol)
    assert a.n_iter_.shape == b.n_iter_.shape
    atol = 1e-5 if tight else 1e-3
    np.testing.assert_allclose(_n(a.coef_), b.coef_, atol=atol)
    np.testing.assert_allclose(_n(a.intercept_), b.intercept_, atol=atol)
    np.testing.assert_allclose(_n(a.predict_proba(Xa)), b.predict_proba(X), atol=atol)
    assert np.mean(_n(a.predict(Xa)) == b.predict(X)) > 0.98


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"Cs": [0.01, 0.1, 1.0, 10.0]},
        {"class_weight": "balanced"},
        {"fit_intercept": False},
        {"refit": False},
    ],
)
def test_logistic_regression_cv(device, n_classes, kw):
    X, y = _clf(n_classes, weights=[0.7, 0.3] if n_classes == 2 else None)
    kw = {"tol": 1e-8, "max_iter": 1000, **kw}
    a = eml.LogisticRegressionCV(**kw).fit(_e(X, device), _e(y, device))
    b = _fit_sk(_sk_lrcv(**kw), X, y)
    _check_lrcv(a, b, X, _e(X, device))
    assert isinstance(a.coef_, ember.ndarray) and a.coef_.shape == b.coef_.shape
    assert a.score(_e(X, device), _e(y, device)) == pytest.approx(b.score(X, y), abs=0.01)


def test_logistic_regression_cv_defaults_and_strings():
    X, y = _clf(3, seed=1)
    names = np.array(["ant", "bee", "cat"])[y]
    a = eml.LogisticRegressionCV().fit(X, names)
    b = _fit_sk(_sk_lrcv(), X, names)
    _check_lrcv(a, b, X, X, tight=False)
    assert a.predict(X).dtype.kind == "U" and set(a.scores_) == {"ant", "bee", "cat"}
    assert a.C_.shape == (3,) and a.l1_ratio_.tolist() == [None, None, None]
    assert a.l1_ratios_.tolist() == [None]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logistic_regression_cv_dtypes_weights_scoring(device, dtype):
    X, y = _clf(2, seed=2, weights=[0.6, 0.4])
    w = np.random.default_rng(0).integers(1, 4, len(y)).astype(np.float64)
    for scoring in ("accuracy", "roc_auc", "f1"):
        kw = dict(Cs=6, scoring=scoring, tol=1e-8, max_iter=1000)
        a = eml.LogisticRegressionCV(**kw).fit(
            _e(X.astype(dtype), device), _e(y, device), sample_weight=_e(w, device)
        )
        b = _fit_sk(_sk_lrcv(**kw), X, y, sample_weight=w)
        assert _n(a.coef_).dtype == dtype
        tight = dtype == np.float64
        np.testing.assert_array_equal(a.C_, b.C_)
        np.testing.assert_allclose(a.scores_[1], b.scores_[1], atol=1e-8 if tight else 0.02)
        np.testing.assert_allclose(_n(a.coef_), b.coef_, atol=1e-5 if tight else 2e-3)
        ref = skm.get_scorer(scoring)(b, X, y)
        assert a.score(_e(X.astype(dtype), device), _e(y, device)) == pytest.approx(ref, abs=1e-3)


def test_logistic_regression_cv_new_attributes_and_splitter():
    X, y = _clf(3, seed=4)
    cv = list(StratifiedKFold(4).split(X, y))
    for refit in (True, False):
        kw = dict(Cs=[0.05, 0.5, 5.0], cv=cv, refit=refit, tol=1e-8, max_iter=1000)
        a = eml.LogisticRegressionCV(use_legacy_attributes=False, **kw).fit(X, y)
        b = _fit_sk(
            skl.LogisticRegressionCV(
                use_legacy_attributes=False, l1_ratios=(0.0,), scoring=None, **kw
            ),
            X,
            y,
        )
        assert a.C_ == pytest.approx(b.C_) and isinstance(a.C_, float)
        assert a.l1_ratio_ == b.l1_ratio_ == 0.0
        assert a.scores_.shape == (4, 1, 3)
        assert a.coefs_paths_.shape == b.coefs_paths_.shape == (4, 1, 3, 3, 7)
        assert a.n_iter_.shape == b.n_iter_.shape
        np.testing.assert_allclose(a.scores_, b.scores_, atol=1e-12)
        np.testing.assert_allclose(a.coefs_paths_, b.coefs_paths_, atol=1e-4)
        np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-5)


def test_logistic_regression_cv_elasticnet():
    X, y = _clf(2, seed=3)
    kw = dict(
        Cs=[0.05, 0.5, 5.0],
        penalty="elasticnet",
        l1_ratios=[0.2, 0.8],
        solver="saga",
        tol=1e-6,
        max_iter=3000,
    )
    a = eml.LogisticRegressionCV(**kw).fit(X, y)
    b = _fit_sk(_sk_lrcv(**kw), X, y)
    np.testing.assert_array_equal(a.C_, b.C_)
    np.testing.assert_array_equal(a.l1_ratio_, b.l1_ratio_)
    assert a.scores_[1].shape == b.scores_[1].shape == (5, 3, 2)
    np.testing.assert_allclose(a.scores_[1], b.scores_[1], atol=0.02)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-3)


def test_logistic_regression_cv_errors():
    X, y = _clf(2)
    with pytest.raises(NotFittedError):
        eml.LogisticRegressionCV().predict(X)
    with pytest.raises(ValueError, match="at least 2 classes"):
        eml.LogisticRegressionCV().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="Solver lbfgs supports only 'l2' or None penalties"):
        eml.LogisticRegressionCV(penalty="l1").fit(X, y)
    with pytest.raises(ValueError, match="l1_ratios must be an array-like of numbers between 0"):
        eml.LogisticRegressionCV(penalty="elasticnet", solver="saga", l1_ratios=[1.5]).fit(X, y)
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        eml.LogisticRegressionCV().fit(X, y + 0.5)
    with pytest.raises(ValueError, match="'Cs' parameter of LogisticRegressionCV"):
        eml.LogisticRegressionCV(Cs=0).fit(X, y)
    with pytest.raises(ValueError, match="'solver' parameter of LogisticRegressionCV"):
        eml.LogisticRegressionCV(solver="newton").fit(X, y)
    with pytest.raises(ValueError, match="class_weight dict must have the class labels"):
        eml.LogisticRegressionCV(class_weight={5: 2.0}).fit(X, y)
    with pytest.raises(ValueError, match="n_splits=10 cannot be greater than the number"):
        eml.LogisticRegressionCV(cv=10).fit(X[:12], y[:12])
    with pytest.warns(UserWarning, match="l1_ratios parameter is only used when penalty"):
        eml.LogisticRegressionCV(Cs=2, l1_ratios=[0.5]).fit(X, y)


# ---- classification_report ------------------------------------------------------------------


def _labels(seed=0, n=120, k=4):
    rng = np.random.default_rng(seed)
    yt = rng.integers(0, k, n)
    yp = np.where(rng.random(n) < 0.6, yt, rng.integers(0, k, n))
    yp[yp == k - 1] = k - 2  # the last class is never predicted: zero_division matters
    return yt, yp, rng.integers(1, 5, n) * 0.5


REPORT_KW = [
    {},
    {"digits": 4},
    {"digits": 0},
    {"labels": [0, 1, 2]},
    {"labels": [2, 0, 1, 3, 7]},
    {"target_names": ["alpha", "b", "c", "a rather long class name"]},
    {"labels": [1, 0], "target_names": ["one", "zero"]},
    {"sample_weight": "w"},
    {"zero_division": 1},
    {"zero_division": 0.0},
    {"zero_division": np.nan},
]


@pytest.mark.parametrize("kw", REPORT_KW)
def test_classification_report_text(device, kw):
    yt, yp, w = _labels()
    kw_sk = {k: (w if v == "w" else v) for k, v in kw.items()}
    kw_em = {k: (_e(w, device) if v == "w" else v) for k, v in kw.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", skm._classification.UndefinedMetricWarning)
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        ref = skm.classification_report(yt, yp, **kw_sk)
        assert em.classification_report(yt, yp, **kw_sk) == ref
        assert em.classification_report(_e(yt, device), _e(yp, device), **kw_em) == ref
        d_ref = skm.classification_report(yt, yp, output_dict=True, **kw_sk)
        d = em.classification_report(_e(yt, device), _e(yp, device), output_dict=True, **kw_em)
    assert list(d) == list(d_ref)
    for key, val in d_ref.items():
        if isinstance(val, dict):
            assert list(d[key]) == list(val)
            np.testing.assert_allclose([d[key][m] for m in val], list(val.values()), rtol=1e-12)
        else:
            assert d[key] == pytest.approx(val, rel=1e-12)


def test_classification_report_strings_binary_multilabel(device):
    yt, yp, w = _labels(1, k=3)
    names = np.array(["cat", "dog", "emu"])
    assert em.classification_report(names[yt], names[yp]) == skm.classification_report(
        names[yt], names[yp]
    )
    yb = (yt > 0).astype(int)
    for pred in (yb, 1 - yb, (yp > 0).astype(int)):
        ref = skm.classification_report(yb, pred, digits=3)
        assert em.classification_report(_e(yb, device), _e(pred, device), digits=3) == ref
    rng = np.random.default_rng(5)
    Yt, Yp = rng.integers(0, 2, (60, 4)), rng.integers(0, 2, (60, 4))
    Yp[:, 3] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kw in ({}, {"labels": [0, 3]}, {"sample_weight": w[:60]}):
            ref = skm.classification_report(Yt, Yp, **kw)
            kw_e = {k: (_e(v, device) if k == "sample_weight" else v) for k, v in kw.items()}
            assert em.classification_report(_e(Yt, device), _e(Yp, device), **kw_e) == ref
            assert em.classification_report(Yt, Yp, **kw) == ref
    for average in (None, "micro", "macro", "weighted", "samples"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = em.precision_recall_fscore_support(
                _e(Yt, device), _e(Yp, device), average=average
            )
            ref = skm.precision_recall_fscore_support(Yt, Yp, average=average)
        for g, r in zip(got, ref, strict=True):
            if r is None:
                assert g is None
            else:
                np.testing.assert_allclose(_n(g), r, rtol=1e-12)


def test_classification_report_warnings_and_errors():
    yt, yp, _ = _labels()
    with pytest.warns(
        UndefinedMetricWarning, match="Precision is ill-defined and being set to 0.0 in labels"
    ):
        em.classification_report(yt, yp)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        em.classification_report(yt, yp, zero_division=0)  # no warning when it is chosen
    with pytest.raises(
        ValueError, match="Number of classes, 4, does not match size of target_names, 2"
    ):
        em.classification_report(yt, yp, target_names=["a", "b"])
    with pytest.warns(UserWarning, match="labels size, 3, does not match size of target_names, 2"):
        em.classification_report(yt, yp, labels=[0, 1, 2], target_names=["a", "b"], zero_division=0)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        em.classification_report(yt, yp[:-1])
    with pytest.raises(ValueError, match="Mix of label input types"):
        em.classification_report(np.array(["a", "b"]), np.array([1, 0]))
    with pytest.raises(ValueError, match="can't handle a mix of multiclass and continuous"):
        em.classification_report(yt, yp + 0.5)
    with pytest.raises(ValueError, match="'zero_division' parameter of classification_report"):
        em.classification_report(yt, yp, zero_division=2)
    with pytest.raises(ValueError, match="'digits' parameter of classification_report"):
        em.classification_report(yt, yp, digits=-1)
    with pytest.raises(ValueError, match="Found empty input array"):
        em.classification_report([], [])
    with pytest.raises(ValueError, match="All labels must be in"):
        em.classification_report(np.eye(3, dtype=int), np.eye(3, dtype=int), labels=[4])
    ref = skm.precision_recall_fscore_support(yt > 1, yp > 1, average="binary")
    got = em.precision_recall_fscore_support(yt > 1, yp > 1, average="binary", pos_label=True)
    np.testing.assert_allclose(got[:3], ref[:3], rtol=1e-12)
    with pytest.raises(ValueError, match="Target is multiclass but average='binary'"):
        em.precision_recall_fscore_support(yt, yp, average="binary")


def test_classification_report_on_fitted_model(device):
    X, y = _clf(3, seed=6)
    m = eml.LogisticRegressionCV(Cs=4).fit(_e(X, device), _e(y, device))
    pred = m.predict(_e(X, device))
    assert isinstance(pred, ember.ndarray)
    text = em.classification_report(_e(y, device), pred, digits=3)
    assert text == skm.classification_report(y, _n(pred), digits=3)
    assert "accuracy" in text and text.count("\n") == 9
    assert KFold(3).get_n_splits() == SkKFold(3).get_n_splits()
