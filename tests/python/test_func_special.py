"""ember.special against scipy.special (float32 and float64, edge values 0, +-inf, NaN and
negatives, derivatives against analytic ones and finite differences), ember.func's transforms
(grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call) against
analytic derivatives and finite differences, and ember.autograd.functional's return forms."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
import scipy.special as sp
from _helpers import assert_close

S = ember.special
F = ember.func
RNG = np.random.default_rng(99)


def T(x, device, dtype="float64", requires_grad=False):
    a = ember.asarray(np.asarray(x, dtype=dtype), device=device)
    return a.requires_grad_() if requires_grad else a


def N(a):
    return np.asarray(ember.asnumpy(a), dtype=np.float64)


EDGES = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -0.5, np.inf, -np.inf, np.nan, 1e-30, -1e-30]


def _grid(lo, hi, n=400):
    return np.concatenate([RNG.uniform(lo, hi, n), EDGES])


def _pos(n=300):
    return np.concatenate([10.0 ** RNG.uniform(-8, 2.5, n), EDGES])


def _unit(n=300):
    tails = np.concatenate(
        [1 - 10.0 ** RNG.uniform(-15, -1, 60), -1 + 10.0 ** RNG.uniform(-15, -1, 60)]
    )
    return np.concatenate([RNG.uniform(-1, 1, n), tails, EDGES, [1.5, -2.0]])


def _prob(n=300):
    tails = np.concatenate(
        [10.0 ** RNG.uniform(-300, -1, 60), 1 - 10.0 ** RNG.uniform(-15, -1, 60)]
    )
    return np.concatenate([RNG.uniform(0, 1, n), tails, EDGES, [0.25, 0.75]])


def _torch_lgamma(x):
    # PyTorch's lgamma(-inf) is +inf (C's lgamma); SciPy's gammaln gives -inf there
    return np.where(np.isneginf(x), np.inf, sp.gammaln(x))


# name -> (ember function, reference, inputs, float64 (rtol, atol), float32 (rtol, atol))
UNARY = {
    "erf": (S.erf, sp.erf, _grid(-8, 8), (1e-14, 1e-16), (3e-7, 1e-7)),
    "erfc": (S.erfc, sp.erfc, _grid(-8, 28), (1e-13, 1e-300), (2e-6, 1e-37)),
    "erfcx": (S.erfcx, sp.erfcx, _grid(-26, 1e4), (1e-13, 0), (2e-6, 0)),
    "erfinv": (S.erfinv, sp.erfinv, _unit(), (1e-14, 1e-300), (1e-6, 1e-30)),
    # float32: x / sqrt(2) rounds, and erfc's relative sensitivity to it grows like x^2
    "ndtr": (S.ndtr, sp.ndtr, _grid(-37, 10), (1e-12, 1e-300), (3e-5, 1e-37)),
    "ndtri": (S.ndtri, sp.ndtri, _prob(), (1e-14, 1e-14), (1e-6, 1e-6)),
    "log_ndtr": (S.log_ndtr, sp.log_ndtr, _grid(-1e3, 30), (1e-12, 1e-300), (2e-6, 1e-37)),
    "gammaln": (S.gammaln, _torch_lgamma, _grid(-30, 60), (1e-12, 2e-14), (1e-5, 2e-6)),
    "digamma": (S.digamma, sp.digamma, _grid(-30, 1e3), (1e-12, 2e-14), (1e-5, 2e-6)),
    "i0": (S.i0, sp.i0, _grid(-80, 80), (1e-14, 0), (1e-5, 0)),
    "i0e": (S.i0e, sp.i0e, _grid(-1e4, 1e4), (1e-14, 1e-16), (2e-6, 1e-7)),
    "i1": (S.i1, sp.i1, _grid(-80, 80), (1e-14, 1e-300), (1e-5, 1e-37)),
    "i1e": (S.i1e, sp.i1e, _grid(-1e4, 1e4), (1e-14, 1e-16), (2e-6, 1e-7)),
    "bessel_j0": (S.bessel_j0, sp.j0, _grid(-100, 100), (1e-12, 1e-14), (1e-5, 1e-6)),
    "bessel_j1": (S.bessel_j1, sp.j1, _grid(-100, 100), (1e-12, 1e-14), (1e-5, 1e-6)),
    "entr": (S.entr, sp.entr, _grid(-3, 30), (1e-14, 0), (1e-6, 0)),
    "expit": (S.expit, sp.expit, _grid(-50, 50), (1e-14, 0), (1e-6, 0)),
    "exp2": (S.exp2, sp.exp2, _grid(-50, 50), (1e-14, 0), (1e-6, 0)),
    "expm1": (S.expm1, sp.expm1, _grid(-30, 30), (1e-14, 0), (1e-6, 0)),
    "log1p": (S.log1p, np.log1p, _pos(), (1e-14, 0), (1e-6, 0)),
    "sinc": (S.sinc, np.sinc, _grid(-20, 20), (1e-13, 1e-15), (1e-6, 1e-7)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_scipy(device, name, dtype):
    fn, ref, xs, tol64, tol32 = UNARY[name]
    x = xs.astype(dtype)
    got = fn(T(x, device, dtype))
    assert got.dtype == ember.dtype(dtype) and got.shape == x.shape
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(dtype)
    rtol, atol = tol64 if dtype == "float64" else tol32
    assert_close(got, want, dtype, rtol=rtol, atol=atol, err_msg=f"{name}: ")


def test_edge_values(device):
    f = T([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.0], device)
    assert N(S.digamma(f)).tolist()[:2] == [-np.inf, np.inf]
    assert np.isnan(N(S.digamma(f))[[3, 4, 5, 6]]).all() and N(S.digamma(f))[2] == np.inf
    assert np.all(N(S.gammaln(f))[[0, 1, 2, 3, 5, 6]] == np.inf) and np.isnan(N(S.gammaln(f))[4])
    assert N(S.erfinv(T([1.0, -1.0, 0.0], device))).tolist() == [np.inf, -np.inf, 0.0]
    assert N(S.ndtri(T([0.0, 1.0, 0.5], device))).tolist() == [-np.inf, np.inf, 0.0]
    assert np.isnan(N(S.ndtri(T([-0.1, 1.1, np.nan], device)))).all()
    assert N(S.entr(T([-1.0, 0.0], device))).tolist() == [-np.inf, 0.0]
    assert N(S.gammaln(T([1.0, 2.0], device))).tolist() == [0.0, 0.0]
    assert N(S.erfc(T([-np.inf, np.inf], device))).tolist() == [2.0, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_and_parametrized_functions(device, dtype):
    tol = {"rtol": 1e-12, "atol": 1e-300} if dtype == "float64" else {"rtol": 5e-6, "atol": 1e-30}

    def rounded(v):  # the inputs as the dtype holds them (the references start from these)
        return np.asarray(v, dtype=np.float64).astype(dtype).astype(np.float64)

    x = np.array([0.0, 0.0, 0.0, 1.5, 2.0, -1.0, np.nan, 3.0, 0.5])
    y = rounded([0.0, np.nan, -1.0, 0.3, 3.0, 2.0, 1.0, -0.5, np.inf])
    for fn, ref in ((S.xlogy, sp.xlogy), (S.xlog1py, sp.xlog1py)):
        want = ref(x, y).astype(dtype)
        assert_close(fn(T(x, device, dtype), T(y, device, dtype)), want, dtype, **tol)
        assert_close(fn(2.0, T(y, device, dtype)), ref(2.0, y).astype(dtype), dtype, **tol)
        assert_close(fn(T(x, device, dtype), 3.0), ref(x, 3.0).astype(dtype), dtype, **tol)
    s = rounded(np.concatenate([RNG.uniform(1.01, 30, 200), [1.0, 0.5, 2.0, 2.0, 3.0, 2.5, 4.0]]))
    q = rounded(
        np.concatenate([10 ** RNG.uniform(-3, 4, 200), [1.0, 1.0, 0.0, -1.0, -1.5, -2.5, -3.25]])
    )
    want = sp.zeta(s, q).astype(dtype)
    tz = {"rtol": 1e-13 if dtype == "float64" else 1e-5, "atol": tol["atol"]}
    assert_close(S.zeta(T(s, device, dtype), T(q, device, dtype)), want, dtype, **tz)
    a = rounded(
        np.concatenate([10 ** RNG.uniform(-3, 3, 300), [0.0, 0.0, 1.0, 1.0, 2.0, -1.0, np.nan]])
    )
    xx = rounded(
        np.concatenate([10 ** RNG.uniform(-4, 3.3, 300), [0.0, 1.0, 0.0, np.inf, -1.0, 1.0, 1.0]])
    )
    ti = {"rtol": 5e-12, "atol": 1e-300} if dtype == "float64" else {"rtol": 2e-6, "atol": 3e-7}
    for fn, ref in ((S.gammainc, sp.gammainc), (S.gammaincc, sp.gammaincc)):
        want = ref(a, xx).astype(dtype)
        assert_close(fn(T(a, device, dtype), T(xx, device, dtype)), want, dtype, **ti)
    z = rounded(np.concatenate([RNG.uniform(-10, 10, 300), 10 ** RNG.uniform(-5, 3, 100)]))
    for n in (0, 1, 2, 4):
        want = sp.polygamma(n, z).astype(dtype)
        tp = {
            "rtol": 1e-11 if dtype == "float64" else 2e-5,
            "atol": 1e-13 if dtype == "float64" else 1e-5,
        }
        assert_close(S.polygamma(n, T(z, device, dtype)), want, dtype, **tp, err_msg=f"n={n}: ")
    v = rounded(RNG.uniform(2.5, 20, 50))
    want = np.array([sp.multigammaln(t, 4) for t in v]).astype(dtype)
    assert_close(
        S.multigammaln(T(v, device, dtype), 4),
        want,
        dtype,
        rtol=1e-12 if dtype == "float64" else 1e-5,
    )
    p = rounded([0.0, 1e-9, 0.3, 0.999, 1.0])
    c = np.clip(p.astype(dtype), np.asarray(1e-6, dtype), 1 - np.asarray(1e-6, dtype))
    want = np.log(c / (1 - c))  # clipped in the dtype, as PyTorch clamps
    assert_close(S.logit(T(p, device, dtype), eps=1e-6), want, dtype, rtol=1e-5)
    assert_close(S.logit(T(p, device, dtype)), sp.logit(p).astype(dtype), dtype, rtol=1e-6)
    r = np.array([1.25, 2.5, -0.125, 3.14159])
    assert_close(S.round(T(r, device, dtype)), np.round(r).astype(dtype), dtype)
    assert_close(
        S.round(T(r, device, dtype), decimals=2), np.round(r, 2).astype(dtype), dtype, rtol=1e-6
    )
    m = RNG.normal(size=(3, 4)) * 20
    assert_close(
        S.logsumexp(T(m, device, dtype), 1), sp.logsumexp(m, 1).astype(dtype), dtype, rtol=1e-6
    )
    assert_close(
        S.softmax(T(m, device, dtype), 0),
        sp.softmax(m, 0).astype(dtype),
        dtype,
        rtol=1e-5,
        atol=1e-7,
    )
    assert_close(
        S.log_softmax(T(m, device, dtype), -1),
        sp.log_softmax(m, -1).astype(dtype),
        dtype,
        rtol=1e-5,
        atol=1e-5,
    )
    assert_close(
        S.spherical_bessel_j0(T(m, device, dtype)),
        (np.sin(m) / m).astype(dtype),
        dtype,
        rtol=1e-6,
        atol=1e-7,
    )


def test_dtypes_arguments_and_errors(device):
    assert S.erf(T([0, 1, 2], device, "int64")).dtype == ember.float32  # the default dtype
    assert S.erf(T([True], device, "bool")).dtype == ember.float32
    h = S.gammaln(T([0.5, 3.0], device, "float16"))
    assert h.dtype == ember.float16
    assert np.allclose(N(h), sp.gammaln([0.5, 3.0]), rtol=1e-3)
    assert S.erf(0.5).dtype == ember.float32 and math.isclose(
        float(S.erf(0.5)), math.erf(0.5), rel_tol=1e-6
    )
    out = ember.zeros(3, dtype="float64", device=device)
    r = S.digamma(T([1.0, 2.0, 3.0], device), out=out)
    assert r is out and np.allclose(N(out), sp.digamma([1.0, 2.0, 3.0]))
    assert S.psi is S.digamma and S.modified_bessel_i0 is S.i0
    for name in S.__all__:
        assert callable(getattr(S, name)), name
    with pytest.raises(RuntimeError, match="complex"):
        S.erf(T([1 + 1j], device, "complex128"))
    with pytest.raises(TypeError, match="argument 'input'"):
        S.erf("x")
    with pytest.raises(RuntimeError, match="negative n"):
        S.polygamma(-1, T([1.0], device))
    with pytest.raises(TypeError, match="'n' must be int"):
        S.polygamma(1.5, T([1.0], device))
    with pytest.raises(RuntimeError, match="All elements must be greater than"):
        S.multigammaln(T([1.0], device), 3)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        S.multigammaln(T([3.0], device), 0)


def _fd(fn, x, device, h=1e-6):
    return (N(fn(T(x + h, device))) - N(fn(T(x - h, device)))) / (2 * h)


@pytest.mark.parametrize(
    "name, fn, deriv, xs",
    [
        ("erf", S.erf, lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x), [-2.0, -0.3, 0.0, 0.4, 3.0]),
        ("erfc", S.erfc, lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x), [-1.0, 0.2, 2.5]),
        ("erfcx", S.erfcx, lambda x: 2 * x * sp.erfcx(x) - 2 / np.sqrt(np.pi), [-1.0, 0.3, 5.0]),
        (
            "erfinv",
            S.erfinv,
            lambda x: np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(x) ** 2),
            [-0.9, 0.1, 0.7],
        ),
        (
            "ndtri",
            S.ndtri,
            lambda p: np.sqrt(2 * np.pi) * np.exp(sp.ndtri(p) ** 2 / 2),
            [0.01, 0.5, 0.9],
        ),
        (
            "log_ndtr",
            S.log_ndtr,
            lambda x: np.exp(-x * x / 2 - sp.log_ndtr(x)) / np.sqrt(2 * np.pi),
            [-30.0, -2.0, 0.5, 4.0],
        ),
        ("gammaln", S.gammaln, sp.digamma, [-2.5, 0.3, 1.0, 4.5, 30.0]),
        ("digamma", S.digamma, lambda x: sp.polygamma(1, x), [-1.5, 0.2, 3.0, 50.0]),
        ("i0", S.i0, sp.i1, [-3.0, 0.0, 2.0, 30.0]),
        ("i0e", S.i0e, lambda x: sp.i1e(x) - np.sign(x) * sp.i0e(x), [-3.0, 0.5, 30.0]),
        (
            "i1",
            S.i1,
            lambda x: sp.i0(x) - np.where(x == 0, 0.5, sp.i1(x) / np.where(x == 0, 1, x)),
            [-3.0, 0.0, 2.0, 30.0],
        ),
        ("i1e", S.i1e, lambda x: sp.i0e(x) - sp.i1e(x) * (np.sign(x) + 1 / x), [-3.0, 0.5, 30.0]),
        ("bessel_j0", S.bessel_j0, lambda x: -sp.j1(x), [-3.0, 0.0, 9.0, 25.0]),
        ("bessel_j1", S.bessel_j1, lambda x: sp.j0(x) - sp.j1(x) / x, [-3.0, 9.0, 25.0]),
        ("polygamma2", lambda x: S.polygamma(2, x), lambda x: sp.polygamma(3, x), [0.5, 3.0]),
    ],
)
def test_derivatives(device, name, fn, deriv, xs):
    x = T(xs, device, requires_grad=True)
    (g,) = ember.autograd.grad(fn(x).sum(), x, create_graph=True)
    xv = np.asarray(xs)
    assert_close(g, deriv(xv), "float64", rtol=1e-9, atol=1e-12, err_msg=f"{name}: ")
    assert_close(g, _fd(fn, xv, device), "float64", rtol=1e-6, atol=1e-7, err_msg=f"{name} fd: ")
    assert f"{g.grad_fn.name()}" and fn(x).grad_fn.name().endswith("Backward")


def test_second_derivatives_and_two_argument_gradients(device):
    x = T([0.7, 2.0, 11.0], device, requires_grad=True)
    (g,) = ember.autograd.grad(S.gammaln(x).sum(), x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x)
    assert_close(h, sp.polygamma(1, [0.7, 2.0, 11.0]), "float64", rtol=1e-10)
    a = T([0.5, 2.0, 7.0], device)
    xx = T([0.3, 2.5, 4.0], device, requires_grad=True)
    S.gammainc(a, xx).sum().backward()
    av, xv = N(a), N(xx)
    want = np.exp((av - 1) * np.log(xv) - xv - sp.gammaln(av))
    assert_close(xx.grad, want, "float64", rtol=1e-10)
    xx.grad = None
    S.gammaincc(a, xx).sum().backward()
    assert_close(xx.grad, -want, "float64", rtol=1e-10)
    with pytest.raises(RuntimeError, match="derivative for 'input'"):
        S.gammainc(a.requires_grad_(), xx).sum().backward()
    q = T([0.5, 2.0], device, requires_grad=True)
    S.zeta(3.0, q).sum().backward()
    assert_close(q.grad, -3 * sp.zeta(4.0, [0.5, 2.0]), "float64", rtol=1e-10)
    y = T([1e-3, 0.5, 5.0], device, requires_grad=True)
    S.xlogy(y, T([2.0, 3.0, 0.5], device)).sum().backward()
    assert_close(y.grad, np.log([2.0, 3.0, 0.5]), "float64")
    z = T([0.0, 1.0], device, requires_grad=True)
    S.xlogy(z, T([0.0, 0.0], device)).sum().backward()  # 0 log 0 = 0: no NaN in the gradient
    assert np.isfinite(N(z.grad)[0])


# ---- ember.func -------------------------------------------------------------------------------


def _num_jac(f, x, h=1e-6):
    """Central differences of a NumPy function R^n -> R^m (shapes kept)."""
    x = np.asarray(x, dtype=np.float64)
    y0 = np.asarray(f(x))
    jac = np.zeros(y0.shape + x.shape)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        jac[(...,) + idx] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h)
    return jac


def test_grad_against_analytic(device):
    def f(x):
        return (ember.sin(x) * x * x).sum()

    xv = RNG.normal(size=5)
    g = F.grad(f)(T(xv, device))
    assert_close(g, np.cos(xv) * xv**2 + 2 * xv * np.sin(xv), "float64")
    assert not g.requires_grad
    g, v = F.grad_and_value(f)(T(xv, device))
    assert_close(v, np.sum(np.sin(xv) * xv**2), "float64")

    def h(x, y, k):
        return (x * y * y).sum() * k

    gx, gy = F.grad(h, argnums=(0, 1))(T([1.0, 2.0], device), T([3.0, 4.0], device), 2.0)
    assert_close(gx, [18.0, 32.0], "float64")
    assert_close(gy, [12.0, 32.0], "float64")
    gy = F.grad(h, argnums=-2)(T([1.0, 2.0], device), T([3.0, 4.0], device), 2.0)
    assert_close(gy, [12.0, 32.0], "float64")

    def with_aux(x):
        return (x**2).sum(), {"double": x * 2}

    g, aux = F.grad(with_aux, has_aux=True)(T([1.0, 3.0], device))
    assert_close(g, [2.0, 6.0], "float64")
    assert_close(aux["double"], [2.0, 6.0], "float64")
    g, (v, aux) = F.grad_and_value(with_aux, has_aux=True)(T([1.0, 3.0], device))
    assert_close(v, 10.0, "float64")

    tree = {"w": T([[1.0, 2.0]], device), "b": (T([0.5], device),)}
    g = F.grad(lambda p: (p["w"] * p["w"]).sum() + p["b"][0].sum() * 3)(tree)
    assert set(g) == {"w", "b"} and isinstance(g["b"], tuple)
    assert_close(g["w"], [[2.0, 4.0]], "float64")
    assert_close(g["b"][0], [3.0], "float64")
    unused = F.grad(lambda x, y: (x * 2).sum(), argnums=1)(T([1.0], device), T([5.0, 6.0], device))
    assert_close(unused, [0.0, 0.0], "float64")


def test_grad_errors(device):
    x = T([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        F.grad(lambda x: x * 2)(x)
    with pytest.raises(RuntimeError, match="to return a Tensor"):
        F.grad(lambda x: 3.0)(x)
    with pytest.raises(RuntimeError, match="but only 1 positional inputs"):
        F.grad(lambda x: x.sum(), argnums=1)(x)
    with pytest.raises(RuntimeError, match="argnums must be non-empty"):
        F.grad(lambda x: x.sum(), argnums=())(x)
    with pytest.raises(RuntimeError, match="argnums elements must be unique"):
        F.grad(lambda x, y: x.sum(), argnums=(0, 0))(x, x)
    with pytest.raises(RuntimeError, match="should be a tuple: \\(output, aux\\)"):
        F.grad(lambda x: x.sum(), has_aux=True)(x)
    with pytest.raises(RuntimeError, match="floating point"):
        F.grad(lambda x: x.sum())(T([1, 2], device, "int64"))


def test_nested_and_composed_transforms(device):
    x = T(1.3, device)
    d1 = F.grad(lambda x: ember.sin(x) * x**3)
    d2 = F.grad(d1)
    d3 = F.grad(d2)
    xv = 1.3
    assert_close(
        d2(x), -np.sin(xv) * xv**3 + 6 * np.cos(xv) * xv**2 + 6 * xv * np.sin(xv), "float64"
    )
    want3 = -np.cos(xv) * xv**3 - 9 * np.sin(xv) * xv**2 + 18 * xv * np.cos(xv) + 6 * np.sin(xv)
    assert_close(d3(x), want3, "float64", rtol=1e-10)
    # per-sample gradients: vmap over grad
    w = RNG.normal(size=(3,))
    xs = RNG.normal(size=(6, 3))

    def loss(w, x):
        return (ember.tanh((w * x).sum())) ** 2

    per = F.vmap(F.grad(loss), in_dims=(None, 0))(T(w, device), T(xs, device))
    t = np.tanh(xs @ w)
    assert_close(per, (2 * t * (1 - t * t))[:, None] * xs, "float64")
    # a transform keeps the graph to arrays outside it (a gradient penalty reaches the weights)
    wt = T(w, device, requires_grad=True)
    g = F.grad(lambda x: (ember.tanh(wt * x) ** 2).sum())(T(xs[0], device))
    assert g.requires_grad
    (g * g).sum().backward()
    num = _num_jac(
        lambda wv: np.sum((2 * np.tanh(wv * xs[0]) * (1 - np.tanh(wv * xs[0]) ** 2) * wv) ** 2), w
    )
    assert_close(wt.grad, num, "float64", rtol=1e-6, atol=1e-9)


def test_jacrev_jacfwd_hessian(device):
    def f(x, y):
        return ember.stack([x[0] * y[1], ember.sin(x[1]) + y[0] ** 2, (x * x).sum()])

    xv, yv = RNG.normal(size=2), RNG.normal(size=2)

    def fnp(x, y):
        return np.array([x[0] * y[1], np.sin(x[1]) + y[0] ** 2, (x * x).sum()])

    for transform in (F.jacrev, F.jacfwd):
        jx = transform(f)(T(xv, device), T(yv, device))
        assert jx.shape == (3, 2)
        assert_close(jx, _num_jac(lambda x: fnp(x, yv), xv), "float64", rtol=1e-7, atol=1e-9)
        jx, jy = transform(f, argnums=(0, 1))(T(xv, device), T(yv, device))
        assert_close(jy, _num_jac(lambda y: fnp(xv, y), yv), "float64", rtol=1e-7, atol=1e-9)

    def g(x):
        return (x**4).sum() + x[0] * x[1] * x[2]

    xv = RNG.normal(size=3)
    hess = F.hessian(g)(T(xv, device))
    want = np.diag(12 * xv**2) + np.array([[0, xv[2], xv[1]], [xv[2], 0, xv[0]], [xv[1], xv[0], 0]])
    assert_close(hess, want, "float64")
    # pytree outputs, matrix inputs, has_aux
    m = RNG.normal(size=(2, 3))
    jac, aux = F.jacrev(lambda a: ({"sq": a * a, "sum": a.sum()}, a.shape), has_aux=True)(
        T(m, device)
    )
    assert aux == (2, 3) and jac["sq"].shape == (2, 3, 2, 3) and jac["sum"].shape == (2, 3)
    assert_close(jac["sq"], np.einsum("ij,ik,jl->ijkl", 2 * m, np.eye(2), np.eye(3)), "float64")
    with pytest.raises(RuntimeError, match="randomness"):
        F.jacfwd(g, randomness="sometimes")


def test_vjp_and_jvp(device):
    xv = RNG.normal(size=3)
    out, fn = F.vjp(lambda x: ember.exp(x) * 2, T(xv, device))
    assert_close(out, 2 * np.exp(xv), "float64")
    (g,) = fn(T([1.0, 0.0, 2.0], device))
    assert_close(g, 2 * np.exp(xv) * [1.0, 0.0, 2.0], "float64")
    (g,) = fn(T([1.0, 1.0, 1.0], device))  # callable again
    assert_close(g, 2 * np.exp(xv), "float64")
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        fn(T([1.0, 1.0], device))
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        fn((T([1.0, 1.0, 1.0], device),))
    tangents = (T([1.0, 0.0, 0.0], device), T([0.0, 1.0, 0.0], device))
    out, jv = F.jvp(lambda x, y: x * ember.sin(y), (T(xv, device), T(xv, device)), tangents)
    assert_close(jv, [np.sin(xv[0]), xv[1] * np.cos(xv[1]), 0.0], "float64")
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        F.jvp(lambda x: x, T(xv, device), (T(xv, device),))


def _loop(fn, *arrays):
    return np.stack([fn(*a) for a in zip(*arrays, strict=True)])


def test_vmap_in_dims_out_dims(device):
    a, b = RNG.normal(size=(4, 3)), RNG.normal(size=(3, 4))
    r = F.vmap(lambda x, y: (x * y).sum())(T(a, device), T(b.T, device))
    assert_close(r, (a * b.T).sum(1), "float64")
    r = F.vmap(lambda x, y: x * y, in_dims=(0, 1))(T(a, device), T(b, device))
    assert_close(r, a * b.T, "float64")
    r = F.vmap(lambda x, y: x * y, in_dims=(0, None))(T(a, device), T(b[:, 0], device))
    assert_close(r, a * b[:, 0], "float64")
    r = F.vmap(lambda x: x * 2, in_dims=-1, out_dims=1)(T(b, device))
    assert_close(r, b * 2, "float64")
    r0, r1 = F.vmap(lambda x: (x.sum(), x * 3), out_dims=(0, 1))(T(a, device))
    assert_close(r0, a.sum(1), "float64")
    assert_close(r1, (a * 3).T, "float64")
    tree = {"u": T(a, device), "v": (T(b, device), 5.0)}
    r = F.vmap(lambda t: t["u"] * t["v"][0] + t["v"][1], in_dims=({"u": 0, "v": (1, None)},))(tree)
    assert_close(r, a * b.T + 5.0, "float64")
    r = F.vmap(F.vmap(lambda x: x * x))(T(a, device))  # nested
    assert_close(r, a * a, "float64")
    r = F.vmap(lambda x, s: x * s, in_dims=(0, None))(T(a, device), 2.5)
    assert_close(r, a * 2.5, "float64")
    out = F.vmap(lambda x: x.sum(), out_dims=None)(T(np.ones((3, 2)), device))
    assert_close(out, 2.0, "float64")
    empty = F.vmap(lambda x: x * 2)(T(np.zeros((0, 3)), device))
    assert empty.shape == (0, 3)
    mats = RNG.normal(size=(5, 2, 2))
    r = F.vmap(lambda m: m @ m)(T(mats, device))
    assert_close(r, mats @ mats, "float64")


def test_vmap_errors_and_randomness(device):
    a = T(np.ones((3, 2)), device)
    with pytest.raises(
        ValueError,
        match="same size in the mapped dimension, got sizes \\[3, 4\\]",
    ):
        F.vmap(lambda x, y: x)(a, T(np.ones((4, 2)), device))
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure"):
        F.vmap(lambda x, y: x, in_dims=(0,))(a, a)
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        F.vmap(lambda x, y: x, in_dims=(0, 0))(a, 3.0)
    with pytest.raises(ValueError, match="expected in_dim to satisfy -2 <= in_dim < 2"):
        F.vmap(lambda x: x, in_dims=2)(a)
    with pytest.raises(ValueError, match="got no inputs"):
        F.vmap(lambda: 1)()
    with pytest.raises(ValueError, match="at least one input must be mapped"):
        F.vmap(lambda x: x, in_dims=None)(a)
    with pytest.raises(ValueError, match="must only return Tensors"):
        F.vmap(lambda x: 3.0)(a)
    with pytest.raises(ValueError, match="`in_dims` must be an int, None"):
        F.vmap(lambda x: x, in_dims=(1.5,))
    with pytest.raises(ValueError, match="expected `in_dims` to be int or a"):
        F.vmap(lambda x: x, in_dims=[0])
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        F.vmap(lambda x: x, randomness="maybe")
    with pytest.raises(RuntimeError, match="randomness error mode"):
        F.vmap(lambda x: x + ember.randn(2))(a)
    z = T(np.zeros((4, 2)), device, "float32")
    ember.manual_seed(3)
    same = N(F.vmap(lambda x: x + ember.randn(2, device=device), randomness="same")(z))
    assert np.all(same == same[0]) and np.any(same != 0)
    ember.manual_seed(3)
    diff = N(F.vmap(lambda x: x + ember.randn(2, device=device), randomness="different")(z))
    assert len({tuple(r) for r in diff}) == 4
    assert np.array_equal(diff[0], same[0])


def test_functional_call(device):
    lin = ember.nn.Linear(3, 2)
    lin.to(device)
    w, b = RNG.normal(size=(2, 3)), RNG.normal(size=2)
    before = N(lin.weight.detach())
    x = RNG.normal(size=(4, 3))
    out = F.functional_call(
        lin,
        {"weight": T(w, device, "float32"), "bias": T(b, device, "float32")},
        (T(x, device, "float32"),),
    )
    assert_close(out, (x @ w.T + b).astype("float32"), "float32", rtol=1e-5, atol=1e-6)
    assert np.array_equal(N(lin.weight.detach()), before)  # restored
    out = F.functional_call(
        lin,
        ({"weight": T(w, device, "float32")}, {"bias": T(b, device, "float32")}),
        T(x, device, "float32"),
    )
    assert_close(out, (x @ w.T + b).astype("float32"), "float32", rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        F.functional_call(lin, ({"bias": T(b, device)}, {"bias": T(b, device)}), T(x, device))
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
        F.functional_call(
            lin, {"weight": T(w, device, "float32")}, T(x, device, "float32"), strict=True
        )
    # gradients flow to the arrays passed in, not to the module's parameters
    wt = T(w, device, "float32", requires_grad=True)
    F.functional_call(lin, {"weight": wt}, T(x, device, "float32")).sum().backward()
    assert_close(wt.grad, np.broadcast_to(x.sum(0), (2, 3)).astype("float32"), "float32", rtol=1e-5)
    assert lin.weight.grad is None
    # with func.grad: per-parameter gradients of a loss
    seq = ember.nn.Sequential(ember.nn.Linear(3, 3), ember.nn.Tanh(), ember.nn.Linear(3, 1))
    seq.to(device)
    params = {k: v.detach() for k, v in seq.named_parameters()}
    xb = T(x, device, "float32")
    grads = F.grad(lambda p: F.functional_call(seq, p, (xb,)).sum())(params)
    seq(xb).sum().backward()
    for k, p in seq.named_parameters():
        assert_close(
            grads[k], N(p.grad).astype("float32"), "float32", rtol=1e-5, atol=1e-6, err_msg=k
        )


# ---- ember.autograd.functional ----------------------------------------------------------------


def test_autograd_functional_forms(device):
    import ember.autograd.functional as AF
    from ember.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp

    assert AF.jacobian is jacobian and ember.autograd.functional is AF
    xv, yv = RNG.normal(size=3), RNG.normal(size=(2,))
    x, y = T(xv, device), T(yv, device)

    def f1(x):
        return x * x * ember.exp(x)

    j = jacobian(f1, x)
    assert_close(j, np.diag((2 * xv + xv**2) * np.exp(xv)), "float64")
    jt = jacobian(lambda x, y: (x[:2] * y).sum(), (x, y))
    assert isinstance(jt, tuple) and jt[0].shape == (3,) and jt[1].shape == (2,)
    assert_close(jt[0], [yv[0], yv[1], 0.0], "float64")
    jo = jacobian(lambda x: (x * 2, x.sum()), x)
    assert isinstance(jo, tuple) and jo[0].shape == (3, 3) and jo[1].shape == (3,)
    jj = jacobian(lambda x, y: (x.sum() * y, y * 3), (x, y))
    assert len(jj) == 2 and len(jj[0]) == 2
    assert jj[0][0].shape == (2, 3) and jj[0][1].shape == (2, 2) and jj[1][0].shape == (2, 3)
    assert_close(jj[1][0], np.zeros((2, 3)), "float64")
    assert_close(jj[0][1], np.eye(2) * xv.sum(), "float64")
    with pytest.raises(
        RuntimeError, match="Output 1 of the user-provided function is independent of input 0"
    ):
        jacobian(lambda x, y: (x.sum() * y, y * 3), (x, y), strict=True)
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        jacobian(f1, [1.0, 2.0])
    jg = jacobian(f1, x.detach().requires_grad_(), create_graph=True)
    assert jg.requires_grad

    def g(x, y):
        return (x**3).sum() * y.sum()

    h = hessian(lambda x: (x**3).sum(), x)
    assert_close(h, np.diag(6 * xv), "float64")
    ht = hessian(g, (x, y))
    assert_close(ht[0][0], np.diag(6 * xv) * yv.sum(), "float64")
    assert_close(ht[0][1], np.broadcast_to((3 * xv**2)[:, None], (3, 2)), "float64")
    assert_close(ht[1][1], np.zeros((2, 2)), "float64")
    with pytest.raises(RuntimeError, match="should contain a single element"):
        hessian(f1, x)

    v = T(RNG.normal(size=3), device)
    out, vj = vjp(f1, x, v)
    assert_close(out, xv * xv * np.exp(xv), "float64")
    assert_close(vj, N(v) * (2 * xv + xv**2) * np.exp(xv), "float64")
    out, jv = jvp(f1, x, v)
    assert_close(jv, N(v) * (2 * xv + xv**2) * np.exp(xv), "float64")
    out, hv = hvp(lambda x: (x**3).sum(), x, v)
    assert_close(hv, 6 * xv * N(v), "float64")
    out, vh = vhp(lambda x: (x**3).sum(), x, v)
    assert_close(vh, 6 * xv * N(v), "float64")
    out, (vhx, vhy) = vhp(g, (x, y), (v, T([1.0, 0.0], device)))
    assert_close(vhx, 6 * xv * N(v) * yv.sum() + 3 * xv**2, "float64")
    with pytest.raises(RuntimeError, match="The vector v can only be None"):
        vjp(f1, x)
    with pytest.raises(RuntimeError, match="v has invalid size"):
        vjp(f1, x, T([1.0], device))
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length"):
        jvp(lambda a, b: a * b, (x, x), (v,))
    out, g0 = vjp(lambda s: s * s, T(3.0, device))
    assert_close(g0, 6.0, "float64")
    with pytest.raises(RuntimeError, match="does not require gradients"):
        vjp(lambda x: T([1.0, 2.0, 3.0], device), x, v, strict=True)
    out, vj = vjp(lambda x: T([1.0, 2.0, 3.0], device), x, v)
    assert_close(vj, np.zeros(3), "float64")
