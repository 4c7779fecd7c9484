"""ember.ml.decomposition and ember.ml.neighbors against scikit-learn."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.ml.decomposition import PCA, TruncatedSVD
from ember.ml.exceptions import NotFittedError
from ember.ml.neighbors import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors
from sklearn import decomposition as skd
from sklearn import neighbors as skn


def _n(a):
    return ember.asnumpy(a) if isinstance(a, ember.ndarray) else np.asarray(a)


def _e(x, device):
    return ember.asarray(x, device=device)


def _X(n=200, d=10, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + 1.0


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"n_components": 3},
        {"n_components": 0.9},
        {"n_components": "mle"},
        {"n_components": 4, "whiten": True},
        {"n_components": 3, "svd_solver": "full"},
        {"n_components": 3, "svd_solver": "covariance_eigh"},
        {"n_components": 3, "svd_solver": "randomized", "random_state": 0},
        {"n_components": 3, "svd_solver": "arpack"},
    ],
)
def test_pca_matches(device, kw):
    X = _X()
    Xe = _e(X, device)
    a = PCA(**kw).fit(Xe)
    b = skd.PCA(**kw).fit(X)
    assert a.n_components_ == b.n_components_
    # Components are compared up to sign (ember applies sklearn's svd_flip, so they agree).
    ca, cb = _n(a.components_), b.components_
    signs = np.sign((ca * cb).sum(axis=1))
    np.testing.assert_allclose(ca * signs[:, None], cb, atol=1e-8)
    np.testing.assert_allclose(
        _n(a.explained_variance_ratio_), b.explained_variance_ratio_, atol=1e-10
    )
    np.testing.assert_allclose(_n(a.explained_variance_), b.explained_variance_, rtol=1e-8)
    np.testing.assert_allclose(_n(a.singular_values_), b.singular_values_, rtol=1e-8)
    assert a.noise_variance_ == pytest.approx(b.noise_variance_, rel=1e-8, abs=1e-12)
    Z = a.transform(Xe)
    assert isinstance(Z, ember.ndarray) and str(Z.device) == str(Xe.device)
    np.testing.assert_allclose(np.abs(_n(Z)), np.abs(b.transform(X)), atol=1e-7)
    np.testing.assert_allclose(
        np.abs(_n(a.fit_transform(Xe))), np.abs(b.fit_transform(X)), atol=1e-7
    )
    np.testing.assert_allclose(
        _n(a.inverse_transform(Z)), b.inverse_transform(b.transform(X)), atol=1e-7
    )


def test_pca_float32_numpy_covariance_and_errors():
    X = _X(60, 5).astype(np.float32)
    a = PCA(2).fit(X)
    assert isinstance(a.components_, np.ndarray) and a.components_.dtype == np.float32
    b = skd.PCA(2).fit(X.astype(np.float64))
    np.testing.assert_allclose(np.abs(a.components_), np.abs(b.components_), atol=1e-4)
    np.testing.assert_allclose(a.get_covariance(), b.get_covariance(), rtol=1e-4, atol=1e-4)
    Xd = _X(80, 5)
    for k in (2, 5):
        a64, b64 = PCA(k).fit(Xd), skd.PCA(k).fit(Xd)
        np.testing.assert_allclose(a64.get_precision(), b64.get_precision(), rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(a64.score_samples(Xd), b64.score_samples(Xd), rtol=1e-10)
        assert a64.score(Xd) == pytest.approx(b64.score(Xd), rel=1e-10)
    with pytest.raises(ValueError, match="n_components=9 must be between 0 and"):
        PCA(9).fit(X)
    with pytest.raises(NotFittedError):
        PCA().transform(X)
    with pytest.raises(ValueError, match="'svd_solver' parameter of PCA"):
        PCA(svd_solver="magic").fit(X)
    with pytest.raises(ValueError, match="X has 4 features, but PCA is expecting 5"):
        a.transform(X[:, :4])


@pytest.mark.parametrize("algorithm", ["randomized", "arpack"])
def test_truncated_svd(device, algorithm):
    X = _X(120, 8, seed=1)
    Xe = _e(X, device)
    a = TruncatedSVD(3, algorithm=algorithm, random_state=0)
    Za = a.fit_transform(Xe)
    b = skd.TruncatedSVD(3, algorithm=algorithm, random_state=0)
    Zb = b.fit_transform(X)
    np.testing.assert_allclose(_n(a.singular_values_), b.singular_values_, rtol=1e-8)
    np.testing.assert_allclose(
        _n(a.explained_variance_ratio_), b.explained_variance_ratio_, rtol=1e-7
    )
    np.testing.assert_allclose(np.abs(_n(Za)), np.abs(Zb), atol=1e-7)
    np.testing.assert_allclose(np.abs(_n(a.transform(Xe))), np.abs(b.transform(X)), atol=1e-7)


def _knn_data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(250, 5)), rng.normal(size=(40, 5))


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"metric": "cosine"},
        {"metric": "manhattan"},
        {"p": 1},
        {"p": 3},
        {"metric": "chebyshev"},
        {"metric": "sqeuclidean"},
    ],
)
def test_nearest_neighbors_identical(device, kw):
    X, Q = _knn_data()
    a = NearestNeighbors(n_neighbors=4, **kw).fit(_e(X, device))
    b = skn.NearestNeighbors(n_neighbors=4, **kw).fit(X)
    da, ia = a.kneighbors(_e(Q, device))
    db, ib = b.kneighbors(Q)
    np.testing.assert_array_equal(_n(ia), ib)
    np.testing.assert_allclose(_n(da), db, atol=1e-9)
    da, ia = a.kneighbors()  # the training points, each without itself
    db, ib = b.kneighbors()
    np.testing.assert_array_equal(_n(ia), ib)
    np.testing.assert_allclose(_n(da), db, atol=1e-9)
    ra_d, ra_i = a.radius_neighbors(_e(Q[:6], device), radius=1.5, sort_results=True)
    rb_d, rb_i = b.radius_neighbors(Q[:6], radius=1.5, sort_results=True)
    for x, y in zip(ra_i, rb_i, strict=True):
        np.testing.assert_array_equal(_n(x), y)
    for x, y in zip(ra_d, rb_d, strict=True):
        np.testing.assert_allclose(_n(x), y, atol=1e-9)


def test_kneighbors_graph_and_errors():
    X, Q = _knn_data(1)
    a = NearestNeighbors(n_neighbors=3).fit(X)
    b = skn.NearestNeighbors(n_neighbors=3).fit(X)
    for mode in ("connectivity", "distance"):
        ga, gb = a.kneighbors_graph(Q, mode=mode), b.kneighbors_graph(Q, mode=mode)
        np.testing.assert_allclose(ga.toarray(), gb.toarray(), atol=1e-12)
    for mode in ("connectivity", "distance"):
        ga = a.radius_neighbors_graph(Q, radius=1.2, mode=mode)
        gb = b.radius_neighbors_graph(Q, radius=1.2, mode=mode)
        np.testing.assert_allclose(ga.toarray(), gb.toarray(), atol=1e-12)
    with pytest.raises(ValueError, match="Expected n_neighbors <= n_samples_fit"):
        a.kneighbors(Q, n_neighbors=300)
    with pytest.raises(ValueError, match="Expected n_neighbors > 0"):
        a.kneighbors(Q, n_neighbors=0)
    with pytest.raises(NotFittedError):
        NearestNeighbors().kneighbors(Q)
    with pytest.raises(ValueError, match="'metric' parameter of NearestNeighbors"):
        NearestNeighbors(metric="hamming-ish").fit(X)


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_kneighbors_classifier_regressor(device, weights):
    X, Q = _knn_data(2)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    a = KNeighborsClassifier(5, weights=weights).fit(_e(X, device), _e(y, device))
    b = skn.KNeighborsClassifier(5, weights=weights).fit(X, y)
    Qe = _e(Q, device)
    np.testing.assert_array_equal(_n(a.predict(Qe)), b.predict(Q))
    np.testing.assert_allclose(_n(a.predict_proba(Qe)), b.predict_proba(Q), atol=1e-12)
    assert a.score(Qe, _e(b.predict(Q), device)) == 1.0
    ys = np.array(["lo", "mid", "hi"])[y]
    a = KNeighborsClassifier(3, weights=weights).fit(X, ys)
    assert list(a.predict(Q)) == list(
        skn.KNeighborsClassifier(3, weights=weights).fit(X, ys).predict(Q)
    )
    yr = X @ np.arange(5.0)
    Yr = np.stack([yr, -yr], axis=1)
    for target in (yr, Yr):
        a = KNeighborsRegressor(5, weights=weights).fit(_e(X, device), _e(target, device))
        b = skn.KNeighborsRegressor(5, weights=weights).fit(X, target)
        np.testing.assert_allclose(_n(a.predict(Qe)), b.predict(Q), atol=1e-10)
