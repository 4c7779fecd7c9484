"""ember.ml probe gaps (4): AffinityPropagation, TheilSenRegressor, RANSACRegressor against
scikit-learn on the same data."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from ember.ml.base import clone
from ember.ml.cluster import AffinityPropagation, affinity_propagation
from ember.ml.exceptions import ConvergenceWarning, NotFittedError
from sklearn import cluster as skc
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
from sklearn.metrics import pairwise_distances


def _np(x):
    return ember.asnumpy(x) if isinstance(x, ember.ndarray) else np.asarray(x)


def _fit_both(sk, em, X, y=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = sk.fit(X) if y is None else sk.fit(X, y)
        b = em.fit(X) if y is None else em.fit(X, y)
    return a, b


# ----------------------------------------------------------------- AffinityPropagation


@pytest.mark.parametrize(
    "kw",
    [
        {"random_state": 0},
        {"random_state": 3, "damping": 0.75},
        {"preference": -50.0, "random_state": 1},
        {"max_iter": 12, "convergence_iter": 5, "random_state": 0},
    ],
    ids=repr,
)
@pytest.mark.parametrize("seed", [0, 2])
def test_affinity_propagation_matches_sklearn(kw, seed):
    X = make_blobs(120, 3, centers=4, cluster_std=1.5, random_state=seed)[0]
    a, b = _fit_both(skc.AffinityPropagation(**kw), AffinityPropagation(**kw), X)
    np.testing.assert_array_equal(_np(b.labels_), a.labels_)
    np.testing.assert_array_equal(_np(b.cluster_centers_indices_), a.cluster_centers_indices_)
    assert b.n_iter_ == a.n_iter_
    np.testing.assert_allclose(_np(b.affinity_matrix_), a.affinity_matrix_, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(_np(b.cluster_centers_), a.cluster_centers_)
    Xt = X[::3] + 0.3
    np.testing.assert_array_equal(_np(b.predict(Xt)), a.predict(Xt))
    np.testing.assert_array_equal(_np(b.fit_predict(X)), a.labels_)


def test_affinity_propagation_ember_input_stays_on_device():
    X = make_blobs(80, 2, centers=3, random_state=1)[0]
    pref = np.linspace(-80.0, -10.0, 80)
    a = skc.AffinityPropagation(preference=pref, random_state=0).fit(X)
    b = AffinityPropagation(preference=pref, random_state=0).fit(ember.asarray(X))
    assert isinstance(b.labels_, ember.ndarray) and isinstance(b.affinity_matrix_, ember.ndarray)
    np.testing.assert_array_equal(_np(b.labels_), a.labels_)
    np.testing.assert_array_equal(_np(b.cluster_centers_indices_), a.cluster_centers_indices_)


def test_affinity_propagation_precomputed_and_function():
    X = make_blobs(70, 2, centers=3, random_state=4)[0]
    S = -(pairwise_distances(X) ** 2)
    a = skc.affinity_propagation(S, random_state=0, return_n_iter=True)
    b = affinity_propagation(S, random_state=0, return_n_iter=True)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(_np(v), u)
    c = affinity_propagation(S, random_state=0)
    assert len(c) == 2
    est = AffinityPropagation(affinity="precomputed", random_state=0).fit(S)
    np.testing.assert_array_equal(_np(est.labels_), a[1])
    assert not hasattr(est, "cluster_centers_")
    with pytest.raises(ValueError, match="precomputed"):
        est.predict(S)
    with pytest.raises(ValueError, match="square"):
        AffinityPropagation(affinity="precomputed").fit(S[:, :10])


def test_affinity_propagation_degenerate_cases():
    Z = np.zeros((5, 2))
    for pref, want in ((None, [0] * 5), (1.0, list(range(5)))):
        for est in (skc.AffinityPropagation(preference=pref), AffinityPropagation(preference=pref)):
            with pytest.warns(UserWarning, match="mutually equal similarities"):
                est.fit(Z)
            np.testing.assert_array_equal(_np(est.labels_), want)
            assert est.n_iter_ == 0
    Y = np.array([[0.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    kw = {"preference": -1e6, "max_iter": 1, "convergence_iter": 1, "random_state": 0}
    a = skc.AffinityPropagation(**kw)
    b = AffinityPropagation(**kw)
    for est in (a, b):
        cat = ConvergenceWarning if est is b else SkConvergenceWarning
        with pytest.warns(cat, match="will not have any cluster centers"):
            est.fit(Y)
        with pytest.warns(cat, match="Labeling every sample as '-1'"):
            pred = est.predict(Y)
        np.testing.assert_array_equal(_np(pred), [-1, -1, -1])
    np.testing.assert_array_equal(_np(b.labels_), a.labels_)
    assert _np(b.cluster_centers_).shape == (0, 2)


def test_affinity_propagation_errors_and_params():
    X = make_blobs(30, 2, centers=2, random_state=0)[0]
    for bad, name in (
        ({"damping": 1.0}, "damping"),
        ({"damping": 0.4}, "damping"),
        ({"max_iter": 0}, "max_iter"),
        ({"convergence_iter": 0}, "convergence_iter"),
        ({"affinity": "cosine"}, "affinity"),
        ({"preference": "x"}, "preference"),
    ):
        with pytest.raises(ValueError, match=name):
            AffinityPropagation(**bad).fit(X)
    with pytest.raises(NotFittedError):
        AffinityPropagation().predict(X)
    est = AffinityPropagation(random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :1])
    assert clone(AffinityPropagation()).get_params() == skc.AffinityPropagation().get_params()


def test_affinity_propagation_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(AffinityPropagation(random_state=0), on_fail=None)
    failed = {
        r["check_name"]: str(r["exception"])[:200] for r in results if r["status"] == "failed"
    }
    assert not failed, failed
    assert len(results) > 25
