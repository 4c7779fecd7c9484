"""The shrink activations, rrelu, alpha dropouts, local_response_norm, pdist, embedding_bag, the
extra pools (3-d average, adaptive max 1-d, Lp, max unpool), channel/pixel shuffles, the pad,
fold and loss modules and nn.init.dirac_/sparse_ against NumPy formulas of PyTorch's
definitions and finite differences, on both devices (and against torch where it is installed)."""

from __future__ import annotations

import itertools
import math

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from _nn_helpers import em, gradcheck

RNG = np.random.default_rng(7)
X = np.linspace(-2.05, 1.95, 17)


def npy(a):
    return ember.asnumpy(a)


def sp(x):
    return np.log1p(np.exp(-abs(x))) + np.maximum(x, 0)


ELEMENTWISE = [
    (F.hardshrink, nn.Hardshrink, {"lambd": 0.7}, lambda x: np.where(abs(x) > 0.7, x, 0)),
    (F.softshrink, nn.Softshrink, {"lambd": 0.4},
     lambda x: np.where(x > 0.4, x - 0.4, np.where(x < -0.4, x + 0.4, 0))),
    (F.softsign, nn.Softsign, {}, lambda x: x / (1 + abs(x))),
    (F.tanhshrink, nn.Tanhshrink, {}, lambda x: x - np.tanh(x)),
    (F.rrelu, None, {"lower": 0.1, "upper": 0.3}, lambda x: np.where(x >= 0, x, 0.2 * x)),
]  # fmt: skip


@pytest.mark.parametrize("fn,mod,kw,ref", ELEMENTWISE, ids=lambda v: getattr(v, "__name__", ""))
def test_elementwise(device, fn, mod, kw, ref):
    np.testing.assert_allclose(npy(fn(em(X, device), **kw)), ref(X), rtol=1e-12, atol=1e-15)
    if mod is not None:
        np.testing.assert_allclose(npy(mod(**kw)(em(X, device))), ref(X), rtol=1e-12)
    gradcheck(lambda x: fn(x, **kw), [X + 0.013], device=device)


def test_rrelu_training(device):
    x = em(-np.abs(RNG.standard_normal(4000)) - 0.1, device)
    x.requires_grad_(True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slope = npy(y) / npy(x.detach())
    assert slope.min() >= 0.1 and slope.max() <= 0.3 and slope.std() > 0.03
    assert abs(slope.mean() - 0.2) < 0.01
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), slope, rtol=1e-6)
    m = nn.RReLU(0.1, 0.3)
    m.eval()
    np.testing.assert_allclose(npy(m(em(X, device))), np.where(X >= 0, X, 0.2 * X))
    pos = em(np.abs(X) + 0.5, device)
    np.testing.assert_array_equal(npy(F.rrelu(pos, training=True)), npy(pos))
    with pytest.raises(ValueError, match="rrelu"):
        F.rrelu(pos, 0.5, 0.1)


def test_alpha_dropout(device):
    x = em(RNG.standard_normal((8, 6000)), device)
    assert F.alpha_dropout(x, 0.3) is x  # training defaults to False
    y = npy(F.alpha_dropout(x, 0.3, training=True))
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha**2 * 0.3 + 1) * 0.7)
    dropped = np.isclose(y, -alpha * a + alpha * a * 0.3)
    assert abs(dropped.mean() - 0.3) < 0.02
    np.testing.assert_allclose(y[~dropped], npy(x)[~dropped] * a + alpha * a * 0.3, rtol=1e-12)
    assert abs(y.mean()) < 0.03 and abs(y.std() - 1) < 0.03  # self-normalizing
    f = npy(F.feature_alpha_dropout(em(RNG.standard_normal((50, 4, 3, 3)) * 0, device), 0.5, True))
    assert np.all(f == f[:, :, :1, :1])  # whole channels together
    assert 0 < np.isclose(f, f.max()).mean() < 1
    m = nn.AlphaDropout(0.2)
    m.eval()
    assert m(x) is x
    with pytest.raises(ValueError, match="alpha_dropout"):
        F.alpha_dropout(x, 1.5, True)


