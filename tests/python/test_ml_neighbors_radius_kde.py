"""ember.ml.neighbors: radius_neighbors, RadiusNeighbors{Classifier,Regressor} and KernelDensity
against scikit-learn on the same data."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from ember.ml.exceptions import InvalidParameterError, NotFittedError
from ember.ml.neighbors import (
    KernelDensity,
    NearestNeighbors,
    RadiusNeighborsClassifier,
    RadiusNeighborsRegressor,
)
from sklearn import neighbors as skn


def _n(a):
    return ember.asnumpy(a) if isinstance(a, ember.ndarray) else np.asarray(a)


def _e(x, device):
    return ember.asarray(x, device=device)


def _data(n=120, nq=35, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Q = np.concatenate([rng.normal(size=(nq, d)), X[:3], 10.0 + X[3:5]])  # exact hits, far
    return X, Q


_METRICS = [{}, {"metric": "manhattan"}, {"metric": "cosine"}, {"p": 3}, {"p": 1}]
_RADIUS = {"": 1.6, "manhattan": 2.8, "cosine": 0.3, "p3": 1.4, "p1": 2.8}


def _radius(kw):
    key = kw.get("metric", "") if "metric" in kw else (f"p{kw['p']}" if "p" in kw else "")
    return _RADIUS[key]


# ----------------------------------------------------------------------------- radius_neighbors


@pytest.mark.parametrize("kw", _METRICS, ids=str)
def test_radius_neighbors_identical(device, kw):
    X, Q = _data()
    r = _radius(kw)
    a = NearestNeighbors(radius=r, **kw).fit(_e(X, device))
    b = skn.NearestNeighbors(radius=r, **kw).fit(X)
    for q in (Q, None):
        da, ia = a.radius_neighbors(None if q is None else _e(q, device), sort_results=True)
        db, ib = b.radius_neighbors(q, sort_results=True)
        assert ia.dtype == object and da.dtype == object and len(ia) == len(ib)
        for x, y in zip(ia, ib, strict=True):
            assert isinstance(x, ember.ndarray) and str(x.device).startswith(device)
            np.testing.assert_array_equal(_n(x), y)
        for x, y in zip(da, db, strict=True):
            np.testing.assert_allclose(_n(x), y, atol=1e-9)
    # host input -> NumPy arrays inside the object array; unsorted: same sets
    ia = a.radius_neighbors(Q, return_distance=False)
    ib = b.radius_neighbors(Q, return_distance=False)
    assert all(isinstance(x, np.ndarray) and x.dtype == np.int64 for x in ia)
    for x, y in zip(ia, ib, strict=True):
        np.testing.assert_array_equal(np.sort(x), np.sort(y))
    if kw.get("metric") != "cosine":
        assert len(ia[-1]) == 0  # a far query has no neighbours
    with pytest.raises(ValueError, match="return_distance must be True"):
        a.radius_neighbors(Q, return_distance=False, sort_results=True)


def test_radius_neighbors_graph_float32(device):
    X, Q = _data(seed=1)
    a = NearestNeighbors(radius=1.5).fit(_e(X.astype(np.float32), device))
    b = skn.NearestNeighbors(radius=1.5).fit(X.astype(np.float32))
    ga = a.radius_neighbors_graph(Q.astype(np.float32), mode="distance", sort_results=True)
    gb = b.radius_neighbors_graph(Q.astype(np.float32), mode="distance", sort_results=True)
    np.testing.assert_array_equal(ga.indptr, gb.indptr)
    np.testing.assert_array_equal(ga.indices, gb.indices)
    np.testing.assert_allclose(ga.data, gb.data, rtol=1e-5, atol=1e-5)


def test_radius_zero_and_duplicates(device):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(30, 3)) * 3.0 + 5.0
    X = np.concatenate([X, X[:10]])  # exact duplicates
    y = rng.integers(0, 3, X.shape[0])
    Xe = _e(X, device)
    ia = NearestNeighbors(radius=0.0).fit(Xe).radius_neighbors(Xe, return_distance=False)
    ib = skn.NearestNeighbors(radius=0.0).fit(X).radius_neighbors(X, return_distance=False)
    for x, z in zip(ia, ib, strict=True):
        np.testing.assert_array_equal(np.sort(_n(x)), np.sort(z))
    for r in (0.0, 2.0):
        a = RadiusNeighborsClassifier(r, weights="distance").fit(Xe, y)
        b = skn.RadiusNeighborsClassifier(r, weights="distance").fit(X, y)
        np.testing.assert_array_equal(_n(a.predict_proba(Xe)), b.predict_proba(X))
        np.testing.assert_array_equal(_n(a.predict(Xe)), b.predict(X))


# ----------------------------------------------------------------------------- classifier


def _inverse(d):
    return 1.0 / (1.0 + d)


@pytest.mark.parametrize("weights", ["uniform", "distance", _inverse])
@pytest.mark.parametrize("kw", _METRICS, ids=str)
def test_radius_classifier(device, weights, kw):
    X, Q = _data()
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64) + (X[:, 2] > 1)
    r = _radius(kw)
    a = RadiusNeighborsClassifier(r, weights=weights, outlier_label="most_frequent", **kw)
    b = skn.RadiusNeighborsClassifier(r, weights=weights, outlier_label="most_frequent", **kw)
    a.fit(_e(X, device), _e(y, device))
    b.fit(X, y)
    assert a.outlier_label_ == b.outlier_label_
    for q, qb in ((_e(Q, device), Q), (None, None)):
        pa, pb = a.predict_proba(q), b.predict_proba(qb)
        assert isinstance(pa, ember.ndarray) and str(pa.device).startswith(device)
        np.testing.assert_allclose(_n(pa), pb, atol=1e-12)
        ya = a.predict(q)
        assert isinstance(ya, ember.ndarray)
        np.testing.assert_array_equal(_n(ya), b.predict(qb))
    # host in -> host out
    np.testing.assert_array_equal(a.predict(Q), b.predict(Q))
    assert isinstance(a.predict_proba(Q), np.ndarray)


def test_radius_classifier_outliers_and_labels(device):
    X, Q = _data(seed=2)
    labels = np.array(["ant", "bee", "cat"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 1)]
    Xe, Qe = _e(X, device), _e(Q, device)
    # no outlier label: ValueError naming the samples, as scikit-learn
    a = RadiusNeighborsClassifier(radius=1.0).fit(Xe, labels)
    with pytest.raises(ValueError, match="No neighbors found for test samples"):
        a.predict(Qe)
    with pytest.raises(ValueError, match="No neighbors found"):
        skn.RadiusNeighborsClassifier(radius=1.0).fit(X, labels).predict(Q)
    # a string label among the classes
    a = RadiusNeighborsClassifier(radius=1.0, outlier_label="bee").fit(Xe, labels)
    b = skn.RadiusNeighborsClassifier(radius=1.0, outlier_label="bee").fit(X, labels)
    np.testing.assert_array_equal(a.predict(Qe), b.predict(Q))
    np.testing.assert_allclose(_n(a.predict_proba(Qe)), b.predict_proba(Q), atol=1e-12)
    # a label outside the classes: warning, zero probabilities, the label as prediction
    y = (X[:, 0] > 0).astype(np.int64)
    a = RadiusNeighborsClassifier(radius=1.0, outlier_label=-1).fit(Xe, _e(y, device))
    b = skn.RadiusNeighborsClassifier(radius=1.0, outlier_label=-1).fit(X, y)
    with pytest.warns(UserWarning, match="not in training classes"):
        pa = a.predict_proba(Qe)
    with pytest.warns(UserWarning):
        pb = b.predict_proba(Q)
    np.testing.assert_allclose(_n(pa), pb, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(_n(a.predict(Qe)), b.predict(Q))
        assert (_n(a.predict(Qe)) == -1).any()
    # dtype of the outlier label must suit the classes
    with pytest.raises(TypeError, match="inconsistent"):
        RadiusNeighborsClassifier(outlier_label="x").fit(X, y)
    with pytest.raises(ValueError, match="length of outlier_label"):
        RadiusNeighborsClassifier(outlier_label=[0, 1]).fit(X, y)
    with pytest.raises(InvalidParameterError):
        RadiusNeighborsClassifier(radius=-1.0).fit(X, y)
    with pytest.raises(InvalidParameterError):
        RadiusNeighborsClassifier(weights="bogus").fit(X, y)
    with pytest.raises(NotFittedError):
        RadiusNeighborsClassifier().predict(X)
    with pytest.raises(ValueError, match="features"):
        RadiusNeighborsClassifier(outlier_label=0).fit(X, y).predict(X[:, :2])


@pytest.mark.parametrize("outlier_label", ["most_frequent", [2, 7]])
def test_radius_classifier_multioutput(device, outlier_label):
    X, Q = _data(seed=8)
    Y = np.stack([(X[:, 0] > 0).astype(np.int64), 5 + (X[:, 1] > 0.5) + (X[:, 2] > 0)], axis=1)
    a = RadiusNeighborsClassifier(1.2, weights="distance", outlier_label=outlier_label)
    b = skn.RadiusNeighborsClassifier(1.2, weights="distance", outlier_label=outlier_label)
    a.fit(_e(X, device), _e(Y, device))
    b.fit(X, Y)
    assert a.outputs_2d_ and len(a.classes_) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2 is not a class of output 0: warning in both
        pa, pb = a.predict_proba(_e(Q, device)), b.predict_proba(Q)
        for x, y in zip(pa, pb, strict=True):
            np.testing.assert_allclose(_n(x), y, atol=1e-12)
        ya = a.predict(_e(Q, device))
        assert isinstance(ya, ember.ndarray) and ya.shape == (Q.shape[0], 2)
        np.testing.assert_array_equal(_n(ya), b.predict(Q))
        np.testing.assert_array_equal(a.predict(Q), b.predict(Q))
    with pytest.raises(ValueError, match="length of outlier_label"):
        RadiusNeighborsClassifier(outlier_label=[1]).fit(X, Y)


# ----------------------------------------------------------------------------- regressor


@pytest.mark.parametrize("weights", ["uniform", "distance", _inverse])
@pytest.mark.parametrize("kw", _METRICS[:3], ids=str)
def test_radius_regressor(device, weights, kw):
    X, Q = _data(seed=3)
    Y = np.stack([X[:, 0] ** 2 + X[:, 1], np.sin(X[:, 2])], axis=1)
    r = _radius(kw)
    for y in (Y[:, 0], Y):
        a = RadiusNeighborsRegressor(r, weights=weights, **kw).fit(_e(X, device), _e(y, device))
        b = skn.RadiusNeighborsRegressor(r, weights=weights, **kw).fit(X, y)
        with warnings.catch_warnings(record=True) as wa:
            warnings.simplefilter("always")
            pa = a.predict(_e(Q, device))
        with warnings.catch_warnings(record=True) as wb:
            warnings.simplefilter("always")
            pb = b.predict(Q)
        assert [str(m.message) for m in wa] == [str(m.message) for m in wb]
        assert bool(np.isnan(pb).any()) == (kw.get("metric") != "cosine")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert isinstance(pa, ember.ndarray) and pa.shape == pb.shape
            np.testing.assert_allclose(_n(pa), pb, atol=1e-12)  # NaN where sklearn has NaN
            np.testing.assert_allclose(a.predict(None), b.predict(None), atol=1e-12)


# ----------------------------------------------------------------------------- kernel density


_KERNELS = ["gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine"]


def _same_support(sa, sb):
    """-inf exactly where no fitted point is within the kernel's reach. scikit-learn's tree
    leaves a rounding residue there for some compact kernels (log density about -36, i.e.
    1e-16); the exact sum gives -inf."""
    assert np.isneginf(sa[np.isneginf(sb)]).all()
    assert (sb[np.isneginf(sa)] < -30).all()
    assert np.isfinite(sa).sum() >= np.isfinite(sb).sum() - 3


@pytest.mark.parametrize("kernel", _KERNELS)
@pytest.mark.parametrize("bandwidth", [0.7, "scott", "silverman"])
def test_kde_score_samples(device, kernel, bandwidth):
    X, Q = _data(n=150, nq=40, d=3, seed=4)
    w = np.random.default_rng(5).uniform(0.1, 2.0, X.shape[0])
    for sw in (None, w):
        a = KernelDensity(kernel=kernel, bandwidth=bandwidth).fit(_e(X, device), sample_weight=sw)
        b = skn.KernelDensity(kernel=kernel, bandwidth=bandwidth).fit(X, sample_weight=sw)
        assert a.bandwidth_ == pytest.approx(b.bandwidth_, rel=1e-15)
        sa, sb = a.score_samples(_e(Q, device)), b.score_samples(Q)
        assert isinstance(sa, ember.ndarray) and str(sa.device).startswith(device)
        sa = _n(sa)
        _same_support(sa, sb)
        fin = np.isfinite(sb) & np.isfinite(sa)
        np.testing.assert_allclose(sa[fin], sb[fin], rtol=1e-10, atol=1e-10)
        if fin.all():
            assert a.score(Q) == pytest.approx(b.score(Q), rel=1e-10)


@pytest.mark.parametrize("metric", ["manhattan", "chebyshev"])
def test_kde_other_metrics_and_float32(device, metric):
    X, Q = _data(n=90, nq=20, d=3, seed=6)
    a = KernelDensity(kernel="epanechnikov", bandwidth=2.5, metric=metric).fit(_e(X, device))
    b = skn.KernelDensity(kernel="epanechnikov", bandwidth=2.5, metric=metric).fit(X)
    sa, sb = _n(a.score_samples(_e(Q, device))), b.score_samples(Q)
    _same_support(sa, sb)
    fin = np.isfinite(sb) & np.isfinite(sa)
    np.testing.assert_allclose(sa[fin], sb[fin], rtol=1e-10, atol=1e-10)
    a = KernelDensity(bandwidth=0.5).fit(X.astype(np.float32))
    s32 = a.score_samples(Q.astype(np.float32))
    assert isinstance(s32, np.ndarray) and s32.dtype == np.float32
    ref = skn.KernelDensity(bandwidth=0.5).fit(X).score_samples(Q)
    np.testing.assert_allclose(s32, ref, rtol=1e-4, atol=1e-4)


def test_kde_sample(device):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 2)) * 5.0
    w = np.zeros(40)
    w[[3, 17]] = [1.0, 3.0]
    a = KernelDensity(kernel="tophat", bandwidth=0.5).fit(_e(X, device), sample_weight=w)
    s = a.sample(2000, random_state=0)
    assert isinstance(s, ember.ndarray) and s.shape == (2000, 2)
    s = _n(s)
    d = np.sqrt(((s[:, None, :] - X[None, [3, 17], :]) ** 2).sum(-1))
    near = d.argmin(axis=1)
    assert (d.min(axis=1) <= 0.5 + 1e-12).all()  # inside a ball around a weighted point
    assert 0.68 < (near == 1).mean() < 0.82  # weight 3 of 4
    # uniform in the ball: P(r < h / sqrt(2)) = 1/2 in 2-d
    assert 0.45 < (d.min(axis=1) < 0.5 / np.sqrt(2)).mean() < 0.55
    np.testing.assert_array_equal(_n(a.sample(5, random_state=3)), _n(a.sample(5, random_state=3)))
    g = KernelDensity(bandwidth=0.3).fit(X[:1])
    s = g.sample(4000, random_state=1)
    assert isinstance(s, np.ndarray)
    np.testing.assert_allclose(s.mean(0), X[0], atol=0.03)
    np.testing.assert_allclose(s.std(0), 0.3, rtol=0.06)
    with pytest.raises(NotImplementedError):
        KernelDensity(kernel="linear").fit(X).sample(3)


def test_kde_errors():
    X, _ = _data(n=20, nq=2, d=2)
    with pytest.raises(InvalidParameterError):
        KernelDensity(bandwidth=0.0).fit(X)
    with pytest.raises(InvalidParameterError):
        KernelDensity(bandwidth="bogus").fit(X)
    with pytest.raises(InvalidParameterError):
        KernelDensity(kernel="triweight").fit(X)
    with pytest.raises(ValueError, match="Negative values"):
        KernelDensity().fit(X, sample_weight=-np.ones(20))
    with pytest.raises(ValueError, match="sample_weight"):
        KernelDensity().fit(X, sample_weight=np.ones(3))
    with pytest.raises(NotFittedError):
        KernelDensity().score_samples(X)
    with pytest.raises(ValueError, match="features"):
        KernelDensity().fit(X).score_samples(X[:, :1])
    with pytest.raises(ValueError, match="n_samples"):
        KernelDensity().fit(X).sample(0)


# ----------------------------------------------------------------------------- estimator checks


@pytest.mark.parametrize(
    "est",
    [RadiusNeighborsClassifier(), RadiusNeighborsRegressor(), KernelDensity()],
    ids=lambda e: type(e).__name__,
)
def test_sklearn_estimator_checks(est):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert not failed, failed
    assert sum(r["status"] == "passed" for r in results) > 30
