"""ember.ml probe gaps (3): Poisson/Gamma/Tweedie GLMs and stacking ensembles against the
installed scikit-learn."""

import warnings

import ember
import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

import ember.ml.ensemble as ee  # noqa: E402
import ember.ml.linear_model as elm  # noqa: E402
import sklearn.ensemble as ske  # noqa: E402
import sklearn.linear_model as sklm  # noqa: E402
from ember.ml.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from ember.ml.exceptions import NotFittedError  # noqa: E402
from ember.ml.naive_bayes import GaussianNB  # noqa: E402
from ember.ml.neighbors import KNeighborsClassifier, KNeighborsRegressor  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA  # noqa: E402
from sklearn.naive_bayes import GaussianNB as SkGNB  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier as SkKNC  # noqa: E402
from sklearn.neighbors import KNeighborsRegressor as SkKNR  # noqa: E402

RNG = np.random.RandomState(0)
N = 200
X = RNG.randn(N, 4)
W = RNG.rand(N)
ETA = 0.3 * X[:, 0] - 0.2 * X[:, 1] + 0.5
YP = RNG.poisson(np.exp(ETA)).astype(float)
YG = RNG.gamma(2, np.exp(ETA) / 2)

GLM_CASES = [
    ("PoissonRegressor", {}, YP),
    ("PoissonRegressor", {"alpha": 0.1, "fit_intercept": False}, YP),
    ("GammaRegressor", {"alpha": 0.01}, YG),
    ("TweedieRegressor", {"power": 1.5, "alpha": 0.05}, YP),
    ("TweedieRegressor", {"power": 0, "alpha": 0.5}, YG),
    ("TweedieRegressor", {"power": 3, "alpha": 0.01}, YG),
    ("TweedieRegressor", {"power": -1, "alpha": 0.5}, YG),
    ("TweedieRegressor", {"power": 2, "link": "identity", "alpha": 0.01}, YG + 3),
]


@pytest.mark.parametrize("name,kw,y", GLM_CASES)
@pytest.mark.parametrize("weighted", [False, True])
def test_glm_matches_sklearn(name, kw, y, weighted):
    sw = W if weighted else None
    a = getattr(sklm, name)(tol=1e-12, max_iter=1000, **kw).fit(X, y, sample_weight=sw)
    b = getattr(elm, name)(**kw).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=0, atol=1e-6)
    assert b.intercept_ == pytest.approx(a.intercept_, abs=1e-6)
    np.testing.assert_allclose(b.predict(X), a.predict(X), rtol=1e-5)
    assert b.score(X, y) == pytest.approx(a.score(X, y), abs=1e-7)
    assert b.score(X, y, sample_weight=W) == pytest.approx(a.score(X, y, sample_weight=W), abs=1e-7)


def test_glm_ember_inputs_and_errors():
    m = elm.PoissonRegressor().fit(ember.asarray(X), ember.asarray(YP))
    assert isinstance(m.predict(ember.asarray(X)), ember.ndarray)
    assert isinstance(m.coef_, ember.ndarray)
    with pytest.raises(ValueError, match="out of the valid range"):
        elm.PoissonRegressor().fit(X, -YP - 1)
    with pytest.raises(ValueError, match="out of the valid range"):
        elm.GammaRegressor().fit(X, YP)  # zeros are outside the gamma range
    with pytest.raises(ValueError, match="alpha"):
        elm.PoissonRegressor(alpha=-1).fit(X, YP)
    with pytest.raises(ValueError, match="power"):
        elm.TweedieRegressor(power=0.5).fit(X, YG)
    with pytest.raises(ValueError, match="link"):
        elm.TweedieRegressor(link="logit").fit(X, YG)
    with pytest.raises(NotFittedError):
        elm.GammaRegressor().predict(X)
    # warm start continues from the fitted coefficients
    m = elm.PoissonRegressor(warm_start=True).fit(X, YP)
    assert m.fit(X, YP).n_iter_ <= 1


def test_glm_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(elm.PoissonRegressor())
        check_estimator(elm.TweedieRegressor(power=1.5))


