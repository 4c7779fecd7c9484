"""Module hooks as PyTorch's: full backward hooks and backward pre-hooks (what they receive,
replacing gradients, modules with several inputs and outputs, inputs without gradients),
forward hooks with ``prepend`` and ``with_kwargs``; each against torch on the same weights."""

from __future__ import annotations

import ember
import ember.nn as enn
import numpy as np
import pytest


def _pair(seed=0):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    w, b = rng.standard_normal((3, 4)).astype("float32"), rng.standard_normal(3).astype("float32")
    e, t = enn.Linear(4, 3), torch.nn.Linear(4, 3)
    e.weight.data[...] = ember.asarray(w)
    e.bias.data[...] = ember.asarray(b)
    with torch.no_grad():
        t.weight.copy_(torch.from_numpy(w))
        t.bias.copy_(torch.from_numpy(b))
    x = rng.standard_normal((2, 4)).astype("float32")
    return e, t, x


def _np(a):
    return None if a is None else (a.detach().numpy() if hasattr(a, "detach") and not isinstance(
        a, ember.ndarray) else ember.asnumpy(a))  # fmt: skip


def _run(mod, lib, x, hooks):
    seen = []
    for kind, fn in hooks:
        getattr(mod, kind)(lambda m, *g, fn=fn: fn(seen, lib, *g))
    if lib == "torch":
        import torch

        xi = torch.from_numpy(x).requires_grad_(True)
    else:
        xi = ember.tensor(x, requires_grad=True)
    out = mod(xi)
    (out * out).sum().backward()
    return seen, _np(xi.grad), _np(mod.weight.grad)


def test_hooks_replace_gradients_as_the_chain_rule_says():
    """y = x W^T + b, loss = sum(y^2): the pre-hook turns 2y into 2y + 1, the full hook doubles
    the input gradient; the weight gradient sees only the pre-hook's change."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4)).astype("float32")
    m = enn.Linear(4, 3)
    m.register_full_backward_pre_hook(lambda mod, gout: (gout[0] + 1,))
    m.register_full_backward_hook(lambda mod, gin, gout: (gin[0] * 2,))
    xi = ember.tensor(x, requires_grad=True)
    y = m(xi)
    (y * y).sum().backward()
    W = ember.asnumpy(m.weight.detach())
    g = 2 * ember.asnumpy(y.detach()) + 1
    np.testing.assert_allclose(ember.asnumpy(xi.grad), 2 * g @ W, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ember.asnumpy(m.weight.grad), g.T @ x, rtol=1e-5, atol=1e-5)


def test_full_backward_hook_sees_and_replaces_gradients_as_torch():
    def record(seen, lib, gin, gout):
        seen.append(("full", [_np(g) for g in gin], [_np(g) for g in gout]))
        return tuple(None if g is None else g * 2 for g in gin)

    def pre(seen, lib, gout):
        seen.append(("pre", [_np(g) for g in gout]))
        return tuple(g + 1 for g in gout)

    e, t, x = _pair()
    hooks = [("register_full_backward_pre_hook", pre), ("register_full_backward_hook", record)]
    se, gxe, gwe = _run(e, "ember", x, hooks)
    st, gxt, gwt = _run(t, "torch", x, hooks)
    assert [s[0] for s in se] == [s[0] for s in st] == ["pre", "full"]
    for a, b in zip(se, st, strict=True):
        for u, v in zip(a[1:], b[1:], strict=True):
            for p, q in zip(u, v, strict=True):
                np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gxe, gxt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gwe, gwt, rtol=1e-5, atol=1e-6)


def test_hook_on_inputs_without_gradients_and_removal():
    calls = []
    e = enn.Linear(4, 3)
    h = e.register_full_backward_hook(lambda m, gin, gout: calls.append((gin, len(gout))))
    x = ember.ones((2, 4))  # needs no gradient
    e(x).sum().backward()
    assert calls and calls[0][0] == (None,) and calls[0][1] == 1
    h.remove()
    e(x).sum().backward()
    assert len(calls) == 1


class _Two(enn.Module):
    def forward(self, a, scale, b):
        return a * scale + b, a - b


def test_several_inputs_and_outputs():
    got = []
    m = _Two()
    m.register_full_backward_hook(lambda mod, gin, gout: got.append((gin, gout)))
    a = ember.tensor(np.arange(3.0), requires_grad=True)
    b = ember.tensor(np.ones(3), requires_grad=True)
    s, d = m(a, 2.0, b)
    (s.sum() + 3 * d.sum()).backward()
    gin, gout = got[0]
    assert len(gin) == 3 and gin[1] is None
    np.testing.assert_allclose(ember.asnumpy(gin[0]), [5, 5, 5])
    np.testing.assert_allclose(ember.asnumpy(gin[2]), [-2, -2, -2])
    np.testing.assert_allclose(ember.asnumpy(gout[1]), [3, 3, 3])


def test_forward_hooks_prepend_and_kwargs():
    order = []
    m = enn.Identity()
    m.register_forward_hook(lambda mod, args, out: order.append("a"))
    m.register_forward_hook(lambda mod, args, out: order.append("b"), prepend=True)
    m.register_forward_pre_hook(
        lambda mod, args, kwargs: ((args[0] + 1,), kwargs), with_kwargs=True
    )
    m.register_forward_hook(lambda mod, args, kwargs, out: out * 10, with_kwargs=True)
    y = m(ember.zeros(2))
    assert order == ["b", "a"]
    np.testing.assert_allclose(ember.asnumpy(y), [10, 10])
