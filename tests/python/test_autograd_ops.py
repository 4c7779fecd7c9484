"""Gradients of every differentiable ember op against central finite differences in float64
(complex inputs too, with PyTorch's convention grad = dL/dRe + i dL/dIm), on both devices:
elementwise rows of the op table, reductions, the matmul family, views, indexing, take, setitem,
casts, where and clip, with broadcasting and non-contiguous inputs, and second derivatives."""

from __future__ import annotations

import ember
import numpy as np
import pytest

EPS = 1e-6


def _ember(a, device, requires_grad=True):
    x = ember.asarray(np.asarray(a), device=device)
    return x.requires_grad_() if requires_grad else x


def _np(x):
    return ember.asnumpy(x)


def gradcheck(fn, inputs, device, *, rtol=1e-5, atol=1e-6, wrt=None, view=None):
    """Checks autograd's gradients of sum(fn(*xs) * w) (w a fixed random weight) against
    central differences. ``inputs`` are NumPy float64/complex128 arrays; ``wrt`` the indices of
    the inputs to differentiate (all by default); ``view`` maps each ember input to what fn
    gets (e.g. a non-contiguous view of it)."""
    wrt = range(len(inputs)) if wrt is None else wrt
    rng = np.random.default_rng(7)
    view = view or (lambda i, x: x)

    def run(arrays, grad):
        xs = [_ember(a, device, grad and i in wrt) for i, a in enumerate(arrays)]
        out = fn(*[view(i, x) for i, x in enumerate(xs)])
        return xs, out

    xs, out = run(inputs, True)
    w_np = rng.standard_normal(out.shape)
    if np.iscomplexobj(_np(out)):
        w_np = w_np + 1j * rng.standard_normal(out.shape)
    w = ember.asarray(w_np, device=device)

    def loss_of(o):
        s = ember.sum(o * w)
        return ember.real(s) if np.iscomplexobj(_np(s)) else s

    loss = loss_of(out)
    got = ember.autograd.grad(loss, [xs[i] for i in wrt], allow_unused=True)
    for k, i in enumerate(wrt):
        base = np.array(inputs[i], dtype=np.result_type(inputs[i], np.float64))
        want = np.zeros_like(base)
        flat, wflat = base.reshape(-1), want.reshape(-1)
        parts = (1.0, 1j) if np.iscomplexobj(base) else (1.0,)
        for j in range(flat.size):
            for unit in parts:
                vals = []
                for sgn in (1, -1):
                    pert = flat.copy()
                    pert[j] += sgn * EPS * unit
                    arrays = list(inputs)
                    arrays[i] = pert.reshape(base.shape)
                    _, o = run(arrays, True)  # fn may itself differentiate
                    vals.append(float(loss_of(o)))
                wflat[j] += unit * (vals[0] - vals[1]) / (2 * EPS)
        g = got[k]
        g = np.zeros_like(want) if g is None else _np(g)
        assert g.shape == want.shape, f"input {i}: gradient shape {g.shape}, want {want.shape}"
        np.testing.assert_allclose(g, want, rtol=rtol, atol=atol, err_msg=f"input {i}")
    return out


