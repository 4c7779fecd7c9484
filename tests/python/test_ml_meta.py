"""Meta-estimators of ember.ml (multiclass, multioutput, voting, bagging, target transform)
against scikit-learn with the same deterministic base estimators."""

import ember
import numpy as np
import pytest
from ember.ml import clone
from ember.ml.compose import TransformedTargetRegressor
from ember.ml.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    VotingClassifier,
    VotingRegressor,
)
from ember.ml.exceptions import NotFittedError
from ember.ml.linear_model import LinearRegression, LogisticRegression, Ridge
from ember.ml.multiclass import OneVsOneClassifier, OneVsRestClassifier
from ember.ml.multioutput import MultiOutputClassifier, MultiOutputRegressor
from ember.ml.preprocessing import StandardScaler
from ember.ml.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn import compose as skcompose
from sklearn import ensemble as skensemble
from sklearn import linear_model as sklinear
from sklearn import multiclass as skmulticlass
from sklearn import multioutput as skmultioutput
from sklearn import preprocessing as skpre
from sklearn import tree as sktree
from sklearn.datasets import load_iris


def _iris():
    X, y = load_iris(return_X_y=True)
    return X[::2], y[::2]


def _reg(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    Y = np.stack([X @ [1.0, 2.0, -1.0], X @ [0.5, -1.0, 3.0] + 1.0], axis=1)
    return X, Y + 0.01 * rng.normal(size=Y.shape)


def _np(a):
    return ember.asnumpy(a) if isinstance(a, ember.ndarray) else np.asarray(a)


def _on(device, *arrays):
    return [ember.asarray(a, device=device) for a in arrays]


@pytest.mark.parametrize("labels", ["int", "str"])
def test_ovr_matches_sklearn(labels):
    X, y = _iris()
    if labels == "str":
        y = np.array(["a", "b", "c"])[y]
    ours = OneVsRestClassifier(LogisticRegression(max_iter=500)).fit(X, y)
    ref = skmulticlass.OneVsRestClassifier(sklinear.LogisticRegression(max_iter=500)).fit(X, y)
    assert len(ours.estimators_) == 3
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=0.05)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=0.01)
    assert ours.score(X, y) == pytest.approx(ref.score(X, y))


def test_ovr_binary_and_tree():
    X, y = _iris()
    keep = y > 0
    Xb, yb = X[keep], y[keep]
    ours = OneVsRestClassifier(LogisticRegression()).fit(Xb, yb)
    ref = skmulticlass.OneVsRestClassifier(sklinear.LogisticRegression()).fit(Xb, yb)
    assert len(ours.estimators_) == 1
    assert ours.decision_function(Xb).shape == (len(yb),)
    np.testing.assert_array_equal(ours.predict(Xb), ref.predict(Xb))
    np.testing.assert_allclose(ours.predict_proba(Xb), ref.predict_proba(Xb), atol=0.01)
    # A base without decision_function: scores are predict_proba[:, 1].
    t = OneVsRestClassifier(DecisionTreeClassifier(max_depth=2, random_state=0)).fit(X, y)
    rt = skmulticlass.OneVsRestClassifier(
        sktree.DecisionTreeClassifier(max_depth=2, random_state=0)
    ).fit(X, y)
    np.testing.assert_array_equal(t.predict(X), rt.predict(X))
    with pytest.raises(AttributeError):
        t.decision_function(X)


def test_ovo_matches_sklearn():
    X, y = _iris()
    ours = OneVsOneClassifier(LogisticRegression(max_iter=500)).fit(X, y)
    ref = skmulticlass.OneVsOneClassifier(sklinear.LogisticRegression(max_iter=500)).fit(X, y)
    assert len(ours.estimators_) == 3
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=0.01)
    keep = y > 0
    o2 = OneVsOneClassifier(LogisticRegression()).fit(X[keep], y[keep])
    r2 = skmulticlass.OneVsOneClassifier(sklinear.LogisticRegression()).fit(X[keep], y[keep])
    assert o2.decision_function(X[keep]).shape == (int(keep.sum()),)
    np.testing.assert_array_equal(o2.predict(X[keep]), r2.predict(X[keep]))


def test_multiclass_device(device):
    X, y = _iris()
    Xe, ye = _on(device, X, y)
    for cls in (OneVsRestClassifier, OneVsOneClassifier):
        ref = cls(LogisticRegression(max_iter=500)).fit(X, y).predict(X)
        m = cls(LogisticRegression(max_iter=500)).fit(Xe, ye)
        p = m.predict(Xe)
        assert isinstance(p, ember.ndarray) and p.device == Xe.device
        assert isinstance(m.decision_function(Xe), ember.ndarray)
        np.testing.assert_array_equal(_np(p), ref)
    pp = OneVsRestClassifier(LogisticRegression(max_iter=500)).fit(Xe, ye).predict_proba(Xe)
    assert pp.device == Xe.device
    np.testing.assert_allclose(_np(pp).sum(axis=1), 1.0, atol=1e-6)


