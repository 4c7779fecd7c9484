"""ember.nn.functional against NumPy references (values on every device), bad input, gradients
against central finite differences in float64, and PyTorch's values and gradients where torch is
installed."""

from __future__ import annotations

import math
import warnings

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from _helpers import to_numpy
from _nn_helpers import _cpu_by_default, em, gradcheck, to_torch  # noqa: F401

try:
    from scipy.special import erfc as _erfc
except ImportError:  # pragma: no cover - scipy is a test dependency
    _erfc = np.vectorize(math.erfc)


def np_gelu(x):
    # x * Phi(x) through erfc: no cancellation for negative x
    return 0.5 * x * _erfc(-x / math.sqrt(2))


TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-12, atol=1e-13)}


def rng(seed=0):
    return np.random.default_rng(seed)


def close(actual, expected, dtype="float64", **kw):
    tol = dict(TOL[dtype])
    tol.update(kw)
    np.testing.assert_allclose(to_numpy(actual).astype(np.float64), expected, **tol)


# ---------------------------------------------------------------------------------------------
# NumPy references (PyTorch's definitions)
# ---------------------------------------------------------------------------------------------


def np_log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    s = x - m
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def np_softmax(x, axis):
    return np.exp(np_log_softmax(x, axis))


def np_sigmoid(x):
    return np.where(
        x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x)))
    )


def np_softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.logaddexp(0, x * beta) / beta)


def np_nll(logp, t, weight=None, ignore_index=-100, reduction="mean", ls=0.0):
    """PyTorch's cross-entropy/NLL with class indices, for (N, C, *) or (C,) log-probs."""
    if logp.ndim == 1:
        logp, t = logp[None], np.asarray(t)[None]
        squeeze = True
    else:
        squeeze = False
    c = logp.shape[1]
    w = np.ones(c) if weight is None else np.asarray(weight, np.float64)
    valid = t != ignore_index
    tc = np.where(valid, t, 0)
    picked = np.take_along_axis(logp, tc[:, None], axis=1)[:, 0]
    wt = w[tc] * valid
    nll = -picked * wt
    wshape = (1, c) + (1,) * (logp.ndim - 2)
    smooth = -(logp * w.reshape(wshape)).sum(axis=1) * valid
    if reduction == "mean":
        nll, smooth = nll.sum() / wt.sum(), smooth.sum() / wt.sum()
    elif reduction == "sum":
        nll, smooth = nll.sum(), smooth.sum()
    elif squeeze:
        nll, smooth = nll[0], smooth[0]
    return (1 - ls) * nll + ls / c * smooth


# ---------------------------------------------------------------------------------------------
# linear maps
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4), (4,)])
def test_linear(device, dtype, shape):
    r = rng(1)
    x = r.standard_normal(shape).astype(dtype)
    w = r.standard_normal((3, 4)).astype(dtype)
    b = r.standard_normal(3).astype(dtype)
    out = F.linear(em(x, device), em(w, device), em(b, device))
    assert out.shape == shape[:-1] + (3,) and out.dtype == ember.dtype(dtype)
    close(out, x.astype(np.float64) @ w.T.astype(np.float64) + b, dtype)
    close(F.linear(em(x, device), em(w, device)), x.astype(np.float64) @ w.T, dtype)


def test_linear_vector_weight(device):
    x = rng(2).standard_normal((5, 4))
    w = rng(3).standard_normal(4)
    close(F.linear(em(x, device), em(w, device)), x @ w)


def test_linear_bad_shapes():
    with pytest.raises(ValueError, match=r"linear: input shape \(5, 3\) and weight shape \(2, 4\)"):
        F.linear(ember.ones((5, 3)), ember.ones((2, 4)))
    with pytest.raises(TypeError, match="linear: input must be an ember.ndarray"):
        F.linear([1.0, 2.0], ember.ones((2, 2)))


def test_bilinear(device):
    r = rng(4)
    x1, x2 = r.standard_normal((2, 3, 4)), r.standard_normal((2, 3, 5))
    w, b = r.standard_normal((6, 4, 5)), r.standard_normal(6)
    out = F.bilinear(em(x1, device), em(x2, device), em(w, device), em(b, device))
    close(out, np.einsum("...i,oij,...j->...o", x1, w, x2) + b)
    with pytest.raises(ValueError, match="bilinear: input1 shape"):
        F.bilinear(em(x1), em(x1), em(w))


# ---------------------------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------------------------

EDGE = np.array(
    [-1e4, -750.0, -30.0, -20.5, -1.0, -1e-8, 0.0, 1e-8, 0.5, 3.0, 20.5, 30.0, 750.0, 1e4]
)


