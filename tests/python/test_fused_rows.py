"""The fused row kernels behind ember.nn.functional's softmax, log_softmax, cross_entropy (class
indices) and layer_norm (src/core/rows.cpp, backend rows()): values against NumPy in float64 over
the floating dtypes, row lengths that take every kernel path (a warp per row, a block with the
row in registers, the streamed two-read path), empty / one-element / non-contiguous / non-last
axis inputs, extreme logits, ignore_index, class weights, label smoothing and reductions;
gradients (and second derivatives) against central finite differences in float64."""

from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from _helpers import np_dtype, to_numpy
from _nn_helpers import _cpu_by_default, gradcheck  # noqa: F401

DTYPES = ["float16", "bfloat16", "float32", "float64"]
# output rounding of the dtype (the reference is computed from the rounded input)
TOL = {
    "float16": dict(rtol=2e-3, atol=2e-5),
    "bfloat16": dict(rtol=1.6e-2, atol=1e-4),
    "float32": dict(rtol=3e-5, atol=1e-8),
    "float64": dict(rtol=1e-11, atol=1e-14),
}
# row lengths: 1, warp rows (<= 512), block rows held in registers (<= 4096), streamed rows
LENGTHS = [1, 7, 512, 513, 1000, 4096, 5000, 70000]


def rng(seed=0):
    return np.random.default_rng(seed)


def make(x, dtype, device):
    """(ember array of dtype, float64 NumPy values of the rounded input)."""
    xd = np.asarray(x).astype(np_dtype(dtype))
    return ember.asarray(xd, device=device), xd.astype(np.float64)


def check(actual, expected, dtype, **kw):
    tol = dict(TOL[dtype])
    tol.update(kw)
    a = to_numpy(actual)
    assert str(a.dtype) == str(np_dtype(dtype)), f"result dtype {a.dtype}, want {dtype}"
    np.testing.assert_allclose(a.astype(np.float64), expected, **tol)


def np_log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    s = x - m
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def np_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


