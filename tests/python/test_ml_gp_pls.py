"""ember.ml.gaussian_process (GaussianProcessRegressor, kernels) and
ember.ml.cross_decomposition.PLSRegression against scikit-learn on the same data: kernel
values and gradients, predictions with a fixed kernel, the log-marginal likelihood and its
gradient to 1e-8; optimised hyperparameters (same L-BFGS-B, same restart draws); PLS weights,
loadings, scores, rotations, coef_ to 1e-8; parameters, clone, errors and estimator checks."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from ember.ml import clone
from ember.ml.cross_decomposition import PLSRegression
from ember.ml.exceptions import NotFittedError
from ember.ml.gaussian_process import GaussianProcessRegressor
from ember.ml.gaussian_process import kernels as ek
from sklearn import cross_decomposition as skcd
from sklearn import gaussian_process as skgp
from sklearn.gaussian_process import kernels as sk


def _n(a):
    return ember.asnumpy(a) if isinstance(a, ember.ndarray) else np.asarray(a)


def _e(x, device):
    return ember.asarray(x, device=device)


def _close(a, b, atol=1e-8):
    a, b = _n(a), _n(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = max(1.0, float(np.abs(b).max())) if b.size else 1.0
    np.testing.assert_allclose(a, b, rtol=0, atol=atol * scale)


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 5, (30, 2))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.randn(30)
    Xt = rng.uniform(0, 5, (12, 2))
    return X, y, Xt


def _kernels(M):
    return [
        M.RBF(1.3),
        M.RBF([0.8, 1.9]),
        M.Matern(0.8, nu=0.5),
        M.Matern([0.8, 1.3], nu=0.5),
        M.Matern(1.1, nu=1.5),
        M.Matern([1.1, 0.7], nu=2.5),
        M.Matern(1.0, nu=np.inf),
        M.RationalQuadratic(0.9, 1.7),
        M.ConstantKernel(2.0) * M.RBF([1.0, 2.0]) + M.WhiteKernel(0.1),
        M.DotProduct(0.5) + M.WhiteKernel(0.3),
        M.ConstantKernel(0.5) + M.RBF(0.4) ** 2,
        M.ConstantKernel(1.5, "fixed") * M.Matern(1.0, "fixed", nu=2.5),
        2.0 * M.RBF(1.0) + 0.5,
    ]


_IDS = [repr(k) for k in _kernels(sk)]


# ------------------------------------------------------------------------------------- kernels


@pytest.mark.parametrize("i", range(len(_IDS)), ids=_IDS)
def test_kernel_values_gradients_and_hyperparameters(device, data, i):
    X, _, Xt = data
    ke, ks = _kernels(ek)[i], _kernels(sk)[i]
    K, G = ke(_e(X, device), eval_gradient=True)
    assert isinstance(K, ember.ndarray) and str(K.device).startswith(device)
    Ks, Gs = ks(X, eval_gradient=True)
    _close(K, Ks, 1e-12)
    _close(G, Gs, 1e-12)
    _close(ke(X, Xt), ks(X, Xt), 1e-12)  # NumPy in, NumPy out
    assert isinstance(ke(X, Xt), np.ndarray)
    _close(ke.diag(_e(Xt, device)), ks.diag(Xt), 1e-12)
    np.testing.assert_allclose(ke.theta, ks.theta)
    np.testing.assert_allclose(ke.bounds.reshape(-1), ks.bounds.reshape(-1))
    assert ke.n_dims == ks.n_dims
    assert [(h.name, h.n_elements, h.fixed) for h in ke.hyperparameters] == [
        (h.name, h.n_elements, h.fixed) for h in ks.hyperparameters
    ]
    assert repr(ke) == repr(ks)
    assert set(ke.get_params()) == set(ks.get_params())
    assert ke.is_stationary() == ks.is_stationary()
    # theta round trip and clone_with_theta (log space)
    th = ks.theta + 0.1
    c = ke.clone_with_theta(th)
    np.testing.assert_allclose(c.theta, th)
    np.testing.assert_allclose(ke.theta, ks.theta)  # the original is untouched
    _close(c(X), ks.clone_with_theta(th)(X), 1e-12)
    assert clone(ke) == ke and clone(ke) is not ke
    with pytest.raises(ValueError, match="Gradient can only be evaluated"):
        ke(X, Xt, eval_gradient=True)


def test_kernel_params_and_errors(data):
    X, _, _ = data
    k = ek.ConstantKernel(2.0) * ek.RBF(1.0)
    assert k.get_params()["k2__length_scale"] == 1.0
    k.set_params(k2__length_scale=3.0)
    assert k.k2.length_scale == 3.0
    with pytest.raises(ValueError, match="Invalid parameter"):
        k.set_params(bogus=1)
    with pytest.raises(ValueError, match="Anisotropic kernel"):
        ek.RBF([1.0, 2.0, 3.0])(X)
    with pytest.raises(ValueError, match="nu"):
        ek.Matern(nu=0.7)(X)
    with pytest.raises(ValueError, match="theta has not the correct number"):
        ek.RBF(1.0).theta = [0.0, 1.0]
    assert ek.RBF(1.0) != ek.RBF(2.0) and ek.RBF(1.0) == ek.RBF(1.0)
    assert ek.RBF(1.0) != ek.Matern(1.0)
    assert ek.WhiteKernel(0.5)(X, X[:3]).shape == (30, 3)
    assert float(np.abs(ek.WhiteKernel(0.5)(X, X[:3])).max()) == 0.0


# ------------------------------------------------------------------------------------------ GPR


@pytest.mark.parametrize("i", range(len(_IDS)), ids=_IDS)
@pytest.mark.parametrize("normalize_y", [False, True])
def test_gpr_fixed_kernel_matches_sklearn(device, data, i, normalize_y):
    X, y, Xt = data
    kw = dict(optimizer=None, alpha=1e-3, normalize_y=normalize_y)
    a = GaussianProcessRegressor(_kernels(ek)[i], **kw).fit(_e(X, device), _e(y, device))
    b = skgp.GaussianProcessRegressor(_kernels(sk)[i], **kw).fit(X, y)
    Xe = _e(Xt, device)
    m, s = a.predict(Xe, return_std=True)
    assert isinstance(m, ember.ndarray) and str(m.device).startswith(device)
    mb, sb = b.predict(Xt, return_std=True)
    _close(m, mb)
    _close(s, sb)
    _close(a.predict(Xe, return_cov=True)[1], b.predict(Xt, return_cov=True)[1])
    _close(a.alpha_, b.alpha_)
    _close(a.L_, b.L_)
    th = b.kernel_.theta
    lml, g = a.log_marginal_likelihood(th, eval_gradient=True)
    lb, gb = b.log_marginal_likelihood(th, eval_gradient=True)
    assert lml == pytest.approx(lb, abs=1e-8 * max(1.0, abs(lb)))
    _close(g, gb)
    if th.size:
        th2 = th + 0.2
        assert a.log_marginal_likelihood(th2) == pytest.approx(
            b.log_marginal_likelihood(th2), abs=1e-8 * max(1.0, abs(lb))
        )
    assert a.log_marginal_likelihood() == pytest.approx(b.log_marginal_likelihood_value_)


@pytest.mark.parametrize("i", [0, 1, 4, 7, 8, 9], ids=[_IDS[j] for j in (0, 1, 4, 7, 8, 9)])
def test_gpr_optimizer_matches_sklearn(data, i):
    X, y, Xt = data
    kw = dict(normalize_y=True, random_state=0, n_restarts_optimizer=2, alpha=1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = GaussianProcessRegressor(_kernels(ek)[i], **kw).fit(X, y)
        b = skgp.GaussianProcessRegressor(_kernels(sk)[i], **kw).fit(X, y)
    # same L-BFGS-B on the same objective from the same starts: same optimum
    np.testing.assert_allclose(a.kernel_.theta, b.kernel_.theta, atol=1e-4)
    assert a.log_marginal_likelihood_value_ == pytest.approx(
        b.log_marginal_likelihood_value_, abs=1e-6
    )
    _close(a.predict(Xt), b.predict(Xt), 1e-5)
    assert a.kernel is not a.kernel_ and a.kernel == _kernels(ek)[i]  # kernel not modified


def test_gpr_multi_target_default_kernel_and_prior(device, data):
    X, y, Xt = data
    Y = np.c_[y, 2 * y + 1]
    a = GaussianProcessRegressor(normalize_y=True).fit(_e(X, device), _e(Y, device))
    b = skgp.GaussianProcessRegressor(normalize_y=True).fit(X, Y)
    # the default kernel C() * RBF() is optimised: agreement to the optimiser's tolerance
    assert repr(a.kernel_) == repr(b.kernel_)
    m, s = a.predict(_e(Xt, device), return_std=True)
    mb, sb = b.predict(Xt, return_std=True)
    _close(m, mb, 1e-5)
    _close(s, sb, 1e-5)
    _close(a.predict(Xt, return_cov=True)[1], b.predict(Xt, return_cov=True)[1], 1e-5)
    assert a.log_marginal_likelihood_value_ == pytest.approx(b.log_marginal_likelihood_value_)
    # with the kernel fixed: exact
    kw = dict(optimizer=None, normalize_y=True)
    a = GaussianProcessRegressor(ek.RBF(0.9), **kw).fit(_e(X, device), _e(Y, device))
    b = skgp.GaussianProcessRegressor(sk.RBF(0.9), **kw).fit(X, Y)
    for opt in ({"return_std": True}, {"return_cov": True}):
        ra, rb = a.predict(_e(Xt, device), **opt), b.predict(Xt, **opt)
        _close(ra[0], rb[0])
        _close(ra[1], rb[1])
    _close(a.alpha_, b.alpha_)
    th = b.kernel_.theta
    la, ga = a.log_marginal_likelihood(th, eval_gradient=True)
    lb, gb = b.log_marginal_likelihood(th, eval_gradient=True)
    assert la == pytest.approx(lb, abs=1e-8 * abs(lb))
    _close(ga, gb)
    # the prior before fit
    for nt in (None, 2):
        pa = GaussianProcessRegressor(ek.RBF(0.7), n_targets=nt)
        pb = skgp.GaussianProcessRegressor(sk.RBF(0.7), n_targets=nt)
        for opt in ({"return_std": True}, {"return_cov": True}):
            ra, rb = pa.predict(Xt, **opt), pb.predict(Xt, **opt)
            _close(ra[0], rb[0])
            _close(ra[1], rb[1])
        _close(pa.predict(Xt), pb.predict(Xt))


def test_gpr_sample_y(data):
    X, y, Xt = data
    a = GaussianProcessRegressor(ek.RBF(1.0), optimizer=None, alpha=1e-2).fit(X, y)
    b = skgp.GaussianProcessRegressor(sk.RBF(1.0), optimizer=None, alpha=1e-2).fit(X, y)
    sa, sb = a.sample_y(Xt, 5, random_state=3), b.sample_y(Xt, 5, random_state=3)
    assert sa.shape == sb.shape == (12, 5)
    # NumPy's normals, the same SVD up to the signs of (u, v) pairs: equal draws
    _close(sa, sb, 1e-6)
    big = a.sample_y(Xt, 4000, random_state=1)
    m, c = a.predict(Xt, return_cov=True)
    np.testing.assert_allclose(big.mean(axis=1), m, atol=0.1)
    np.testing.assert_allclose(np.cov(big), c, atol=0.05)
    Y = np.c_[y, -y]
    a2 = GaussianProcessRegressor(ek.RBF(1.0), optimizer=None, alpha=1e-2).fit(X, Y)
    assert a2.sample_y(Xt, 3).shape == (12, 2, 3)


def test_gpr_errors_and_params(data):
    X, y, Xt = data
    g = GaussianProcessRegressor()
    b = skgp.GaussianProcessRegressor()
    assert g.get_params().keys() == b.get_params().keys()
    for k, v in g.get_params().items():
        assert v == b.get_params()[k], k
    c = clone(GaussianProcessRegressor(ek.RBF(2.0), alpha=0.1))
    assert c.kernel == ek.RBF(2.0) and c.alpha == 0.1
    with pytest.raises(NotFittedError):
        g.log_marginal_likelihood()
    with pytest.raises(ValueError, match="Gradient can only be evaluated"):
        g.log_marginal_likelihood(eval_gradient=True)
    with pytest.raises(RuntimeError, match="At most one"):
        g.predict(Xt, return_std=True, return_cov=True)
    with pytest.raises(ValueError, match="alpha"):
        GaussianProcessRegressor(alpha=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="alpha must be a scalar or an array"):
        GaussianProcessRegressor(alpha=np.ones(3)).fit(X, y)
    with pytest.raises(ValueError, match="optimizer"):
        GaussianProcessRegressor(optimizer="bfgs").fit(X, y)
    with pytest.raises(ValueError, match="n_targets"):
        GaussianProcessRegressor(n_targets=2).fit(X, y)
    with pytest.raises(ValueError, match="requires that all bounds are finite"):
        GaussianProcessRegressor(ek.RBF(1.0, (1e-2, np.inf)), n_restarts_optimizer=1).fit(X, y)
    with pytest.raises(np.linalg.LinAlgError, match="not returning a positive definite"):
        GaussianProcessRegressor(ek.DotProduct(0.0, "fixed"), alpha=0.0).fit(
            np.c_[X[:, :1], X[:, :1]], y
        )
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError):
        GaussianProcessRegressor().fit(bad, y)
    gf = GaussianProcessRegressor().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        gf.predict(Xt[:, :1])
    # per-sample alpha and a callable optimizer
    al = np.linspace(1e-3, 1e-1, 30)
    a = GaussianProcessRegressor(ek.RBF(1.0), alpha=al, optimizer=None).fit(X, y)
    b = skgp.GaussianProcessRegressor(sk.RBF(1.0), alpha=al, optimizer=None).fit(X, y)
    _close(a.predict(Xt), b.predict(Xt))

    def opt(obj, theta0, bounds):
        from scipy.optimize import minimize

        r = minimize(obj, theta0, jac=True, method="TNC", bounds=bounds)
        return r.x, r.fun

    a = GaussianProcessRegressor(ek.RBF(1.0), optimizer=opt).fit(X, y)
    b = skgp.GaussianProcessRegressor(sk.RBF(1.0), optimizer=opt).fit(X, y)
    np.testing.assert_allclose(a.kernel_.theta, b.kernel_.theta, atol=1e-4)


# ------------------------------------------------------------------------------------------ PLS


@pytest.fixture(scope="module")
def pls_data():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 6)
    Y = X[:, :3] @ rng.randn(3, 3) + 0.1 * rng.randn(40, 3)
    return X, Y


_ATTRS = (
    "x_weights_", "y_weights_", "x_loadings_", "y_loadings_", "x_scores_", "y_scores_",
    "x_rotations_", "y_rotations_", "coef_", "intercept_",
)  # fmt: skip


@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.parametrize("one_target", [False, True])
@pytest.mark.parametrize("n_components", [1, 3, 6])
def test_pls_matches_sklearn(device, pls_data, scale, one_target, n_components):
    X, Y = pls_data
    y = Y[:, 0] if one_target else Y
    a = PLSRegression(n_components, scale=scale).fit(_e(X, device), _e(y, device))
    b = skcd.PLSRegression(n_components, scale=scale).fit(X, y)
    for att in _ATTRS:
        v = getattr(a, att)
        assert isinstance(v, ember.ndarray) and str(v.device).startswith(device), att
        _close(v, getattr(b, att))
    assert a.n_iter_ == b.n_iter_
    Xe = _e(X, device)
    _close(a.predict(Xe), b.predict(X))
    _close(a.transform(Xe), b.transform(X))
    ta, tya = a.transform(Xe, _e(y, device))
    tb, tyb = b.transform(X, y)
    _close(ta, tb)
    _close(tya, tyb)
    _close(a.inverse_transform(ta), b.inverse_transform(tb))
    ia = a.inverse_transform(ta, tya)
    ib = b.inverse_transform(tb, tyb)
    _close(ia[0], ib[0])
    _close(ia[1], ib[1])
    fa = PLSRegression(n_components, scale=scale).fit_transform(X, y)
    _close(fa[0], b.x_scores_)
    assert a.score(Xe, _e(y, device)) == pytest.approx(b.score(X, y), abs=1e-10)
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())


def test_pls_numpy_io_max_iter_and_errors(pls_data):
    X, Y = pls_data
    a = PLSRegression(2, max_iter=2, tol=1e-12)
    b = skcd.PLSRegression(2, max_iter=2, tol=1e-12)
    from ember.ml.exceptions import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match="Maximum number of iterations"):
        a.fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b.fit(X, Y)
    assert isinstance(a.coef_, np.ndarray)
    _close(a.coef_, b.coef_)
    assert a.n_iter_ == b.n_iter_ == [2, 2]
    p = PLSRegression()
    assert p.get_params() == skcd.PLSRegression().get_params()
    assert clone(PLSRegression(3, scale=False)).get_params()["n_components"] == 3
    with pytest.raises(NotFittedError):
        p.predict(X)
    with pytest.raises(NotFittedError):
        p.transform(X)
    with pytest.raises(ValueError, match="n_components"):
        PLSRegression(7).fit(X, Y)
    with pytest.raises(ValueError, match="n_components"):
        PLSRegression(0).fit(X, Y)
    with pytest.raises(ValueError, match="max_iter"):
        PLSRegression(max_iter=0).fit(X, Y)
    with pytest.raises(ValueError, match="tol"):
        PLSRegression(tol=-1.0).fit(X, Y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        PLSRegression().fit(X, Y[:10])
    f = PLSRegression().fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        f.predict(X[:, :3])
    # a constant residual stops early with scikit-learn's warning
    Yc = np.c_[X[:, 0], X[:, 0]]
    with pytest.warns(UserWarning, match="y residual is constant"):
        a = PLSRegression(3, scale=False).fit(X[:, :1].repeat(3, 1) + [[0, 1, 2]], Yc[:, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = skcd.PLSRegression(3, scale=False).fit(X[:, :1].repeat(3, 1) + [[0, 1, 2]], Yc[:, 0])
    _close(a.x_weights_, b.x_weights_)


# ----------------------------------------------------------------------------- estimator checks

_CHECKED = [
    GaussianProcessRegressor(),
    GaussianProcessRegressor(ek.RBF(1.0) + ek.WhiteKernel(0.1), random_state=0),
    PLSRegression(n_components=1),
]


@pytest.mark.parametrize("est", _CHECKED, ids=lambda e: repr(e))
def test_sklearn_estimator_checks(est):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, on_fail=None)
    failed = [(r["check_name"], r["exception"]) for r in results if r["status"] == "failed"]
    assert not failed, failed
    assert len(results) > 30
