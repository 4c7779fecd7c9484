"""PyTorch's beginner material, run with `torch` replaced by `ember` (written here by hand, in our
own words): the tensor and autograd tutorials, "Learning PyTorch with examples" (NumPy, tensors,
autograd, a custom Function, nn, optim, a custom Module, control flow with weight sharing), a
character-level RNN and a small Transformer language model on a generated corpus."""

from __future__ import annotations

import math
import random

import ember as torch  # the point of these tests
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest


def test_tensor_tutorial(device):
    data = [[1, 2], [3, 4]]
    x_data = torch.tensor(data)
    x_np = torch.from_numpy(np.array(data))
    assert x_data.dtype == torch.long and x_np.tolist() == data
    x_ones = torch.ones_like(x_data)
    x_rand = torch.rand_like(x_data, dtype=torch.float)
    assert x_ones.tolist() == [[1, 1], [1, 1]] and x_rand.shape == (2, 2)
    shape = (2, 3)
    t = torch.rand(shape, device=device)
    assert t.shape == torch.Size([2, 3]) and t.dtype == torch.float32
    assert t.device.type == device
    tensor = torch.ones(4, 4, device=device)
    tensor[:, 1] = 0
    assert tensor[0].tolist() == [1.0, 0.0, 1.0, 1.0]
    assert tensor[..., -1].tolist() == [1.0] * 4
    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    assert t1.shape == (4, 12)
    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)
    y3 = torch.rand_like(y1)
    torch.matmul(tensor, tensor.T, out=y3)
    assert y1.tolist() == y2.tolist() == y3.tolist()
    z1 = tensor * tensor
    z3 = torch.rand_like(tensor)
    torch.mul(tensor, tensor, out=z3)
    assert z1.tolist() == z3.tolist()
    agg = tensor.sum()
    assert agg.item() == 12.0 and isinstance(agg.item(), float)
    tensor.add_(5)
    assert tensor[0, 0].item() == 6.0
    # the NumPy bridge shares memory on the CPU (ember's default device is the GPU when there
    # is one, unlike PyTorch's: the bridge needs the CPU named)
    t = torch.ones(5, device="cpu")
    n = t.numpy()
    t.add_(1)
    assert n.tolist() == [2.0] * 5
    n2 = np.ones(5)
    t2 = torch.from_numpy(n2)
    np.add(n2, 1, out=n2)
    assert t2.tolist() == [2.0] * 5


def test_autograd_tutorial(device):
    torch.manual_seed(0)
    x = torch.ones(5, device=device)
    y = torch.zeros(3, device=device)
    w = torch.randn(5, 3, requires_grad=True, device=device)
    b = torch.randn(3, requires_grad=True, device=device)
    z = torch.matmul(x, w) + b
    loss = F.binary_cross_entropy_with_logits(z, y)
    assert z.grad_fn is not None and loss.grad_fn is not None
    loss.backward()
    s = 1 / (1 + np.exp(-torch.asnumpy(z.detach())))
    np.testing.assert_allclose(torch.asnumpy(b.grad), s / 3, rtol=1e-5)
    np.testing.assert_allclose(torch.asnumpy(w.grad), np.outer(np.ones(5), s / 3), rtol=1e-5)
    with torch.no_grad():
        z = torch.matmul(x, w) + b
    assert not z.requires_grad
    assert not (torch.matmul(x, w) + b).detach().requires_grad


def _poly_data():
    x = np.linspace(-math.pi, math.pi, 2000)
    return x, np.sin(x)


def test_learning_pytorch_numpy_and_tensors_agree():
    # the NumPy warm-up, then the same loop with ember tensors and hand-written gradients
    x, y = _poly_data()
    rng = np.random.default_rng(0)
    a0, b0, c0, d0 = rng.standard_normal(4)
    lr = 1e-6
    a, b, c, d = a0, b0, c0, d0
    np_losses = []
    for _ in range(200):
        y_pred = a + b * x + c * x**2 + d * x**3
        np_losses.append(np.square(y_pred - y).sum())
        g = 2.0 * (y_pred - y)
        a, b, c, d = (
            a - lr * g.sum(),
            b - lr * (g * x).sum(),
            c - lr * (g * x**2).sum(),
            d - lr * (g * x**3).sum(),
        )
    X, Y = torch.tensor(x, dtype=torch.float64), torch.tensor(y, dtype=torch.float64)  # noqa: N806
    ta, tb, tc, td = (torch.tensor(v, dtype=torch.float64) for v in (a0, b0, c0, d0))
    losses = []
    for _ in range(200):
        y_pred = ta + tb * X + tc * X**2 + td * X**3
        losses.append((y_pred - Y).pow(2).sum().item())
        g = 2.0 * (y_pred - Y)
        ta, tb, tc, td = (
            ta - lr * g.sum(),
            tb - lr * (g * X).sum(),
            tc - lr * (g * X**2).sum(),
            td - lr * (g * X**3).sum(),
        )
    np.testing.assert_allclose(losses, np_losses, rtol=1e-9)
    assert losses[-1] < losses[0]


def test_learning_pytorch_autograd_matches_numpy_replay():
    x, y = _poly_data()
    X, Y = torch.tensor(x), torch.tensor(y)  # noqa: N806
    rng = np.random.default_rng(1)
    init = rng.standard_normal(4)
    a, b, c, d = (torch.tensor(v, requires_grad=True, dtype=torch.float64) for v in init)
    lr = 1e-6
    for _ in range(50):
        y_pred = a + b * X + c * X**2 + d * X**3
        loss = (y_pred - Y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= lr * p.grad
                p.grad = None
    # NumPy replay of the same 50 steps
    p = init.copy()
    for _ in range(50):
        y_pred = p[0] + p[1] * x + p[2] * x**2 + p[3] * x**3
        g = 2.0 * (y_pred - y)
        p -= lr * np.array([g.sum(), (g * x).sum(), (g * x**2).sum(), (g * x**3).sum()])
    np.testing.assert_allclose([a.item(), b.item(), c.item(), d.item()], p, rtol=1e-10)


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input**3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input**2 - 1)


