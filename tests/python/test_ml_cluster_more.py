"""ember.ml.cluster.MeanShift / estimate_bandwidth, Birch and OPTICS against scikit-learn."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from ember.ml.base import clone
from ember.ml.cluster import (
    OPTICS,
    Birch,
    KMeans,
    MeanShift,
    cluster_optics_dbscan,
    estimate_bandwidth,
)
from ember.ml.exceptions import NotFittedError
from sklearn import cluster as skc
from sklearn.datasets import make_blobs


def _np(x):
    return ember.asnumpy(x) if isinstance(x, ember.ndarray) else np.asarray(x)


def _blobs(n=240, d=3, k=4, std=1.0, seed=0):
    return make_blobs(n, d, centers=k, cluster_std=std, random_state=seed)[0]


def _same_partition(a, b):
    """Identical labels up to renumbering (noise -1 stays -1)."""
    a, b = _np(a), _np(b)
    assert a.shape == b.shape
    assert np.array_equal(a == -1, b == -1)
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    assert len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


# ----------------------------------------------------------------------------- MeanShift


def test_estimate_bandwidth_matches_sklearn(device):
    X = _blobs()
    Xd = ember.asarray(X, device=device)
    assert estimate_bandwidth(Xd) == pytest.approx(skc.estimate_bandwidth(X), rel=1e-12)
    kw = dict(quantile=0.2, n_samples=60, random_state=3)
    assert estimate_bandwidth(X, **kw) == pytest.approx(skc.estimate_bandwidth(X, **kw), 1e-12)
    with pytest.raises(ValueError, match="quantile"):
        estimate_bandwidth(X, quantile=1.5)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"bin_seeding": True},
        {"bandwidth": 1.5, "cluster_all": False},
        {"bandwidth": 2.0, "bin_seeding": True, "min_bin_freq": 3},
        {"bandwidth": 1.2, "max_iter": 2},
    ],
)
def test_mean_shift_matches_sklearn(device, kw):
    X = _blobs()
    a = MeanShift(**kw).fit(ember.asarray(X, device=device))
    b = skc.MeanShift(**kw).fit(X)
    assert isinstance(a.labels_, ember.ndarray)
    np.testing.assert_array_equal(_np(a.labels_), b.labels_)
    np.testing.assert_allclose(_np(a.cluster_centers_), b.cluster_centers_, atol=1e-10)
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_array_equal(_np(a.predict(X[:20])), b.predict(X[:20]))


def test_mean_shift_seeds_and_errors():
    X = _blobs()
    seeds = X[::25]
    a, b = MeanShift(bandwidth=2.0, seeds=seeds).fit(X), skc.MeanShift(bandwidth=2.0, seeds=seeds)
    b.fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-10)
    with pytest.raises(ValueError, match="No point was within bandwidth"):
        MeanShift(bandwidth=0.1, seeds=[[100.0, 100.0, 100.0]]).fit(X)
    with pytest.raises(ValueError, match="bandwidth"):
        MeanShift(bandwidth=-1).fit(X)
    with pytest.raises(ValueError, match="min_bin_freq"):
        MeanShift(min_bin_freq=0).fit(X)
    with pytest.raises(NotFittedError):
        MeanShift().predict(X)
    assert clone(MeanShift(bandwidth=2)).get_params() == skc.MeanShift(bandwidth=2).get_params()


# ---------------------------------------------------------------------------------- Birch


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"threshold": 1.0, "branching_factor": 5},
        {"n_clusters": None, "threshold": 0.8, "branching_factor": 3},
        {"n_clusters": 4, "threshold": 0.3, "branching_factor": 4},
    ],
)
def test_birch_matches_sklearn(device, kw):
    X = _blobs()
    Xd = ember.asarray(X, device=device)
    a, b = Birch(**kw).fit(Xd), skc.Birch(**kw).fit(X)
    # The same CF tree: the same subclusters in the same leaf order.
    np.testing.assert_allclose(_np(a.subcluster_centers_), b.subcluster_centers_, atol=1e-12)
    _same_partition(a.subcluster_labels_, b.subcluster_labels_)
    _same_partition(a.labels_, b.labels_)
    _same_partition(a.predict(Xd[:50]), b.predict(X[:50]))
    np.testing.assert_allclose(_np(a.transform(Xd[:10])), b.transform(X[:10]), atol=1e-10)
    assert list(a.get_feature_names_out()[:3]) == list(b.get_feature_names_out()[:3])


def test_birch_partial_fit_estimator_and_errors():
    X = _blobs(n=300)
    a, b = Birch(n_clusters=None), skc.Birch(n_clusters=None)
    for part in (X[:100], X[100:200], X[200:]):
        a.partial_fit(part)
        b.partial_fit(part)
    np.testing.assert_allclose(a.subcluster_centers_, b.subcluster_centers_, atol=1e-12)
    _same_partition(a.labels_, b.labels_)
    a.set_params(n_clusters=4)
    b.set_params(n_clusters=4)
    a.partial_fit(), b.partial_fit()
    _same_partition(a.subcluster_labels_, b.subcluster_labels_)
    est = KMeans(4, n_init=1, random_state=0)
    a = Birch(n_clusters=est).fit(X)
    assert set(np.unique(a.labels_)) <= set(range(4))
    assert hasattr(est, "labels_")  # fitted in place, as scikit-learn does
    with pytest.warns(UserWarning, match="Number of subclusters found"):
        Birch(threshold=50.0, n_clusters=3).fit(X)
    with pytest.raises(ValueError, match="branching_factor"):
        Birch(branching_factor=1).fit(X)
    with pytest.raises(ValueError, match="threshold"):
        Birch(threshold=0).fit(X)
    with pytest.raises(NotFittedError):
        Birch().predict(X)


# --------------------------------------------------------------------------------- OPTICS


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"min_samples": 10, "xi": 0.1},
        {"cluster_method": "dbscan", "eps": 1.0},
        {"max_eps": 2.0},
        {"min_samples": 0.05, "min_cluster_size": 0.1, "metric": "manhattan"},
        {"metric": "euclidean", "predecessor_correction": False, "min_samples": 4},
    ],
)
def test_optics_matches_sklearn(device, kw):
    X = _blobs(std=1.3)
    Xd = ember.asarray(X, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = OPTICS(**kw).fit(Xd), skc.OPTICS(**kw).fit(X)
    assert isinstance(a.labels_, ember.ndarray)
    np.testing.assert_array_equal(_np(a.ordering_), b.ordering_)
    np.testing.assert_array_equal(_np(a.predecessor_), b.predecessor_)
    np.testing.assert_allclose(_np(a.reachability_), b.reachability_, rtol=1e-12)
    np.testing.assert_allclose(_np(a.core_distances_), b.core_distances_, rtol=1e-12)
    np.testing.assert_array_equal(_np(a.labels_), b.labels_)
    if kw.get("cluster_method", "xi") == "xi":
        np.testing.assert_array_equal(
            _np(a.cluster_hierarchy_).reshape(-1, 2), b.cluster_hierarchy_.reshape(-1, 2)
        )
    lab = cluster_optics_dbscan(
        reachability=b.reachability_,
        core_distances=b.core_distances_,
        ordering=b.ordering_,
        eps=0.8,
    )
    np.testing.assert_array_equal(
        lab,
        skc.cluster_optics_dbscan(
            reachability=b.reachability_,
            core_distances=b.core_distances_,
            ordering=b.ordering_,
            eps=0.8,
        ),
    )


def test_optics_precomputed_and_errors():
    X = _blobs(n=120)
    from sklearn.metrics import pairwise_distances

    D = pairwise_distances(X)
    a, b = OPTICS(metric="precomputed").fit(D), skc.OPTICS(metric="precomputed").fit(D)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.ordering_, b.ordering_)
    with pytest.raises(ValueError, match="min_samples must be no greater"):
        OPTICS(min_samples=500).fit(X)
    with pytest.raises(ValueError, match="epsilon smaller"):
        OPTICS(cluster_method="dbscan", max_eps=1.0, eps=2.0).fit(X)
    with pytest.raises(ValueError, match="xi"):
        OPTICS(xi=1.5).fit(X)
    with pytest.raises(ValueError, match="min_samples"):
        OPTICS(min_samples=1).fit(X)
    with pytest.warns(UserWarning, match="All reachability values are inf"):
        OPTICS(max_eps=1e-6).fit(X)
    assert clone(OPTICS(xi=0.2)).get_params() == skc.OPTICS(xi=0.2).get_params()


@pytest.mark.parametrize(
    "est", [MeanShift(bandwidth=2.0), Birch(n_clusters=2), OPTICS(min_samples=3)], ids=repr
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
    assert len(results) > 25