def _acts():
    return {
        "relu": (F.relu, lambda x: np.maximum(x, 0)),
        "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
        "sigmoid": (F.sigmoid, np_sigmoid),
        "tanh": (F.tanh, np.tanh),
        "silu": (F.silu, lambda x: x * np_sigmoid(x)),
        "softplus": (F.softplus, np_softplus),
        "softplus_beta": (lambda x: F.softplus(x, 2.0, 5.0), lambda x: np_softplus(x, 2.0, 5.0)),
        "gelu": (F.gelu, np_gelu),
        "gelu_tanh": (
            lambda x: F.gelu(x, approximate="tanh"),
            lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        ),
        "logsigmoid": (F.logsigmoid, lambda x: -np.logaddexp(0, -x)),
    }


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(_acts()))
def test_activation_values(device, dtype, name):
    fn, ref = _acts()[name]
    x = np.concatenate([rng(5).standard_normal(40) * 4, EDGE]).astype(dtype)
    out = fn(em(x, device))
    assert out.shape == x.shape and out.dtype == ember.dtype(dtype)
    expected = ref(x.astype(np.float64))
    if dtype == "float32":
        close(out, expected, dtype, rtol=1e-5, atol=1e-30 if name != "gelu_tanh" else 1e-6)
    else:
        # the tanh form cancels for negative x in any implementation (the reference's too)
        close(out, expected, dtype, rtol=1e-12, atol=1e-300 if name != "gelu_tanh" else 1e-15)
    assert np.all(np.isfinite(to_numpy(out)))


@pytest.mark.parametrize(
    "name", ["relu", "leaky_relu", "sigmoid", "tanh", "silu", "softplus", "gelu"]
)
def test_activation_nan_propagates(name):
    fn, _ = _acts()[name]
    out = to_numpy(fn(em([np.nan, 1.0])))
    assert np.isnan(out[0]) and np.isfinite(out[1])


def test_gelu_float64_accuracy():
    # the composed erf: relative error near float64 rounding over the whole range
    x = np.linspace(-12, 12, 20001)
    out = to_numpy(F.gelu(em(x)))
    expected = np_gelu(x)
    nz = expected != 0
    assert np.max(np.abs(out[nz] - expected[nz]) / np.abs(expected[nz])) < 5e-13


def test_gelu_bad_approximate():
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        F.gelu(ember.ones(3), approximate="fast")
    with pytest.raises(TypeError, match="floating-point"):
        F.gelu(ember.arange(3))


def test_relu_inplace():
    x = em([-1.0, 2.0, -3.0])
    y = F.relu(x, inplace=True)
    assert y is x
    np.testing.assert_array_equal(to_numpy(x), [0.0, 2.0, 0.0])


def test_half_precision_activations():
    x = rng(6).standard_normal(20).astype(np.float32)
    for dt in (ember.float16, ember.bfloat16):
        xe = ember.asarray(x).astype(dt)
        for f in (F.gelu, F.sigmoid, lambda t: F.softmax(t, 0), lambda t: F.layer_norm(t, (20,))):
            out = f(xe)
            assert out.dtype == dt
            ref = to_numpy(f(xe.astype(ember.float32))).astype(np.float64)
            np.testing.assert_allclose(
                to_numpy(out.astype(ember.float32)), ref, rtol=2e-2, atol=2e-2
            )


# ---------------------------------------------------------------------------------------------
# softmax / log_softmax
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_softmax_log_softmax(device, dtype, dim):
    x = (rng(7).standard_normal((3, 4, 5)) * 10).astype(dtype)
    for f, ref in ((F.softmax, np_softmax), (F.log_softmax, np_log_softmax)):
        out = f(em(x, device), dim)
        assert out.dtype == ember.dtype(dtype)
        close(out, ref(x.astype(np.float64), dim), dtype)


def test_softmax_is_stable_for_huge_logits(device):
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -999.0], [3e38, 0.0, -3e38]])
    for dt in ("float32", "float64"):
        out = to_numpy(F.softmax(em(x, device, dt), 1))
        assert np.all(np.isfinite(out))
        np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-6)
        ls = to_numpy(F.log_softmax(em(x, device, dt), 1))
        np.testing.assert_allclose(ls[:2], np_log_softmax(x[:2], 1), rtol=1e-6)
        assert ls[2, 0] == 0.0 and np.isneginf(ls[2, 2]) or ls[2, 2] < -1e38


def test_softmax_minus_inf_entries():
    x = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, 2.0]])
    out = to_numpy(F.softmax(em(x), 1))
    np.testing.assert_allclose(out, np_softmax(np.where(np.isinf(x), -1e300, x), 1))
    assert to_numpy(F.log_softmax(em(x), 1))[0, 1] == -np.inf


def test_softmax_dtype_and_0d_and_implicit_dim():
    x = em([[1.0, 2.0], [3.0, 5.0]], dtype=np.float32)
    assert F.softmax(x, 1, dtype=ember.float64).dtype == ember.float64
    assert float(F.softmax(em(3.0), 0)) == 1.0
    assert float(F.log_softmax(em(3.0), 0)) == 0.0
    with pytest.warns(UserWarning, match="implicit dimension"):
        out = F.softmax(x)  # 2-d: dim 1, as PyTorch's legacy rule
    close(out, np_softmax(to_numpy(x).astype(np.float64), 1), "float32")
    with pytest.raises(IndexError, match="dim 2 is out of range for a 2-d input"):
        F.softmax(x, 2)