def test_multiclass_errors():
    X, y = _iris()
    with pytest.raises(NotFittedError):
        OneVsRestClassifier(LogisticRegression()).predict(X)
    with pytest.raises(ValueError, match="continuous"):
        OneVsOneClassifier(LogisticRegression()).fit(X, X[:, 0] + 0.5)
    with pytest.raises(ValueError):
        OneVsRestClassifier(LogisticRegression()).fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError):
        OneVsRestClassifier(LogisticRegression()).fit(X, y[:-1])
    m = OneVsOneClassifier(LogisticRegression()).fit(X, y)
    with pytest.raises(ValueError):
        m.predict(X[:, :2])
    with pytest.raises(AttributeError):
        m.predict_proba(X)
    with pytest.raises((TypeError, ValueError)):
        OneVsRestClassifier("nope").fit(X, y)
    c = clone(OneVsRestClassifier(Ridge(alpha=2.0)))
    assert c.get_params()["estimator__alpha"] == 2.0


def test_multioutput_regressor(device):
    X, Y = _reg()
    ours = MultiOutputRegressor(Ridge(alpha=0.5)).fit(X, Y)
    ref = skmultioutput.MultiOutputRegressor(sklinear.Ridge(alpha=0.5)).fit(X, Y)
    assert len(ours.estimators_) == 2
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-6, atol=1e-8)
    assert ours.score(X, Y) == pytest.approx(ref.score(X, Y), rel=1e-6)
    Xe, Ye = _on(device, X, Y)
    p = MultiOutputRegressor(Ridge(alpha=0.5)).fit(Xe, Ye).predict(Xe)
    assert isinstance(p, ember.ndarray) and p.device == Xe.device and p.shape == (40, 2)
    np.testing.assert_allclose(_np(p), ref.predict(X), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="two dimensions"):
        MultiOutputRegressor(Ridge()).fit(X, Y[:, 0])
    with pytest.raises(ValueError):
        MultiOutputRegressor(Ridge()).fit(X, Y[:-1])
    with pytest.raises(NotFittedError):
        MultiOutputRegressor(Ridge()).predict(X)


def test_multioutput_classifier(device):
    X, y = _iris()
    Y = np.stack([y, (y == 1).astype(np.int64)], axis=1)
    base = dict(max_depth=2, random_state=0)
    ours = MultiOutputClassifier(DecisionTreeClassifier(**base)).fit(X, Y)
    ref = skmultioutput.MultiOutputClassifier(sktree.DecisionTreeClassifier(**base)).fit(X, Y)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    for a, b in zip(ours.predict_proba(X), ref.predict_proba(X), strict=True):
        np.testing.assert_allclose(a, b)
    for a, b in zip(ours.classes_, ref.classes_, strict=True):
        np.testing.assert_array_equal(a, b)
    assert ours.score(X, Y) == pytest.approx(ref.score(X, Y))
    Xe, Ye = _on(device, X, Y)
    m = MultiOutputClassifier(DecisionTreeClassifier(**base)).fit(Xe, Ye)
    p = m.predict(Xe)
    assert isinstance(p, ember.ndarray) and p.device == Xe.device
    np.testing.assert_array_equal(_np(p), ref.predict(X))
    assert m.score(Xe, Ye) == pytest.approx(ref.score(X, Y))
    with pytest.raises(AttributeError):
        MultiOutputClassifier(Ridge()).fit(X, Y.astype(float)).predict_proba(X)


@pytest.mark.parametrize("voting", ["hard", "soft"])
def test_voting_classifier(voting, device):
    X, y = _iris()
    ours = VotingClassifier(
        [("lr", LogisticRegression(max_iter=500)), ("dt", DecisionTreeClassifier(max_depth=2))],
        voting=voting,
        weights=[1, 2],
    ).fit(X, y)
    ref = skensemble.VotingClassifier(
        [
            ("lr", sklinear.LogisticRegression(max_iter=500)),
            ("dt", sktree.DecisionTreeClassifier(max_depth=2, random_state=0)),
        ],
        voting=voting,
        weights=[1, 2],
    ).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), atol=0.01)
    assert set(ours.named_estimators_) == {"lr", "dt"}
    if voting == "soft":
        np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=0.01)
    else:
        with pytest.raises(AttributeError):
            ours.predict_proba(X)
    Xe, ye = _on(device, X, y)
    p = clone(ours).fit(Xe, ye).predict(Xe)
    assert isinstance(p, ember.ndarray) and p.device == Xe.device
    np.testing.assert_array_equal(_np(p), ref.predict(X))


