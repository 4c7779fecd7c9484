"""ember.ml.cluster against scikit-learn: KMeans, MiniBatchKMeans, DBSCAN."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.ml.cluster import DBSCAN, KMeans, MiniBatchKMeans, dbscan, kmeans_plusplus
from ember.ml.exceptions import NotFittedError
from sklearn import cluster as skc
from sklearn.datasets import make_blobs, make_moons


def _blobs(n=600, d=4, k=5, seed=0, dtype=np.float64):
    X, _ = make_blobs(n, d, centers=k, cluster_std=1.5, random_state=seed)
    return X.astype(dtype)


def _dev(x, device):
    return ember.asarray(x, device=device)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kmeans_same_init_matches(device, dtype):
    X = _blobs(dtype=dtype)
    init = X[[0, 50, 100, 150, 200]]
    a = KMeans(5, init=_dev(init, device), n_init=1).fit(_dev(X, device))
    b = skc.KMeans(5, init=init, n_init=1).fit(X)
    assert str(a.cluster_centers_.device) == str(ember.asarray(X, device=device).device)
    assert a.inertia_ == pytest.approx(b.inertia_, rel=1e-4)
    tol = 1e-3 if dtype == np.float32 else 1e-8
    np.testing.assert_allclose(ember.asnumpy(a.cluster_centers_), b.cluster_centers_, atol=tol)
    np.testing.assert_array_equal(ember.asnumpy(a.labels_), b.labels_)
    assert a.n_iter_ == b.n_iter_
    assert a.cluster_centers_.dtype == ember.asarray(X).dtype


@pytest.mark.parametrize("init", ["k-means++", "random"])
def test_kmeans_quality(device, init):
    X = _blobs(seed=3)
    a = KMeans(5, init=init, n_init=5, random_state=0).fit(_dev(X, device))
    b = skc.KMeans(5, init=init, n_init=5, random_state=0).fit(X)
    assert a.inertia_ <= b.inertia_ * 1.01
    labels = ember.asnumpy(a.labels_)
    assert labels.dtype == np.int32 and set(labels) == set(range(5))
    # predict / transform / score agree with the fitted attributes
    Xe = _dev(X, device)
    np.testing.assert_array_equal(ember.asnumpy(a.predict(Xe)), labels)
    D = ember.asnumpy(a.transform(Xe))
    np.testing.assert_array_equal(D.argmin(axis=1), labels)
    assert -a.score(Xe) == pytest.approx(a.inertia_, rel=1e-9)
    np.testing.assert_array_equal(
        ember.asnumpy(KMeans(5, random_state=0).fit_predict(Xe)),
        ember.asnumpy(KMeans(5, random_state=0).fit(Xe).labels_),
    )


def test_kmeans_numpy_in_numpy_out_and_sample_weight():
    X = _blobs(n=300)
    w = np.random.default_rng(0).random(300)
    init = X[:5]
    a = KMeans(5, init=init, n_init=1).fit(X, sample_weight=w)
    b = skc.KMeans(5, init=init, n_init=1).fit(X, sample_weight=w)
    assert isinstance(a.cluster_centers_, np.ndarray) and isinstance(a.labels_, np.ndarray)
    assert a.inertia_ == pytest.approx(b.inertia_, rel=1e-6)
    assert isinstance(a.transform(X), np.ndarray)


def test_kmeans_plusplus_function(device):
    X = _blobs(n=200)
    c, idx = kmeans_plusplus(_dev(X, device), 4, random_state=0)
    np.testing.assert_array_equal(ember.asnumpy(c), X[ember.asnumpy(idx)])
    assert len(set(ember.asnumpy(idx).tolist())) == 4


def test_kmeans_errors(device):
    X = _dev(_blobs(n=20), device)
    with pytest.raises(ValueError, match="n_samples=20 should be >= n_clusters=30"):
        KMeans(30).fit(X)
    with pytest.raises(NotFittedError):
        KMeans(3).predict(X)
    with pytest.raises(ValueError, match="'n_clusters' parameter of KMeans"):
        KMeans(0).fit(X)
    with pytest.raises(ValueError, match="'init' parameter"):
        KMeans(2, init="bogus").fit(X)
    Xn = _blobs(n=20)
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KMeans(2).fit(_dev(Xn, device))
    km = KMeans(2, n_init=1, random_state=0).fit(X)
    with pytest.raises(ValueError, match="X has 3 features, but KMeans is expecting 4"):
        km.predict(X[:, :3])
    with pytest.raises(ValueError, match="shape of the initial centers"):
        KMeans(2, init=np.zeros((3, 4))).fit(X)


def test_minibatch_kmeans(device):
    X = _blobs(n=1500, seed=1)
    a = MiniBatchKMeans(5, batch_size=256, random_state=0, n_init=3).fit(_dev(X, device))
    b = skc.KMeans(5, random_state=0).fit(X)
    assert a.inertia_ <= b.inertia_ * 1.05
    assert ember.asnumpy(a.labels_).shape == (1500,)
    m = MiniBatchKMeans(5, random_state=0)
    for s in range(0, 1500, 300):
        m.partial_fit(_dev(X[s : s + 300], device))
    inert = -m.score(_dev(X, device))
    assert inert <= b.inertia_ * 1.3


@pytest.mark.parametrize(
    "case",
    [
        ("moons", 0.15, 5, {}),
        ("moons", 0.1, 8, {}),
        ("blobs", 0.8, 6, {}),
        ("blobs", 1.2, 4, {"metric": "manhattan"}),
        ("blobs", 0.05, 3, {"metric": "cosine"}),
    ],
)
def test_dbscan_matches_exactly(device, case):
    name, eps, ms, kw = case
    if name == "moons":
        X, _ = make_moons(300, noise=0.08, random_state=0)
    else:
        X, _ = make_blobs(300, 3, centers=5, cluster_std=1.2, random_state=1)
    a = DBSCAN(eps=eps, min_samples=ms, **kw).fit(_dev(X, device))
    b = skc.DBSCAN(eps=eps, min_samples=ms, **kw).fit(X)
    np.testing.assert_array_equal(ember.asnumpy(a.labels_), b.labels_)
    np.testing.assert_array_equal(ember.asnumpy(a.core_sample_indices_), b.core_sample_indices_)
    np.testing.assert_allclose(ember.asnumpy(a.components_), b.components_)


def test_dbscan_weights_precomputed_and_function():
    X, _ = make_blobs(150, 2, centers=3, random_state=2)
    w = np.random.default_rng(1).integers(1, 4, 150).astype(float)
    a = DBSCAN(eps=0.6, min_samples=6).fit(X, sample_weight=w)
    b = skc.DBSCAN(eps=0.6, min_samples=6).fit(X, sample_weight=w)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    a = DBSCAN(eps=0.6, min_samples=4, metric="precomputed").fit(D)
    b = skc.DBSCAN(eps=0.6, min_samples=4, metric="precomputed").fit(D)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    core, labels = dbscan(X, eps=0.6, min_samples=4)
    np.testing.assert_array_equal(labels, skc.dbscan(X, eps=0.6, min_samples=4)[1])
    with pytest.raises(ValueError, match="'eps' parameter of DBSCAN"):
        DBSCAN(eps=-1).fit(X)
