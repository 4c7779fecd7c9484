"""ember.ml.decomposition.FactorAnalysis and FastICA against scikit-learn."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from ember.ml.base import clone
from ember.ml.decomposition import FactorAnalysis, FastICA
from ember.ml.exceptions import NotFittedError
from sklearn import decomposition as skd


def _np(x):
    return ember.asnumpy(x) if isinstance(x, ember.ndarray) else np.asarray(x)


def _fa_data(n=200, d=6, seed=0):
    rng = np.random.RandomState(seed)
    return rng.randn(n, d) @ rng.randn(d, d) + 0.3 * rng.randn(n, d)


def _ica_data(n=300, seed=0):
    rng = np.random.RandomState(seed)
    S = np.c_[rng.laplace(size=n), np.sign(np.sin(np.arange(n) / 7.0)), rng.uniform(-1, 1, n)]
    A = rng.randn(3, 3)
    return S @ A.T, rng.randn(3, 3)


def _rows_up_to_sign(a, b, atol):
    a, b = _np(a), _np(b)
    s = np.sign((a * b).sum(axis=1))
    np.testing.assert_allclose(a * s[:, None], b, atol=atol)


@pytest.mark.parametrize("rotation", [None, "varimax", "quartimax"])
@pytest.mark.parametrize("svd_method", ["lapack", "randomized"])
def test_factor_analysis_matches_sklearn(device, rotation, svd_method):
    X = _fa_data()
    kw = dict(n_components=3, svd_method=svd_method, rotation=rotation)
    a = FactorAnalysis(**kw).fit(ember.asarray(X, device=device))
    b = skd.FactorAnalysis(**kw).fit(X)
    assert isinstance(a.components_, ember.ndarray)
    assert str(a.components_.device) == str(ember.asarray(X, device=device).device)
    _rows_up_to_sign(a.components_, b.components_, 1e-8)
    np.testing.assert_allclose(_np(a.noise_variance_), b.noise_variance_, rtol=1e-8)
    np.testing.assert_allclose(_np(a.mean_), b.mean_, atol=1e-12)
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_allclose(a.loglike_, b.loglike_, rtol=1e-10)
    np.testing.assert_allclose(_np(a.get_covariance()), b.get_covariance(), atol=1e-8)
    np.testing.assert_allclose(_np(a.get_precision()), b.get_precision(), atol=1e-8)
    np.testing.assert_allclose(_np(a.score_samples(X)), b.score_samples(X), rtol=1e-9)
    assert a.score(X) == pytest.approx(b.score(X), rel=1e-10)
    Ta, Tb = _np(a.transform(X)), b.transform(X)
    s = np.sign((Ta * Tb).sum(axis=0))
    np.testing.assert_allclose(Ta * s, Tb, atol=1e-8)


def test_factor_analysis_full_rank_noise_init_and_errors():
    X = _fa_data(d=4)
    init = np.full(4, 0.5)
    a = FactorAnalysis(svd_method="lapack", noise_variance_init=init, max_iter=50)
    b = skd.FactorAnalysis(svd_method="lapack", noise_variance_init=init, max_iter=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a.fit(X), b.fit(X)
    assert a.components_.shape == (4, 4)
    np.testing.assert_allclose(a.noise_variance_, b.noise_variance_, rtol=1e-8)
    np.testing.assert_allclose(a.get_precision(), b.get_precision(), rtol=1e-7, atol=1e-9)
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())
    with pytest.raises(ValueError, match="noise_variance_init"):
        FactorAnalysis(noise_variance_init=np.ones(3)).fit(X)
    with pytest.raises(ValueError, match="svd_method"):
        FactorAnalysis(svd_method="arpack").fit(X)
    with pytest.raises(ValueError, match="rotation"):
        FactorAnalysis(rotation="promax").fit(X)
    with pytest.raises(NotFittedError):
        FactorAnalysis().transform(X)
    c = clone(FactorAnalysis(2, rotation="varimax"))
    assert c.get_params() == skd.FactorAnalysis(2, rotation="varimax").get_params()


@pytest.mark.parametrize("algorithm", ["parallel", "deflation"])
@pytest.mark.parametrize("whiten", ["unit-variance", "arbitrary-variance", False])
@pytest.mark.parametrize("fun", ["logcosh", "exp", "cube"])
def test_fastica_matches_sklearn(algorithm, whiten, fun):
    X, w = _ica_data()
    kw = dict(algorithm=algorithm, whiten=whiten, fun=fun, w_init=w, max_iter=400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = FastICA(3, **kw), skd.FastICA(3, **kw)
        Sa, Sb = a.fit_transform(X), b.fit_transform(X)
    # The same w_init gives the same components, not only up to sign and permutation.
    np.testing.assert_allclose(a.components_, b.components_, atol=1e-9)
    np.testing.assert_allclose(Sa, Sb, atol=1e-9)
    np.testing.assert_allclose(a.mixing_, b.mixing_, atol=1e-8)
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_allclose(a.transform(X), b.transform(X), atol=1e-9)
    np.testing.assert_allclose(a.inverse_transform(Sa), b.inverse_transform(Sb), atol=1e-8)
    if whiten:
        np.testing.assert_allclose(a.mean_, b.mean_, atol=1e-12)
        np.testing.assert_allclose(a.whitening_, b.whitening_, atol=1e-10)


def test_fastica_device_eigh_and_random_state(device):
    X, _ = _ica_data()
    Xd = ember.asarray(X, device=device)
    a = FastICA(2, whiten_solver="eigh", random_state=3).fit(Xd)
    b = skd.FastICA(2, whiten_solver="eigh", random_state=3).fit(X)
    assert isinstance(a.components_, ember.ndarray)
    assert str(a.components_.device) == str(Xd.device)
    # Default w_init is drawn as scikit-learn draws it: identical, not only up to sign.
    np.testing.assert_allclose(_np(a.components_), b.components_, atol=1e-9)
    S = _np(a.transform(Xd))
    # Up to sign and permutation against the reference's sources.
    Sb = b.transform(X)
    C = np.abs(np.corrcoef(S.T, Sb.T)[:2, 2:])
    np.testing.assert_allclose(np.sort(C.max(axis=1)), [1.0, 1.0], atol=1e-9)
    np.testing.assert_allclose(S.std(axis=0), 1.0, atol=1e-9)


def test_fastica_errors_and_params():
    X, _ = _ica_data()
    with pytest.raises(ValueError, match="w_init"):
        FastICA(2, w_init=np.eye(3)).fit(X)
    with pytest.raises(ValueError, match="alpha"):
        FastICA(fun_args={"alpha": 3}).fit(X)
    with pytest.raises(ValueError, match="whiten"):
        FastICA(whiten="yes").fit(X)
    with pytest.raises(ValueError, match="algorithm"):
        FastICA(algorithm="symmetric").fit(X)
    with pytest.raises(NotFittedError):
        FastICA().transform(X)
    with pytest.warns(UserWarning, match="Ignoring n_components"):
        FastICA(2, whiten=False, w_init=np.eye(3)).fit(X)

    def my_g(x):
        return x**3, (3 * x**2).mean(axis=-1)

    kw = dict(w_init=np.eye(3), fun=my_g)
    a, b = FastICA(3, **kw).fit(X), skd.FastICA(3, **kw).fit(X)
    np.testing.assert_allclose(a.components_, b.components_, atol=1e-9)
    assert clone(FastICA(2, fun="exp")).get_params() == skd.FastICA(2, fun="exp").get_params()


@pytest.mark.parametrize(
    "est", [FactorAnalysis(2, svd_method="lapack"), FastICA(2, random_state=0)], ids=repr
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
    assert len(results) > 30