def test_voting_regressor(device):
    X, Y = _reg()
    y = Y[:, 0]
    ests = [("r", Ridge(alpha=1.0)), ("t", DecisionTreeRegressor(max_depth=3)), ("x", "drop")]
    ours = VotingRegressor(ests, weights=[2, 1, 5]).fit(X, y)
    ref = skensemble.VotingRegressor(
        [
            ("r", sklinear.Ridge(alpha=1.0)),
            ("t", sktree.DecisionTreeRegressor(max_depth=3, random_state=0)),
            ("x", "drop"),
        ],
        weights=[2, 1, 5],
    ).fit(X, y)
    assert len(ours.estimators_) == 2
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=1e-6, atol=1e-8)
    Xe, ye = _on(device, X, y)
    p = VotingRegressor(ests[:2]).fit(Xe, ye).predict(Xe)
    assert isinstance(p, ember.ndarray) and p.device == Xe.device


def test_voting_errors():
    X, y = _iris()
    with pytest.raises(ValueError, match="non-empty list"):
        VotingClassifier([]).fit(X, y)
    with pytest.raises(ValueError, match="weights"):
        VotingClassifier([("a", LogisticRegression())], weights=[1, 2]).fit(X, y)
    with pytest.raises(ValueError, match="dropped"):
        VotingRegressor([("a", "drop")]).fit(X, y)
    with pytest.raises(ValueError, match="unique"):
        VotingRegressor([("a", Ridge()), ("a", Ridge())]).fit(X, y)
    with pytest.raises(ValueError):
        VotingClassifier([("a", LogisticRegression())], voting="median").fit(X, y)
    with pytest.raises(ValueError, match="regressor"):
        VotingRegressor([("a", LogisticRegression())]).fit(X, y)
    with pytest.raises(NotFittedError):
        VotingRegressor([("a", Ridge())]).predict(X)


def test_bagging_without_sampling_matches_base(device):
    X, y = _iris()
    # No sampling: every member is the base fitted on all the data.
    kw = dict(n_estimators=3, bootstrap=False, random_state=0)
    b = BaggingClassifier(LogisticRegression(max_iter=500), **kw).fit(X, y)
    single = sklinear.LogisticRegression(max_iter=500).fit(X, y)
    np.testing.assert_array_equal(b.predict(X), single.predict(X))
    np.testing.assert_allclose(b.predict_proba(X), single.predict_proba(X), atol=0.01)
    Xr, Y = _reg()
    r = BaggingRegressor(Ridge(), **kw).fit(Xr, Y[:, 0])
    np.testing.assert_allclose(r.predict(Xr), sklinear.Ridge().fit(Xr, Y[:, 0]).predict(Xr))
    Xe, ye = _on(device, X, y)
    p = BaggingClassifier(LogisticRegression(max_iter=500), **kw).fit(Xe, ye).predict(Xe)
    assert isinstance(p, ember.ndarray) and p.device == Xe.device
    np.testing.assert_array_equal(_np(p), single.predict(X))


def test_bagging_sampling(device):
    X, y = _iris()
    Xe, ye = _on(device, X, y)
    kw = dict(n_estimators=6, max_samples=0.7, max_features=2, random_state=1)
    a = BaggingClassifier(**kw).fit(Xe, ye)
    assert isinstance(a.estimators_[0], DecisionTreeClassifier)
    assert len(a.estimators_) == 6
    assert all(int(f.shape[0]) == 2 for f in a.estimators_features_)
    assert all(int(s.shape[0]) == int(0.7 * len(y)) for s in a.estimators_samples_)
    p = a.predict_proba(Xe)
    assert p.device == Xe.device
    np.testing.assert_allclose(_np(p).sum(axis=1), 1.0)
    assert a.score(Xe, ye) > 0.85
    b = BaggingClassifier(**kw).fit(Xe, ye)  # same seed, same ensemble
    np.testing.assert_array_equal(_np(b.predict_proba(Xe)), _np(p))
    r = BaggingRegressor(n_estimators=5, bootstrap_features=True, random_state=0)
    Xr, Y = _reg()
    r.fit(Xr, Y[:, 0])
    assert r.score(Xr, Y[:, 0]) > 0.5
    assert isinstance(r.estimators_[0], DecisionTreeRegressor)
    ref = skensemble.BaggingRegressor(n_estimators=5, random_state=0).fit(Xr, Y[:, 0])
    assert abs(r.score(Xr, Y[:, 0]) - ref.score(Xr, Y[:, 0])) < 0.4