def rand(shape, lo=-2.0, hi=2.0, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def crand(shape, seed=0):
    r = np.random.default_rng(seed)
    return r.uniform(-1.5, 1.5, shape) + 1j * r.uniform(-1.5, 1.5, shape)


# ---- elementwise ---------------------------------------------------------------------------

# name -> (low, high) of the inputs (away from poles, branch cuts and kinks)
UNARY = {
    "negative": (-2, 2),
    "positive": (-2, 2),
    "abs": (0.2, 2),
    "square": (-2, 2),
    "reciprocal": (0.5, 2),
    "sqrt": (0.3, 2),
    "exp": (-2, 2),
    "expm1": (-2, 2),
    "log": (0.3, 2),
    "log1p": (-0.5, 2),
    "log2": (0.3, 2),
    "log10": (0.3, 2),
    "sin": (-2, 2),
    "cos": (-2, 2),
    "tan": (-1.2, 1.2),
    "asin": (-0.8, 0.8),
    "acos": (-0.8, 0.8),
    "atan": (-2, 2),
    "sinh": (-2, 2),
    "cosh": (-2, 2),
    "tanh": (-2, 2),
    "asinh": (-2, 2),
    "acosh": (1.2, 3),
    "atanh": (-0.8, 0.8),
    "conj": (-2, 2),
    "real": (-2, 2),
    "imag": (-2, 2),
    "sign": (0.2, 2),
    "floor": (0.1, 0.9),
    "ceil": (0.1, 0.9),
    "trunc": (0.1, 0.9),
    "round": (0.1, 0.4),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(device, name):
    lo, hi = UNARY[name]
    x = rand((2, 3), lo, hi)
    if name in ("abs", "sign"):
        x = x * np.array([1, -1, 1])
    gradcheck(getattr(ember, name), [x], device)


def test_op_table_is_covered():
    """Every op-table row is either tested here or listed as not differentiable."""
    nondiff = {
        "equal",
        "not_equal",
        "less",
        "less_equal",
        "greater",
        "greater_equal",
        "logical_and",
        "logical_or",
        "logical_xor",
        "logical_not",
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
        "gcd",
        "lcm",
        "bitwise_invert",
        "bitwise_left_shift",
        "bitwise_right_shift",
        "signbit",
        "isnan",
        "isinf",
        "isfinite",
        "nextafter",
    }
    covered = set(UNARY) | set(BINARY) | {"clip", "where"}
    rows = {name for name, _ in ember._core.elementwise_ops()}
    assert rows - covered - nondiff == set()


BINARY = {
    "add": ((-2, 2), (-2, 2)),
    "subtract": ((-2, 2), (-2, 2)),
    "multiply": ((-2, 2), (-2, 2)),
    "divide": ((-2, 2), (0.5, 2)),
    "pow": ((0.5, 2), (-2, 2)),
    "remainder": ((0.1, 0.9), (1.5, 2)),
    "fmod": ((0.1, 0.9), (1.5, 2)),
    "floor_divide": ((0.1, 0.9), (1.5, 2)),
    "atan2": ((-2, 2), (0.3, 2)),
    "hypot": ((-2, 2), (0.3, 2)),
    "copysign": ((0.3, 2), (0.3, 2)),
    "logaddexp": ((-2, 2), (-2, 2)),
    "maximum": ((-2, 2), (-2, 2)),
    "minimum": ((-2, 2), (-2, 2)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast(device, name):
    (a0, a1), (b0, b1) = BINARY[name]
    a = rand((3, 1), a0, a1, seed=1)
    b = rand((4,), b0, b1, seed=2)
    if name == "copysign":
        b = b * np.array([1, -1, 1, -1])
    gradcheck(getattr(ember, name), [a, b], device)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "pow", "maximum"])
@pytest.mark.parametrize("scalar_first", [False, True])
def test_binary_with_python_scalar(device, name, scalar_first):
    a = rand((2, 3), 0.5, 2)
    s = 1.7

    def f(x):
        op = getattr(ember, name)
        return op(s, x) if scalar_first else op(x, s)

    gradcheck(f, [a], device)


def test_operators_and_integer_power(device):
    x = rand((5,), 0.5, 2)
    gradcheck(lambda v: v**2 + v**3 - 1 / v + (-v) * 2 + v**0.5 - 3 ** (v / 2), [x], device)


def test_pow_exponent_zero_and_zero_base(device):
    # d/dx x**0 = 0; d/db 0**b = 0 for b >= 0 (PyTorch's masks).
    x = _ember(np.array([0.0, 1.5]), device)
    (g,) = ember.autograd.grad(ember.sum(x**0), [x])
    assert np.array_equal(_np(g), [0.0, 0.0])
    b = _ember(np.array([2.0, 3.0]), device)
    base = ember.asarray(np.array([0.0, 0.0]), device=device)
    (gb,) = ember.autograd.grad(ember.sum(base**b), [b])
    assert np.array_equal(_np(gb), [0.0, 0.0])


def test_maximum_ties_split(device):
    a = _ember(np.array([1.0, 2.0, 3.0]), device)
    b = _ember(np.array([1.0, 1.0, 4.0]), device)
    ember.sum(ember.maximum(a, b)).backward()
    assert np.array_equal(_np(a.grad), [0.5, 1.0, 0.0])
    assert np.array_equal(_np(b.grad), [0.5, 0.0, 1.0])


def test_where(device):
    cond = np.array([[True, False, True], [False, False, True]])
    a, b = rand((2, 3), seed=3), rand((3,), seed=4)
    gradcheck(lambda x, y: ember.where(ember.asarray(cond, device=device), x, y), [a, b], device)
    gradcheck(lambda x: ember.where(ember.asarray(cond, device=device), x, 0.5), [a], device)


def test_clip(device):
    x = np.array([-1.5, -0.5, 0.2, 0.7, 1.4, 2.5])
    gradcheck(lambda v: ember.clip(v, -1.0, 1.0), [x], device)
    gradcheck(lambda v: ember.clip(v, None, 1.0), [x], device)
    lo = np.array([-1.0, 0.0, 0.5, -2.0, 2.0, 3.0])
    hi = np.array([1.0, 1.0, 1.0, 0.0, 1.0, 2.0])  # the last two have lo > hi
    gradcheck(lambda v, a, b: ember.clip(v, a, b), [x, lo, hi], device)


COMPLEX_UNARY = [
    "negative",
    "conj",
    "real",
    "imag",
    "abs",
    "square",
    "reciprocal",
    "sqrt",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "asin",
    "acos",
    "atan",
    "asinh",
    "atanh",
    "sign",
]


@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_complex_unary(device, name):
    z = crand((4,), seed=5) * 0.5 + 0.3
    gradcheck(getattr(ember, name), [z], device)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "pow"])
