"""ember.ml's NMF, GaussianMixture and AgglomerativeClustering against scikit-learn on the same
data: deterministic paths (NNDSVD starts, given EM starts, the merge tree) equal within
tolerances, random starts compared by quality, labels up to relabelling, equal error types."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from ember.ml import cluster as ecl
from ember.ml import decomposition as edc
from ember.ml import mixture as emx
from ember.ml.exceptions import InvalidParameterError
from sklearn import cluster as scl
from sklearn import decomposition as sdc
from sklearn import mixture as smx
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score


def _n(a):
    return ember.asnumpy(a) if isinstance(a, ember.ndarray) else np.asarray(a)


def _e(x, device):
    return ember.asarray(x, device=device)


@pytest.fixture(scope="module")
def nonneg():
    return np.abs(np.random.RandomState(0).randn(60, 12))


@pytest.fixture(scope="module")
def blobs():
    return make_blobs(240, 3, centers=3, cluster_std=[1.0, 1.5, 0.7], random_state=0)


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


# ----------------------------------------------------------------------------- NMF

_NMF = [
    {"init": "nndsvd"},
    {"init": "nndsvda"},
    {"init": "nndsvd", "alpha_W": 0.01, "l1_ratio": 0.5},
    {"init": "nndsvd", "alpha_W": 0.02, "alpha_H": 0.0, "l1_ratio": 0.0},
    {"init": "nndsvd", "shuffle": True, "random_state": 3},
    {"init": "nndsvda", "solver": "mu"},
    {"init": "nndsvda", "solver": "mu", "beta_loss": "kullback-leibler"},
    {"init": "nndsvda", "solver": "mu", "beta_loss": 0.5, "alpha_W": 0.01},
    {"init": "nndsvda", "solver": "mu", "beta_loss": 3.0},
]


@pytest.mark.parametrize("kw", _NMF, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nmf_matches(device, nonneg, kw, dtype):
    X = nonneg.astype(dtype)
    a = sdc.NMF(4, max_iter=300, **kw)
    Wa = _quiet(a.fit_transform, X)
    b = edc.NMF(4, max_iter=300, **kw)
    Wb = _quiet(b.fit_transform, _e(X, device))
    assert isinstance(Wb, ember.ndarray) and Wb.dtype == ember.asarray(X).dtype
    assert isinstance(b.components_, ember.ndarray)
    assert b.n_components_ == a.n_components_ == 4
    if dtype == np.float64:
        assert b.n_iter_ == a.n_iter_
        np.testing.assert_allclose(_n(Wb), Wa, atol=1e-8)
        np.testing.assert_allclose(_n(b.components_), a.components_, atol=1e-8)
        np.testing.assert_allclose(b.reconstruction_err_, a.reconstruction_err_, rtol=1e-10)
        Ta = _quiet(a.transform, X[:10])
        Tb = _quiet(b.transform, _e(X[:10], device))
        np.testing.assert_allclose(_n(Tb), Ta, atol=1e-7)
    else:  # float32 iterates drift apart slowly; the fit's quality is the same
        assert abs(b.n_iter_ - a.n_iter_) <= max(10, a.n_iter_ // 5)
        np.testing.assert_allclose(b.reconstruction_err_, a.reconstruction_err_, rtol=2e-3)
    np.testing.assert_allclose(
        _n(b.inverse_transform(Wb)), _n(Wb) @ _n(b.components_), rtol=1e-5, atol=1e-5
    )


def test_nmf_host_inputs_random_inits_and_function(nonneg):
    X = nonneg
    for init in ("random", "nndsvdar"):
        for solver in ("cd", "mu"):
            a = _quiet(sdc.NMF(3, init=init, solver=solver, random_state=0, max_iter=500).fit, X)
            b = _quiet(edc.NMF(3, init=init, solver=solver, random_state=0, max_iter=500).fit, X)
            assert isinstance(b.components_, np.ndarray)
            assert (b.components_ >= 0).all()
            assert b.reconstruction_err_ <= a.reconstruction_err_ * 1.05
    # n_components='auto' and None -> n_features; init=None picks nndsvda (<= min shape)
    b = _quiet(edc.NMF(init="nndsvd").fit, X)
    assert b.n_components_ == 12 and b.components_.shape == (12, 12)
    a = _quiet(sdc.NMF().fit, X)
    b = _quiet(edc.NMF().fit, X)
    np.testing.assert_allclose(b.components_, a.components_, atol=1e-7)
    # custom init
    W0, H0 = a.transform(X), a.components_
    a2 = _quiet(sdc.NMF(12, init="custom", max_iter=20).fit, X, W=W0.copy(), H=H0.copy())
    b2 = _quiet(edc.NMF(12, init="custom", max_iter=20).fit, X, W=W0.copy(), H=H0.copy())
    np.testing.assert_allclose(b2.components_, a2.components_, atol=1e-8)
    # non_negative_factorization, with and without update_H
    Wa, Ha, na = _quiet(sdc.non_negative_factorization, X, n_components=4, init="nndsvd")
    Wb, Hb, nb = _quiet(edc.non_negative_factorization, X, n_components=4, init="nndsvd")
    assert na == nb and isinstance(Wb, np.ndarray)
    np.testing.assert_allclose(Wb, Wa, atol=1e-8)
    np.testing.assert_allclose(Hb, Ha, atol=1e-8)
    Wa, _, _ = _quiet(sdc.non_negative_factorization, X, H=Ha, n_components=4, update_H=False)
    Wb, Hb2, _ = _quiet(edc.non_negative_factorization, X, H=Ha, n_components=4, update_H=False)
    np.testing.assert_allclose(Wb, Wa, atol=1e-7)
    np.testing.assert_array_equal(Hb2, Ha)
    assert list(b.get_feature_names_out()[:2]) == ["nmf0", "nmf1"]


_NMF_BAD = [
    ({"n_components": 0}, None),
    ({"init": "bogus"}, None),
    ({"solver": "lbfgs"}, None),
    ({"tol": -1.0}, None),
    ({"l1_ratio": 2.0}, None),
    ({"beta_loss": "kullback-leibler"}, None),  # cd handles only frobenius
    ({"solver": "mu", "beta_loss": 0.0}, "zeros"),  # X with zeros and beta <= 0
    ({"n_components": 20, "init": "nndsvd"}, None),  # more than min(n, d)
    ({}, "negative"),
]


@pytest.mark.parametrize(("kw", "data"), _NMF_BAD, ids=str)
def test_nmf_errors(nonneg, kw, data):
    X = nonneg.copy()
    if data == "zeros":
        X[0, 0] = 0.0
    if data == "negative":
        X[0, 0] = -1.0
    with pytest.raises(Exception) as ea:
        _quiet(sdc.NMF(**kw).fit, X)
    with pytest.raises(Exception) as eb:
        _quiet(edc.NMF(**kw).fit, X)
    assert isinstance(eb.value, ValueError)
    assert isinstance(ea.value, ValueError)
    if isinstance(ea.value, type(ea.value)) and "InvalidParameter" in type(ea.value).__name__:
        assert isinstance(eb.value, InvalidParameterError)
    with pytest.raises(Exception) as ec:
        edc.NMF().transform(X)
    assert type(ec.value).__name__ == "NotFittedError"


# ----------------------------------------------------------------------------- GaussianMixture


def _starts(X, ct, k=3):
    rng = np.random.RandomState(1)
    m0 = X[rng.choice(X.shape[0], k, replace=False)]
    d = X.shape[1]
    p0 = {
        "full": np.stack([np.eye(d) * (1 + 0.1 * i) for i in range(k)]),
        "tied": np.eye(d) * 0.8,
        "diag": np.ones((k, d)) * 0.9,
        "spherical": np.ones(k) * 1.1,
    }[ct]
    return {"means_init": m0, "weights_init": np.array([0.2, 0.3, 0.5]), "precisions_init": p0}


_CT = ["full", "tied", "diag", "spherical"]


@pytest.mark.parametrize("ct", _CT)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gmm_given_starts_match(device, blobs, ct, dtype):
    X = blobs[0].astype(dtype)
    kw = dict(covariance_type=ct, tol=1e-6, max_iter=40, **_starts(blobs[0], ct))
    kw = {k: (v.astype(dtype) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
    a = _quiet(smx.GaussianMixture(3, **kw).fit, X)
    b = _quiet(emx.GaussianMixture(3, **kw).fit, _e(X, device))
    Xe = _e(X, device)
    assert isinstance(b.means_, ember.ndarray) and b.means_.dtype == ember.asarray(X).dtype
    tol = 1e-7 if dtype == np.float64 else 2e-3
    if dtype == np.float64:
        assert b.n_iter_ == a.n_iter_ and b.converged_ == a.converged_
    np.testing.assert_allclose(b.lower_bound_, a.lower_bound_, rtol=tol)
    for name in ("weights_", "means_", "covariances_", "precisions_", "precisions_cholesky_"):
        np.testing.assert_allclose(
            _n(getattr(b, name)), getattr(a, name), rtol=tol, atol=tol, err_msg=name
        )
    np.testing.assert_array_equal(_n(b.predict(Xe)), a.predict(X))
    np.testing.assert_allclose(_n(b.predict_proba(Xe)), a.predict_proba(X), atol=tol)
    np.testing.assert_allclose(_n(b.score_samples(Xe)), a.score_samples(X), rtol=tol)
    np.testing.assert_allclose(b.score(Xe), a.score(X), rtol=tol)
    np.testing.assert_allclose(b.bic(Xe), a.bic(X), rtol=tol)
    np.testing.assert_allclose(b.aic(Xe), a.aic(X), rtol=tol)


@pytest.mark.parametrize("ct", _CT)
@pytest.mark.parametrize("init", ["kmeans", "k-means++", "random", "random_from_data"])
def test_gmm_random_inits_quality(blobs, ct, init):
    X, y = blobs
    a = _quiet(smx.GaussianMixture(3, covariance_type=ct, init_params=init, n_init=3,
                                   random_state=0).fit, X)  # fmt: skip
    b = _quiet(emx.GaussianMixture(3, covariance_type=ct, init_params=init, n_init=3,
                                   random_state=0).fit, X)  # fmt: skip
    assert isinstance(b.means_, np.ndarray)
    assert abs(b.score(X) - a.score(X)) < 0.02
    if adjusted_rand_score(y, a.predict(X)) > 0.9:  # (tied: some starts end in a poor optimum)
        assert adjusted_rand_score(a.predict(X), b.predict(X)) > 0.95
        assert adjusted_rand_score(y, b.fit_predict(X)) > 0.9
    Xs, ys = b.sample(500)
    assert Xs.shape == (500, 3) and ys.shape == (500,)
    np.testing.assert_allclose(np.bincount(ys, minlength=3) / 500, b.weights_, atol=0.1)


def test_gmm_warm_start_and_errors(blobs):
    X = blobs[0]
    g = emx.GaussianMixture(3, warm_start=True, max_iter=2, random_state=0)
    _quiet(g.fit, X)
    lb1 = g.lower_bound_
    _quiet(g.fit, X)
    assert g.lower_bound_ >= lb1 - 1e-9
    for kw in (
        {"n_components": 0},
        {"covariance_type": "bogus"},
        {"init_params": "bogus"},
        {"tol": -1.0},
        {"weights_init": [0.5, 0.6, 0.1]},
        {"weights_init": [0.5, 0.5]},
        {"means_init": np.zeros((2, 3))},
        {"precisions_init": -np.ones(3), "covariance_type": "spherical"},
        {"precisions_init": np.ones((3, 3)), "covariance_type": "tied"},
        {"n_components": 500},
    ):
        k = kw.pop("n_components", 3)
        with pytest.raises(ValueError) as ea:
            smx.GaussianMixture(k, **kw).fit(X)
        with pytest.raises(ValueError) as eb:
            emx.GaussianMixture(k, **kw).fit(X)
        assert ("InvalidParameter" in type(ea.value).__name__) == isinstance(
            eb.value, InvalidParameterError
        ), kw
    with pytest.raises(Exception) as ec:
        emx.GaussianMixture().predict(X)
    assert type(ec.value).__name__ == "NotFittedError"


# ----------------------------------------------------------------------------- Agglomerative

_AGG = [
    ("ward", "euclidean"),
    ("complete", "euclidean"),
    ("complete", "manhattan"),
    ("complete", "cosine"),
    ("average", "euclidean"),
    ("average", "l1"),
    ("average", "cosine"),
    ("single", "euclidean"),
    ("single", "manhattan"),
    ("single", "cosine"),
]


@pytest.mark.parametrize(("linkage", "metric"), _AGG)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_agglomerative_matches(device, blobs, linkage, metric, dtype):
    X = blobs[0].astype(dtype)
    kw = dict(linkage=linkage, metric=metric, compute_distances=True)
    a = scl.AgglomerativeClustering(4, **kw).fit(X)
    b = ecl.AgglomerativeClustering(4, **kw).fit(_e(X, device))
    assert isinstance(b.labels_, ember.ndarray)
    assert adjusted_rand_score(a.labels_, _n(b.labels_)) == 1.0
    np.testing.assert_array_equal(_n(b.labels_), a.labels_)
    np.testing.assert_array_equal(b.children_, a.children_)
    np.testing.assert_allclose(b.distances_, a.distances_, rtol=1e-6, atol=1e-9)
    assert b.n_leaves_ == a.n_leaves_ and b.n_clusters_ == a.n_clusters_ == 4
    assert b.n_connected_components_ == a.n_connected_components_ == 1


@pytest.mark.parametrize("linkage", ["ward", "complete", "average", "single"])
def test_agglomerative_threshold_and_precomputed(blobs, linkage):
    X = blobs[0]
    a = scl.AgglomerativeClustering(None, distance_threshold=3.0, linkage=linkage).fit(X)
    b = ecl.AgglomerativeClustering(None, distance_threshold=3.0, linkage=linkage).fit(X)
    assert b.n_clusters_ == a.n_clusters_
    assert isinstance(b.labels_, np.ndarray)
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    np.testing.assert_allclose(b.distances_, a.distances_, rtol=1e-6)
    if linkage == "ward":
        return
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    a = scl.AgglomerativeClustering(5, metric="precomputed", linkage=linkage).fit(D)
    b = ecl.AgglomerativeClustering(5, metric="precomputed", linkage=linkage).fit(D)
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    np.testing.assert_array_equal(b.children_, a.children_)
    assert not hasattr(b, "distances_")


def test_agglomerative_errors(blobs):
    X = blobs[0]
    Z = X.copy()
    Z[0] = 0.0
    cases = [
        ({"n_clusters": 0}, X),
        ({"linkage": "bogus"}, X),
        ({"metric": "bogus"}, X),
        ({"n_clusters": None}, X),  # neither n_clusters nor distance_threshold
        ({"n_clusters": 2, "distance_threshold": 1.0}, X),
        ({"n_clusters": None, "distance_threshold": 1.0, "compute_full_tree": False}, X),
        ({"linkage": "ward", "metric": "manhattan"}, X),
        ({"linkage": "average", "metric": "cosine"}, Z),
        ({"linkage": "average", "metric": "precomputed"}, X),  # not square
        ({"n_clusters": 1000}, X),
    ]
    for kw, data in cases:
        with pytest.raises(ValueError) as ea:
            scl.AgglomerativeClustering(**kw).fit(data)
        with pytest.raises(ValueError) as eb:
            ecl.AgglomerativeClustering(**kw).fit(data)
        assert ("InvalidParameter" in type(ea.value).__name__) == isinstance(
            eb.value, InvalidParameterError
        ), kw
    with pytest.raises(ValueError):
        ecl.AgglomerativeClustering().fit(X[:1])


# ----------------------------------------------------------------------------- estimator checks


@pytest.mark.parametrize(
    "est",
    [edc.NMF(max_iter=500), emx.GaussianMixture(), ecl.AgglomerativeClustering()],
    ids=lambda e: type(e).__name__,
)
def test_sklearn_estimator_checks(est):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert not failed, failed
    assert len(results) > 30