# ---------------------------------------------------------------- stacking

YR = X @ [1.0, 2.0, 0.0, -1.0] + RNG.randn(N) * 0.3
YC = np.array(list("abc"))[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)]
YB = (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("kw", [{}, {"passthrough": True, "cv": 3}])
def test_stacking_regressor(kw):
    a = ske.StackingRegressor(
        [("r", sklm.Ridge(alpha=1.0)), ("k", SkKNR(5))],
        final_estimator=sklm.LinearRegression(),
        **kw,
    ).fit(X, YR)
    b = ee.StackingRegressor(
        [("r", elm.Ridge(alpha=1.0)), ("k", KNeighborsRegressor(5))],
        final_estimator=elm.LinearRegression(),
        **kw,
    ).fit(X, YR)
    np.testing.assert_allclose(b.predict(X), a.predict(X), atol=1e-10)
    np.testing.assert_allclose(b.transform(X), a.transform(X), atol=1e-12)
    np.testing.assert_allclose(b.final_estimator_.coef_, a.final_estimator_.coef_, atol=1e-10)
    assert b.score(X, YR) == pytest.approx(a.score(X, YR), abs=1e-12)
    assert list(b.named_estimators_) == ["r", "k"]


def test_stacking_regressor_weights_default_final():
    ests = [("r", elm.Ridge(alpha=1.0)), ("s", elm.Ridge(alpha=3.0))]
    sk_ests = [("r", sklm.Ridge(alpha=1.0)), ("s", sklm.Ridge(alpha=3.0))]
    a = ske.StackingRegressor(sk_ests, final_estimator=sklm.Ridge()).fit(X, YR, sample_weight=W)
    b = ee.StackingRegressor(ests, final_estimator=elm.Ridge()).fit(X, YR, sample_weight=W)
    np.testing.assert_allclose(b.predict(X), a.predict(X), atol=1e-10)
    a = ske.StackingRegressor(sk_ests).fit(X, YR)
    b = ee.StackingRegressor(ests).fit(X, YR)
    np.testing.assert_allclose(b.predict(X), a.predict(X), rtol=1e-8)
    out = (
        ee.StackingRegressor(ests)
        .fit(ember.asarray(X), ember.asarray(YR))
        .predict(ember.asarray(X))
    )
    assert isinstance(out, ember.ndarray)


@pytest.mark.parametrize("kw", [{}, {"stack_method": "predict"}, {"passthrough": True, "cv": 4}])
def test_stacking_classifier(kw):
    a = ske.StackingClassifier(
        [("g", SkGNB()), ("k", SkKNC(5)), ("l", SkLDA())], final_estimator=SkLDA(), **kw
    ).fit(X, YC)
    b = ee.StackingClassifier(
        [("g", GaussianNB()), ("k", KNeighborsClassifier(5)), ("l", LinearDiscriminantAnalysis())],
        final_estimator=LinearDiscriminantAnalysis(),
        **kw,
    ).fit(X, YC)
    assert b.stack_method_ == a.stack_method_
    np.testing.assert_array_equal(b.classes_, a.classes_)
    np.testing.assert_array_equal(b.predict(X), a.predict(X))
    np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(X), atol=1e-10)
    np.testing.assert_allclose(b.transform(X), a.transform(X), atol=1e-12)


