"""ember.ml.preprocessing and ember.ml.metrics against scikit-learn."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.ml import metrics as em
from ember.ml import preprocessing as ep
from ember.ml.exceptions import NotFittedError
from sklearn import metrics as skm
from sklearn import preprocessing as skp


def _n(a):
    return ember.asnumpy(a) if isinstance(a, ember.ndarray) else np.asarray(a)


def _e(x, device):
    return ember.asarray(x, device=device)


def _X(nan=False):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4)) * [1, 10, 0, 3] + [0, 5, 2, 1]
    if nan:
        X[3, 1] = np.nan
        X[7, 0] = np.nan
    return X


@pytest.mark.parametrize("nan", [False, True])
def test_standard_and_minmax_scaler(device, nan):
    X = _X(nan)
    Xe = _e(X, device)
    a = ep.StandardScaler().fit(Xe)
    b = skp.StandardScaler().fit(X)
    out = a.transform(Xe)
    assert isinstance(out, ember.ndarray) and str(out.device) == str(Xe.device)
    np.testing.assert_allclose(_n(out), b.transform(X), atol=1e-12)
    np.testing.assert_allclose(_n(a.scale_), b.scale_, atol=1e-12)
    np.testing.assert_allclose(_n(a.inverse_transform(out)), X, atol=1e-12)
    np.testing.assert_array_equal(
        np.atleast_1d(_n(a.n_samples_seen_)), np.atleast_1d(b.n_samples_seen_)
    )
    a = ep.MinMaxScaler((-1, 2), clip=True).fit(Xe)
    b = skp.MinMaxScaler((-1, 2), clip=True).fit(X)
    np.testing.assert_allclose(_n(a.transform(Xe)), b.transform(X), atol=1e-12)
    np.testing.assert_allclose(_n(a.data_range_), b.data_range_)
    np.testing.assert_allclose(_n(a.inverse_transform(a.transform(Xe))), X, atol=1e-12)


def test_scaler_partial_fit_weights_and_options(device):
    X = _X()
    a, b = ep.StandardScaler(), skp.StandardScaler()
    for s in range(0, 50, 20):
        a.partial_fit(_e(X[s : s + 20], device))
        b.partial_fit(X[s : s + 20])
    np.testing.assert_allclose(_n(a.var_), b.var_, rtol=1e-12)
    assert a.n_samples_seen_ == 50
    w = np.random.default_rng(1).random(50)
    a = ep.StandardScaler().fit(X, sample_weight=w)
    b = skp.StandardScaler().fit(X, sample_weight=w)
    np.testing.assert_allclose(a.var_, b.var_, rtol=1e-10, atol=1e-12)
    a = ep.StandardScaler(with_mean=False).fit(X)
    np.testing.assert_allclose(a.transform(X), skp.StandardScaler(with_mean=False).fit_transform(X))
    np.testing.assert_allclose(ep.scale(X), skp.scale(X), atol=1e-12)
    np.testing.assert_allclose(ep.minmax_scale(X, axis=1), skp.minmax_scale(X, axis=1))
    with pytest.raises(NotFittedError):
        ep.StandardScaler().transform(X)
    with pytest.raises(ValueError, match="Minimum of desired feature range"):
        ep.MinMaxScaler((2, 1)).fit(X)
    Xi = X.copy()
    Xi[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        ep.StandardScaler().fit(Xi)


@pytest.mark.parametrize(
    "kw",
    [{}, {"degree": 3}, {"interaction_only": True}, {"include_bias": False}, {"degree": (2, 3)}],
)
def test_polynomial_features(device, kw):
    X = _X()[:, :3]
    a = ep.PolynomialFeatures(**kw).fit(_e(X, device))
    b = skp.PolynomialFeatures(**kw).fit(X)
    np.testing.assert_allclose(_n(a.transform(_e(X, device))), b.transform(X), rtol=1e-12)
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())
    np.testing.assert_array_equal(a.powers_, b.powers_)


@pytest.mark.parametrize(
    "kw",
    [
        {"sparse_output": False},
        {"sparse_output": False, "drop": "first"},
        {"sparse_output": False, "handle_unknown": "ignore"},
    ],
)
def test_one_hot_and_label_encoder(device, kw):
    C = np.random.default_rng(2).integers(0, 4, (30, 2))
    a = ep.OneHotEncoder(**kw).fit(_e(C, device))
    b = skp.OneHotEncoder(**kw).fit(C)
    out = a.transform(_e(C, device))
    np.testing.assert_array_equal(_n(out), b.transform(C))
    np.testing.assert_array_equal(_n(a.inverse_transform(out)), C)
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())
    y = np.random.default_rng(3).integers(5, 9, 20)
    le = ep.LabelEncoder().fit(_e(y, device))
    codes = le.transform(_e(y, device))
    np.testing.assert_array_equal(_n(codes), skp.LabelEncoder().fit_transform(y))
    np.testing.assert_array_equal(_n(le.inverse_transform(codes)), y)


def test_encoders_strings_sparse_unknown():
    C = np.array([["a", "x"], ["b", "y"], ["a", "z"]], dtype=object)
    a = ep.OneHotEncoder().fit(C)
    b = skp.OneHotEncoder().fit(C)
    assert (a.transform(C) != b.transform(C)).nnz == 0
    np.testing.assert_array_equal(a.inverse_transform(a.transform(C)), C)
    with pytest.raises(ValueError, match="unknown categories"):
        a.transform(np.array([["c", "x"]], dtype=object))
    ign = ep.OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(C)
    np.testing.assert_array_equal(
        ign.transform(np.array([["c", "x"]], dtype=object)), [[0, 0, 1, 0, 0]]
    )
    le = ep.LabelEncoder()
    np.testing.assert_array_equal(le.fit_transform(["b", "a", "b"]), [1, 0, 1])
    with pytest.raises(ValueError, match="previously unseen labels"):
        le.transform(["z"])


@pytest.mark.parametrize("kind", ["numpy", "ember"])
def test_classification_metrics(device, kind):
    rng = np.random.default_rng(0)
    yt, yp, w = rng.integers(0, 3, 100), rng.integers(0, 3, 100), rng.random(100)

    def c(a):
        return a if kind == "numpy" else _e(a, device)

    assert em.accuracy_score(c(yt), c(yp)) == skm.accuracy_score(yt, yp)
    assert em.accuracy_score(c(yt), c(yp), normalize=False) == skm.accuracy_score(
        yt, yp, normalize=False
    )
    assert em.accuracy_score(c(yt), c(yp), sample_weight=c(w)) == pytest.approx(
        skm.accuracy_score(yt, yp, sample_weight=w), abs=1e-15
    )
    np.testing.assert_array_equal(
        _n(em.confusion_matrix(c(yt), c(yp))), skm.confusion_matrix(yt, yp)
    )
    for norm in ("true", "pred", "all"):
        np.testing.assert_allclose(
            _n(em.confusion_matrix(c(yt), c(yp), sample_weight=c(w), normalize=norm)),
            skm.confusion_matrix(yt, yp, sample_weight=w, normalize=norm),
            atol=1e-15,
        )
    np.testing.assert_array_equal(
        _n(em.confusion_matrix(c(yt), c(yp), labels=[2, 0])),
        skm.confusion_matrix(yt, yp, labels=[2, 0]),
    )
    yb = (yt > 0).astype(int)
    sc = np.round(rng.random(100), 1)  # ties
    assert em.roc_auc_score(c(yb), c(sc)) == pytest.approx(skm.roc_auc_score(yb, sc), abs=1e-15)
    assert em.roc_auc_score(c(yb), c(sc), sample_weight=c(w)) == pytest.approx(
        skm.roc_auc_score(yb, sc, sample_weight=w), abs=1e-14
    )
    P = rng.random((100, 3))
    P /= P.sum(1, keepdims=True)
    for avg in ("macro", "weighted"):
        assert em.roc_auc_score(c(yt), c(P), multi_class="ovr", average=avg) == pytest.approx(
            skm.roc_auc_score(yt, P, multi_class="ovr", average=avg), abs=1e-14
        )
        assert em.roc_auc_score(c(yt), c(P), multi_class="ovo", average=avg) == pytest.approx(
            skm.roc_auc_score(yt, P, multi_class="ovo", average=avg), abs=1e-14
        )
    for m in (0.1, 0.5, 0.77):
        assert em.roc_auc_score(c(yb), c(sc), max_fpr=m, sample_weight=c(w)) == pytest.approx(
            skm.roc_auc_score(yb, sc, max_fpr=m, sample_weight=w), abs=1e-14
        )
    for drop in (True, False):
        ours = em.roc_curve(c(yb), c(sc), sample_weight=c(w), drop_intermediate=drop)
        ref = skm.roc_curve(yb, sc, sample_weight=w, drop_intermediate=drop)
        for x, y in zip(ours, ref, strict=True):
            np.testing.assert_allclose(_n(x), y, atol=1e-14)
    fpr, tpr, _ = em.roc_curve(c(yb), c(sc))
    assert em.auc(fpr, tpr) == pytest.approx(em.roc_auc_score(c(yb), c(sc)), abs=1e-14)
    for avg in ("macro", "micro", "weighted"):
        for name in ("f1_score", "precision_score", "recall_score"):
            assert getattr(em, name)(c(yt), c(yp), average=avg) == pytest.approx(
                getattr(skm, name)(yt, yp, average=avg), abs=1e-14
            )
    assert em.f1_score(c(yb), c((yp > 0).astype(int))) == pytest.approx(
        skm.f1_score(yb, (yp > 0).astype(int)), abs=1e-14
    )


@pytest.mark.parametrize("kind", ["numpy", "ember"])
def test_regression_and_cluster_metrics(device, kind):
    rng = np.random.default_rng(1)
    a = rng.normal(size=(60, 2))
    b = a + rng.normal(size=(60, 2))
    w = rng.random(60)

    def c(x):
        return x if kind == "numpy" else _e(x, device)

    for f in (
        "r2_score",
        "mean_squared_error",
        "mean_absolute_error",
        "root_mean_squared_error",
        "explained_variance_score",
    ):
        ef, sf = getattr(em, f), getattr(skm, f)
        assert ef(c(a[:, 0]), c(b[:, 0])) == pytest.approx(sf(a[:, 0], b[:, 0]), abs=1e-13)
        assert ef(c(a), c(b), sample_weight=c(w)) == pytest.approx(
            sf(a, b, sample_weight=w), abs=1e-13
        )
        np.testing.assert_allclose(
            _n(ef(c(a), c(b), multioutput="raw_values")),
            sf(a, b, multioutput="raw_values"),
            atol=1e-13,
        )
    X = rng.normal(size=(80, 3))
    lab = rng.integers(0, 4, 80)
    for metric in ("euclidean", "manhattan", "cosine"):
        assert em.silhouette_score(c(X), c(lab), metric=metric) == pytest.approx(
            skm.silhouette_score(X, lab, metric=metric), abs=1e-9
        )
    np.testing.assert_allclose(
        _n(em.silhouette_samples(c(X), c(lab))), skm.silhouette_samples(X, lab), atol=1e-9
    )
    sub = em.silhouette_score(c(X), c(lab), sample_size=40, random_state=0)
    assert -1.0 <= sub <= 1.0 and sub != em.silhouette_score(c(X), c(lab))
    Y = rng.normal(size=(7, 3))
    for metric in ("euclidean", "cosine", "manhattan", "sqeuclidean"):
        np.testing.assert_allclose(
            _n(em.pairwise_distances(c(X), c(Y), metric=metric)),
            skm.pairwise_distances(X, Y, metric=metric),
            atol=1e-9,
        )
    np.testing.assert_allclose(
        _n(em.pairwise_distances(c(X))), skm.pairwise_distances(X), atol=1e-9
    )
    np.testing.assert_allclose(
        _n(em.cosine_similarity(c(X), c(Y))), skm.pairwise.cosine_similarity(X, Y), atol=1e-12
    )


def test_metric_errors():
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        em.accuracy_score([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="Only one class"):
        em.roc_auc_score([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="Number of labels is 1"):
        em.silhouette_score(np.ones((5, 2)), [0] * 5)
    with pytest.raises(ValueError, match="unknown metric"):
        em.pairwise_distances(np.ones((2, 2)), metric="nope")
    assert em.accuracy_score(np.array(["a", "b"]), np.array(["a", "c"])) == 0.5
