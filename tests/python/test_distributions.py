"""ember.distributions against scipy.stats and closed forms computed in NumPy: log_prob, cdf,
icdf, entropy and moments over broadcast parameters (float32 and float64), sample moments and
goodness of fit with fixed seeds, reproducibility under ember.manual_seed, reparameterized
gradients against analytic ones, KL divergences against closed forms, argument validation,
expand, enumerate_support, and the MultivariateNormal parametrizations."""

from __future__ import annotations

import ember
import numpy as np
import pytest
import scipy.stats as st
from _helpers import assert_close

D = ember.distributions
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-10, 1e-12)}
RNG = np.random.default_rng(1234)


def T(x, device, dtype="float64", requires_grad=False):
    a = ember.asarray(np.asarray(x, dtype=dtype), device=device)
    return a.requires_grad_() if requires_grad else a


def N(a):
    return np.asarray(ember.asnumpy(a), dtype=np.float64)


def close(actual, expected, dtype, rtol=None, atol=None, err_msg=""):
    r, a = TOL[dtype]
    assert_close(
        N(actual),
        np.broadcast_to(np.asarray(expected, dtype=np.float64), N(actual).shape),
        "float64",
        rtol=rtol if rtol is not None else r,
        atol=atol if atol is not None else a,
        err_msg=err_msg,
    )


# ---- densities, cdfs and moments against scipy.stats over broadcast parameters ---------------