def test_complex_binary(device, name):
    a = crand((3,), seed=6) + 1.0
    b = crand((3,), seed=8) * 0.5 + 0.5
    gradcheck(getattr(ember, name), [a, b], device)


def test_complex_from_real(device):
    # a real input combined with a complex one gets the real part of its gradient
    a = rand((3,), seed=9)
    c = crand((3,), seed=10)
    gradcheck(lambda x, z: x * z + ember.abs(z * x), [a, c], device)


# ---- reductions ----------------------------------------------------------------------------


@pytest.mark.parametrize("fn", ["sum", "mean", "prod", "max", "min", "var", "std"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ((0, 2), False)])
def test_reductions(device, fn, axis, keepdims):
    x = rand((2, 3, 2), 0.5, 2, seed=11)
    gradcheck(lambda v: getattr(ember, fn)(v, axis=axis, keepdims=keepdims), [x], device)


def test_var_correction(device):
    x = rand((3, 4), seed=12)
    gradcheck(lambda v: ember.var(v, axis=1, correction=1), [x], device)
    gradcheck(lambda v: v.std(ddof=1), [x], device)


@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_prod_with_zeros(device, zeros):
    x = rand((2, 4), 0.5, 2, seed=13)
    x[0, :zeros] = 0.0
    x[1, 3 - zeros + 1 :] = 0.0
    gradcheck(lambda v: ember.prod(v, axis=1), [x], device)
    gradcheck(lambda v: ember.prod(v), [x], device)


def test_max_ties_share_evenly(device):
    x = _ember(np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]]), device)
    ember.max(x).backward()
    assert np.allclose(_np(x.grad), [[0, 0.5, 0.5], [0, 0, 0]])
    x.grad = None
    ember.min(x, axis=1).sum().backward()
    assert np.allclose(_np(x.grad), [[1, 0, 0], [0, 1, 0]])


def test_complex_reductions(device):
    z = crand((2, 3), seed=14)
    gradcheck(lambda v: ember.sum(v, axis=0), [z], device)
    gradcheck(lambda v: ember.mean(v), [z], device)
    gradcheck(lambda v: ember.prod(v, axis=1), [z], device)
    gradcheck(lambda v: ember.var(v, axis=1), [z], device)


def test_sum_dtype_and_float32(device):
    x = ember.asarray(np.arange(6, dtype=np.float32).reshape(2, 3), device=device)
    x.requires_grad_()
    y = ember.sum(x * x, dtype=ember.float64)
    y.backward()
    assert x.grad.dtype == ember.float32
    assert np.allclose(_np(x.grad), 2 * np.arange(6).reshape(2, 3))


# ---- matmul family -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((3, 4), (4, 2)),
        ((4,), (4, 2)),
        ((3, 4), (4,)),
        ((4,), (4,)),
        ((2, 3, 4), (4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((4,), (2, 4, 3)),
        ((2, 3, 4), (4,)),
    ],
)
def test_matmul(device, sa, sb):
    gradcheck(ember.matmul, [rand(sa, seed=15), rand(sb, seed=16)], device)


def test_matmul_transposed_and_strided_operands(device):
    a, b = rand((4, 3), seed=17), rand((6, 8), seed=18)
    gradcheck(
        lambda x, y: x @ y,
        [a, b],
        device,
        view=lambda i, v: v.T if i == 0 else v[1::2, ::2].T,
    )