def test_stacking_classifier_binary_and_errors():
    a = ske.StackingClassifier([("g", SkGNB()), ("k", SkKNC(5))], final_estimator=SkLDA())
    b = ee.StackingClassifier(
        [("g", GaussianNB()), ("k", KNeighborsClassifier(5))],
        final_estimator=LinearDiscriminantAnalysis(),
    )
    a.fit(X, YB)
    b.fit(X, YB)
    assert b.transform(X).shape == a.transform(X).shape == (N, 2)  # one column per member
    np.testing.assert_allclose(b.decision_function(X), a.decision_function(X), atol=1e-9)
    e = ee.StackingClassifier([("g", GaussianNB()), ("d", "drop")]).fit(
        ember.asarray(X), ember.asarray(YB)
    )
    assert isinstance(e.predict(ember.asarray(X)), ember.ndarray)
    assert e.named_estimators_["d"] == "drop"
    with pytest.raises(ValueError, match="should be a classifier"):
        ee.StackingClassifier([("g", GaussianNB())], final_estimator=elm.Ridge()).fit(X, YB)
    with pytest.raises(ValueError, match="should be a regressor"):
        ee.StackingRegressor([("r", elm.Ridge())], final_estimator=GaussianNB()).fit(X, YR)
    with pytest.raises(ValueError, match="All estimators are dropped"):
        ee.StackingRegressor([("r", "drop")]).fit(X, YR)
    with pytest.raises(ValueError, match="non-empty list"):
        ee.StackingRegressor([]).fit(X, YR)
    with pytest.raises(ValueError, match="does not implement the method"):
        ee.StackingClassifier(
            [("r", KNeighborsClassifier())], stack_method="decision_function"
        ).fit(X, YB)
    with pytest.raises(ValueError, match="stack_method"):
        ee.StackingClassifier([("g", GaussianNB())], stack_method="bad").fit(X, YB)
    with pytest.raises(NotFittedError):
        ee.StackingRegressor([("r", elm.Ridge())]).predict(X)


def test_stacking_prefit():
    r1 = elm.Ridge(alpha=1.0).fit(X, YR)
    r2 = elm.Ridge(alpha=5.0).fit(X, YR)
    b = ee.StackingRegressor([("a", r1), ("b", r2)], cv="prefit").fit(X, YR)
    assert b.estimators_[0] is r1
    s1 = sklm.Ridge(alpha=1.0).fit(X, YR)
    s2 = sklm.Ridge(alpha=5.0).fit(X, YR)
    a = ske.StackingRegressor([("a", s1), ("b", s2)], cv="prefit").fit(X, YR)
    np.testing.assert_allclose(b.predict(X), a.predict(X), rtol=1e-8)


def test_stacking_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(ee.StackingRegressor([("r", elm.Ridge())]))
        check_estimator(ee.StackingClassifier([("g", GaussianNB()), ("k", KNeighborsClassifier())]))


# ---------------------------------------------------------------- quantile regression

XQ = RNG.randn(151, 3)
YQ = XQ @ [1.0, -2.0, 0.5] + RNG.standard_t(3, 151)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"quantile": 0.8, "alpha": 0.01},
        {"quantile": 0.3, "alpha": 0.0},
        {"alpha": 0.1, "fit_intercept": False},
    ],
)
@pytest.mark.parametrize("weighted", [False, True])
def test_quantile_regressor(kw, weighted):
    sw = RNG.rand(151) if weighted else None
    a = sklm.QuantileRegressor(**kw).fit(XQ, YQ, sample_weight=sw)
    b = elm.QuantileRegressor(**kw).fit(XQ, YQ, sample_weight=sw)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=0, atol=1e-7)
    assert b.intercept_ == pytest.approx(a.intercept_, abs=1e-7)
    np.testing.assert_allclose(b.predict(XQ), a.predict(XQ), atol=1e-6)


def test_quantile_regressor_errors_and_ember():
    b = elm.QuantileRegressor(alpha=0.01).fit(ember.asarray(XQ), ember.asarray(YQ))
    assert isinstance(b.coef_, ember.ndarray)
    assert isinstance(b.predict(ember.asarray(XQ)), ember.ndarray)
    with pytest.raises(ValueError, match="quantile"):
        elm.QuantileRegressor(quantile=1.0).fit(XQ, YQ)
    with pytest.raises(ValueError, match="alpha"):
        elm.QuantileRegressor(alpha=-1.0).fit(XQ, YQ)
    with pytest.raises(ValueError, match="not anymore available"):
        elm.QuantileRegressor(solver="interior-point").fit(XQ, YQ)
    with pytest.raises(NotFittedError):
        elm.QuantileRegressor().predict(XQ)
