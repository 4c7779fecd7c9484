"""ember.ml probe gaps (2): ComplementNB/CategoricalNB, export_text, LocalOutlierFactor,
NearestCentroid, RFECV and SequentialFeatureSelector against the installed scikit-learn."""

import warnings

import ember
import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

import ember.ml.feature_selection as efs  # noqa: E402
import ember.ml.naive_bayes as enb  # noqa: E402
import ember.ml.neighbors as en  # noqa: E402
import ember.ml.tree as etree  # noqa: E402
import sklearn.feature_selection as skfs  # noqa: E402
import sklearn.naive_bayes as sknb  # noqa: E402
import sklearn.neighbors as skn  # noqa: E402
import sklearn.tree as sktree  # noqa: E402
from ember.ml.exceptions import NotFittedError  # noqa: E402
from ember.ml.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.linear_model import LinearRegression as SkLinReg  # noqa: E402
from sklearn.linear_model import LogisticRegression as SkLogReg  # noqa: E402

RNG = np.random.RandomState(0)


# ---------------------------------------------------------------- naive Bayes


@pytest.mark.parametrize("kw", [{}, {"norm": True}, {"alpha": 0.3, "fit_prior": False}])
def test_complement_nb(kw):
    X = RNG.poisson(2, (60, 5)).astype(float)
    y = RNG.randint(0, 3, 60)
    w = RNG.rand(60)
    a = sknb.ComplementNB(**kw).fit(X, y, sample_weight=w)
    b = enb.ComplementNB(**kw).fit(X, y, sample_weight=w)
    for at in ("feature_log_prob_", "class_log_prior_", "feature_count_", "feature_all_"):
        np.testing.assert_allclose(getattr(b, at), getattr(a, at), rtol=1e-12)
    np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(X), rtol=1e-10)
    np.testing.assert_array_equal(b.predict(X), a.predict(X))
    out = enb.ComplementNB(**kw).fit(ember.asarray(X), ember.asarray(y)).predict(ember.asarray(X))
    assert isinstance(out, ember.ndarray)


@pytest.mark.parametrize("kw", [{}, {"min_categories": [5, 4, 6]}, {"alpha": 0.5}])
def test_categorical_nb(kw):
    X = RNG.randint(0, 4, (60, 3))
    y = RNG.randint(0, 3, 60)
    w = RNG.rand(60)
    a = sknb.CategoricalNB(**kw).fit(X, y, sample_weight=w)
    b = enb.CategoricalNB(**kw).fit(X, y, sample_weight=w)
    for u, v in zip(a.feature_log_prob_, b.feature_log_prob_, strict=True):
        np.testing.assert_allclose(v, u, rtol=1e-12)
    for u, v in zip(a.category_count_, b.category_count_, strict=True):
        np.testing.assert_allclose(v, u, rtol=1e-12)
    np.testing.assert_array_equal(b.n_categories_, a.n_categories_)
    np.testing.assert_allclose(b.predict_log_proba(X), a.predict_log_proba(X), rtol=1e-10)
    np.testing.assert_array_equal(b.predict(X), a.predict(X))