def test_bagging_errors():
    X, y = _iris()
    with pytest.raises(ValueError):
        BaggingClassifier(n_estimators=0).fit(X, y)
    with pytest.raises(ValueError, match="max_samples"):
        BaggingClassifier(max_samples=1000).fit(X, y)
    with pytest.raises(ValueError, match="max_features"):
        BaggingRegressor(max_features=9).fit(X, y)
    with pytest.raises(ValueError, match="continuous"):
        BaggingClassifier().fit(X, X[:, 0] + 0.5)
    with pytest.raises(NotFittedError):
        BaggingRegressor().predict(X)


def test_transformed_target(device):
    X, Y = _reg()
    y = np.exp(0.3 * Y[:, 0]) + 1.0
    ours = TransformedTargetRegressor(Ridge(), func=np.log, inverse_func=np.exp).fit(X, y)
    ref = skcompose.TransformedTargetRegressor(
        sklinear.Ridge(), func=np.log, inverse_func=np.exp
    ).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-6)
    ours = TransformedTargetRegressor(transformer=StandardScaler()).fit(X, Y)
    ref = skcompose.TransformedTargetRegressor(transformer=skpre.StandardScaler()).fit(X, Y)
    assert isinstance(ours.regressor_, LinearRegression)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-6, atol=1e-8)
    Xe, ye = _on(device, X, y)
    m = TransformedTargetRegressor(Ridge(), func=ember.log, inverse_func=ember.exp).fit(Xe, ye)
    p = m.predict(Xe)
    assert isinstance(p, ember.ndarray) and p.device == Xe.device and p.shape == (40,)
    np.testing.assert_allclose(
        _np(p),
        skcompose.TransformedTargetRegressor(sklinear.Ridge(), func=np.log, inverse_func=np.exp)
        .fit(X, y)
        .predict(X),
        rtol=1e-5,
    )


def test_transformed_target_errors():
    X, Y = _reg()
    y = Y[:, 0]
    with pytest.raises(ValueError, match="cannot both be set"):
        TransformedTargetRegressor(transformer=StandardScaler(), func=np.log).fit(X, y)
    with pytest.raises(ValueError, match="inverse_func"):
        TransformedTargetRegressor(func=np.log).fit(X, y)
    with pytest.warns(UserWarning, match="not strictly inverse"):
        TransformedTargetRegressor(func=np.square, inverse_func=np.square).fit(X, y)
    with pytest.raises(NotFittedError):
        TransformedTargetRegressor().predict(X)
    with pytest.raises(ValueError):
        TransformedTargetRegressor().fit(X, y[:-1])


def test_ovr_multilabel(device):
    from sklearn.datasets import make_multilabel_classification

    X, Y = make_multilabel_classification(n_samples=60, n_features=5, n_classes=3, random_state=0)
    ours = OneVsRestClassifier(LogisticRegression()).fit(X, Y)
    ref = skmulticlass.OneVsRestClassifier(sklinear.LogisticRegression()).fit(X, Y)
    assert len(ours.estimators_) == 3
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=0.01)
    Xe, Ye = _on(device, X, Y)
    p = OneVsRestClassifier(LogisticRegression()).fit(Xe, Ye).predict(Xe)
    assert isinstance(p, ember.ndarray) and p.device == Xe.device
    np.testing.assert_array_equal(_np(p), ref.predict(X))
    with pytest.raises(ValueError, match="indicator"):
        OneVsRestClassifier(LogisticRegression()).fit(X, Y * 2)


def test_sample_weight_passed_through():
    X, Y = _reg()
    w = np.linspace(0.5, 2.0, len(X))
    ours = MultiOutputRegressor(Ridge()).fit(X, Y, sample_weight=w)
    ref = skmultioutput.MultiOutputRegressor(sklinear.Ridge()).fit(X, Y, sample_weight=w)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-6, atol=1e-8)
    v = VotingRegressor([("r", Ridge())]).fit(X, Y[:, 0], sample_weight=w)
    rv = skensemble.VotingRegressor([("r", sklinear.Ridge())]).fit(X, Y[:, 0], sample_weight=w)
    np.testing.assert_allclose(v.predict(X), rv.predict(X), rtol=1e-6, atol=1e-8)

    class NoWeight(Ridge):
        def fit(self, X, y):
            return super().fit(X, y)

    with pytest.raises(ValueError, match="sample weights"):
        MultiOutputRegressor(NoWeight()).fit(X, Y, sample_weight=w)