# ---------------------------------------------------------------------------------------------
# dropout, embedding, one_hot
# ---------------------------------------------------------------------------------------------


def test_dropout(device):
    x = ember.ones((200, 100), dtype=ember.float32, device=device)
    ember.random.seed(123)
    a = to_numpy(F.dropout(x, 0.3))
    kept = a != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(a[kept], 1 / 0.7, rtol=1e-6)
    ember.random.seed(123)
    np.testing.assert_array_equal(to_numpy(F.dropout(x, 0.3)), a)  # seeded
    assert F.dropout(x, 0.3, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert not to_numpy(F.dropout(x, 1.0)).any()
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)


def test_embedding(device):
    w = rng(8).standard_normal((10, 3))
    idx = np.array([[1, 2, 4], [4, 3, 9]])
    out = F.embedding(em(idx, device), em(w, device))
    assert out.shape == (2, 3, 3)
    close(out, w[idx])
    out = F.embedding(em(idx, device, np.int32), em(w, device), padding_idx=4)
    close(out, w[idx])  # the padding row only stops gradients


def test_embedding_bad_input():
    w = ember.ones((10, 3))
    with pytest.raises(IndexError, match="index 10 is out of range for 10 embeddings"):
        F.embedding(em([1, 10]), w)
    with pytest.raises(IndexError, match="index -1 is out of range"):
        F.embedding(em([-1, 2]), w)
    with pytest.raises(TypeError, match="integer dtype"):
        F.embedding(em([1.0]), w)


