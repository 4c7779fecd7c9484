"""The remaining activations, distances and losses of ember.nn against NumPy formulas and
finite differences, on both devices; CTC against brute force over every alignment."""

from __future__ import annotations

import itertools
import math

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from _nn_helpers import em, gradcheck

X = np.linspace(-3.1, 2.9, 13)


def sp(x):
    return np.log1p(np.exp(-abs(x))) + np.maximum(x, 0)


ACTIVATIONS = [
    (F.elu, {}, lambda x: np.where(x > 0, x, np.expm1(x))),
    (
        F.selu,
        {},
        lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    ),
    (F.celu, {"alpha": 2.0}, lambda x: np.where(x > 0, x, 2.0 * np.expm1(x / 2))),
    (F.hardswish, {}, lambda x: x * np.clip(x / 6 + 0.5, 0, 1)),
    (F.hardsigmoid, {}, lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    (F.hardtanh, {}, lambda x: np.clip(x, -1, 1)),
    (F.relu6, {}, lambda x: np.clip(x, 0, 6)),
    (F.mish, {}, lambda x: x * np.tanh(sp(x))),
    (F.threshold, {"threshold": 0.3, "value": -2.0}, lambda x: np.where(x > 0.3, x, -2.0)),
    (F.softmin, {"dim": 0}, lambda x: np.exp(-x) / np.exp(-x).sum()),
]


@pytest.mark.parametrize("fn,kw,ref", ACTIVATIONS, ids=[f.__name__ for f, _, _ in ACTIVATIONS])
def test_activations(device, fn, kw, ref):
    np.testing.assert_allclose(
        ember.asnumpy(fn(em(X, device), **kw)), ref(X), rtol=1e-12, atol=1e-15
    )
    gradcheck(lambda x: fn(x, **kw), [X + 0.01], device=device)  # off the kinks


def test_modules_match_functions(device):
    x = em(X, device)
    pairs = [
        (nn.ELU(alpha=0.5), F.elu(x, 0.5)),
        (nn.SELU(), F.selu(x)),
        (nn.Hardswish(), F.hardswish(x)),
        (nn.Hardsigmoid(), F.hardsigmoid(x)),
        (nn.Mish(), F.mish(x)),
        (nn.Softmin(dim=0), F.softmin(x, 0)),
        (nn.LogSigmoid(), F.logsigmoid(x)),
        (nn.Threshold(0.1, 20), F.threshold(x, 0.1, 20)),
    ]
    for m, want in pairs:
        np.testing.assert_array_equal(ember.asnumpy(m(x)), ember.asnumpy(want))
    assert repr(nn.ELU(alpha=0.5)) == "ELU(alpha=0.5)"


def test_prelu(device):
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    w = np.array([0.1, 0.2, 0.3])
    want = np.where(x >= 0, x, w[None, :, None] * x)
    np.testing.assert_allclose(ember.asnumpy(F.prelu(em(x, device), em(w, device))), want)
    gradcheck(F.prelu, [x, w], device=device)
    m = nn.PReLU(3)
    assert m.weight.shape == (3,) and len(list(m.parameters())) == 1
    with pytest.raises(ValueError, match="weight has 2 elements but the input has 3 channels"):
        F.prelu(em(x), em([0.1, 0.2]))


def test_distances(device):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(
        ember.asnumpy(F.cosine_similarity(em(a, device), em(b, device))), cos
    )
    pd = np.linalg.norm(a - b + 1e-6, axis=1)
    np.testing.assert_allclose(
        ember.asnumpy(nn.PairwiseDistance()(em(a, device), em(b, device))), pd
    )
    np.testing.assert_allclose(
        ember.asnumpy(F.pairwise_distance(em(a, device), em(b, device), p=1)),
        np.abs(a - b + 1e-6).sum(1),
    )
    gradcheck(F.cosine_similarity, [a, b], device=device)
    gradcheck(F.pairwise_distance, [a, b], device=device)


def test_losses(device):
    rng = np.random.default_rng(2)
    a, b, c = (rng.standard_normal((6, 3)) for _ in range(3))
    y = np.array([1, -1, 1, -1, 1, 1.0])
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    want = np.where(y > 0, 1 - cos, np.maximum(cos - 0.2, 0)).mean()
    got = nn.CosineEmbeddingLoss(margin=0.2)(em(a, device), em(b, device), em(y, device))
    np.testing.assert_allclose(float(got), want)
    x1, x2 = a[:, 0], b[:, 0]
    np.testing.assert_allclose(
        float(F.margin_ranking_loss(em(x1, device), em(x2, device), em(y, device), margin=0.5)),
        np.maximum(-y * (x1 - x2) + 0.5, 0).mean(),
    )
    d_ap = np.linalg.norm(a - b + 1e-6, axis=1)
    d_an = np.linalg.norm(a - c + 1e-6, axis=1)
    np.testing.assert_allclose(
        float(nn.TripletMarginLoss(margin=1.0)(em(a, device), em(b, device), em(c, device))),
        np.maximum(d_ap - d_an + 1.0, 0).mean(),
    )
    t = rng.poisson(3.0, (6, 3)).astype(np.float64)
    np.testing.assert_allclose(
        float(F.poisson_nll_loss(em(a, device), em(t, device))), (np.exp(a) - t * a).mean()
    )
    full = F.poisson_nll_loss(em(a, device), em(t, device), full=True, reduction="sum")
    st = np.where(
        t > 1, t * np.log(np.maximum(t, 1)) - t + 0.5 * np.log(2 * np.pi * np.maximum(t, 1)), 0
    )
    np.testing.assert_allclose(float(full), (np.exp(a) - t * a + st).sum())
    var = np.abs(c) + 0.1
    np.testing.assert_allclose(
        float(nn.GaussianNLLLoss()(em(a, device), em(b, device), em(var, device))),
        (0.5 * (np.log(var) + (a - b) ** 2 / var)).mean(),
    )
    gradcheck(
        lambda p, q: F.triplet_margin_loss(p, q, em(c, device), reduction="none"),
        [a, b],
        device=device,
    )
    gradcheck(
        lambda v: F.gaussian_nll_loss(em(a, device), em(b, device), v, reduction="none"),
        [var],
        device=device,
    )


def _ctc_brute(lp, target, blank=0):
    """-log of the sum over every path of length T that collapses to `target`."""
    T, C = lp.shape  # noqa: N806
    total = 0.0
    for path in itertools.product(range(C), repeat=T):
        out, prev = [], None
        for s in path:
            if s != prev and s != blank:
                out.append(s)
            prev = s
        if out == list(target):
            total += math.exp(sum(lp[t, s] for t, s in enumerate(path)))
    return -math.log(total)


def test_ctc_loss_against_brute_force(device):
    rng = np.random.default_rng(3)
    T, N, C = 5, 2, 3  # noqa: N806
    logits = rng.standard_normal((T, N, C))
    lp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = np.array([[1, 2], [1, 1]])
    want = [_ctc_brute(lp[:, n], targets[n]) for n in range(N)]
    got = F.ctc_loss(em(lp, device), em(targets, device), [T, T], [2, 2], reduction="none")
    np.testing.assert_allclose(ember.asnumpy(got), want, rtol=1e-10)
    mean = nn.CTCLoss()(em(lp, device), em(targets, device), [T, T], [2, 2])
    np.testing.assert_allclose(float(mean), np.mean(np.array(want) / 2), rtol=1e-10)
    gradcheck(
        lambda x: F.ctc_loss(x, em(targets, device), [T, T], [2, 2], reduction="sum"),
        [lp],
        device=device,
        rtol=1e-4,
    )


def test_parameters_to_vector_round_trip():
    m = nn.Linear(3, 2)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (8,)
    nn.utils.vector_to_parameters(v * 0 + 1, m.parameters())
    assert float(m.weight.sum()) == 6.0 and float(m.bias.sum()) == 2.0


def test_embedding_bag(device):
    ember.manual_seed(5)
    bag = nn.EmbeddingBag(10, 3, mode="sum", device=device)
    w = ember.asnumpy(bag.weight.detach())
    x = np.array([[1, 2, 4], [4, 3, 9]])
    np.testing.assert_allclose(ember.asnumpy(bag(em(x, device))), w[x].sum(1), rtol=1e-6)
    flat, offs = np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 4])
    mean = nn.EmbeddingBag(10, 3, mode="mean", _weight=em(w, device))
    np.testing.assert_allclose(
        ember.asnumpy(mean(em(flat, device), em(offs, device))),
        np.stack([w[flat[:4]].mean(0), w[flat[4:]].mean(0)]),
        rtol=1e-6,
    )
    mx = nn.EmbeddingBag(10, 3, mode="max", _weight=em(w, device))
    np.testing.assert_allclose(ember.asnumpy(mx(em(x, device))), w[x].max(1), rtol=1e-6)
    padded = nn.EmbeddingBag(10, 3, mode="mean", padding_idx=0, device=device)
    pw = ember.asnumpy(padded.weight.detach())
    got = padded(em(np.array([[0, 2, 3]]), device))
    np.testing.assert_allclose(ember.asnumpy(got), pw[[2, 3]].mean(0)[None], rtol=1e-6)
    out = bag(em(x, device))
    out.sum().backward()
    assert bag.weight.grad is not None
