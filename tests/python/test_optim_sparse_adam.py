"""optim.SparseAdam with Embedding(sparse=True): only the rows looked up move (moments too),
PyTorch's update formula (a NumPy transcription), and torch's own values where installed."""

from __future__ import annotations

import ember
import ember.nn as enn
import numpy as np
import pytest

IDX = [[1, 3, 3], [0, 3, 7]]


def _reference(w0, steps, lr=0.01, b1=0.9, b2=0.999, eps=1e-8):
    w, m, v = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
    for t in range(1, len(steps) + 1):
        idx = np.asarray(steps[t - 1]).ravel()
        g = np.zeros_like(w)
        np.add.at(g, idx, 2 * w[idx])  # loss = sum(emb(idx)^2)
        rows = np.unique(idx)
        m[rows] += (1 - b1) * (g[rows] - m[rows])
        v[rows] += (1 - b2) * (g[rows] ** 2 - v[rows])
        step = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        w[rows] -= step * m[rows] / (np.sqrt(v[rows]) + eps)
    return w


def test_sparse_adam_moves_only_the_rows_looked_up(device):
    w0 = np.random.default_rng(0).standard_normal((10, 4))
    emb = enn.Embedding(10, 4, sparse=True, dtype=ember.float64, device=device)
    emb.weight.data[...] = ember.asarray(w0, device=device)
    opt = ember.optim.SparseAdam(emb.parameters(), lr=0.01)
    steps = [IDX, [[2, 2]], IDX]
    for s in steps:
        opt.zero_grad()
        (emb(ember.asarray(s, device=device)) ** 2).sum().backward()
        opt.step()
    got = ember.asnumpy(emb.weight.detach())
    np.testing.assert_allclose(got, _reference(w0, steps), rtol=1e-12, atol=1e-12)
    untouched = [4, 5, 6, 8, 9]
    np.testing.assert_array_equal(got[untouched], w0[untouched])


def test_sparse_adam_matches_torch():
    torch = pytest.importorskip("torch")
    w0 = np.random.default_rng(1).standard_normal((10, 4))
    te = torch.nn.Embedding(10, 4, sparse=True).double()
    with torch.no_grad():
        te.weight.copy_(torch.from_numpy(w0))
    topt = torch.optim.SparseAdam(te.parameters(), lr=0.05)
    for s in [IDX, IDX]:
        topt.zero_grad()
        (te(torch.tensor(s)) ** 2).sum().backward()
        topt.step()
    ee = enn.Embedding(10, 4, sparse=True, dtype=ember.float64)
    ee.weight.data[...] = ember.asarray(w0)
    eopt = ember.optim.SparseAdam(ee.parameters(), lr=0.05)
    for s in [IDX, IDX]:
        eopt.zero_grad()
        (ee(ember.asarray(s)) ** 2).sum().backward()
        eopt.step()
    np.testing.assert_allclose(ember.asnumpy(ee.weight.detach()), te.weight.detach().numpy(),
                               rtol=1e-12)  # fmt: skip


def test_sparse_adam_bad_arguments():
    p = [enn.Parameter(ember.zeros(3))]
    with pytest.raises(ValueError, match="learning rate"):
        ember.optim.SparseAdam(p, lr=-1)
    with pytest.raises(ValueError, match="beta"):
        ember.optim.SparseAdam(p, betas=(1.5, 0.9))