DTYPES = ["float32", "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_normal_matches_scipy(device, dtype):
    loc = RNG.normal(size=(3, 1))
    scale = RNG.uniform(0.5, 2.0, size=(4,))
    d = D.Normal(T(loc, device, dtype), T(scale, device, dtype))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    ref = st.norm(loc, scale)
    x = RNG.normal(size=(2, 3, 4)) * 2
    close(d.log_prob(T(x, device, dtype)), ref.logpdf(x), dtype)
    close(d.cdf(T(x, device, dtype)), ref.cdf(x), dtype)
    q = RNG.uniform(0.01, 0.99, size=(3, 4))
    close(d.icdf(T(q, device, dtype)), ref.ppf(q), dtype, rtol=1e-5 if dtype == "float32" else None)
    close(d.entropy(), ref.entropy(), dtype)
    close(d.mean, ref.mean(), dtype)
    close(d.mode, ref.mean(), dtype)
    close(d.variance, ref.var(), dtype)
    close(d.stddev, ref.std(), dtype)
    assert d.log_prob(T(x, device, dtype)).dtype == ember.dtype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_uniform_laplace_exponential_match_scipy(device, dtype):
    low = RNG.uniform(-2, 0, size=(3, 1))
    high = low + RNG.uniform(0.5, 3, size=(4,))
    u = D.Uniform(T(low, device, dtype), T(high, device, dtype))
    ref = st.uniform(low, high - low)
    x = RNG.uniform(-3, 3, size=(3, 4))
    with pytest.raises(ValueError, match="within the support"):
        u.log_prob(T(x, device, dtype))  # some x lie outside [low, high)
    free = D.Uniform(T(low, device, dtype), T(high, device, dtype), validate_args=False)
    lp = N(free.log_prob(T(x, device, dtype)))
    want = ref.logpdf(x)
    assert np.array_equal(np.isinf(lp), np.isinf(want))
    close(lp[np.isfinite(want)], want[np.isfinite(want)], dtype)
    close(free.cdf(T(x, device, dtype)), ref.cdf(x), dtype)
    q = RNG.uniform(size=(3, 4))
    close(u.icdf(T(q, device, dtype)), ref.ppf(q), dtype)
    close(u.entropy(), ref.entropy(), dtype)
    close(u.mean, ref.mean(), dtype)
    close(u.variance, ref.var(), dtype)
    close(u.stddev, ref.std(), dtype)
    assert np.isnan(N(u.mode)).all()

    loc, scale = RNG.normal(size=(2, 1)), RNG.uniform(0.5, 2, size=(3,))
    lap = D.Laplace(T(loc, device, dtype), T(scale, device, dtype))
    ref = st.laplace(loc, scale)
    x = RNG.normal(size=(5, 2, 3)) * 3
    close(lap.log_prob(T(x, device, dtype)), ref.logpdf(x), dtype)
    close(lap.cdf(T(x, device, dtype)), ref.cdf(x), dtype)
    q = RNG.uniform(0.01, 0.99, size=(2, 3))
    close(lap.icdf(T(q, device, dtype)), ref.ppf(q), dtype)
    close(lap.entropy(), ref.entropy(), dtype)
    close(lap.variance, ref.var(), dtype)
    close(lap.stddev, ref.std(), dtype)

    rate = RNG.uniform(0.2, 4, size=(2, 3))
    ex = D.Exponential(T(rate, device, dtype))
    ref = st.expon(scale=1 / rate)
    x = RNG.uniform(0, 5, size=(2, 3))
    close(ex.log_prob(T(x, device, dtype)), ref.logpdf(x), dtype)
    close(ex.cdf(T(x, device, dtype)), ref.cdf(x), dtype)
    close(ex.icdf(T(q, device, dtype)), ref.ppf(q), dtype)
    close(ex.entropy(), ref.entropy(), dtype)
    close(ex.mean, ref.mean(), dtype)
    close(ex.variance, ref.var(), dtype)
    close(ex.mode, 0.0, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gamma_and_beta_match_scipy(device, dtype):
    conc = np.array([[0.3], [1.0], [2.5], [40.0]])
    rate = np.array([0.5, 1.0, 3.0])
    g = D.Gamma(T(conc, device, dtype), T(rate, device, dtype))
    assert g.batch_shape == (4, 3)
    ref = st.gamma(conc, scale=1 / rate)
    x = RNG.uniform(0.05, 20, size=(4, 3))
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-12}
    close(g.log_prob(T(x, device, dtype)), ref.logpdf(x), dtype, **tol)
    close(g.cdf(T(x, device, dtype)), ref.cdf(x), dtype, **tol)
    close(g.entropy(), ref.entropy(), dtype, **tol)
    close(g.mean, ref.mean(), dtype)
    close(g.variance, ref.var(), dtype)
    close(g.mode, np.maximum((conc - 1) / rate, 0), dtype)

    a = np.array([[0.5], [1.0], [3.0]])
    b = np.array([0.7, 2.0, 9.0, 0.5])
    be = D.Beta(T(a, device, dtype), T(b, device, dtype))
    ref = st.beta(a, b)
    x = RNG.uniform(0.01, 0.99, size=(3, 4))
    close(be.log_prob(T(x, device, dtype)), ref.logpdf(x), dtype, **tol)
    close(be.entropy(), ref.entropy(), dtype, **tol)
    close(be.mean, ref.mean(), dtype)
    close(be.variance, ref.var(), dtype)
    mode = N(be.mode)
    interior = (a > 1) & (b > 1)
    expected = np.where(interior, (a - 1) / (a + b - 2), 0.0)
    close(mode[interior], expected[interior], dtype)
    assert be.concentration1.shape == (3, 4) and be.concentration0.shape == (3, 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bernoulli_probs_and_logits(device, dtype):
    p = np.array([0.1, 0.5, 0.93])
    for d in (
        D.Bernoulli(probs=T(p, device, dtype)),
        D.Bernoulli(logits=T(np.log(p / (1 - p)), device, dtype)),
    ):
        x = np.array([[0.0], [1.0]])
        close(d.log_prob(T(x, device, dtype)), st.bernoulli(p).logpmf(x), dtype, rtol=1e-5)
        close(d.entropy(), st.bernoulli(p).entropy(), dtype, rtol=1e-5)
        close(d.probs, p, dtype, rtol=1e-6)
        close(d.logits, np.log(p / (1 - p)), dtype, rtol=1e-5)
        close(d.mean, p, dtype, rtol=1e-6)
        close(d.variance, p * (1 - p), dtype, rtol=1e-5)
        mode = N(d.mode)
        assert mode[0] == 0 and np.isnan(mode[1]) and mode[2] == 1
    assert D.Bernoulli(0.3).batch_shape == ()
    sup = D.Bernoulli(T(p, device)).enumerate_support()
    assert sup.shape == (2, 3) and N(sup).tolist() == [[0, 0, 0], [1, 1, 1]]


@pytest.mark.parametrize("dtype", DTYPES)
def test_categorical_and_one_hot(device, dtype):
    w = RNG.uniform(0.1, 1, size=(2, 3, 5))
    p = w / w.sum(-1, keepdims=True)
    for c in (
        D.Categorical(probs=T(w, device, dtype)),  # normalized by the distribution
        D.Categorical(logits=T(np.log(w) + 3.0, device, dtype)),
    ):
        assert c.batch_shape == (2, 3) and c.event_shape == ()
        v = RNG.integers(0, 5, size=(4, 2, 3))
        want = np.take_along_axis(np.log(p)[None].repeat(4, 0), v[..., None], -1)[..., 0]
        close(c.log_prob(T(v, device, "int64")), want, dtype, rtol=1e-5)
        close(c.entropy(), st.entropy(p, axis=-1), dtype, rtol=1e-5)
        close(c.probs, p, dtype, rtol=1e-5)
        assert N(c.mode).tolist() == p.argmax(-1).tolist()
        assert np.isnan(N(c.mean)).all() and c.mean.shape == (2, 3)
        sup = c.enumerate_support()
        assert sup.shape == (5, 2, 3)
        assert c.enumerate_support(expand=False).shape == (5, 1, 1)
    oh = D.OneHotCategorical(probs=T(w, device, dtype))
    assert oh.batch_shape == (2, 3) and oh.event_shape == (5,)
    onehot = np.eye(5)[RNG.integers(0, 5, size=(2, 3))]
    want = np.log((p * onehot).sum(-1))
    close(oh.log_prob(T(onehot, device, dtype)), want, dtype, rtol=1e-5)
    close(oh.entropy(), st.entropy(p, axis=-1), dtype, rtol=1e-5)
    close(oh.mean, p, dtype, rtol=1e-5)
    close(oh.variance, p * (1 - p), dtype, rtol=1e-5)
    assert np.array_equal(N(oh.mode), np.eye(5)[p.argmax(-1)])
    assert oh.enumerate_support().shape == (5, 2, 3, 5)
    s = oh.sample((7,))
    assert s.shape == (7, 2, 3, 5) and np.all(N(s).sum(-1) == 1)
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Categorical(probs=T(0.5, device))


@pytest.mark.parametrize("dtype", DTYPES)
def test_poisson_and_binomial_match_scipy(device, dtype):
    rate = np.array([[0.3], [4.0], [70.0]])
    po = D.Poisson(T(rate, device, dtype))
    k = np.array([0.0, 1.0, 5.0, 60.0])
    tol = {"rtol": 2e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    close(po.log_prob(T(k, device, dtype)), st.poisson(rate).logpmf(k), dtype, **tol)
    # the entropy's asymptotic series above rate 60: relative error below 3e-9
    close(po.entropy(), st.poisson(rate).entropy(), dtype, rtol=max(tol["rtol"], 3e-9))
    close(po.mean, rate, dtype)
    close(po.variance, rate, dtype)
    close(po.mode, np.floor(rate), dtype)

    n = np.array([[5.0], [20.0]])
    p = np.array([0.1, 0.5, 0.85])
    for bi in (
        D.Binomial(T(n, device, dtype), probs=T(p, device, dtype)),
        D.Binomial(T(n, device, dtype), logits=T(np.log(p / (1 - p)), device, dtype)),
    ):
        assert bi.batch_shape == (2, 3)
        k = np.array([[[0.0]], [[3.0]], [[5.0]]])
        close(bi.log_prob(T(k, device, dtype)), st.binom(n, p).logpmf(k), dtype, **tol)
        close(bi.mean, n * p, dtype, rtol=1e-5)
        close(bi.variance, n * p * (1 - p), dtype, rtol=1e-5)
        close(bi.mode, np.minimum(np.floor((n + 1) * p), n), dtype)
    same_n = D.Binomial(T(12.0, device, dtype), probs=T(p, device, dtype))
    close(same_n.entropy(), st.binom(12, p).entropy(), dtype, rtol=1e-5)
    assert same_n.enumerate_support().shape == (13, 3)
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        D.Binomial(T(n, device, dtype), probs=T(p, device, dtype)).entropy()


# ---- MultivariateNormal and Independent -------------------------------------------------------


def _spd(n, batch=()):
    a = RNG.normal(size=(*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_multivariate_normal_parametrizations(device, dtype):
    cov = _spd(3, (2,))
    loc = RNG.normal(size=(4, 1, 3))  # broadcasts against the covariance batch (2,)
    chol = np.linalg.cholesky(cov)
    prec = np.linalg.inv(cov)
    x = RNG.normal(size=(5, 4, 2, 3))
    tol = {"rtol": 2e-4, "atol": 1e-4} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-10}
    for kw in (
        {"covariance_matrix": T(cov, device, dtype)},
        {"scale_tril": T(chol, device, dtype)},
        {"precision_matrix": T(prec, device, dtype)},
    ):
        m = D.MultivariateNormal(T(loc, device, dtype), **kw)
        assert m.batch_shape == (4, 2) and m.event_shape == (3,)
        want = np.empty((5, 4, 2))
        for i in range(4):
            for j in range(2):
                want[:, i, j] = st.multivariate_normal(loc[i, 0], cov[j]).logpdf(x[:, i, j])
        close(m.log_prob(T(x, device, dtype)), want, dtype, **tol)
        ent = [st.multivariate_normal(np.zeros(3), cov[j]).entropy() for j in range(2)]
        close(m.entropy(), np.broadcast_to(ent, (4, 2)), dtype, **tol)
        close(m.covariance_matrix, np.broadcast_to(cov, (4, 2, 3, 3)), dtype, **tol)
        close(m.precision_matrix, np.broadcast_to(prec, (4, 2, 3, 3)), dtype, **tol)
        close(m.scale_tril, np.broadcast_to(chol, (4, 2, 3, 3)), dtype, **tol)
        close(m.variance, np.broadcast_to(np.diagonal(cov, 0, -2, -1), (4, 2, 3)), dtype, **tol)
        close(m.mean, np.broadcast_to(loc, (4, 2, 3)), dtype)
        assert m.rsample((6,)).shape == (6, 4, 2, 3)


def test_multivariate_normal_errors(device):
    loc = T(np.zeros(2), device)
    with pytest.raises(ValueError, match="Exactly one of"):
        D.MultivariateNormal(loc)
    with pytest.raises(ValueError, match="Exactly one of"):
        eye = T(np.eye(2), device)
        D.MultivariateNormal(loc, covariance_matrix=eye, scale_tril=eye)
    with pytest.raises(ValueError, match="loc must be at least one-dimensional"):
        D.MultivariateNormal(T(0.0, device), covariance_matrix=T(np.eye(2), device))
    with pytest.raises(ValueError, match="at least two-dimensional"):
        D.MultivariateNormal(loc, scale_tril=T(np.ones(2), device))
    with pytest.raises(ValueError, match="covariance_matrix.*PositiveDefinite"):
        D.MultivariateNormal(loc, covariance_matrix=T([[1.0, 2.0], [2.0, 1.0]], device))
    with pytest.raises(ValueError, match="scale_tril.*LowerCholesky"):
        D.MultivariateNormal(loc, scale_tril=T([[1.0, 1.0], [0.0, 1.0]], device))


def test_independent(device):
    loc, scale = RNG.normal(size=(3, 4)), RNG.uniform(0.5, 2, size=(3, 4))
    base = D.Normal(T(loc, device), T(scale, device))
    ind = D.Independent(base, 1)
    assert ind.batch_shape == (3,) and ind.event_shape == (4,)
    assert ind.has_rsample and not ind.has_enumerate_support
    x = RNG.normal(size=(2, 3, 4))
    close(ind.log_prob(T(x, device)), st.norm(loc, scale).logpdf(x).sum(-1), "float64")
    close(ind.entropy(), st.norm(loc, scale).entropy().sum(-1), "float64")
    assert ind.sample((5,)).shape == (5, 3, 4)
    assert "Independent(Normal(" in repr(ind)
    assert repr(ind.support) == "IndependentConstraint(Real(), 1)"
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims <= len"):
        D.Independent(base, 3)
    e = ind.expand((2, 3))
    assert e.batch_shape == (2, 3) and e.event_shape == (4,)
    assert e.log_prob(T(x, device)).shape == (2, 3)
    mvn = D.MultivariateNormal(T(loc, device), scale_tril=T(np.diag(scale[0]), device))
    diag = D.Independent(D.Normal(T(loc, device), T(np.broadcast_to(scale[0], (3, 4)), device)), 1)
    close(mvn.log_prob(T(x, device)), N(diag.log_prob(T(x, device))), "float64")


# ---- sampling: shapes, reproducibility, moments and goodness of fit --------------------------


def _sample(dist, n, seed=0):
    ember.manual_seed(seed)
    return N(dist.sample((n,)))


def test_sample_shapes_and_reproducibility(device):
    cov = _spd(2)
    d = D.Normal(T(np.zeros((2, 3)), device, "float32"), T(np.ones(3), device, "float32"))
    s = d.sample((4, 5))
    assert s.shape == (4, 5, 2, 3) and s.dtype == ember.float32 and not s.requires_grad
    assert d.sample().shape == (2, 3)
    assert d.rsample(ember.Size([7])).shape == (7, 2, 3)
    for make in (
        lambda: D.Normal(T([0.0, 1.0], device), T([1.0, 2.0], device)),
        lambda: D.Gamma(T([0.4, 3.0], device), T([1.0, 2.0], device)),
        lambda: D.Poisson(T([0.5, 40.0], device)),
        lambda: D.Binomial(T([10.0, 500.0], device), probs=T([0.3, 0.6], device)),
        lambda: D.Categorical(probs=T([0.2, 0.3, 0.5], device)),
        lambda: D.Beta(T([0.5, 2.0], device), T([1.5, 3.0], device)),
        lambda: D.MultivariateNormal(T([0.0, 1.0], device), covariance_matrix=T(cov, device)),
    ):
        a, b, c = _sample(make(), 50, 7), _sample(make(), 50, 7), _sample(make(), 50, 8)
        assert np.array_equal(a, b) and not np.array_equal(a, c)
    with pytest.raises(TypeError, match="sample_shape"):
        d.sample(3)


def _moments_ok(samples, mean, var, z=5.0):
    """Sample mean within z standard errors; sample variance within z of its standard error
    (estimated from the fourth central moment)."""
    n = samples.shape[0]
    m = samples.mean(0)
    assert np.all(np.abs(m - mean) <= z * np.sqrt(var / n) + 1e-12), (m, mean)
    c = samples - m
    v = (c * c).sum(0) / (n - 1)
    m4 = (c**4).mean(0)
    se = np.sqrt(np.maximum(m4 - v * v, 1e-30) / n)
    assert np.all(np.abs(v - var) <= z * se + 1e-12), (v, var)


@pytest.mark.parametrize(
    "make, mean, var",
    [
        (lambda dv: D.Normal(T([-1.0, 3.0], dv), T([0.5, 2.0], dv)), [-1, 3], [0.25, 4]),
        (lambda dv: D.Uniform(T([0.0, -2.0], dv), T([1.0, 4.0], dv)), [0.5, 1.0], [1 / 12, 3]),
        (lambda dv: D.Laplace(T([1.0], dv), T([2.0], dv)), [1.0], [8.0]),
        (lambda dv: D.Exponential(T([0.5, 4.0], dv)), [2.0, 0.25], [4.0, 1 / 16]),
        (
            lambda dv: D.Gamma(T([0.2, 0.9, 1.0, 7.5], dv), T([1.0, 2.0, 0.5, 3.0], dv)),
            [0.2, 0.45, 2.0, 2.5],
            [0.2, 0.225, 4.0, 7.5 / 9],
        ),
        (
            lambda dv: D.Beta(T([0.3, 2.0, 5.0], dv), T([0.6, 2.0, 1.0], dv)),
            [1 / 3, 0.5, 5 / 6],
            [0.3 * 0.6 / (0.81 * 1.9), 4 / 80, 5 / 252],
        ),
        (
            lambda dv: D.Poisson(T([0.0, 0.7, 9.5, 10.0, 85.0, 3000.0], dv)),
            [0.0, 0.7, 9.5, 10.0, 85.0, 3000.0],
            [0.0, 0.7, 9.5, 10.0, 85.0, 3000.0],
        ),
        (
            lambda dv: D.Binomial(
                T([1.0, 30.0, 30.0, 400.0, 5000.0], dv), probs=T([0.4, 0.1, 0.9, 0.5, 0.03], dv)
            ),
            [0.4, 3.0, 27.0, 200.0, 150.0],
            [0.24, 2.7, 2.7, 100.0, 145.5],
        ),
        (lambda dv: D.Bernoulli(T([0.05, 0.5, 1.0], dv)), [0.05, 0.5, 1.0], [0.0475, 0.25, 0.0]),
    ],
)
def test_sample_moments(device, make, mean, var):
    s = _sample(make(device), 40000, seed=3)
    _moments_ok(s, np.asarray(mean), np.asarray(var))


def test_samples_fit_their_cdf(device):
    """Kolmogorov-Smirnov against scipy's CDF for each continuous family (fixed seed: a
    deterministic test; p-values below 1e-3 would mean a wrong sampler)."""
    cases = [
        (D.Normal(T(1.0, device), T(2.0, device)), st.norm(1, 2).cdf),
        (D.Gamma(T(0.35, device), T(2.0, device)), st.gamma(0.35, scale=0.5).cdf),
        (D.Gamma(T(4.0, device), T(1.0, device)), st.gamma(4.0).cdf),
        (D.Beta(T(0.5, device), T(3.0, device)), st.beta(0.5, 3.0).cdf),
        (D.Laplace(T(0.0, device), T(1.5, device)), st.laplace(0, 1.5).cdf),
        (D.Exponential(T(3.0, device)), st.expon(scale=1 / 3).cdf),
    ]
    for i, (d, cdf) in enumerate(cases):
        s = _sample(d, 20000, seed=11 + i)
        assert st.kstest(s, cdf).pvalue > 1e-3, type(d).__name__
        assert np.array_equal(s, _sample(d, 20000, seed=11 + i))


@pytest.mark.parametrize(
    "make, pmf, top, n",
    [
        (lambda dv: D.Poisson(T(3.3, dv)), st.poisson(3.3).pmf, 30, 30000),
        (lambda dv: D.Poisson(T(12.0, dv)), st.poisson(12.0).pmf, 60, 300000),
        (lambda dv: D.Poisson(T(45.0, dv)), st.poisson(45.0).pmf, 120, 300000),
        (lambda dv: D.Binomial(T(25.0, dv), probs=T(0.2, dv)), st.binom(25, 0.2).pmf, 26, 30000),
        (lambda dv: D.Binomial(T(60.0, dv), probs=T(0.25, dv)), st.binom(60, 0.25).pmf, 61, 300000),
        (
            lambda dv: D.Binomial(T(300.0, dv), probs=T(0.7, dv)),
            st.binom(300, 0.7).pmf,
            301,
            300000,
        ),
        (
            lambda dv: D.Categorical(T([0.1, 0.2, 0.3, 0.4], dv)),
            [0.1, 0.2, 0.3, 0.4].__getitem__,
            4,
            30000,
        ),
    ],
)
def test_discrete_samples_fit_their_pmf(device, make, pmf, top, n):
    """Chi-square against the pmf (the sparse tails pooled): both regimes of the Poisson and
    binomial samplers (inversion below 10, transformed rejection above), with many draws for
    the rejection samplers, whose hat and squeeze constants a small slip would bias."""
    s = _sample(make(device), n, seed=21).astype(np.int64)
    assert s.min() >= 0 and s.max() < top
    counts = np.bincount(s, minlength=top)
    expected = np.array([pmf(k) for k in range(top)]) * len(s)
    keep = expected > 20
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], len(s) - expected[keep].sum())
    if exp[-1] < 1:
        obs, exp = obs[:-1], exp[:-1]
    stat = ((obs - exp) ** 2 / exp).sum()
    assert st.chi2(len(obs) - 1).sf(stat) > 1e-3, stat


def test_multivariate_normal_sample_covariance(device):
    cov = _spd(3)
    m = D.MultivariateNormal(T([1.0, -1.0, 0.5], device), covariance_matrix=T(cov, device))
    s = _sample(m, 50000, seed=5)
    assert np.allclose(s.mean(0), [1.0, -1.0, 0.5], atol=5 * np.sqrt(cov.diagonal().max() / 5e4))
    assert np.allclose(np.cov(s.T), cov, rtol=0.05, atol=0.05 * cov.max())


# ---- reparameterized gradients ----------------------------------------------------------------


def test_rsample_gradients_location_scale(device):
    loc = T([0.5, -1.0], device, requires_grad=True)
    scale = T([2.0, 0.3], device, requires_grad=True)
    ember.manual_seed(0)
    x = D.Normal(loc, scale).rsample((1000,))
    x.sum().backward()
    eps = (N(x) - N(loc)) / N(scale)
    close(loc.grad, [1000.0, 1000.0], "float64")
    close(scale.grad, eps.sum(0), "float64")

    loc.grad = scale.grad = None
    x = D.Laplace(loc, scale).rsample((500,))
    (x * x).sum().backward()
    u = (N(x) - N(loc)) / N(scale)
    close(loc.grad, (2 * N(x)).sum(0), "float64")
    close(scale.grad, (2 * N(x) * u).sum(0), "float64")

    low = T([0.0, 1.0], device, requires_grad=True)
    high = T([2.0, 5.0], device, requires_grad=True)
    x = D.Uniform(low, high).rsample((300,))
    x.sum().backward()
    frac = (N(x) - N(low)) / (N(high) - N(low))
    close(low.grad, (1 - frac).sum(0), "float64")
    close(high.grad, frac.sum(0), "float64")

    rate = T([0.5, 3.0], device, requires_grad=True)
    x = D.Exponential(rate).rsample((300,))
    x.sum().backward()
    close(rate.grad, (-N(x) / N(rate)).sum(0), "float64")


def test_gamma_rsample_implicit_gradient(device):
    """d x / d concentration at a fixed CDF value, against scipy's quantile function."""
    conc = T([0.3, 1.0, 2.5, 30.0], device, requires_grad=True)
    rate = T([1.0, 2.0, 0.5, 4.0], device, requires_grad=True)
    ember.manual_seed(2)
    x = D.Gamma(conc, rate).rsample((3,))
    x.sum().backward()
    xs, a, r = N(x), N(conc), N(rate)
    u = st.gamma.cdf(xs * r, a)
    h = 1e-6 * a
    dxda = (st.gamma.ppf(u, a + h) - st.gamma.ppf(u, a - h)) / (2 * h) / r
    close(conc.grad, dxda.sum(0), "float64", rtol=1e-4, atol=1e-8)
    close(rate.grad, (-xs / r).sum(0), "float64")
    # the expectation: d E[x] / d concentration = 1 / rate
    conc.grad = None
    ember.manual_seed(4)
    D.Gamma(conc, rate).rsample((20000,)).mean(0).sum().backward()
    close(conc.grad, 1 / r, "float64", rtol=0.05)


def test_beta_rsample_gradient_in_expectation(device):
    a = T([0.7, 3.0], device, requires_grad=True)
    b = T([2.0, 1.5], device, requires_grad=True)
    ember.manual_seed(9)
    x = D.Beta(a, b).rsample((40000,))
    assert N(x).min() > 0 and N(x).max() < 1
    x.mean(0).sum().backward()
    av, bv = N(a), N(b)
    close(a.grad, bv / (av + bv) ** 2, "float64", rtol=0.05)
    close(b.grad, -av / (av + bv) ** 2, "float64", rtol=0.05)


def test_multivariate_normal_gradients(device):
    cov = _spd(3)
    loc = T([0.1, 0.2, -0.3], device, requires_grad=True)
    low = T(np.linalg.cholesky(cov), device, requires_grad=True)
    ember.manual_seed(1)
    m = D.MultivariateNormal(loc, scale_tril=low)
    x = m.rsample((50,))
    x.sum().backward()
    eps = np.linalg.solve(np.linalg.cholesky(cov), (N(x) - N(loc)).T).T
    close(loc.grad, [50.0] * 3, "float64")
    # x_i = loc_i + sum_j L_ij eps_j: d sum(x) / d L_ij = sum over draws of eps_j (every i, j)
    close(low.grad, np.ones((3, 1)) * eps.sum(0)[None, :], "float64", rtol=1e-8)

    # log_prob: d/d loc = Sigma^-1 (x - mu); d/d Sigma by central differences
    xv = RNG.normal(size=3)
    covt = T(cov, device, requires_grad=True)
    loc.grad = None
    lp = D.MultivariateNormal(loc, covariance_matrix=covt).log_prob(T(xv, device))
    lp.backward()
    close(loc.grad, np.linalg.solve(cov, xv - N(loc)), "float64", rtol=1e-8)

    def f(c):
        return st.multivariate_normal(N(loc), c).logpdf(xv)

    # a symmetric perturbation of (i, j) and (j, i): G_ij + G_ji off the diagonal, G_ii on it
    num = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            e = np.zeros((3, 3))
            e[i, j] = e[j, i] = 1e-6
            num[i, j] = (f(cov + e) - f(cov - e)) / 2e-6
    g = N(covt.grad)
    assert np.allclose(g, g.T)  # the gradient of a symmetric argument is symmetric
    close(np.where(np.eye(3) > 0, g, 2 * g), num, "float64", rtol=1e-5, atol=1e-7)


# ---- KL divergences ---------------------------------------------------------------------------


def test_kl_normal_categorical_bernoulli(device):
    m1, s1 = RNG.normal(size=(3, 1)), RNG.uniform(0.5, 2, size=(3, 1))
    m2, s2 = RNG.normal(size=(4,)), RNG.uniform(0.5, 2, size=(4,))
    kl = D.kl_divergence(
        D.Normal(T(m1, device), T(s1, device)), D.Normal(T(m2, device), T(s2, device))
    )
    want = np.log(s2 / s1) + (s1**2 + (m1 - m2) ** 2) / (2 * s2**2) - 0.5
    close(kl, want, "float64")

    p = RNG.dirichlet(np.ones(5), size=(2, 3))
    q = RNG.dirichlet(np.ones(5), size=(3,))
    kl = D.kl_divergence(
        D.Categorical(probs=T(p, device)), D.Categorical(logits=T(np.log(q), device))
    )
    close(kl, (p * np.log(p / q)).sum(-1), "float64", rtol=1e-9)
    zero_q = D.Categorical(probs=T([0.5, 0.5, 0.0], device))
    kl = D.kl_divergence(D.Categorical(probs=T([0.2, 0.3, 0.5], device)), zero_q)
    assert np.isinf(N(kl))
    kl = D.kl_divergence(zero_q, D.Categorical(probs=T([0.2, 0.3, 0.5], device)))
    close(kl, 0.5 * np.log(0.5 / 0.2) + 0.5 * np.log(0.5 / 0.3), "float64")
    oh = D.kl_divergence(D.OneHotCategorical(T(p, device)), D.OneHotCategorical(T(q, device)))
    close(oh, (p * np.log(p / q)).sum(-1), "float64", rtol=1e-9)

    a, b = np.array([0.1, 0.5, 0.9]), np.array([[0.3], [0.7]])
    kl = D.kl_divergence(
        D.Bernoulli(T(a, device)), D.Bernoulli(logits=T(np.log(b / (1 - b)), device))
    )
    close(kl, a * np.log(a / b) + (1 - a) * np.log((1 - a) / (1 - b)), "float64", rtol=1e-9)
    kl = D.kl_divergence(
        D.Bernoulli(T([0.0, 1.0, 0.3], device)), D.Bernoulli(T([0.5, 0.5, 0.0], device))
    )
    close(N(kl)[:2], [np.log(2), np.log(2)], "float64", rtol=1e-6)
    assert np.isinf(N(kl)[2])


def test_kl_multivariate_normal(device):
    n = 3
    c1, c2 = _spd(n, (2,)), _spd(n)
    m1, m2 = RNG.normal(size=(2, n)), RNG.normal(size=(n,))
    p = D.MultivariateNormal(T(m1, device), covariance_matrix=T(c1, device))
    q = D.MultivariateNormal(T(m2, device), scale_tril=T(np.linalg.cholesky(c2), device))
    inv2 = np.linalg.inv(c2)
    d = m2 - m1
    want = 0.5 * (
        np.trace(inv2 @ c1, axis1=-2, axis2=-1)
        + np.einsum("bi,ij,bj->b", d, inv2, d)
        - n
        + np.log(np.linalg.det(c2) / np.linalg.det(c1))
    )
    close(D.kl_divergence(p, q), want, "float64", rtol=1e-9)
    close(D.kl_divergence(p, p), np.zeros(2), "float64", atol=1e-10)
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(p, D.MultivariateNormal(T(np.zeros(2), device), T(np.eye(2), device)))
    # differentiable in both distributions' parameters
    m1t = T(m1, device, requires_grad=True)
    kl = D.kl_divergence(D.MultivariateNormal(m1t, covariance_matrix=T(c1, device)), q)
    kl.sum().backward()
    close(m1t.grad, (inv2 @ (m1 - m2).T).T, "float64", rtol=1e-8)


def test_kl_other_pairs_against_closed_forms(device):
    a1, r1, a2, r2 = 2.0, 1.5, 3.5, 0.7
    kl = D.kl_divergence(
        D.Gamma(T(a1, device), T(r1, device)), D.Gamma(T(a2, device), T(r2, device))
    )
    from scipy.special import digamma, gammaln

    want = (
        (a1 - a2) * digamma(a1)
        - gammaln(a1)
        + gammaln(a2)
        + a2 * np.log(r1 / r2)
        + a1 * (r2 - r1) / r1
    )
    close(kl, want, "float64", rtol=1e-9)
    p, q = st.beta(2.0, 3.0), st.beta(0.5, 1.5)
    from scipy.integrate import quad

    want = quad(lambda x: p.pdf(x) * (p.logpdf(x) - q.logpdf(x)), 0, 1)[0]
    kl = D.kl_divergence(
        D.Beta(T(2.0, device), T(3.0, device)), D.Beta(T(0.5, device), T(1.5, device))
    )
    close(kl, want, "float64", rtol=1e-7)
    kl = D.kl_divergence(D.Exponential(T(2.0, device)), D.Exponential(T(0.5, device)))
    close(kl, np.log(2.0 / 0.5) + 0.5 / 2.0 - 1, "float64")
    kl = D.kl_divergence(D.Poisson(T(3.0, device)), D.Poisson(T(5.0, device)))
    close(kl, 3 * np.log(3 / 5) - 3 + 5, "float64")
    lp, lq = st.laplace(0.3, 1.2), st.laplace(-0.5, 0.8)
    want = quad(lambda x: lp.pdf(x) * (lp.logpdf(x) - lq.logpdf(x)), -40, 40, points=[-0.5, 0.3])[0]
    kl = D.kl_divergence(
        D.Laplace(T(0.3, device), T(1.2, device)), D.Laplace(T(-0.5, device), T(0.8, device))
    )
    close(kl, want, "float64", rtol=1e-7)
    pu = D.Uniform(T([0.0, -1.0], device), T([1.0, 1.0], device))
    kl = D.kl_divergence(pu, D.Uniform(T([-1.0, 0.0], device), T([2.0, 3.0], device)))
    assert N(kl)[0] == pytest.approx(np.log(3.0)) and np.isinf(N(kl)[1])
    pb = D.Binomial(T(10.0, device), probs=T(0.3, device))
    qb = D.Binomial(T(10.0, device), probs=T(0.6, device))
    k = np.arange(11)
    want = (
        st.binom(10, 0.3).pmf(k) * (st.binom(10, 0.3).logpmf(k) - st.binom(10, 0.6).logpmf(k))
    ).sum()
    close(D.kl_divergence(pb, qb), want, "float64", rtol=1e-9)
    p_ind = D.Independent(D.Normal(T(np.zeros((2, 3)), device), T(1.0, device)), 1)
    q_ind = D.Independent(D.Normal(T(np.ones((2, 3)), device), T(1.0, device)), 1)
    ind = D.kl_divergence(p_ind, q_ind)
    close(ind, [1.5, 1.5], "float64")


def test_register_kl_dispatch(device):
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(T(0.0, device), T(1.0, device)), D.Normal(T(1.0, device), T(1.0, device))
    close(D.kl_divergence(p, q), 0.5, "float64")  # falls back to (Normal, Normal)

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return p.loc * 0 + 42.0

    try:
        close(D.kl_divergence(p, q), 42.0, "float64")
        close(D.kl_divergence(q, q), 0.0, "float64")
    finally:
        del D.kl._KL_REGISTRY[MyNormal, D.Normal]
        D.kl._KL_MEMOIZE.clear()
    with pytest.raises(
        NotImplementedError,
        match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q type Gamma",
    ):
        D.kl_divergence(q, D.Gamma(T(1.0, device), T(1.0, device)))
    with pytest.raises(TypeError, match="Distribution subclass"):
        D.register_kl(int, D.Normal)


# ---- validation, expand, constraints ----------------------------------------------------------


def test_argument_validation(device):
    cases = [
        (lambda: D.Normal(T([0.0], device), T([-1.0], device)), "scale"),
        (lambda: D.Normal(T([np.nan], device), T([1.0], device)), "loc"),
        (lambda: D.Bernoulli(probs=T([1.5], device)), "probs"),
        (lambda: D.Categorical(probs=T([-0.5, 1.5], device)), "probs"),
        (lambda: D.Gamma(T([0.0], device), T([1.0], device)), "concentration"),
        (lambda: D.Beta(T([1.0], device), T([-2.0], device)), "concentration0"),
        (lambda: D.Exponential(T([0.0], device)), "rate"),
        (lambda: D.Poisson(T([-1.0], device)), "rate"),
        (lambda: D.Binomial(T([2.5], device), probs=T([0.5], device)), "total_count"),
        (lambda: D.Laplace(T([0.0], device), T([0.0], device)), "scale"),
    ]
    for make, param in cases:
        with pytest.raises(ValueError, match=f"Expected parameter {param} "):
            make()
    with pytest.raises(ValueError, match="Uniform is not defined when low>= high"):
        D.Uniform(T([1.0], device), T([1.0], device))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
        D.Bernoulli(probs=T([0.5], device), logits=T([0.0], device))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
        D.Categorical()
    with pytest.raises(ValueError, match="Input arguments must all be"):
        D.Normal("a", 1.0)
    d = D.Normal(T([0.0], device), T([-1.0], device), validate_args=False)  # no check
    assert np.isnan(N(d.log_prob(T([0.0], device))))
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(T([0.0], device), T([-1.0], device))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_sample_validation(device):
    cases = [
        (D.Exponential(T([1.0], device)), T([-1.0], device)),
        (D.Bernoulli(T([0.5], device)), T([0.5], device)),
        (D.Poisson(T([1.0], device)), T([1.5], device)),
        (D.Beta(T([1.0], device), T([1.0], device)), T([1.5], device)),
        (D.Categorical(T([0.5, 0.5], device)), T([2], device, "int64")),
        (D.Binomial(T([3.0], device), T([0.5], device)), T([4.0], device)),
        (D.Uniform(T([0.0], device), T([1.0], device)), T([1.5], device)),
    ]
    for d, v in cases:
        with pytest.raises(ValueError, match="to be within the support"):
            d.log_prob(v)
    m = D.MultivariateNormal(T(np.zeros(3), device), T(np.eye(3), device))
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        m.log_prob(T(np.zeros(2), device))
    with pytest.raises(ValueError, match="Value is not broadcastable"):
        D.Normal(T(np.zeros(3), device), T(1.0, device)).log_prob(T(np.zeros(4), device))
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(T(0.0, device), T(1.0, device)).log_prob(0.5)


def test_expand_and_repr(device):
    n = D.Normal(T([0.0, 1.0], device), T([1.0, 2.0], device))
    e = n.expand((3, 2))
    assert e.batch_shape == (3, 2) and e.loc.shape == (3, 2) and e.sample().shape == (3, 2)
    assert e._validate_args == n._validate_args
    for d in (
        D.Gamma(T([1.0, 2.0], device), T(1.0, device)),
        D.Bernoulli(logits=T([0.0, 1.0], device)),
        D.Binomial(T(5.0, device), probs=T([0.2, 0.4], device)),
        D.Poisson(T([1.0, 2.0], device)),
        D.Uniform(T([0.0, 1.0], device), T(3.0, device)),
        D.Exponential(T([1.0, 2.0], device)),
        D.Laplace(T([1.0, 2.0], device), T(3.0, device)),
        D.Beta(T([1.0, 2.0], device), T(3.0, device)),
        D.Categorical(T([[0.2, 0.8], [0.5, 0.5]], device)),
    ):
        x = d.sample()
        e = d.expand((4, 2))
        assert e.batch_shape == (4, 2)
        assert e.sample().shape[:2] == (4, 2)
        close(e.log_prob(x), np.broadcast_to(N(d.log_prob(x)), (4, 2)), "float64")
    m = D.MultivariateNormal(T(np.zeros(2), device), T(np.eye(2), device)).expand((5,))
    assert m.batch_shape == (5,) and m.sample().shape == (5, 2)
    oh = D.OneHotCategorical(T([0.2, 0.8], device)).expand((3,))
    assert oh.batch_shape == (3,) and oh.sample().shape == (3, 2)

    class Custom(D.Normal):
        def __init__(self):
            super().__init__(0.0, 1.0)

    with pytest.raises(NotImplementedError, match="must also define a custom .expand"):
        Custom().expand((2,))
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(n) == "Normal(loc: ember.Size([2]), scale: ember.Size([2]))"


def test_constraints_and_supports(device):
    C = D.constraints
    assert repr(C.positive) == "GreaterThan(lower_bound=0.0)"
    assert repr(C.unit_interval) == "Interval(lower_bound=0.0, upper_bound=1.0)"
    assert repr(D.Categorical(T([0.5, 0.5], device)).support) == (
        "IntegerInterval(lower_bound=0, upper_bound=1)"
    )
    assert C.is_dependent(D.Uniform.arg_constraints["low"])
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        C.dependent.check(T([1.0], device))
    x = T([[1.0, 0.0], [0.5, 2.0]], device)
    assert bool(C.lower_cholesky.check(x)) and not bool(C.lower_cholesky.check(x.mT))
    assert bool(C.positive_definite.check(T([[2.0, 1.0], [1.0, 2.0]], device)))
    assert not bool(C.positive_definite.check(T([[1.0, 2.0], [2.0, 1.0]], device)))
    assert N(C.simplex.check(T([[0.2, 0.8], [0.5, 0.6]], device))).tolist() == [True, False]
    assert N(C.one_hot.check(T([[0.0, 1.0], [1.0, 1.0]], device))).tolist() == [True, False]
    ok = N(C.nonnegative_integer.check(T([0.0, 2.0, -1.0, 1.5], device))).tolist()
    assert ok == [True, True, False, False]
    assert D.Normal.has_rsample and D.Gamma.has_rsample and D.Beta.has_rsample
    assert not D.Poisson.has_rsample and not D.Categorical.has_rsample
    with pytest.raises(NotImplementedError):
        D.Poisson(T(1.0, device)).rsample()
    assert N(D.Normal(T(0.0, device), T(1.0, device)).perplexity()) == pytest.approx(
        np.exp(0.5 + 0.5 * np.log(2 * np.pi))
    )


def test_gradients_of_log_prob_and_entropy(device):
    """log_prob/entropy are differentiable in the parameters (gamma-family through digamma)."""
    c = T([0.7, 2.0, 9.0], device, requires_grad=True)
    r = T([1.0, 0.5, 2.0], device, requires_grad=True)
    x = T([0.3, 2.0, 5.0], device)
    D.Gamma(c, r).log_prob(x).sum().backward()
    from scipy.special import digamma, polygamma

    cv, rv, xv = N(c), N(r), N(x)
    close(c.grad, np.log(rv) + np.log(xv) - digamma(cv), "float64", rtol=1e-9)
    close(r.grad, cv / rv - xv, "float64")
    c.grad = None
    D.Gamma(c, r).entropy().sum().backward()
    close(c.grad, 1 + (1 - cv) * polygamma(1, cv), "float64", rtol=1e-9)
    p = T([0.2, 0.6], device, requires_grad=True)
    D.Bernoulli(p).entropy().sum().backward()
    close(p.grad, np.log((1 - N(p)) / N(p)), "float64", rtol=1e-8)
    mu = T([0.5], device, requires_grad=True)
    D.Normal(mu, T([2.0], device)).cdf(T([1.0], device)).sum().backward()
    close(mu.grad, -st.norm(0.5, 2.0).pdf(1.0), "float64")