def np_cross_entropy(x, t, w=None, ignore_index=-100, ls=0.0, reduction="mean"):
    """PyTorch's cross_entropy with class indices, classes on axis 1 (0 for 1-D input)."""
    axis = 0 if x.ndim == 1 else 1
    lp = np.moveaxis(np_log_softmax(x, axis), axis, -1)
    c = lp.shape[-1]
    w = np.ones(c) if w is None else np.asarray(w, np.float64)
    valid = t != ignore_index
    tc = np.where(valid, t, 0)
    wt = np.where(valid, w[tc], 0.0)
    nll = -np.take_along_axis(lp, tc[..., None], -1)[..., 0] * wt
    smooth = np.where(valid, -(lp * w).sum(-1), 0.0)
    loss = (1 - ls) * nll + (ls / c * smooth if ls else 0.0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / wt.sum()


def np_layer_norm(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    d = x - x.mean(axis=axes, keepdims=True)
    y = d / np.sqrt((d * d).mean(axis=axes, keepdims=True) + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def grad_fn_name(y):
    fn = y.grad_fn
    return type(fn).__name__ if not hasattr(fn, "name") else fn.name()


# ---------------------------------------------------------------------------------------------
# softmax / log_softmax
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_softmax_rows(device, dtype, n):
    rows = 3 if n <= 5000 else 2
    x, xr = make(rng(n).standard_normal((rows, n)) * 3, dtype, device)
    check(F.softmax(x, -1), np_softmax(xr, -1), dtype)
    check(F.log_softmax(x, 1), np_log_softmax(xr, 1), dtype, atol=TOL[dtype]["rtol"] * 10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_layouts(device, dtype):
    base = rng(1).standard_normal((6, 5, 40))
    x, xr = make(base, dtype, device)
    for dim in (0, 1, 2, -1):
        check(F.softmax(x, dim), np_softmax(xr, dim), dtype)
        check(F.log_softmax(x, dim), np_log_softmax(xr, dim), dtype, atol=1e-6)
    # non-contiguous: transposed and strided views
    xt = ember.permute_dims(x, (2, 0, 1))
    check(F.softmax(xt, -1), np_softmax(np.transpose(xr, (2, 0, 1)), -1), dtype)
    xs = x[::2, :, 1::3]
    check(F.log_softmax(xs, -1), np_log_softmax(xr[::2, :, 1::3], -1), dtype, atol=1e-6)
    # a misaligned view (no vector loads)
    flat, fr = make(rng(2).standard_normal(4 * 64 + 1), dtype, device)
    v = flat[1:].reshape((4, 64))
    check(F.softmax(v, -1), np_softmax(fr[1:].reshape(4, 64), -1), dtype)


def test_softmax_empty_and_0d(device):
    for shape, dim in (((0, 5), 1), ((4, 0), 1), ((0, 3), 0), ((3, 0, 2), 2)):
        x = ember.zeros(shape, dtype=ember.float32, device=device)
        for f in (F.softmax, F.log_softmax):
            y = f(x, dim)
            assert y.shape == shape and y.dtype == ember.float32
    x = ember.asarray(np.float32(2.5), device=device)
    assert float(F.softmax(x, 0)) == 1.0
    assert float(F.log_softmax(x, 0)) == 0.0
    one = ember.asarray(np.array([[3.0], [-1e30]]), device=device)
    np.testing.assert_array_equal(to_numpy(F.softmax(one, 1)), [[1.0], [1.0]])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [5, 3000, 9000])
def test_softmax_extreme_values(device, dtype, n):
    r = rng(3)
    x = r.standard_normal((4, n))
    x[0, :] += 1e4 if dtype != "float16" else 6e4
    x[1, ::3] = -np.inf
    x[2, :] *= 1e4 if dtype != "float16" else 5e3  # float16 log-probabilities end at -65504
    x[3, 1:] = -np.inf  # one finite entry
    xe, xr = make(x, dtype, device)
    check(F.softmax(xe, 1), np_softmax(xr, 1), dtype)
    ls = to_numpy(F.log_softmax(xe, 1)).astype(np.float64)
    ref = np_log_softmax(xr, 1)
    finite = np.isfinite(ref)
    assert (ls[~finite] == -np.inf).all()
    np.testing.assert_allclose(ls[finite], ref[finite], rtol=TOL[dtype]["rtol"], atol=1e-3)


def test_softmax_nan_and_all_minus_inf_rows(device):
    for n in (6, 5000):
        x = np.zeros((3, n))
        x[0, :] = -np.inf
        x[1, 2] = np.nan
        x[2, 4] = np.inf
        xe = ember.asarray(x, device=device)
        for f in (F.softmax, F.log_softmax):
            y = to_numpy(f(xe, 1))
            assert np.isnan(y).all(axis=1).tolist() == [True, True, True], (f, n)


# ---------------------------------------------------------------------------------------------
# cross_entropy (class indices)
# ---------------------------------------------------------------------------------------------


CE_CASES = [
    dict(),
    dict(reduction="sum"),
    dict(reduction="none"),
    dict(ignore_index=2),
    dict(weight=True),
    dict(weight=True, ignore_index=0, reduction="none"),
    dict(label_smoothing=0.2),
    dict(label_smoothing=0.1, weight=True, ignore_index=1),
    dict(label_smoothing=1.0, reduction="sum"),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(CE_CASES)))
@pytest.mark.parametrize("shape", [(5, 7), (4, 1030), (2, 5000), (7,), (3, 6, 2, 2)])
def test_cross_entropy(device, dtype, case, shape):
    kw = dict(CE_CASES[case])
    r = rng(case)
    c = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    x, xr = make(r.standard_normal(shape) * 2, dtype, device)
    t = r.integers(0, c, tshape)
    if tshape and kw.get("ignore_index") is not None:
        t.reshape(-1)[::3] = kw["ignore_index"]
    w = w_np = None
    if kw.pop("weight", False):
        w, w_np = make(r.uniform(0.2, 2.0, c), dtype, device)
    want = np_cross_entropy(
        xr,
        t,
        w_np,
        kw.get("ignore_index", -100),
        kw.get("label_smoothing", 0.0),
        kw.get("reduction", "mean"),
    )
    got = F.cross_entropy(x, ember.asarray(t, device=device), w, **kw)
    tol = dict(TOL[dtype])
    if dtype in ("float16", "bfloat16"):
        tol["atol"] = 4 * tol["rtol"]
    check(got, want, dtype, **tol)


@pytest.mark.parametrize("n", [10, 2000, 70000])
def test_cross_entropy_extreme_logits(device, n):
    x = rng(4).standard_normal((4, n))
    x[0] += 1e4
    x[1, ::2] = -np.inf
    x[2] *= 1e4
    x[3, 1:] = -1e4
    t = np.array([3, 1, 5, 0])
    for dt in ("float32", "float64"):
        xe, xr = make(x, dt, device)
        got = F.cross_entropy(xe, ember.asarray(t, device=device), reduction="none")
        want = np_cross_entropy(xr, t, reduction="none")
        check(got, want, dt, atol=1e-4)
        # a target at a -inf logit costs +inf
        tt = np.array([3, 0, 5, 0])
        got = to_numpy(F.cross_entropy(xe, ember.asarray(tt, device=device), reduction="none"))
        assert got[1] == np.inf


def test_cross_entropy_empty_and_all_ignored(device):
    x = ember.zeros((0, 4), dtype=ember.float32, device=device)
    t = ember.zeros((0,), dtype=ember.int64, device=device)
    assert float(F.cross_entropy(x, t, reduction="sum")) == 0.0
    assert np.isnan(float(F.cross_entropy(x, t)))
    assert F.cross_entropy(x, t, reduction="none").shape == (0,)
    x = ember.ones((3, 4), dtype=ember.float32, device=device)
    t = ember.asarray(np.array([-100, -100, -100]), device=device)
    assert np.isnan(float(F.cross_entropy(x, t)))
    assert float(F.cross_entropy(x, t, reduction="sum")) == 0.0


def test_cross_entropy_int_target_dtypes(device):
    x, xr = make(rng(5).standard_normal((6, 9)), "float64", device)
    t = np.array([0, 8, 3, 3, 1, 7])
    want = np_cross_entropy(xr, t)
    for dt in ("int32", "uint8", "int16"):
        got = F.cross_entropy(x, ember.asarray(t.astype(dt), device=device))
        check(got, want, "float64")


def test_cross_entropy_bad_target_cpu():
    x = ember.zeros((3, 4), dtype=ember.float32)
    with pytest.raises(IndexError, match="target 4 is out of bounds for 4 classes"):
        F.cross_entropy(x, ember.asarray(np.array([0, 4, 1])))
    with pytest.raises(IndexError, match="target -1"):
        F.cross_entropy(x, ember.asarray(np.array([0, -1, 1])))
    with pytest.raises(ValueError, match="target shape"):
        F.cross_entropy(x, ember.asarray(np.array([0, 1])))


def test_cross_entropy_bad_target_gpu_is_nan(device):
    if device == "cpu":
        pytest.skip("the CPU raises IndexError instead")
    x = ember.zeros((3, 4), dtype=ember.float32, device=device)
    got = to_numpy(
        F.cross_entropy(x, ember.asarray(np.array([0, 9, 1]), device=device), reduction="none")
    )
    assert np.isnan(got[1]) and np.isfinite(got[[0, 2]]).all()


# ---------------------------------------------------------------------------------------------
# layer_norm
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_rows(device, dtype, n, affine):
    r = rng(n)
    rows = 3 if n <= 5000 else 2
    x, xr = make(r.standard_normal((rows, n)) * 2 + 0.5, dtype, device)
    w = b = wr = br = None
    if affine:
        w, wr = make(r.uniform(0.5, 1.5, n), dtype, device)
        b, br = make(r.standard_normal(n), dtype, device)
    got = F.layer_norm(x, (n,), w, b, eps=1e-5)
    want = np_layer_norm(xr, 1, wr, br)
    tol = dict(TOL[dtype])
    tol["atol"] = max(tol["atol"], 4 * tol["rtol"]) if n > 1 else 1e-3
    if dtype == "float32":
        tol["atol"] = 2e-5
    check(got, want, dtype, **tol)


@pytest.mark.parametrize("n", [300, 3000, 9000])
def test_layer_norm_large_offset(device, n):
    # mean 1e4, unit variance: needs the two-pass / Welford statistics, not sum of squares
    x, xr = make(rng(6).standard_normal((3, n)) + 1e4, "float32", device)
    check(F.layer_norm(x, (n,)), np_layer_norm(xr, 1), "float32", rtol=1e-3, atol=4e-3)


def test_layer_norm_layouts(device):
    r = rng(7)
    x, xr = make(r.standard_normal((4, 3, 5, 6)), "float64", device)
    w, wr = make(r.standard_normal((5, 6)), "float64", device)
    b, br = make(r.standard_normal((5, 6)), "float64", device)
    check(F.layer_norm(x, (5, 6), w, b, 1e-3), np_layer_norm(xr, 2, wr, br, 1e-3), "float64")
    xt = ember.permute_dims(x, (1, 0, 3, 2))
    check(F.layer_norm(xt, (6, 5)), np_layer_norm(np.transpose(xr, (1, 0, 3, 2)), 2), "float64")
    xs = x[:, ::2, :, 1:]
    check(F.layer_norm(xs, (5,)), np_layer_norm(xr[:, ::2, :, 1:], 1), "float64")
    e = ember.zeros((0, 8), dtype=ember.float32, device=device)
    assert F.layer_norm(e, (8,)).shape == (0, 8)


def test_layer_norm_mixed_dtype_params_take_composed_path(device):
    x, xr = make(rng(8).standard_normal((3, 8)), "float32", device)
    w = ember.asarray(np.ones(8), device=device)  # float64 weight: the result promotes
    y = F.layer_norm(x, (8,), w)
    assert y.dtype == ember.float64
    check(y, np_layer_norm(xr, 1), "float64", rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# gradients (float64, central differences)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_grad(device, dim):
    x = rng(9).standard_normal((4, 3, 5))
    for f in (F.softmax, F.log_softmax):
        gradcheck(lambda t, f=f: f(t, dim), [x], device=device)
    # non-contiguous input
    gradcheck(lambda t: F.softmax(ember.permute_dims(t, (2, 1, 0)), dim), [x], device=device)


@pytest.mark.parametrize("case", range(len(CE_CASES)))
def test_cross_entropy_grad(device, case):
    kw = dict(CE_CASES[case])
    r = rng(10 + case)
    x = r.standard_normal((5, 4))
    t = r.integers(0, 4, 5)
    if kw.get("ignore_index") is not None:
        t[::2] = kw["ignore_index"]
    w = r.uniform(0.5, 2.0, 4) if kw.pop("weight", False) else None
    te = ember.asarray(t, device=device)
    we = None if w is None else ember.asarray(w, device=device)
    gradcheck(lambda a: F.cross_entropy(a, te, we, **kw), [x], device=device)
    # classes on axis 1 of a 4-d input
    x4 = r.standard_normal((2, 4, 3, 2))
    t4 = ember.asarray(r.integers(0, 4, (2, 3, 2)), device=device)
    gradcheck(lambda a: F.cross_entropy(a, t4, we, **kw), [x4], device=device)


def test_layer_norm_grad(device):
    r = rng(11)
    x = r.standard_normal((7, 3, 4))
    w = r.uniform(0.5, 1.5, (3, 4))
    b = r.standard_normal((3, 4))
    gradcheck(lambda a, g, h: F.layer_norm(a, (3, 4), g, h), [x, w, b], device=device)
    gradcheck(lambda a, g: F.layer_norm(a, (4,), g[0]), [x, w], device=device)
    gradcheck(lambda a: F.layer_norm(ember.permute_dims(a, (1, 0, 2)), (4,)), [x], device=device)
    # many rows: several partial sums of dgamma / dbeta
    xl = r.standard_normal((300, 4))
    gradcheck(
        lambda a, g, h: F.layer_norm(a, (4,), g, h), [xl, w[0], b[0]], device=device, wrt=[1, 2]
    )


def test_fused_nodes_are_recorded(device):
    x = ember.asarray(rng(12).standard_normal((3, 5)), device=device).requires_grad_()
    t = ember.asarray(np.array([1, 0, 4]), device=device)
    names = [
        grad_fn_name(F.softmax(x, 1)),
        grad_fn_name(F.log_softmax(x, 1)),
        grad_fn_name(F.layer_norm(x, (5,))),
        grad_fn_name(F.cross_entropy(x, t, reduction="none").astype(ember.float64, copy=False)),
    ]
    assert names[:3] == ["SoftmaxBackward", "LogSoftmaxBackward", "LayerNormBackward"], names
    assert names[3] == "CrossEntropyBackward", names


def _analytic_check(f, x, g, ref_grad, dtype, device, **tol):
    xe = ember.asarray(x.astype(np_dtype(dtype)), device=device).requires_grad_()
    y = f(xe)
    (y * ember.asarray(g.astype(np_dtype(dtype)), device=device)).sum().backward()
    got = to_numpy(xe.grad).astype(np.float64)
    np.testing.assert_allclose(got, ref_grad, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [33, 2000, 5000, 70000])
def test_long_row_gradients(device, dtype, n):
    # the backward kernels on every path, against the analytic formulas in float64
    r = rng(n)
    x = r.standard_normal((2, n)).astype(np_dtype(dtype)).astype(np.float64)
    g = r.standard_normal((2, n)).astype(np_dtype(dtype)).astype(np.float64)
    y = np_softmax(x, 1)
    lowp = dtype in ("float16", "bfloat16")
    tol = dict(rtol=5e-2, atol=5e-2 / n**0.5) if lowp else dict(rtol=1e-4, atol=1e-7)
    if dtype == "float64":
        tol = dict(rtol=1e-9, atol=1e-12)
    _analytic_check(
        lambda a: F.softmax(a, 1),
        x,
        g,
        y * (g - (g * y).sum(1, keepdims=True)),
        dtype,
        device,
        **tol,
    )
    lt = dict(tol)
    lt["atol"] = 5e-2 if lowp else lt["atol"] * 10
    _analytic_check(
        lambda a: F.log_softmax(a, 1), x, g, g - y * g.sum(1, keepdims=True), dtype, device, **lt
    )
    # layer norm
    d = x - x.mean(1, keepdims=True)
    rs = 1 / np.sqrt((d * d).mean(1, keepdims=True) + 1e-5)
    xh = d * rs
    dx = rs * (g - g.mean(1, keepdims=True) - xh * (g * xh).mean(1, keepdims=True))
    lt["atol"] = 5e-2 if lowp else 1e-4 if dtype == "float32" else 1e-9
    _analytic_check(lambda a: F.layer_norm(a, (n,)), x, g, dx, dtype, device, **lt)
    # cross entropy (sum): softmax - onehot
    t = np.array([0, n - 1])
    oh = np.zeros_like(x)
    oh[np.arange(2), t] = 1
    xe = ember.asarray(x.astype(np_dtype(dtype)), device=device).requires_grad_()
    F.cross_entropy(xe, ember.asarray(t, device=device), reduction="sum").backward()
    np.testing.assert_allclose(to_numpy(xe.grad).astype(np.float64), y - oh, **tol)


def test_second_derivatives(device):
    # the backward of the fused nodes under create_graph is composed of ember ops: check the
    # gradient of sum(grad(f) * c2) against central differences of grad(f)
    r = rng(13)
    x = r.standard_normal((3, 4))
    t = ember.asarray(np.array([1, 3, 0]), device=device)
    w = ember.asarray(r.uniform(0.5, 2, 4), device=device)
    c = ember.asarray(r.standard_normal((3, 4)), device=device)
    c2 = r.standard_normal((3, 4))
    fns = [
        lambda a: F.softmax(a, 1),
        lambda a: F.log_softmax(a, 0),
        lambda a: F.layer_norm(a, (4,)),
        lambda a: F.cross_entropy(a, t, w, label_smoothing=0.1),
    ]
    for f in fns:

        def first(xn, create, f=f):
            a = ember.asarray(xn, device=device).requires_grad_()
            y = f(a)
            obj = (y * c).sum() if y.ndim else y
            (g,) = ember.autograd.grad(obj, [a], create_graph=create)
            return a, g

        a, g = first(x, True)
        (h,) = ember.autograd.grad((g * ember.asarray(c2, device=device)).sum(), [a])
        num = np.zeros_like(x)
        eps = 1e-6
        for idx in np.ndindex(x.shape):
            xp, xm = x.copy(), x.copy()
            xp[idx] += eps
            xm[idx] -= eps
            fp = np.sum(to_numpy(first(xp, False)[1]) * c2)
            fm = np.sum(to_numpy(first(xm, False)[1]) * c2)
            num[idx] = (fp - fm) / (2 * eps)
        np.testing.assert_allclose(to_numpy(h), num, rtol=1e-4, atol=1e-6)


def test_fused_matches_composed_gradients_in_training_step(device):
    # a small classifier step: fused forward and backward agree with float64 NumPy
    r = rng(14)
    x = r.standard_normal((16, 10))
    w0 = r.standard_normal((10, 6)) * 0.3
    t = r.integers(0, 6, 16)
    xe = ember.asarray(x, device=device)
    we = ember.asarray(w0, device=device).requires_grad_()
    loss = F.cross_entropy(F.layer_norm(xe @ we, (6,)), ember.asarray(t, device=device))
    loss.backward()
    assert np.isfinite(float(loss)) and to_numpy(we.grad).shape == (10, 6)
    gradcheck(
        lambda a: F.cross_entropy(F.layer_norm(xe @ a, (6,)), ember.asarray(t, device=device)),
        [w0],
        device=device,
    )
