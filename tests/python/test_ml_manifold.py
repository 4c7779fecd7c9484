"""ember.ml.manifold (SpectralEmbedding, spectral_embedding, TSNE, trustworthiness) and
ember.ml.cluster.SpectralClustering against scikit-learn."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from ember.ml.cluster import SpectralClustering
from ember.ml.cluster._spectral import cluster_qr
from ember.ml.manifold import TSNE, SpectralEmbedding, spectral_embedding, trustworthiness
from ember.ml.manifold._tsne import _joint_probabilities
from sklearn import cluster as skc
from sklearn import manifold as skm
from sklearn.cluster._spectral import cluster_qr as sk_cluster_qr
from sklearn.datasets import make_blobs
from sklearn.manifold._t_sne import _joint_probabilities as sk_joint_probabilities
from sklearn.manifold._t_sne import _kl_divergence as _sk_kl_divergence
from sklearn.metrics import adjusted_rand_score, pairwise_distances
from sklearn.metrics.pairwise import rbf_kernel


def _blobs(n=90, d=3, k=3, std=2.0, seed=0, dtype=np.float64):
    X, y = make_blobs(n, d, centers=k, cluster_std=std, random_state=seed)
    return X.astype(dtype), y


def _np(x):
    return ember.asnumpy(x) if isinstance(x, ember.ndarray) else np.asarray(x)


def _same_up_to_sign(a, b, atol):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape
    for j in range(a.shape[1]):
        s = 1.0 if np.abs(a[:, j] - b[:, j]).max() <= np.abs(a[:, j] + b[:, j]).max() else -1.0
        np.testing.assert_allclose(a[:, j], s * b[:, j], atol=atol)


# ----------------------------------------------------------------- spectral embedding


@pytest.mark.parametrize(
    "affinity,kw",
    [("nearest_neighbors", {"n_neighbors": 9}), ("rbf", {"gamma": 0.05}), ("rbf", {})],
)
def test_spectral_embedding_matches_sklearn(device, affinity, kw):
    X, _ = _blobs(std=3.0)
    a = SpectralEmbedding(3, affinity=affinity, **kw).fit(ember.asarray(X, device=device))
    b = skm.SpectralEmbedding(3, affinity=affinity, random_state=0, **kw).fit(X)
    assert isinstance(a.embedding_, ember.ndarray)
    assert str(a.embedding_.device) == str(ember.asarray(X, device=device).device)
    # Same sign convention: exact equality, not only up to sign.
    np.testing.assert_allclose(_np(a.embedding_), b.embedding_, atol=1e-6)
    ref = b.affinity_matrix_
    ref = ref.toarray() if hasattr(ref, "toarray") else ref
    np.testing.assert_allclose(_np(a.affinity_matrix_), ref, atol=1e-12)
    if affinity == "nearest_neighbors":
        assert a.n_neighbors_ == b.n_neighbors_
    else:
        assert a.gamma_ == pytest.approx(b.gamma_)


def test_spectral_embedding_numpy_in_numpy_out_and_default_neighbors():
    X, _ = _blobs(n=70, std=3.0, seed=2)
    E = SpectralEmbedding().fit_transform(X)
    assert isinstance(E, np.ndarray) and E.shape == (70, 2)
    ref = skm.SpectralEmbedding(random_state=0).fit_transform(X)
    _same_up_to_sign(E, ref, 1e-6)


@pytest.mark.parametrize("norm_laplacian", [True, False])
@pytest.mark.parametrize("drop_first", [True, False])
def test_spectral_embedding_function(device, norm_laplacian, drop_first):
    X, _ = _blobs(n=60, std=3.0, seed=4)
    A = rbf_kernel(X, gamma=0.03)
    e = spectral_embedding(
        ember.asarray(A, device=device),
        n_components=3,
        norm_laplacian=norm_laplacian,
        drop_first=drop_first,
    )
    r = skm.spectral_embedding(
        A, n_components=3, norm_laplacian=norm_laplacian, drop_first=drop_first, random_state=0
    )
    np.testing.assert_allclose(_np(e), r, atol=1e-6)


def test_spectral_embedding_precomputed_float32():
    X, _ = _blobs(n=50, std=3.0, seed=5)
    A = rbf_kernel(X, gamma=0.05).astype(np.float32)
    e = SpectralEmbedding(2, affinity="precomputed").fit_transform(A)
    r = skm.SpectralEmbedding(2, affinity="precomputed", random_state=0).fit_transform(A)
    _same_up_to_sign(e, r, 1e-4)


def test_spectral_embedding_warnings_and_errors():
    X, _ = _blobs(n=40)
    with pytest.raises(ValueError, match="affinity"):
        SpectralEmbedding(affinity="cosine-ish").fit(X)
    with pytest.raises(ValueError, match="n_components"):
        SpectralEmbedding(n_components=0).fit(X)
    with pytest.raises(ValueError, match="square"):
        SpectralEmbedding(affinity="precomputed").fit(X)
    with pytest.raises(ValueError, match="n_components"):
        spectral_embedding(rbf_kernel(X[:5]), n_components=5)
    with pytest.raises(ValueError, match="n_neighbors"):
        SpectralEmbedding(n_neighbors=41).fit(X)
    with pytest.raises(ValueError, match="2D"):
        SpectralEmbedding().fit(X[:, 0])
    A = np.zeros((6, 6))
    A[:3, :3] = 1.0
    A[3:, 3:] = 1.0
    with pytest.warns(UserWarning, match="not fully connected"):
        spectral_embedding(A, n_components=1)
    B = rbf_kernel(X[:10])
    B[0, 1] += 0.5
    with pytest.warns(UserWarning, match="not symmetric"):
        spectral_embedding(B, n_components=2)


# ----------------------------------------------------------------- spectral clustering


@pytest.mark.filterwarnings("ignore:Graph is not fully connected")  # 3 separate blobs
@pytest.mark.parametrize("assign_labels", ["kmeans", "cluster_qr", "discretize"])
@pytest.mark.parametrize(
    "affinity,kw", [("rbf", {"gamma": 0.1}), ("nearest_neighbors", {"n_neighbors": 8})]
)
def test_spectral_clustering_matches_sklearn(device, assign_labels, affinity, kw):
    X, y = _blobs(n=90, std=1.0, seed=1)
    a = SpectralClustering(
        3, affinity=affinity, assign_labels=assign_labels, random_state=0, **kw
    ).fit(ember.asarray(X, device=device))
    b = skc.SpectralClustering(
        3, affinity=affinity, assign_labels=assign_labels, random_state=0, **kw
    ).fit(X)
    assert isinstance(a.labels_, ember.ndarray)
    assert str(a.labels_.device) == str(ember.asarray(X, device=device).device)
    assert adjusted_rand_score(_np(a.labels_), b.labels_) == 1.0
    assert adjusted_rand_score(_np(a.labels_), y) == 1.0
    ref = b.affinity_matrix_
    ref = ref.toarray() if hasattr(ref, "toarray") else ref
    np.testing.assert_allclose(_np(a.affinity_matrix_), ref, atol=1e-12)


def test_spectral_clustering_cluster_qr_exact_on_overlapping_blobs():
    # Overlapping clusters: the labels are not the truth, but cluster_qr is deterministic.
    X, y = _blobs(n=120, d=2, k=5, std=3.0, seed=3)
    kw = dict(gamma=0.02, assign_labels="cluster_qr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = SpectralClustering(5, **kw).fit_predict(X)
        b = skc.SpectralClustering(5, **kw).fit_predict(X)
    assert isinstance(a, np.ndarray)
    assert adjusted_rand_score(y, b) < 0.9
    assert adjusted_rand_score(a, b) == 1.0


def test_spectral_clustering_precomputed_and_kernels():
    X, y = _blobs(n=60, std=1.0, seed=6)
    A = rbf_kernel(X, gamma=0.1)
    a = SpectralClustering(3, affinity="precomputed", random_state=0).fit_predict(A)
    assert adjusted_rand_score(a, y) == 1.0
    for aff in ("laplacian", "polynomial"):
        kw = dict(affinity=aff, gamma=0.1, assign_labels="cluster_qr")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = SpectralClustering(3, **kw).fit_predict(X)
            b = skc.SpectralClustering(3, **kw).fit_predict(X)
        assert adjusted_rand_score(a, b) == 1.0


def test_cluster_qr_function(device):
    rng = np.random.default_rng(0)
    V = rng.standard_normal((50, 4))
    a = cluster_qr(ember.asarray(V, device=device))
    np.testing.assert_array_equal(_np(a), sk_cluster_qr(V))


def test_spectral_clustering_errors():
    X, _ = _blobs(n=30)
    with pytest.raises(ValueError, match="assign_labels"):
        SpectralClustering(3, assign_labels="kmedoids").fit(X)
    with pytest.raises(ValueError, match="n_clusters"):
        SpectralClustering(0).fit(X)
    with pytest.raises(ValueError, match="gamma"):
        SpectralClustering(3, gamma=-1.0).fit(X)
    with pytest.raises(ValueError, match="square"):
        SpectralClustering(3, affinity="precomputed").fit(X)
    with pytest.raises(ValueError, match="n_neighbors"):
        SpectralClustering(3, affinity="nearest_neighbors", n_neighbors=31).fit(X)


# ----------------------------------------------------------------- t-SNE


@pytest.mark.parametrize("perplexity", [3.0, 10.0, 30.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_joint_probabilities_match_sklearn(device, perplexity, dtype):
    X, _ = _blobs(n=80, d=4, seed=7, dtype=dtype)
    D = pairwise_distances(X, squared=True)
    ref = sk_joint_probabilities(D, perplexity, 0)
    got = _joint_probabilities(ember.asarray(D, device=device), perplexity)
    assert str(got.device) == str(ember.asarray(D, device=device).device)
    np.testing.assert_allclose(_np(got), ref, atol=1e-6, rtol=0)
    np.testing.assert_allclose(_np(got), ref, rtol=1e-6)


def test_tsne_matches_sklearn_pca_init(device):
    X, y = _blobs(n=120, d=5, k=4, std=2.5, seed=8)
    kw = dict(perplexity=15.0, init="pca", method="exact", random_state=0)
    a = TSNE(2, **kw).fit(ember.asarray(X, device=device))
    b = skm.TSNE(2, **kw).fit(X)
    E = a.embedding_
    assert isinstance(E, ember.ndarray) and E.shape == (120, 2) and E.dtype == ember.float32
    assert str(E.device) == str(ember.asarray(X, device=device).device)
    # The descent is chaotic: scikit-learn's own KL moves by 5-10 % when its init is scaled by
    # (1 + 1e-6), so float32 rounding differences (CPU vs GPU) allow no tighter bound. Here
    # the two differ by about 1 %.
    assert a.kl_divergence_ == pytest.approx(b.kl_divergence_, rel=0.1)
    assert a.learning_rate_ == pytest.approx(b.learning_rate_)
    assert 250 < a.n_iter_ <= 999
    t_a = skm.trustworthiness(X, _np(E), n_neighbors=5)
    t_b = skm.trustworthiness(X, b.embedding_, n_neighbors=5)
    assert t_a > t_b - 0.01
    assert trustworthiness(X, _np(E), n_neighbors=5) == pytest.approx(t_a, abs=1e-12)


def test_tsne_barnes_hut_runs_the_exact_computation(device):
    X, _ = _blobs(n=40, d=3, seed=10)
    Xd = ember.asarray(X, device=device)
    a = TSNE(2, perplexity=8.0, max_iter=300, random_state=0).fit(Xd)
    b = TSNE(2, perplexity=8.0, max_iter=300, random_state=0, method="exact").fit(Xd)
    np.testing.assert_array_equal(_np(a.embedding_), _np(b.embedding_))
    assert a.kl_divergence_ == b.kl_divergence_ and a.n_iter_ == b.n_iter_ == 299


def test_tsne_precomputed_random_and_array_init():
    X, y = _blobs(n=60, d=3, k=3, std=1.0, seed=9)
    D = pairwise_distances(X)
    a = TSNE(2, metric="precomputed", init="random", random_state=0, perplexity=10.0)
    E = a.fit_transform(D)
    assert isinstance(E, np.ndarray) and E.shape == (60, 2)
    assert skm.trustworthiness(X, E, n_neighbors=5) > 0.9
    init = (np.random.default_rng(1).standard_normal((60, 3)) * 1e-4).astype(np.float32)
    kw = dict(perplexity=10.0, init=init, method="exact", learning_rate=100.0, max_iter=400)
    a = TSNE(3, **kw).fit(X)
    b = skm.TSNE(3, **kw).fit(X)
    assert a.embedding_.shape == (60, 3)
    assert a.learning_rate_ == 100.0
    assert b.kl_divergence_ > 0 and a.n_iter_ == 399
    # kl_divergence_ is the KL of the last iterate (one step before embedding_).
    P = sk_joint_probabilities(pairwise_distances(X, squared=True), 10.0, 0)
    kl = _sk_kl_divergence(a.embedding_.ravel(), P, 2, 60, 3)[0]
    assert a.kl_divergence_ == pytest.approx(kl, rel=0.02)
    # The euclidean metric and the precomputed distances give the same P.
    a2 = TSNE(2, metric="manhattan", init="random", random_state=0, perplexity=10.0).fit(X)
    assert np.isfinite(a2.kl_divergence_)


def test_tsne_errors():
    X, _ = _blobs(n=20)
    with pytest.raises(ValueError, match="perplexity"):
        TSNE(perplexity=20.0).fit(X)
    with pytest.raises(ValueError, match="perplexity"):
        TSNE(perplexity=0.0).fit(X)
    with pytest.raises(ValueError, match="max_iter"):
        TSNE(perplexity=5.0, max_iter=100).fit(X)
    with pytest.raises(ValueError, match="method"):
        TSNE(perplexity=5.0, method="fft").fit(X)
    with pytest.raises(ValueError, match="init"):
        TSNE(perplexity=5.0, init="spectral").fit(X)
    with pytest.raises(ValueError, match="n_components"):
        TSNE(4, perplexity=5.0).fit(X)
    D = pairwise_distances(X)
    with pytest.raises(ValueError, match='init="pca"'):
        TSNE(perplexity=5.0, metric="precomputed").fit(D)
    with pytest.raises(ValueError, match="square"):
        TSNE(perplexity=5.0, metric="precomputed", init="random").fit(X)
    with pytest.raises(ValueError, match="positive"):
        TSNE(perplexity=5.0, metric="precomputed", init="random").fit(-D)
    with pytest.raises(ValueError, match="init"):
        TSNE(perplexity=5.0, init=np.zeros((19, 2))).fit(X)
    with pytest.raises(ValueError, match="n_neighbors"):
        trustworthiness(X, X[:, :2], n_neighbors=10)


def test_params_clone_and_device_init(device):
    from ember.ml.base import clone

    for est in (SpectralEmbedding(3, gamma=0.5), SpectralClustering(4), TSNE(perplexity=7.0)):
        c = clone(est)
        assert c.get_params() == est.get_params() and c is not est
    X, _ = _blobs(n=30, d=3, seed=11)
    init = ember.asarray(np.random.default_rng(2).standard_normal((30, 2)) * 1e-4, device=device)
    t = TSNE(perplexity=5.0, init=init, max_iter=260).fit(ember.asarray(X, device=device))
    assert t.embedding_.dtype == ember.float64
    assert str(t.embedding_.device) == str(init.device)
    assert t.n_iter_ == 259 and np.isfinite(t.kl_divergence_)