def test_complex_matmul(device):
    gradcheck(ember.matmul, [crand((2, 3), seed=19), crand((3, 2), seed=20)], device)


@pytest.mark.parametrize(
    "fn,sa,sb",
    [
        (ember.dot, (3, 4), (4, 2)),
        (ember.dot, (2, 3, 4), (4, 2)),
        (ember.inner, (2, 4), (3, 4)),
        (ember.outer, (3,), (4,)),
        (lambda a, b: ember.tensordot(a, b, axes=([1, 2], [0, 1])), (2, 3, 4), (3, 4, 2)),
        (ember.vdot, (6,), (6,)),
        (ember.vecdot, (3, 4), (3, 4)),
        (ember.kron, (2, 2), (2, 3)),
        (lambda a, b: ember.einsum("ij,jk->ik", a, b), (2, 3), (3, 4)),
        (lambda a, b: ember.einsum("bij,bjk->bik", a, b), (2, 2, 3), (2, 3, 2)),
        (lambda a, b: ember.einsum("ii,i->i", a, b), (3, 3), (3,)),
    ],
)
def test_matmul_family(device, fn, sa, sb):
    gradcheck(fn, [rand(sa, seed=21), rand(sb, seed=22)], device)


def test_trace_and_diagonal(device):
    x = rand((3, 4), seed=23)
    gradcheck(ember.trace, [x], device)
    gradcheck(lambda v: ember.diagonal(v, offset=1), [x], device)
    gradcheck(lambda v: ember.linalg.diagonal(v, offset=-1), [x], device)


def test_linalg_norms(device):
    x = rand((3, 4), seed=24)
    gradcheck(ember.linalg.vector_norm, [x], device)
    gradcheck(lambda v: ember.linalg.matrix_norm(v), [x], device)


# ---- views, indexing and copies ------------------------------------------------------------