def test_embedding_max_norm():
    w = em(np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]]))
    out = F.embedding(em([0, 1]), w, max_norm=1.0)
    np.testing.assert_allclose(to_numpy(out), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    # rows looked up are renormalized in place; others are not
    np.testing.assert_allclose(to_numpy(w)[2], [6.0, 8.0])
    np.testing.assert_allclose(to_numpy(w)[0], [0.6, 0.8], rtol=1e-6)


def test_one_hot():
    out = F.one_hot(em([0, 2, 1]), 4)
    assert out.dtype == ember.int64
    np.testing.assert_array_equal(to_numpy(out), np.eye(4, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(em([[3]])).shape == (1, 1, 4)
    with pytest.raises(ValueError, match="class values must be in"):
        F.one_hot(em([5]), 3)


# ---------------------------------------------------------------------------------------------
# normalization
# ---------------------------------------------------------------------------------------------


def np_layer_norm(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    y = (x - m) / np.sqrt(v + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm(device, dtype):
    r = rng(9)
    x = (r.standard_normal((2, 3, 4)) * 3 + 1).astype(dtype)
    w, b = r.standard_normal((3, 4)).astype(dtype), r.standard_normal((3, 4)).astype(dtype)
    close(
        F.layer_norm(em(x, device), (4,)), np_layer_norm(x.astype(np.float64), 1), dtype, rtol=1e-4
    )
    out = F.layer_norm(em(x, device), (3, 4), em(w, device), em(b, device), eps=1e-3)
    close(out, np_layer_norm(x.astype(np.float64), 2, w, b, 1e-3), dtype, rtol=1e-4, atol=1e-5)


def test_layer_norm_bad_shapes():
    with pytest.raises(
        ValueError, match=r"input shape \(2, 3\) does not end with normalized_shape \(4,\)"
    ):
        F.layer_norm(ember.ones((2, 3)), 4)
    with pytest.raises(ValueError, match="weight shape"):
        F.layer_norm(ember.ones((2, 3)), 3, weight=ember.ones(4))
    with pytest.raises(TypeError, match="floating-point"):
        F.layer_norm(ember.arange(3), 3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rms_norm(device, dtype):
    r = rng(10)
    x, w = r.standard_normal((3, 5)).astype(dtype), r.standard_normal(5).astype(dtype)
    xd = x.astype(np.float64)
    eps = float(np.finfo(dtype).eps)
    ref = xd / np.sqrt((xd**2).mean(axis=-1, keepdims=True) + eps) * w
    close(F.rms_norm(em(x, device), (5,), em(w, device)), ref, dtype, rtol=1e-5)
    ref = xd / np.sqrt((xd**2).mean(axis=-1, keepdims=True) + 0.1)
    close(F.rms_norm(em(x, device), 5, eps=0.1), ref, dtype, rtol=1e-5)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5)])
def test_batch_norm_training_and_eval(device, shape):
    r = rng(11)
    x = r.standard_normal(shape) * 2 + 0.5
    w, b = r.standard_normal(3), r.standard_normal(3)
    rm, rv = em(np.zeros(3), device), em(np.ones(3), device)
    out = F.batch_norm(
        em(x, device), rm, rv, em(w, device), em(b, device), training=True, momentum=0.2
    )
    axes = (0,) + tuple(range(2, len(shape)))
    bshape = (1, 3) + (1,) * (len(shape) - 2)
    m, v = x.mean(axis=axes), x.var(axis=axes)
    ref = (x - m.reshape(bshape)) / np.sqrt(v.reshape(bshape) + 1e-5) * w.reshape(
        bshape
    ) + b.reshape(bshape)
    close(out, ref, rtol=1e-10)
    n = x.size // 3
    close(rm, 0.2 * m, rtol=1e-12)
    close(rv, 0.8 + 0.2 * v * n / (n - 1), rtol=1e-12)
    out = F.batch_norm(em(x, device), rm, rv, training=False)
    close(out, (x - to_numpy(rm).reshape(bshape)) / np.sqrt(to_numpy(rv).reshape(bshape) + 1e-5))


def test_batch_norm_bad_input():
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(ember.ones((1, 3)), None, None, training=True)
    with pytest.raises(
        ValueError, match=r"running_mean shape \(4,\) does not match the input's 3 channels"
    ):
        F.batch_norm(ember.ones((2, 3)), ember.zeros(4), ember.ones(4))
    with pytest.raises(ValueError, match="at least 2-d"):
        F.batch_norm(ember.ones(3), None, None, training=True)


# ---------------------------------------------------------------------------------------------
# regression losses
# ---------------------------------------------------------------------------------------------


def _reduce(x, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction](x)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(device, reduction):
    r = rng(12)
    x, y = r.standard_normal((4, 5)) * 2, r.standard_normal((4, 5)) * 2
    d = np.abs(x - y)
    cases = [
        (F.mse_loss, {}, (x - y) ** 2),
        (F.l1_loss, {}, d),
        (F.smooth_l1_loss, {}, np.where(d < 1, 0.5 * d**2, d - 0.5)),
        (F.smooth_l1_loss, {"beta": 0.5}, np.where(d < 0.5, 0.5 * d**2 / 0.5, d - 0.25)),
        (F.smooth_l1_loss, {"beta": 0.0}, d),
        (F.huber_loss, {"delta": 1.5}, np.where(d < 1.5, 0.5 * d**2, 1.5 * (d - 0.75))),
    ]
    for f, kw, ref in cases:
        out = f(em(x, device), em(y, device), reduction=reduction, **kw)
        assert out.shape == (() if reduction != "none" else x.shape)
        close(out, _reduce(ref, reduction))


def test_regression_loss_bad_input():
    with pytest.raises(
        ValueError, match="reduction must be one of 'none', 'mean', 'sum', got 'avg'"
    ):
        F.mse_loss(ember.ones(3), ember.ones(3), reduction="avg")
    with pytest.warns(UserWarning, match="target shape"):
        F.mse_loss(ember.ones((3, 1)), ember.ones(3))
    with pytest.raises(ValueError, match="beta must be non-negative"):
        F.smooth_l1_loss(ember.ones(3), ember.ones(3), beta=-1.0)


def test_legacy_size_average_reduce():
    x, y = em([1.0, 2.0]), em([0.0, 0.0])
    with pytest.warns(UserWarning, match="deprecated"):
        assert float(F.mse_loss(x, y, size_average=False)) == 5.0


# ---------------------------------------------------------------------------------------------
# cross entropy and NLL
# ---------------------------------------------------------------------------------------------

CE_CASES = [
    dict(),
    dict(reduction="sum"),
    dict(reduction="none"),
    dict(weight=[0.2, 1.0, 3.0, 0.5, 1.5]),
    dict(weight=[0.2, 1.0, 3.0, 0.5, 1.5], reduction="sum"),
    dict(ignore_index=2),
    dict(ignore_index=2, weight=[0.2, 1.0, 3.0, 0.5, 1.5]),
    dict(ignore_index=2, reduction="none"),
    dict(ignore_index=-1),
    dict(label_smoothing=0.1),
    dict(label_smoothing=0.2, weight=[0.2, 1.0, 3.0, 0.5, 1.5], ignore_index=2),
    dict(label_smoothing=0.3, reduction="sum", ignore_index=0),
    dict(label_smoothing=0.3, reduction="none", weight=[0.2, 1.0, 3.0, 0.5, 1.5]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(CE_CASES)))
def test_cross_entropy_indices(device, dtype, case):
    kw = dict(CE_CASES[case])
    r = rng(13 + case)
    x = (r.standard_normal((8, 5)) * 3).astype(dtype)
    t = r.integers(0, 5, 8)
    t[:2] = [2, 0]
    if kw.get("ignore_index") == -1:
        t[3] = -1
    w = kw.pop("weight", None)
    ls = kw.pop("label_smoothing", 0.0)
    ref = np_nll(np_log_softmax(x.astype(np.float64), 1), t, w, ls=ls, **kw)
    we = None if w is None else em(w, device, dtype)
    out = F.cross_entropy(em(x, device), em(t, device), weight=we, label_smoothing=ls, **kw)
    close(out, ref, dtype, rtol=1e-5 if dtype == "float32" else 1e-12)
    # nll_loss on log-probabilities is the same without smoothing
    if ls == 0.0:
        out = F.nll_loss(F.log_softmax(em(x, device), 1), em(t, device), weight=we, **kw)
        close(out, ref, dtype, rtol=1e-5 if dtype == "float32" else 1e-12)


def test_cross_entropy_k_dim_and_1d(device):
    r = rng(20)
    x = r.standard_normal((3, 4, 2, 5))
    t = r.integers(0, 4, (3, 2, 5))
    for kw in (
        dict(),
        dict(reduction="none"),
        dict(weight=[1.0, 2.0, 0.5, 1.0], label_smoothing=0.1),
    ):
        w = kw.get("weight")
        ref = np_nll(
            np_log_softmax(x, 1),
            t,
            w,
            reduction=kw.get("reduction", "mean"),
            ls=kw.get("label_smoothing", 0.0),
        )
        kw2 = dict(kw)
        if w is not None:
            kw2["weight"] = em(w, device)
        close(F.cross_entropy(em(x, device), em(t, device), **kw2), ref)
    x1 = r.standard_normal(6)
    close(F.cross_entropy(em(x1, device), em(4, device)), -np_log_softmax(x1, 0)[4])
    close(
        F.cross_entropy(em(x1, device), em(4, device), reduction="none"), -np_log_softmax(x1, 0)[4]
    )


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(reduction="sum"),
        dict(reduction="none"),
        dict(label_smoothing=0.2),
        dict(weight=[1.0, 0.5, 2.0]),
    ],
)
def test_cross_entropy_probabilities(device, kw):
    r = rng(21)
    x = r.standard_normal((4, 3, 2))
    p = r.random((4, 3, 2))
    p /= p.sum(axis=1, keepdims=True)
    ls = kw.get("label_smoothing", 0.0)
    w = np.ones(3) if "weight" not in kw else np.array(kw["weight"])
    q = p * (1 - ls) + ls / 3
    loss = -(np_log_softmax(x, 1) * q * w.reshape(1, 3, 1)).sum(axis=1)
    red = kw.get("reduction", "mean")
    ref = {"mean": loss.sum() / 8, "sum": loss.sum(), "none": loss}[red]
    kw2 = dict(kw)
    if "weight" in kw:
        kw2["weight"] = em(kw["weight"], device)
    close(F.cross_entropy(em(x, device), em(p, device), **kw2), ref)


def test_cross_entropy_extreme_logits(device):
    x = np.array([[1e4, 0.0, -1e4], [-np.inf, 0.0, 1.0]], dtype=np.float32)
    out = F.cross_entropy(em(x, device), em([0, 2], device), reduction="none")
    np.testing.assert_allclose(to_numpy(out), [0.0, np.log1p(np.exp(-1.0))], rtol=1e-6, atol=1e-7)


def test_out_of_range_targets_and_indices_on_each_device(device):
    x = ember.ones((3, 4), device=device)
    t = em([0, 4, 1], device)
    w = ember.ones((5, 2), device=device)
    if device == "cpu":
        with pytest.raises(IndexError, match="target 4 is out of bounds for 4 classes"):
            F.cross_entropy(x, t)
    else:  # no host sync on a GPU: the loss is NaN instead
        assert math.isnan(float(F.cross_entropy(x, t)))
        assert np.isnan(to_numpy(F.nll_loss(x, t, reduction="none"))[1])
    # ignored targets are never out of range
    assert math.isfinite(float(F.cross_entropy(x, em([0, -100, 1], device))))
    with pytest.raises(IndexError, match="out of range for 5 embeddings"):
        F.embedding(em([0, -1], device), w)
    with pytest.raises(IndexError):
        F.embedding(em([0, 5], device), w)


def test_cross_entropy_all_ignored_is_nan():
    out = F.cross_entropy(ember.ones((2, 3)), em([-100, -100]))
    assert math.isnan(float(out))


def test_cross_entropy_bad_input():
    x = ember.ones((4, 3))
    with pytest.raises(IndexError, match="target 3 is out of bounds for 3 classes"):
        F.cross_entropy(x, em([0, 1, 3, 2]))
    with pytest.raises(IndexError, match="target -2 is out of bounds"):
        F.cross_entropy(x, em([0, 1, -2, 2]))
    with pytest.raises(
        ValueError, match=r"target shape \(3,\) does not match input shape \(4, 3\)"
    ):
        F.cross_entropy(x, em([0, 1, 2]))
    with pytest.raises(
        ValueError, match=r"target shape \(4, 2\) differs from input shape \(4, 3\)"
    ):
        F.cross_entropy(x, ember.ones((4, 2)))
    with pytest.raises(TypeError, match="class indices"):
        F.cross_entropy(x, em([True, False, True, True]))
    with pytest.raises(ValueError, match=r"weight must have shape \(3,\)"):
        F.cross_entropy(x, em([0, 1, 2, 0]), weight=ember.ones(4))
    with pytest.raises(ValueError, match="label_smoothing must be in"):
        F.cross_entropy(x, em([0, 1, 2, 0]), label_smoothing=1.5)
    with pytest.raises(ValueError, match="at least 1-d"):
        F.cross_entropy(em(1.0), em(0))


# ---------------------------------------------------------------------------------------------
# binary cross entropy, KL divergence
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy(device, reduction):
    r = rng(22)
    p = np.concatenate([r.random(10), [0.0, 1.0, 1e-30]])
    t = np.concatenate([r.random(10), [1.0, 0.0, 0.5]])
    w = r.random(13)
    logp = np.maximum(np.log(p), -100)
    log1mp = np.maximum(np.log(1 - p), -100)
    ref = -(t * logp + (1 - t) * log1mp)
    close(
        F.binary_cross_entropy(em(p, device), em(t, device), reduction=reduction),
        _reduce(ref, reduction),
    )
    out = F.binary_cross_entropy(
        em(p, device), em(t, device), weight=em(w, device), reduction=reduction
    )
    close(out, _reduce(ref * w, reduction))


def test_binary_cross_entropy_bad_input():
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.binary_cross_entropy(em([0.5, 1.5]), em([0.0, 1.0]))
    with pytest.raises(ValueError, match="differs from input shape"):
        F.binary_cross_entropy(em([0.5, 0.5]), em([0.0]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits(device, reduction):
    r = rng(23)
    x = np.concatenate([r.standard_normal(10) * 5, [-1e4, 1e4, 0.0, 40.0]])
    t = np.concatenate([r.random(10), [1.0, 0.0, 0.5, 1.0]])
    pw = np.float64(2.5)
    sp = np.logaddexp(0, -x)  # softplus(-x) = -log(sigmoid(x))
    ref = (1 - t) * x + sp
    out = F.binary_cross_entropy_with_logits(em(x, device), em(t, device), reduction=reduction)
    close(out, _reduce(ref, reduction))
    ref_pw = (1 - t) * x + (1 + (pw - 1) * t) * sp
    out = F.binary_cross_entropy_with_logits(
        em(x, device),
        em(t, device),
        weight=em(np.full(14, 0.5), device),
        reduction=reduction,
        pos_weight=em(pw, device),
    )
    close(out, _reduce(0.5 * ref_pw, reduction))


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(device, reduction, log_target):
    r = rng(24)
    x = np_log_softmax(r.standard_normal((4, 5)), 1)
    q = np_softmax(r.standard_normal((4, 5)), 1)
    if log_target:
        target = np.log(q)
        loss = q * (np.log(q) - x)
    else:
        q[0, 0] = 0.0  # 0 * log(0) counts as 0
        target = q
        loss = np.where(q > 0, q * np.log(np.where(q > 0, q, 1)), 0) - q * x
    ref = {"batchmean": loss.sum() / 4, "sum": loss.sum(), "none": loss, "mean": loss.mean()}[
        reduction
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = F.kl_div(
            em(x, device), em(target, device), reduction=reduction, log_target=log_target
        )
    close(out, ref, atol=1e-12)


def test_kl_div_mean_warns():
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(ember.zeros(3), ember.ones(3) / 3)


# ---------------------------------------------------------------------------------------------
# gradients against finite differences (float64)
# ---------------------------------------------------------------------------------------------


def _x(shape=(3, 4), seed=30, scale=1.0):
    return rng(seed).standard_normal(shape) * scale


GRAD_CASES = {
    "linear": (lambda x, w, b: F.linear(x, w, b), lambda: [_x((2, 3)), _x((4, 3), 1), _x(4, 2)]),
    "bilinear": (
        lambda a, b, w, bias: F.bilinear(a, b, w, bias),
        lambda: [_x((2, 3)), _x((2, 2), 1), _x((4, 3, 2), 2), _x(4, 3)],
    ),
    "relu": (F.relu, lambda: [_x() + 0.05]),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), lambda: [_x() + 0.05]),
    "sigmoid": (F.sigmoid, lambda: [_x(scale=4)]),
    "tanh": (F.tanh, lambda: [_x()]),
    "silu": (F.silu, lambda: [_x(scale=3)]),
    "softplus": (lambda x: F.softplus(x, 2.0, 3.0), lambda: [_x(scale=2)]),
    "gelu": (F.gelu, lambda: [_x(scale=2)]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), lambda: [_x(scale=2)]),
    "logsigmoid": (F.logsigmoid, lambda: [_x(scale=3)]),
    "softmax": (lambda x: F.softmax(x, 1), lambda: [_x(scale=3)]),
    "log_softmax": (lambda x: F.log_softmax(x, 0), lambda: [_x(scale=3)]),
    "layer_norm": (
        lambda x, w, b: F.layer_norm(x, (4,), w, b),
        lambda: [_x(scale=2), _x(4, 1), _x(4, 2)],
    ),
    "rms_norm": (lambda x, w: F.rms_norm(x, (2, 4), w), lambda: [_x((3, 2, 4)), _x((2, 4), 1)]),
    "batch_norm_train": (
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        lambda: [_x((4, 3), scale=2), _x(3, 1), _x(3, 2)],
    ),
    "batch_norm_3d": (
        lambda x: F.batch_norm(x, None, None, training=True),
        lambda: [_x((2, 3, 2), scale=2)],
    ),
    "embedding": (
        lambda w: F.embedding(ember.asarray(np.array([[0, 2], [2, 3]]), device=w.device), w),
        lambda: [_x((4, 3))],
    ),
    "mse": (lambda x, y: F.mse_loss(x, y), lambda: [_x(), _x(seed=1)]),
    "l1": (lambda x, y: F.l1_loss(x, y, reduction="sum"), lambda: [_x(), _x(seed=1)]),
    "smooth_l1": (lambda x, y: F.smooth_l1_loss(x, y, beta=0.7), lambda: [_x(), _x(seed=1)]),
    "huber": (lambda x, y: F.huber_loss(x, y, delta=0.7), lambda: [_x(), _x(seed=1)]),
    "cross_entropy": (
        lambda x: F.cross_entropy(x, ember.asarray(np.array([0, 3, 1]), device=x.device)),
        lambda: [_x(scale=2)],
    ),
    "cross_entropy_full": (
        lambda x: F.cross_entropy(
            x,
            ember.asarray(np.array([0, 3, 1]), device=x.device),
            weight=ember.asarray(np.array([1.0, 2.0, 0.5, 1.0]), device=x.device),
            ignore_index=1,
            label_smoothing=0.1,
        ),
        lambda: [_x(scale=2)],
    ),
    "cross_entropy_probs": (
        lambda x, p: F.cross_entropy(x, F.softmax(p, 1)),
        lambda: [_x(), _x(seed=3)],
    ),
    "nll": (
        lambda x: F.nll_loss(
            x, ember.asarray(np.array([0, 3, 1]), device=x.device), reduction="none"
        ),
        lambda: [_x()],
    ),
    "bce": (
        lambda p, t: F.binary_cross_entropy(F.sigmoid(p), t),
        lambda: [_x(), rng(5).random((3, 4))],
    ),
    "bce_logits": (
        lambda x, t: F.binary_cross_entropy_with_logits(
            x, t, pos_weight=ember.asarray(np.array(1.7), device=x.device)
        ),
        lambda: [_x(scale=3), rng(5).random((3, 4))],
    ),
    "kl_div": (
        lambda x, t: F.kl_div(F.log_softmax(x, 1), F.softmax(t, 1), reduction="batchmean"),
        lambda: [_x(), _x(seed=4)],
    ),
    "kl_div_log_target": (
        lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True),
        lambda: [_x(), _x(seed=4)],
    ),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_finite_differences(device, name):
    fn, make = GRAD_CASES[name]
    gradcheck(fn, make(), device=device)


def test_gradcheck_catches_a_wrong_gradient():
    # the checker itself: a function whose recorded gradient is wrong (half of it detached)
    from ember.nn._grad_mode import detach

    with pytest.raises(AssertionError, match="differs from finite differences"):
        gradcheck(lambda x: x * detach(x), [_x()])


def test_gradients_at_kinks_match_pytorch_convention():
    # relu'(0) = 0; leaky_relu'(0) = slope; sigmoid'(0) = 1/4; softplus'(0) = 1/2
    for f, expected in (
        (F.relu, 0.0),
        (lambda t: F.leaky_relu(t, 0.1), 0.1),
        (F.sigmoid, 0.25),
        (F.softplus, 0.5),
        (F.logsigmoid, 0.5),
        (F.silu, 0.5),
        (F.gelu, 0.5),
    ):
        x = em([0.0])
        x.requires_grad_(True)
        f(x).sum().backward()
        assert to_numpy(x.grad)[0] == pytest.approx(expected, abs=1e-12)


def test_no_nan_gradients_at_extremes():
    x = em([-1e4, -800.0, 0.0, 800.0, 1e4])
    for f in (F.sigmoid, F.softplus, F.logsigmoid, F.silu, F.gelu, lambda t: F.softmax(t, 0)):
        x.grad = None
        x.requires_grad_(True)
        f(x).sum().backward()
        assert np.all(np.isfinite(to_numpy(x.grad))), f
    t = em([1.0, 0.0, 1.0, 0.0, 0.5])
    x.grad = None
    F.binary_cross_entropy_with_logits(x, t).backward()
    assert np.all(np.isfinite(to_numpy(x.grad)))
    p = em([0.0, 1.0, 0.5])
    p.requires_grad_(True)
    F.binary_cross_entropy(p, em([0.0, 1.0, 1.0])).backward()
    assert np.all(np.isfinite(to_numpy(p.grad)))


def test_cross_entropy_minus_inf_logit_gradient():
    x = em([[-np.inf, 0.0, 1.0]])
    x.requires_grad_(True)
    F.cross_entropy(x, em([2])).backward()
    g = to_numpy(x.grad)
    assert g[0, 0] == 0.0 and np.all(np.isfinite(g))


def test_embedding_padding_idx_gets_no_gradient():
    w = em(rng(31).standard_normal((5, 2)))
    w.requires_grad_(True)
    F.embedding(em([[0, 1], [1, 4]]), w, padding_idx=1).sum().backward()
    np.testing.assert_array_equal(to_numpy(w.grad), [[1, 1], [0, 0], [0, 0], [0, 0], [1, 1]])


# ---------------------------------------------------------------------------------------------
# against PyTorch (on the GPU machine, where torch is installed)
# ---------------------------------------------------------------------------------------------

TORCH_CASES = {
    "relu": (lambda F_, x: F_.relu(x), [(3, 4)]),
    "leaky_relu": (lambda F_, x: F_.leaky_relu(x, 0.2), [(3, 4)]),
    "gelu": (lambda F_, x: F_.gelu(x), [(3, 4)]),
    "gelu_tanh": (lambda F_, x: F_.gelu(x, approximate="tanh"), [(3, 4)]),
    "silu": (lambda F_, x: F_.silu(x), [(3, 4)]),
    "sigmoid": (lambda F_, x: F_.sigmoid(x), [(3, 4)]),
    "softplus": (lambda F_, x: F_.softplus(x, 1.5, 2.0), [(3, 4)]),
    "softmax": (lambda F_, x: F_.softmax(x, 1), [(3, 4)]),
    "log_softmax": (lambda F_, x: F_.log_softmax(x, 0), [(3, 4)]),
    "linear": (lambda F_, x, w, b: F_.linear(x, w, b), [(5, 3), (4, 3), (4,)]),
    "bilinear": (lambda F_, a, b, w, c: F_.bilinear(a, b, w, c), [(5, 3), (5, 2), (4, 3, 2), (4,)]),
    "layer_norm": (lambda F_, x, w, b: F_.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    "rms_norm": (lambda F_, x, w: F_.rms_norm(x, (4,), w, 1e-6), [(3, 4), (4,)]),
    "mse": (lambda F_, x, y: F_.mse_loss(x, y), [(3, 4), (3, 4)]),
    "smooth_l1": (lambda F_, x, y: F_.smooth_l1_loss(x, y, beta=0.5), [(3, 4), (3, 4)]),
    "kl_div": (
        lambda F_, x, y: F_.kl_div(F_.log_softmax(x, 1), F_.softmax(y, 1), reduction="batchmean"),
        [(3, 4), (3, 4)],
    ),
    "bce_logits": (
        lambda F_, x, y: F_.binary_cross_entropy_with_logits(x, F_.sigmoid(y)),
        [(3, 4), (3, 4)],
    ),
}


@pytest.mark.parametrize("name", list(TORCH_CASES))
def test_against_torch(device, name):
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF

    fn, shapes = TORCH_CASES[name]
    if name == "rms_norm" and not hasattr(TF, "rms_norm"):
        pytest.skip("this torch has no rms_norm")
    r = rng(40)
    arrays = [r.standard_normal(s).astype(np.float32) for s in shapes]
    tin = [to_torch(torch, a, requires_grad=True) for a in arrays]
    tout = fn(TF, *tin)
    cot = r.standard_normal(tuple(tout.shape)).astype(np.float32)
    (tout * torch.tensor(cot)).sum().backward()
    ein = [em(a, device) for a in arrays]
    if hasattr(ember.ndarray, "requires_grad"):
        for e in ein:
            e.requires_grad_(True)
    eout = fn(F, *ein)
    np.testing.assert_allclose(to_numpy(eout), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    if hasattr(ember.ndarray, "requires_grad"):
        (eout * em(cot, device)).sum().backward()
        for e, t in zip(ein, tin, strict=True):
            np.testing.assert_allclose(to_numpy(e.grad), t.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", range(len(CE_CASES)))
def test_cross_entropy_against_torch(device, case):
    torch = pytest.importorskip("torch")
    kw = dict(CE_CASES[case])
    r = rng(50 + case)
    x = r.standard_normal((8, 5)).astype(np.float32)
    t = r.integers(0, 5, 8)
    t[:2] = [2, 0]
    if kw.get("ignore_index") == -1:
        t[3] = -1
    w = kw.pop("weight", None)
    tx = to_torch(torch, x, requires_grad=True)
    tw = None if w is None else torch.tensor(np.array(w, np.float32))
    tl = torch.nn.functional.cross_entropy(tx, torch.tensor(t), weight=tw, **kw)
    tl.sum().backward()
    ex = em(x, device)
    if hasattr(ember.ndarray, "requires_grad"):
        ex.requires_grad_(True)
    el = F.cross_entropy(
        ex, em(t, device), weight=None if w is None else em(w, device, np.float32), **kw
    )
    np.testing.assert_allclose(to_numpy(el), tl.detach().numpy(), rtol=1e-5, atol=1e-6)
    if hasattr(ember.ndarray, "requires_grad"):
        el.sum().backward()
        np.testing.assert_allclose(to_numpy(ex.grad), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