def _lrn(x, size, alpha, beta, k):
    c = x.shape[1]
    sq = x * x
    div = np.zeros_like(x)
    for i in range(c):
        lo, hi = max(0, i - size // 2), min(c, i + (size - 1) // 2 + 1)
        div[:, i] = sq[:, lo:hi].sum(axis=1)
    return x / (k + alpha / size * div) ** beta


@pytest.mark.parametrize("shape,size", [((2, 5, 3), 3), ((2, 6, 3, 2), 4), ((1, 3, 2, 2, 2), 2)])
def test_local_response_norm(device, shape, size):
    x = RNG.standard_normal(shape)
    got = npy(F.local_response_norm(em(x, device), size, 0.3, 0.6, 2.0))
    np.testing.assert_allclose(got, _lrn(x, size, 0.3, 0.6, 2.0), rtol=1e-12)
    np.testing.assert_allclose(npy(nn.LocalResponseNorm(size)(em(x, device))),
                               _lrn(x, size, 1e-4, 0.75, 1.0), rtol=1e-12)  # fmt: skip
    gradcheck(lambda a: F.local_response_norm(a, size, 0.3, 0.6, 2.0), [x], device=device)
    with pytest.raises(ValueError, match="local_response_norm"):
        F.local_response_norm(em(x.reshape(-1)[:4].reshape(2, 2), device), 2)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, math.inf])
def test_pdist(device, p):
    x = RNG.standard_normal((5, 3))
    ref = [np.linalg.norm(x[i] - x[j], ord=p) for i, j in itertools.combinations(range(5), 2)]
    np.testing.assert_allclose(npy(F.pdist(em(x, device), p)), ref, rtol=1e-12)
    if p != math.inf:
        gradcheck(lambda a: F.pdist(a, p), [x], device=device)


def _bags(w, idx, offsets, mode, psw=None, pad=None):
    ends = list(offsets[1:]) + [len(idx)]
    out = []
    for s, e in zip(offsets, ends, strict=True):
        rows = [w[i] * (1 if psw is None else psw[j]) for j, i in enumerate(idx) if s <= j < e]
        rows = [r for r, i in zip(rows, idx[s:e], strict=True) if i != pad]
        if not rows:
            out.append(np.zeros(w.shape[1]))
            continue
        r = np.array(rows)
        out.append({"sum": r.sum(0), "mean": r.mean(0), "max": r.max(0)}[mode])
    return np.array(out)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(device, mode):
    w = RNG.standard_normal((10, 4))
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9])
    offs = np.array([0, 3, 3, 6])
    got = F.embedding_bag(em(idx, device), em(w, device), em(offs, device), mode=mode)
    np.testing.assert_allclose(npy(got), _bags(w, idx, offs, mode), rtol=1e-12)
    got = F.embedding_bag(em(idx.reshape(2, 4), device), em(w, device), mode=mode, padding_idx=4)
    np.testing.assert_allclose(npy(got), _bags(w, idx, [0, 4], mode, pad=4), rtol=1e-12)
    gradcheck(lambda a: F.embedding_bag(em(idx, device), a, em(offs, device), mode=mode), [w],
              device=device)  # fmt: skip
    if mode == "sum":
        psw = RNG.random(8)
        got = F.embedding_bag(em(idx, device), em(w, device), em(offs, device), mode="sum",
                              per_sample_weights=em(psw, device))  # fmt: skip
        np.testing.assert_allclose(npy(got), _bags(w, idx, offs, "sum", psw), rtol=1e-12)
    else:
        with pytest.raises(NotImplementedError, match="per_sample_weights"):
            F.embedding_bag(em(idx, device), em(w, device), em(offs, device), mode=mode,
                            per_sample_weights=em(RNG.random(8), device))  # fmt: skip