VIEWS = {
    "reshape": lambda v: v.reshape(4, 6),
    "reshape_copy": lambda v: v.mT.reshape(-1),
    "transpose": lambda v: v.transpose(),
    "permute": lambda v: ember.permute_dims(v, (1, 2, 0)),
    "swapaxes": lambda v: v.swapaxes(0, 2),
    "mT": lambda v: v.mT,
    "broadcast_to": lambda v: ember.broadcast_to(v[:, :1], (3, 2, 2, 4)),
    "expand_dims": lambda v: ember.expand_dims(v, 1),
    "squeeze": lambda v: ember.squeeze(v[:, :1], axis=1),
    "getitem_int": lambda v: v[1],
    "getitem_slices": lambda v: v[::-1, 1:, ::3],
    "getitem_mixed": lambda v: v[None, 0, ..., -1],
    "ravel": lambda v: v.ravel(),
    "flatten": lambda v: v.flatten(),
    "copy": lambda v: v.copy(),
    "astype_complex": lambda v: ember.real(v.astype(ember.complex128) * (1 + 2j)),
    "astype_same": lambda v: v.astype(ember.float64, copy=False) * 2,
    "to": lambda v: v.to(v.device),
    "take_flat": lambda v: ember.take(v, ember.asarray([3, 0, 3, -1, 7], device=v.device)),
    "take_axis": lambda v: ember.take(v, ember.asarray([[2, 0], [2, 2]], device=v.device), axis=2),
    "diagonal_3d": lambda v: ember.diagonal(v, axis1=1, axis2=2),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views(device, name):
    x = rand((2, 3, 4), seed=25)
    gradcheck(VIEWS[name], [x], device)


def test_astype_float32_gradient_dtype(device):
    x = _ember(np.array([1.0, 2.0]), device)
    y = x.astype(ember.float32)
    assert y.grad_fn.name() == "AstypeBackward"
    ember.sum(y * y).backward()
    assert x.grad.dtype == ember.float64
    assert np.allclose(_np(x.grad), [2.0, 4.0])
    assert x.astype(ember.int32).requires_grad is False


def test_gradcheck_catches_a_wrong_gradient(device):
    class Wrong(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g  # should be 2 x g

    with pytest.raises(AssertionError):
        gradcheck(Wrong.apply, [rand((3,), 0.5, 2)], device)


@pytest.mark.parametrize("layout", ["transposed", "strided", "reversed"])
def test_non_contiguous_inputs(device, layout):
    pick = {
        "transposed": lambda i, v: v.T,
        "strided": lambda i, v: v[::2, 1::2],
        "reversed": lambda i, v: v[::-1],
    }[layout]
    a, b = rand((4, 6), seed=26), rand((4, 6), 0.5, 2, seed=27)
    gradcheck(
        lambda x, y: ember.exp(x) * y / (y + 1) + ember.sum(x * y, axis=0),
        [a, b],
        device,
        view=pick,
    )


def test_setitem(device):
    def f(x, v):
        y = x * 1.0
        y[1:, ::2] = v
        y[0, 0] = 3.0
        return y * y

    gradcheck(f, [rand((3, 4), seed=28), rand((2,), seed=29)], device)


def test_inplace_ops_on_non_leaf(device):
    def f(x, w):
        y = x * 2.0
        y *= w
        y += x
        y /= 3.0
        y **= 2
        return y

    gradcheck(f, [rand((2, 3), 0.5, 2, seed=30), rand((3,), seed=31)], device)


def test_inplace_through_views(device):
    def f(x, w):
        y = x * 1.0
        y[:, 1:] *= w
        y[0] += 1.0
        y.T[2] -= x[:, 0]
        v = y.reshape(6)
        v[::2] = ember.exp(v[::2])
        return y * y

    gradcheck(f, [rand((2, 3), seed=35), rand((2,), seed=36)], device)


def test_take_repeated_indices_accumulate(device):
    x = _ember(np.arange(5.0), device)
    idx = ember.asarray([1, 1, 4, 1], device=device)
    ember.sum(ember.take(x, idx) * ember.asarray([1.0, 2.0, 3.0, 4.0], device=device)).backward()
    assert np.array_equal(_np(x.grad), [0, 7, 0, 0, 3])


def test_take_second_derivative(device):
    x = _ember(np.array([1.0, 2.0, 3.0]), device)
    idx = ember.asarray([0, 2, 2], device=device)
    y = ember.sum(ember.take(x, idx) ** 3)
    (g,) = ember.autograd.grad(y, [x], create_graph=True)
    (h,) = ember.autograd.grad(ember.sum(g), [x])
    assert np.allclose(_np(h), [6.0, 0.0, 36.0])


# ---- second derivatives --------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn,d2",
    [
        (lambda x: x**3, lambda x: 6 * x),
        (ember.sin, lambda x: -np.sin(x)),
        (ember.exp, np.exp),
        (ember.tanh, lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
        (lambda x: 1 / x, lambda x: 2 / x**3),
        (ember.log, lambda x: -1 / x**2),
        (ember.sqrt, lambda x: -0.25 * x**-1.5),
    ],
)
def test_second_derivatives(device, fn, d2):
    x0 = np.array([0.5, 1.0, 1.7])
    x = _ember(x0, device)
    (g,) = ember.autograd.grad(ember.sum(fn(x)), [x], create_graph=True)
    assert g.requires_grad
    (h,) = ember.autograd.grad(ember.sum(g), [x])
    np.testing.assert_allclose(_np(h), d2(x0), rtol=1e-10)


def test_hessian_vector_product_through_matmul(device):
    a0 = rand((3, 3), seed=32)
    x0 = rand((3,), seed=33)
    a = ember.asarray(a0, device=device)
    x = _ember(x0, device)
    f = ember.sum(ember.tanh(a @ x) ** 2)
    (g,) = ember.autograd.grad(f, [x], create_graph=True)
    # the gradient of g . v is H v: compare with differences of the gradient
    v = np.array([0.3, -0.2, 0.5])
    (hv,) = ember.autograd.grad(ember.sum(g * ember.asarray(v, device=device)), [x])

    def grad_at(p):
        xp = _ember(p, device)
        (gp,) = ember.autograd.grad(ember.sum(ember.tanh(a @ xp) ** 2), [xp])
        return _np(gp)

    fd = (grad_at(x0 + EPS * v) - grad_at(x0 - EPS * v)) / (2 * EPS)
    np.testing.assert_allclose(_np(hv), fd, rtol=1e-5, atol=1e-7)


def test_gradcheck_of_gradient(device):
    # the gradient function itself checked by finite differences (third derivatives exist)
    def grad_fn(x):
        (g,) = ember.autograd.grad(ember.sum(ember.sin(x) * x**2), [x], create_graph=True)
        return g

    gradcheck(grad_fn, [rand((4,), seed=34)], device)
