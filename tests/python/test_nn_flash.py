"""The fused attention kernel of F.scaled_dot_product_attention (GPU, float16/bfloat16, head
dimension 64 or 128): outputs against a float64 NumPy reference and the composed ops, causal
and not, ragged lengths (L != S, not multiples of the tiles), strided inputs (MultiheadAttention's
head views), gradients against the composed path; when it applies and when it does not."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest

F = ember.nn.functional
needs_cuda = pytest.mark.skipif(not ember.cuda.is_available(), reason="no CUDA device")


def _ref(q, k, v, causal, scale):
    q, k, v = (np.asarray(ember.asnumpy(x.astype("float32")), dtype=np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        L, S = s.shape[-2:]  # noqa: N806
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(-1, keepdims=True)) @ v


def _inputs(shape_q, shape_k, dtype, seed=0):
    rng = np.random.default_rng(seed)
    mk = lambda s: ember.asarray(rng.standard_normal(s, dtype=np.float32), device="cuda")  # noqa: E731
    return mk(shape_q).astype(dtype), mk(shape_k).astype(dtype), mk(shape_k).astype(dtype)


def test_the_fused_kernel_applies_only_where_it_can():
    from ember.nn import _flash

    cpu = ember.ones((2, 4, 64), dtype="bfloat16", device="cpu")
    assert not _flash.supported(cpu, cpu, cpu, None, 0.0, False)
    assert ember.backends.cuda.flash_sdp_enabled()
    ember.backends.cuda.enable_flash_sdp(False)
    try:
        assert not ember.backends.cuda.flash_sdp_enabled()
    finally:
        ember.backends.cuda.enable_flash_sdp(True)


@needs_cuda
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S", [(1, 1), (77, 77), (128, 128), (200, 300), (300, 130), (64, 5)])
def test_forward_matches_the_reference(dtype, d, causal, L, S):  # noqa: N803
    from ember.nn import _flash

    q, k, v = _inputs((2, 3, L, d), (2, 3, S, d), dtype, seed=L + S)
    assert _flash.supported(q, k, v, None, 0.0, False)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert out.dtype == q.dtype and out.shape == (2, 3, L, d)
    want = _ref(q, k, v, causal, 1 / math.sqrt(d))
    tol = 2e-2 if dtype == "bfloat16" else 4e-3
    np.testing.assert_allclose(ember.asnumpy(out.astype("float32")), want, atol=tol, rtol=tol)
    _, lse = _flash.forward(q, k, v, causal, 1 / math.sqrt(d))
    qq, kk = (np.asarray(ember.asnumpy(x.astype("float32")), np.float64) for x in (q, k))
    s = qq @ np.swapaxes(kk, -1, -2) / math.sqrt(d)
    if causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    m = s.max(-1)
    np.testing.assert_allclose(ember.asnumpy(lse), m + np.log(np.exp(s - m[..., None]).sum(-1)),
                               atol=1e-3, rtol=1e-3)  # fmt: skip


@needs_cuda
def test_strided_heads_and_an_explicit_scale():
    # MultiheadAttention's layout: (batch, seq, heads, dim) viewed as (batch, heads, seq, dim)
    rng = np.random.default_rng(5)
    x = [ember.asarray(rng.standard_normal((2, 150, 4, 64), dtype=np.float32), device="cuda")
         .astype("bfloat16").swapaxes(1, 2) for _ in range(3)]  # fmt: skip
    out = F.scaled_dot_product_attention(*x, scale=0.3, is_causal=True)
    np.testing.assert_allclose(ember.asnumpy(out.astype("float32")), _ref(*x, True, 0.3),
                               atol=2e-2, rtol=2e-2)  # fmt: skip


@needs_cuda
@pytest.mark.parametrize("causal", [False, True])
def test_gradients_match_the_composed_ops(causal):
    def run(flash):
        ember.backends.cuda.enable_flash_sdp(flash)
        try:
            q, k, v = (x.requires_grad_() for x in _inputs((2, 2, 70, 64), (2, 2, 90, 64),
                                                           "float16", seed=3))  # fmt: skip
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            (out.astype("float32") ** 2).sum().backward()
            return [ember.asnumpy(t.astype("float32")) for t in (out, q.grad, k.grad, v.grad)]
        finally:
            ember.backends.cuda.enable_flash_sdp(True)

    for got, want in zip(run(True), run(False), strict=True):
        np.testing.assert_allclose(got, want, atol=2e-2, rtol=2e-2)


@needs_cuda
def test_what_the_kernel_does_not_take_still_works():
    q, k, v = _inputs((1, 2, 40, 32), (1, 2, 40, 32), "bfloat16")  # head dimension 32
    out = F.scaled_dot_product_attention(q, k, v)
    want = _ref(q, k, v, False, 1 / math.sqrt(32))
    np.testing.assert_allclose(ember.asnumpy(out.astype("float32")), want, atol=2e-2, rtol=2e-2)
    q, k, v = _inputs((1, 2, 40, 64), (1, 2, 40, 64), "float32")
    mask = ember.ones((40, 40), dtype="bool", device="cuda")
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    np.testing.assert_allclose(ember.asnumpy(out), _ref(q, k, v, False, 1 / 8), atol=1e-4)