def test_adaptive_max_pool1d(device):
    x = RNG.standard_normal((2, 3, 10))
    bounds = [((i * 10) // 4, -(-((i + 1) * 10) // 4)) for i in range(4)]
    ref = np.stack([x[..., a:b].max(-1) for a, b in bounds], -1)
    refi = np.stack([x[..., a:b].argmax(-1) + a for a, b in bounds], -1)
    y, i = F.adaptive_max_pool1d(em(x, device), 4, return_indices=True)
    np.testing.assert_allclose(npy(y), ref)
    np.testing.assert_array_equal(npy(i), refi)
    np.testing.assert_allclose(npy(nn.AdaptiveMaxPool1d(4)(em(x, device))), ref)
    gradcheck(lambda a: F.adaptive_max_pool1d(a, 4), [x], device=device)


def test_lp_pool(device):
    x = RNG.random((2, 3, 6, 7)) + 0.1
    ref1 = (x[0, ..., :6] ** 3).reshape(3, 6, 3, 2).sum(-1) ** (1 / 3)
    np.testing.assert_allclose(npy(F.lp_pool1d(em(x[0, ..., :6], device), 3, 2)), ref1, rtol=1e-12)
    ref2 = (x[:, :, :6, :6] ** 2).reshape(2, 3, 3, 2, 3, 2).sum((3, 5)) ** 0.5
    np.testing.assert_allclose(npy(nn.LPPool2d(2, 2)(em(x, device))), ref2, rtol=1e-12)
    ref3 = np.stack([(x[:, :, :, j : j + 3] ** 2).sum(-1) for j in range(5)], -1) ** 0.5
    np.testing.assert_allclose(npy(nn.LPPool1d(2, 3, 1)(em(x, device)[0])), ref3[0], rtol=1e-12)
    gradcheck(lambda a: F.lp_pool2d(a, 2, (2, 3), stride=1), [x], device=device)


@pytest.mark.parametrize("nd", [1, 2])
def test_max_unpool(device, nd):
    shape = (2, 3, 8) if nd == 1 else (2, 3, 4, 6)
    x = RNG.standard_normal(shape)
    pool = F.max_pool1d if nd == 1 else F.max_pool2d
    unpool = F.max_unpool1d if nd == 1 else F.max_unpool2d
    y, idx = pool(em(x, device), 2, return_indices=True)
    out = npy(unpool(y, idx, 2))
    assert out.shape == shape
    ref = np.zeros((2, 3, x[0, 0].size))
    flat_i = npy(idx).reshape(2, 3, -1)
    np.put_along_axis(ref, flat_i, npy(y).reshape(2, 3, -1), axis=2)
    np.testing.assert_array_equal(out, ref.reshape(shape))
    # every nonzero is where x holds its window's maximum
    assert np.all((out == 0) | (out == x))
    mod = (nn.MaxUnpool1d if nd == 1 else nn.MaxUnpool2d)(2)
    big = shape[:-1] + (shape[-1] + 1,)
    assert npy(mod(y, idx, output_size=big)).shape == big
    gradcheck(lambda a: unpool(a, idx, 2), [npy(y)], device=device)
    with pytest.raises(ValueError, match="max_unpool"):
        unpool(y, idx, 2, output_size=shape[:-1] + (shape[-1] + 5,))


def test_avg_pool3d_and_adaptive(device):
    x = RNG.standard_normal((2, 2, 4, 6, 5))
    ref = x[..., :4].reshape(2, 2, 2, 2, 3, 2, 2, 2).mean((3, 5, 7))
    np.testing.assert_allclose(npy(F.avg_pool3d(em(x, device), 2)), ref, rtol=1e-12)
    np.testing.assert_allclose(npy(nn.AvgPool3d(2)(em(x, device))), ref, rtol=1e-12)
    got = npy(F.avg_pool3d(em(x, device), 2, divisor_override=3))
    np.testing.assert_allclose(got, ref * 8 / 3, rtol=1e-12)
    out = (2, 3, 2)
    ref = np.zeros((2, 2) + out)
    for i, j, k in itertools.product(*(range(o) for o in out)):
        sl = [slice((p * n) // o, -(-((p + 1) * n) // o)) for p, n, o in
              zip((i, j, k), x.shape[2:], out, strict=True)]  # fmt: skip
        ref[:, :, i, j, k] = x[:, :, sl[0], sl[1], sl[2]].mean((2, 3, 4))
    np.testing.assert_allclose(npy(nn.AdaptiveAvgPool3d(out)(em(x, device))), ref, rtol=1e-12)
    gradcheck(lambda a: F.avg_pool3d(a, 2, stride=1, padding=1), [x[:1, :1]], device=device)


def test_shuffles(device):
    x = RNG.standard_normal((2, 6, 2, 3))
    ref = x.reshape(2, 3, 2, 2, 3).transpose(0, 2, 1, 3, 4).reshape(2, 6, 2, 3)
    np.testing.assert_array_equal(npy(F.channel_shuffle(em(x, device), 3)), ref)
    np.testing.assert_array_equal(npy(nn.ChannelShuffle(3)(em(x, device))), ref)
    with pytest.raises(ValueError, match="channel_shuffle"):
        F.channel_shuffle(em(x, device), 4)
    y = RNG.standard_normal((2, 3, 4, 6))
    u = F.pixel_unshuffle(em(y, device), 2)
    assert u.shape == (2, 12, 2, 3)
    np.testing.assert_array_equal(npy(u)[0, :4, 0, 0], y[0, 0, :2, :2].ravel())
    np.testing.assert_array_equal(npy(F.pixel_shuffle(u, 2)), y)
    np.testing.assert_array_equal(npy(nn.PixelUnshuffle(2)(em(y, device))), npy(u))
    z = em(RNG.standard_normal((1, 2, 3)), device)
    np.testing.assert_array_equal(npy(F.upsample(z, scale_factor=2)), np.repeat(npy(z), 2, -1))


PADS = [("ZeroPad", "constant", {}), ("ConstantPad", "constant", {"constant_values": 1.5}),
        ("ReflectionPad", "reflect", {}), ("ReplicationPad", "edge", {}),
        ("CircularPad", "wrap", {})]  # fmt: skip


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("name,npmode,kw", PADS, ids=[p[0] for p in PADS])
def test_pad_modules(device, nd, name, npmode, kw):
    x = RNG.standard_normal((2, 3) + (4, 3, 5)[:nd])
    padding = (1, 2, 0, 1, 2, 1)[: 2 * nd]
    cls = getattr(nn, f"{name}{nd}d")
    m = cls(padding, 1.5) if name == "ConstantPad" else cls(padding)
    widths = [(0, 0), (0, 0)] + [(padding[2 * i], padding[2 * i + 1]) for i in range(nd)][::-1]
    np.testing.assert_array_equal(npy(m(em(x, device))), np.pad(x, widths, npmode, **kw))
    m = cls(1, 1.5) if name == "ConstantPad" else cls(1)
    assert m(em(x[0], device)).shape == tuple(n + 2 if i else n for i, n in enumerate(x[0].shape))


def test_misc_modules(device):
    x = RNG.standard_normal((2, 4, 3, 3))
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(npy(nn.Softmax2d()(em(x, device))), e / e.sum(1, keepdims=True))
    a, b = x[:, :2], x[:, 2:]
    np.testing.assert_allclose(npy(nn.GLU(1)(em(x, device))), a / (1 + np.exp(-b)), rtol=1e-12)
    cols = nn.Unfold(kernel_size=2, padding=1)(em(x, device))
    np.testing.assert_array_equal(npy(cols), npy(F.unfold(em(x, device), 2, padding=1)))
    back = nn.Fold(output_size=(3, 3), kernel_size=2, padding=1)(cols)
    np.testing.assert_allclose(npy(back), x * 4, rtol=1e-12)  # each pixel in 4 blocks


def _np_losses(x, y, t, w):
    n, c = x.shape
    mlsm = (t * sp(-x) + (1 - t) * sp(x)) * w
    mm = np.zeros(n)
    for i in range(n):
        for j in range(c):
            if j != y[i]:
                mm[i] += w[y[i]] * max(0.0, 0.7 - x[i, y[i]] + x[i, j]) ** 2 / c
    return mlsm.sum(1) / c, mm


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_losses(device, reduction):
    red = {"none": lambda v: v, "mean": np.mean, "sum": np.sum}[reduction]
    x = RNG.standard_normal((5, 4))
    y = np.array([0, 3, 1, 1, 2])
    t = (RNG.random((5, 4)) > 0.5).astype(float)
    w = RNG.random(4) + 0.5
    sign = np.where(t > 0, 1.0, -1.0)
    mlsm, mm = _np_losses(x, y, t, w)
    X, T = em(x, device), em(t, device)
    got = F.multilabel_soft_margin_loss(X, T, em(w, device), reduction=reduction)
    np.testing.assert_allclose(npy(got), red(mlsm), rtol=1e-12)
    got = nn.MultiMarginLoss(p=2, margin=0.7, weight=em(w, device), reduction=reduction)(
        X, em(y, device)
    )
    np.testing.assert_allclose(npy(got), red(mm), rtol=1e-12)
    got = nn.SoftMarginLoss(reduction=reduction)(X, em(sign, device))
    np.testing.assert_allclose(npy(got), red(sp(-sign * x)), rtol=1e-12)
    hinge = np.where(sign > 0, x, np.maximum(0, 1.3 - x))
    got = nn.HingeEmbeddingLoss(margin=1.3, reduction=reduction)(X, em(sign, device))
    np.testing.assert_allclose(npy(got), red(hinge), rtol=1e-12)
    got = nn.MultiLabelSoftMarginLoss(reduction=reduction)(X, T)
    np.testing.assert_allclose(npy(got), red(_np_losses(x, y, t, np.ones(4))[0]), rtol=1e-12)


def test_loss_grads_and_errors(device):
    x = RNG.standard_normal((4, 5))
    y = em(np.array([0, 4, 2, 2]), device)
    gradcheck(lambda a: F.multi_margin_loss(a, y, margin=0.6), [x], device=device)
    t = em((RNG.random((4, 5)) > 0.5).astype(float), device)
    gradcheck(lambda a: F.multilabel_soft_margin_loss(a, t), [x], device=device)
    gradcheck(lambda a: F.soft_margin_loss(a, t * 2 - 1), [x], device=device)
    gradcheck(lambda a: F.hinge_embedding_loss(a, t * 2 - 1, 0.5), [x + 0.011], device=device)
    with pytest.raises(ValueError, match="multi_margin_loss"):
        F.multi_margin_loss(em(x, device), y, p=3)
    with pytest.raises(ValueError, match="soft_margin_loss: reduction"):
        F.soft_margin_loss(em(x, device), t, reduction="avg")
    with pytest.raises(TypeError, match="hardshrink"):
        F.hardshrink(x)


def test_init_dirac_sparse(device):
    w = em(np.zeros((4, 2, 3, 3)), device)
    nn.init.dirac_(w, groups=2)
    x = em(RNG.standard_normal((1, 4, 5, 5)), device)
    y = F.conv2d(x, w, padding=1, groups=2)
    np.testing.assert_allclose(npy(y), npy(x), rtol=1e-12)  # identity per group
    w = em(np.ones((3, 5, 3)), device)
    ref = np.zeros((3, 5, 3))
    ref[[0, 1, 2], [0, 1, 2], 1] = 1
    np.testing.assert_array_equal(npy(nn.init.dirac_(w)), ref)
    s = em(np.zeros((20, 6)), device)
    nn.init.sparse_(s, 0.25, std=2.0)
    z = npy(s) == 0
    np.testing.assert_array_equal(z.sum(0), [5] * 6)
    assert 1.0 < npy(s)[~z].std() < 3.0
    assert len({tuple(np.flatnonzero(z[:, j])) for j in range(6)}) > 1  # columns differ
    with pytest.raises(ValueError, match="sparse_"):
        nn.init.sparse_(em(np.zeros(3), device), 0.1)
    with pytest.raises(ValueError, match="dirac_"):
        nn.init.dirac_(em(np.zeros((3, 3)), device))


def test_against_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = RNG.standard_normal((2, 6, 4, 4))
    tx = torch.tensor(x)
    for name, kw in [("hardshrink", {}), ("softshrink", {"lambd": 0.3}), ("softsign", {}),
                     ("tanhshrink", {}), ("rrelu", {})]:  # fmt: skip
        np.testing.assert_allclose(npy(getattr(F, name)(em(x), **kw)),
                                   getattr(tf, name)(tx, **kw).numpy(), rtol=1e-10)  # fmt: skip
    np.testing.assert_allclose(npy(F.local_response_norm(em(x), 3)),
                               tf.local_response_norm(tx, 3).numpy(), rtol=1e-10)  # fmt: skip
    np.testing.assert_allclose(npy(F.pdist(em(x[0, 0]), 1.5)),
                               tf.pdist(tx[0, 0], 1.5).numpy(), rtol=1e-10)  # fmt: skip
    np.testing.assert_allclose(npy(F.lp_pool2d(em(x), 2, 2)), tf.lp_pool2d(tx, 2, 2).numpy(),
                               rtol=1e-10)  # fmt: skip
    ty, ti = tf.max_pool2d(tx, 2, return_indices=True)
    np.testing.assert_allclose(npy(F.max_unpool2d(em(ty.numpy()), em(ti.numpy()), 2)),
                               tf.max_unpool2d(ty, ti, 2).numpy())  # fmt: skip
    np.testing.assert_array_equal(npy(F.channel_shuffle(em(x), 2)),
                                  tf.channel_shuffle(tx, 2).numpy())  # fmt: skip
    np.testing.assert_array_equal(npy(F.pixel_unshuffle(em(x), 2)),
                                  tf.pixel_unshuffle(tx, 2).numpy())  # fmt: skip
    y = np.array([1, 5])
    np.testing.assert_allclose(
        npy(F.multi_margin_loss(em(x[:, :, 0, 0]), em(y))),
        tf.multi_margin_loss(tx[:, :, 0, 0], torch.tensor(y)).item(), rtol=1e-10)  # fmt: skip
    t = (x[:, :, 0, 0] > 0).astype(float)
    ref = tf.multilabel_soft_margin_loss(tx[:, :, 1, 1], torch.tensor(t)).item()
    got = F.multilabel_soft_margin_loss(em(x[:, :, 1, 1]), em(t))
    np.testing.assert_allclose(npy(got), ref, rtol=1e-10)
    w = RNG.standard_normal((10, 3))
    idx, offs = np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2, 2])
    for mode in ("sum", "mean", "max"):
        np.testing.assert_allclose(
            npy(F.embedding_bag(em(idx), em(w), em(offs), mode=mode)),
            tf.embedding_bag(torch.tensor(idx), torch.tensor(w), torch.tensor(offs), mode=mode)
            .numpy(), rtol=1e-12)  # fmt: skip
    a = torch.empty(4, 2, 3, 3)
    torch.nn.init.dirac_(a, 2)
    np.testing.assert_array_equal(npy(nn.init.dirac_(em(np.zeros((4, 2, 3, 3))), 2)), a.numpy())