def test_nb_errors():
    with pytest.raises(ValueError, match="Negative values"):
        enb.ComplementNB().fit(-np.ones((4, 2)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="Negative values"):
        enb.CategoricalNB().fit(-np.ones((4, 2)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="min_categories"):
        enb.CategoricalNB(min_categories=[2, 2, 2]).fit(np.zeros((4, 2)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="alpha"):
        enb.ComplementNB(alpha=-1).fit(np.ones((4, 2)), [0, 1, 0, 1])
    with pytest.raises(NotFittedError):
        enb.CategoricalNB().predict(np.zeros((2, 2)))


def test_nb_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(enb.ComplementNB())


# ---------------------------------------------------------------- export_text


def test_export_text_matches_sklearn():
    X = RNG.rand(120, 3)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0.7).astype(int) + (X[:, 2] > 0.8)
    for kw in (
        {},
        {"max_depth": 1},
        {"show_weights": True, "decimals": 3},
        {"spacing": 1, "feature_names": ["a", "b", "c"], "class_names": ["x", "y", "z"]},
    ):
        b = etree.DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
        a = sktree.DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
        assert etree.export_text(b, **kw) == sktree.export_text(a, **kw)
        # the same tree printed by both functions
        assert etree.export_text(a, **kw) == sktree.export_text(a, **kw)
    r = sktree.DecisionTreeRegressor(max_depth=3).fit(X, X[:, 0] * 2)
    re = etree.DecisionTreeRegressor(max_depth=3).fit(X, X[:, 0] * 2)
    assert etree.export_text(r, decimals=4) == sktree.export_text(r, decimals=4)
    assert etree.export_text(re) == sktree.export_text(r)
    with pytest.raises(ValueError, match="feature_names must contain 3 elements"):
        etree.export_text(re, feature_names=["a"])
    with pytest.raises(ValueError, match="spacing"):
        etree.export_text(re, spacing=0)
    with pytest.raises(NotFittedError):
        etree.export_text(etree.DecisionTreeRegressor())


# ---------------------------------------------------------------- neighbours

XL = np.r_[RNG.randn(80, 3), RNG.randn(5, 3) * 5]
XT = RNG.randn(20, 3) * 2


@pytest.mark.parametrize(
    "kw", [{}, {"n_neighbors": 7, "contamination": 0.1}, {"metric": "manhattan", "n_neighbors": 5}]
)
def test_local_outlier_factor(kw):
    a = skn.LocalOutlierFactor(**kw)
    b = en.LocalOutlierFactor(**kw)
    np.testing.assert_array_equal(b.fit_predict(XL), a.fit_predict(XL))
    np.testing.assert_allclose(b.negative_outlier_factor_, a.negative_outlier_factor_, rtol=1e-9)
    assert b.offset_ == pytest.approx(a.offset_, rel=1e-12)
    assert b.n_neighbors_ == a.n_neighbors_
    a = skn.LocalOutlierFactor(novelty=True, **kw).fit(XL)
    b = en.LocalOutlierFactor(novelty=True, **kw).fit(XL)
    np.testing.assert_allclose(b.score_samples(XT), a.score_samples(XT), rtol=1e-9)
    np.testing.assert_allclose(b.decision_function(XT), a.decision_function(XT), rtol=1e-9)
    np.testing.assert_array_equal(b.predict(XT), a.predict(XT))
    s = b.score_samples(ember.asarray(XT))
    assert isinstance(s, ember.ndarray)


def test_local_outlier_factor_api():
    assert not hasattr(en.LocalOutlierFactor(), "predict")
    assert not hasattr(en.LocalOutlierFactor(), "score_samples")
    assert not hasattr(en.LocalOutlierFactor(novelty=True), "fit_predict")
    with pytest.raises(AttributeError, match="novelty=False"):
        en.LocalOutlierFactor().fit(XL).predict(XT)
    with pytest.raises(ValueError, match="contamination"):
        en.LocalOutlierFactor(contamination=0.7).fit(XL)
    with pytest.warns(UserWarning, match="n_neighbors"):
        lof = en.LocalOutlierFactor(n_neighbors=200).fit(XL)
    assert lof.n_neighbors_ == len(XL) - 1
    with pytest.raises(NotFittedError):
        en.LocalOutlierFactor(novelty=True).decision_function(XT)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"metric": "manhattan"},
        {"shrink_threshold": 0.5},
        {"priors": "empirical"},
        {"priors": [0.2, 0.3, 0.5]},
    ],
)
def test_nearest_centroid(kw):
    y = RNG.randint(0, 3, len(XL))
    a = skn.NearestCentroid(**kw).fit(XL, y)
    b = en.NearestCentroid(**kw).fit(XL, y)
    for at in ("centroids_", "within_class_std_dev_", "deviations_", "class_prior_"):
        np.testing.assert_allclose(getattr(b, at), getattr(a, at), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(b.predict(XT), a.predict(XT))
    if kw.get("metric") != "manhattan":
        np.testing.assert_allclose(b.predict_proba(XT), a.predict_proba(XT), rtol=1e-9)
        np.testing.assert_allclose(b.decision_function(XT), a.decision_function(XT), rtol=1e-9)
    else:
        assert not hasattr(b, "predict_proba")


def test_nearest_centroid_errors_and_check():
    from sklearn.utils.estimator_checks import check_estimator

    with pytest.raises(ValueError, match="greater than one"):
        en.NearestCentroid().fit(XL, np.zeros(len(XL)))
    with pytest.raises(ValueError, match="shrink_threshold"):
        en.NearestCentroid(shrink_threshold=-1.0).fit(XL, RNG.randint(0, 2, len(XL)))
    with pytest.raises(NotFittedError):
        en.NearestCentroid().predict(XT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(en.NearestCentroid())


# ---------------------------------------------------------------- feature selection

XF = RNG.randn(80, 6)
YF = XF[:, 0] * 3 + XF[:, 2] * 2 + 0.5 * XF[:, 4] + RNG.randn(80) * 0.5


@pytest.mark.parametrize(
    "kw",
    [
        {"cv": 4},
        {"cv": 3, "step": 2, "min_features_to_select": 2, "scoring": "neg_mean_squared_error"},
    ],
)
def test_rfecv(kw):
    a = skfs.RFECV(SkLinReg(), **kw).fit(XF, YF)
    b = efs.RFECV(LinearRegression(), **kw).fit(XF, YF)
    assert b.n_features_ == a.n_features_
    np.testing.assert_array_equal(b.support_, a.support_)
    np.testing.assert_array_equal(b.ranking_, a.ranking_)
    assert set(b.cv_results_) == set(a.cv_results_)
    for k, v in a.cv_results_.items():
        np.testing.assert_allclose(
            np.asarray(b.cv_results_[k], dtype=float), np.asarray(v, dtype=float), rtol=1e-8
        )
    assert b.transform(XF).shape == (80, a.n_features_)
    np.testing.assert_allclose(b.predict(XF), a.predict(XF), rtol=1e-8)


def test_rfecv_classifier():
    yc = (YF > 0).astype(int)
    a = skfs.RFECV(SkLogReg(), cv=3).fit(XF, yc)
    b = efs.RFECV(LogisticRegression(), cv=3).fit(XF, yc)
    np.testing.assert_array_equal(b.support_, a.support_)
    assert b.score(XF, yc) == pytest.approx(a.score(XF, yc))
    with pytest.raises(ValueError, match="min_features_to_select"):
        efs.RFECV(LinearRegression(), min_features_to_select=0).fit(XF, YF)


@pytest.mark.parametrize(
    "kw",
    [
        {"n_features_to_select": 3},
        {"n_features_to_select": 2, "direction": "backward"},
        {"tol": 0.01},
        {"tol": -0.01, "direction": "backward"},
        {"n_features_to_select": 0.5, "scoring": "r2", "cv": 3},
    ],
)
def test_sequential_feature_selector(kw):
    a = skfs.SequentialFeatureSelector(SkLinReg(), **kw).fit(XF, YF)
    b = efs.SequentialFeatureSelector(LinearRegression(), **kw).fit(XF, YF)
    np.testing.assert_array_equal(b.support_, a.support_)
    assert b.n_features_to_select_ == a.n_features_to_select_
    np.testing.assert_allclose(b.transform(XF), a.transform(XF))


def test_sequential_feature_selector_errors():
    with pytest.raises(ValueError, match="n_features_to_select must be < n_features"):
        efs.SequentialFeatureSelector(LinearRegression(), n_features_to_select=6).fit(XF, YF)
    with pytest.raises(ValueError, match="tol must be strictly positive"):
        efs.SequentialFeatureSelector(LinearRegression(), tol=-1).fit(XF, YF)
    with pytest.raises(ValueError, match="direction"):
        efs.SequentialFeatureSelector(LinearRegression(), direction="up").fit(XF, YF)
    with pytest.raises(NotFittedError):
        efs.SequentialFeatureSelector(LinearRegression()).transform(XF)


def test_selector_check_estimator_and_rfe_attributes():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(efs.SequentialFeatureSelector(LinearRegression(), cv=3))
    r = efs.RFECV(LinearRegression(), cv=3)
    assert not hasattr(r, "predict_proba")  # follows the wrapped estimator
    assert hasattr(efs.RFECV(LogisticRegression(), cv=3), "predict_proba")
    with pytest.raises(NotFittedError):
        efs.RFECV(LogisticRegression()).predict_proba(XF)
