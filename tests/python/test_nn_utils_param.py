"""nn.utils.parametrize / parametrizations (weight_norm, spectral_norm), the hook-based
nn.utils.weight_norm/spectral_norm and nn.utils.prune: PyTorch's names and semantics, checked
against NumPy formulas on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest

nn = ember.nn
P = nn.utils.parametrize


def _n(x):
    return ember.asnumpy(x)


def test_weight_norm_parametrization(device):
    ember.manual_seed(0)
    m = nn.Linear(4, 3).to(device)
    w0 = _n(m.weight).copy()
    nn.utils.parametrizations.weight_norm(m)
    names = [n for n, _ in m.named_parameters()]
    assert names == ["bias", "parametrizations.weight.original0",
                     "parametrizations.weight.original1"]  # fmt: skip
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
    np.testing.assert_allclose(_n(m.weight), w0, rtol=1e-6)  # g * v / |v| == the weight
    g = _n(m.parametrizations.weight.original0)
    np.testing.assert_allclose(g[:, 0], np.linalg.norm(w0, axis=1), rtol=1e-6)
    with ember.no_grad():
        m.parametrizations.weight.original0[...] = m.parametrizations.weight.original0 * 2
    np.testing.assert_allclose(_n(m.weight), 2 * w0, rtol=1e-6)  # recomputed on every read
    m(ember.ones((2, 4), device=device)).sum().backward()
    assert m.parametrizations.weight.original1.grad.shape == (3, 4)
    P.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and [n for n, _ in m.named_parameters()] == ["bias", "weight"]
    np.testing.assert_allclose(_n(m.weight), 2 * w0, rtol=1e-6)


def test_spectral_norm_parametrization_and_legacy(device):
    ember.manual_seed(1)
    m = nn.Linear(6, 5).to(device)
    nn.utils.parametrizations.spectral_norm(m)
    for _ in range(5):
        m(ember.ones((1, 6), device=device))  # training mode: a power iteration per call
    s = np.linalg.svd(_n(m.weight).astype(np.float64), compute_uv=False)
    assert abs(s[0] - 1.0) < 1e-3
    m2 = nn.Linear(6, 5).to(device)
    nn.utils.spectral_norm(m2)
    assert sorted(m2.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    for _ in range(5):
        m2(ember.ones((1, 6), device=device))
    assert abs(np.linalg.svd(_n(m2.weight).astype(np.float64), compute_uv=False)[0] - 1) < 1e-3
    nn.utils.remove_spectral_norm(m2)
    assert sorted(m2.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="n_power_iterations"):
        nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


def test_legacy_weight_norm(device):
    ember.manual_seed(2)
    m = nn.Linear(3, 2).to(device)
    w0 = _n(m.weight).copy()
    nn.utils.weight_norm(m)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight_g", "weight_v"]
    y = m(ember.ones((1, 3), device=device))
    np.testing.assert_allclose(_n(y)[0], w0.sum(1) + _n(m.bias), rtol=1e-5)
    y.sum().backward()
    assert m.weight_g.grad.shape == (2, 1)
    nn.utils.remove_weight_norm(m)
    np.testing.assert_allclose(_n(m.weight), w0, rtol=1e-6)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(m)


def test_prune(device):
    ember.manual_seed(3)
    m = nn.Linear(5, 4).to(device)
    w = _n(m.weight).copy()
    nn.utils.prune.l1_unstructured(m, "weight", amount=0.25)
    k = 5  # a quarter of 20, rounded
    ref = w.copy().reshape(-1)
    ref[np.argsort(np.abs(ref))[:k]] = 0
    np.testing.assert_array_equal(_n(m.weight), ref.reshape(w.shape))
    assert sorted(m.state_dict()) == ["bias", "weight_mask", "weight_orig"]
    assert nn.utils.prune.is_pruned(m)
    nn.utils.prune.ln_structured(m, "weight", amount=1, n=2, dim=0)
    rows = np.linalg.norm(ref.reshape(w.shape), axis=1)
    ref2 = ref.reshape(w.shape).copy()
    ref2[np.argmin(rows)] = 0
    np.testing.assert_array_equal(_n(m.weight), ref2)
    m(ember.ones((1, 5), device=device)).sum().backward()
    assert (_n(m.weight_orig.grad)[ref2 == 0] == 0).all()  # pruned entries get no gradient
    nn.utils.prune.remove(m, "weight")
    assert sorted(m.state_dict()) == ["bias", "weight"] and not nn.utils.prune.is_pruned(m)
    np.testing.assert_array_equal(_n(m.weight), ref2)
    a, b = nn.Linear(4, 4).to(device), nn.Linear(4, 4).to(device)
    nn.utils.prune.global_unstructured([(a, "weight"), (b, "weight")],
                                       nn.utils.prune.L1Unstructured, amount=8)  # fmt: skip
    assert int((_n(a.weight) == 0).sum() + (_n(b.weight) == 0).sum()) == 8
    with pytest.raises(ValueError, match="should be smaller than"):
        nn.utils.prune.l1_unstructured(nn.Linear(2, 2), "weight", amount=10)


def test_matches_torch_when_installed(device):
    torch = pytest.importorskip("torch")
    w = np.random.default_rng(4).standard_normal((3, 5)).astype(np.float32)
    tm = torch.nn.Linear(5, 3)
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(w))
    torch.nn.utils.prune.l1_unstructured(tm, "weight", amount=0.4)
    em = nn.Linear(5, 3).to(device)
    with ember.no_grad():
        em.weight[...] = ember.asarray(w, device=device)
    nn.utils.prune.l1_unstructured(em, "weight", amount=0.4)
    np.testing.assert_array_equal(_n(em.weight), tm.weight.detach().numpy())
    torch.nn.utils.parametrizations.weight_norm(tm, "bias", dim=0)
    nn.utils.parametrizations.weight_norm(em, "bias", dim=0)
    ref = tm.parametrizations.bias.original0.detach().numpy()
    np.testing.assert_allclose(_n(em.parametrizations.bias.original0), ref, rtol=1e-6)