def test_learning_pytorch_custom_function():
    x, y = _poly_data()
    X, Y = torch.tensor(x), torch.tensor(y)  # noqa: N806
    a = torch.full((), 0.0, dtype=torch.float64, requires_grad=True)
    b = torch.full((), -1.0, dtype=torch.float64, requires_grad=True)
    c = torch.full((), 0.0, dtype=torch.float64, requires_grad=True)
    d = torch.full((), 0.3, dtype=torch.float64, requires_grad=True)
    P3 = LegendrePolynomial3.apply  # noqa: N806
    first = None
    for _ in range(100):
        y_pred = a + b * P3(c + d * X)
        loss = (y_pred - Y).pow(2).sum()
        first = first or loss.item()
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= 5e-6 * p.grad
                p.grad = None
    assert loss.item() < first


def test_learning_pytorch_nn_optim_and_modules():
    x, y = _poly_data()
    X, Y = torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)  # noqa: N806
    p = torch.tensor([1, 2, 3])
    xx = X.unsqueeze(-1).pow(p)
    assert xx.shape == (2000, 3)
    torch.manual_seed(2)
    model = nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1))
    loss_fn = nn.MSELoss(reduction="sum")
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(300):
        loss = loss_fn(model(xx), Y)
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert losses[-1] < 0.2 * losses[0]

    class Polynomial3(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Parameter(torch.randn(()))
            self.b = nn.Parameter(torch.randn(()))
            self.c = nn.Parameter(torch.randn(()))
            self.d = nn.Parameter(torch.randn(()))

        def forward(self, x):
            return self.a + self.b * x + self.c * x**2 + self.d * x**3

    m = Polynomial3()
    opt = torch.optim.SGD(m.parameters(), lr=1e-6)
    first = last = None
    for _ in range(200):
        loss = (m(X) - Y).pow(2).sum()
        first = first or loss.item()
        last = loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert last < first and len(list(m.parameters())) == 4


def test_learning_pytorch_control_flow_and_weight_sharing():
    class DynamicNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c, self.d, self.e = (
                nn.Parameter(torch.randn(())) for _ in range(5)
            )

        def forward(self, x):
            y = self.a + self.b * x + self.c * x**2 + self.d * x**3
            for exp in range(4, random.randint(4, 6)):
                y = y + self.e * x**exp  # the same weight reused
            return y

    random.seed(0)
    torch.manual_seed(3)
    x, y = _poly_data()
    X, Y = torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)  # noqa: N806
    m = DynamicNet()
    opt = torch.optim.SGD(m.parameters(), lr=1e-8, momentum=0.9)
    losses = []
    for _ in range(100):
        loss = (m(X) - Y).pow(2).sum()
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert losses[-1] < losses[0] and m.e.grad is not None


def _corpus(n=3000, seed=0):
    rng = random.Random(seed)
    words = ["ember", "array", "kernel", "tensor", "grid", "block"]
    return " ".join(rng.choice(words) for _ in range(n // 6))[:n]


@pytest.mark.parametrize("cell", ["RNN", "LSTM", "GRU"])
def test_char_rnn_learns(device, cell):
    text = _corpus()
    chars = sorted(set(text))
    idx = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([idx[c] for c in text], device=device)
    V, H, T, B = len(chars), 32, 16, 16  # noqa: N806
    torch.manual_seed(4)
    emb = nn.Embedding(V, 16, device=device)
    rnn = getattr(nn, cell)(16, H, batch_first=True, device=device)
    head = nn.Linear(H, V, device=device)
    params = list(emb.parameters()) + list(rnn.parameters()) + list(head.parameters())
    opt = torch.optim.Adam(params, lr=1e-2)
    g = np.random.default_rng(5)
    losses = []
    for _ in range(40):
        starts = g.integers(0, len(text) - T - 1, B)
        xb = torch.stack([data[s : s + T] for s in starts])
        yb = torch.stack([data[s + 1 : s + T + 1] for s in starts])
        out, _ = rnn(emb(xb))
        loss = F.cross_entropy(head(out).reshape(-1, V), yb.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.mean(losses[-5:]) < 0.7 * np.mean(losses[:5]), losses


def test_small_transformer_language_model_learns(device):
    text = _corpus(2000, seed=1)
    chars = sorted(set(text))
    idx = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([idx[c] for c in text], device=device)
    V, D, T, B = len(chars), 32, 24, 16  # noqa: N806
    torch.manual_seed(6)

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(V, D, device=device)
            self.pos = nn.Parameter(torch.randn(T, D, device=device) * 0.02)
            layer = nn.TransformerEncoderLayer(
                D, 4, 64, dropout=0.0, batch_first=True, device=device
            )
            self.enc = nn.TransformerEncoder(layer, 2)
            self.head = nn.Linear(D, V, device=device)

        def forward(self, x):
            h = self.tok(x) + self.pos[: x.shape[1]]
            mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=device)
            return self.head(self.enc(h, mask=mask))

    model = LM()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    g = np.random.default_rng(7)
    losses = []
    for _ in range(40):
        starts = g.integers(0, len(text) - T - 1, B)
        xb = torch.stack([data[s : s + T] for s in starts])
        yb = torch.stack([data[s + 1 : s + T + 1] for s in starts])
        loss = F.cross_entropy(model(xb).reshape(-1, V), yb.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.mean(losses[-5:]) < 0.7 * np.mean(losses[:5]), losses
