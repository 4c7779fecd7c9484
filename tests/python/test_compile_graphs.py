"""ember.compile(mode="reduce-overhead"): calls replayed as CUDA graphs (one warm-up call, one
capture per guard key, then replays), equal to the default mode; what cannot be replayed
(host reads, random numbers, optimizers without capturable=True, CPU arrays) is refused with
its reason and runs in the default mode; guards (an optimizer's lr) capture again."""

from __future__ import annotations

import ember
import numpy as np
import pytest

nn = ember.nn


def _x(seed, device, shape=(1000,)):
    return ember.asarray(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32),
                         device=device)  # fmt: skip


def _small(x):
    return ember.maximum(x * 2 + 1, 0).sum()


def _reasons(c):
    return [why for kind, why, _ in c.events if kind == "cudagraph"]


def test_cpu_arrays_run_in_the_default_mode():
    c = ember.compile(_small, mode="reduce-overhead")
    for seed in range(4):
        x = _x(seed, "cpu")
        np.testing.assert_allclose(float(c(x)), float(_small(x)), rtol=1e-6)
    assert c.stats["cudagraph_replays"] == 0 and c.stats["calls"] == 4
    if ember.cuda.is_available():
        assert any("CPU array arguments" in r for r in _reasons(c))
    else:
        assert any("no CUDA device" in r for r in _reasons(c))


def test_optimizer_steps_inside_a_capture(monkeypatch):
    """What each optimizer does when its step is captured (simulated on this thread): PyTorch's
    error without capturable=True, a guard of its hyperparameters with it."""
    from ember import cuda

    def fresh(cls, **kw):
        w = ember.ones(3, dtype="float32").requires_grad_()
        opt = cls([w], **kw)
        (w * w).sum().backward()
        return opt

    assert not cuda.is_current_stream_capturing()
    monkeypatch.setattr(cuda._capture, "depth", 1, raising=False)
    monkeypatch.setattr(cuda._capture, "guards", [], raising=False)
    assert cuda.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match="capture of step.. for an instance of Adam but"):
        fresh(ember.optim.Adam).step()
    with pytest.raises(RuntimeError, match="NAdam.step cannot be captured"):
        fresh(ember.optim.NAdam, capturable=True).step()
    with pytest.raises(RuntimeError, match="first step with momentum"):
        fresh(ember.optim.SGD, momentum=0.9).step()
    opt = fresh(ember.optim.AdamW, capturable=True)
    opt.step()
    (check,) = cuda._capture.guards
    before = check()
    opt.param_groups[0]["lr"] = 0.5
    assert check() != before
    fresh(ember.optim.SGD).step()  # plain SGD has no host state
    assert len(cuda._capture.guards) == 2


def test_mode_is_checked():
    with pytest.raises(ValueError, match="mode must be one of"):
        ember.compile(_small, mode="fast")


needs_cuda = pytest.mark.skipif(not ember.cuda.is_available(), reason="no CUDA device")


@needs_cuda
def test_replays_equal_the_default_mode():
    c = ember.compile(_small, mode="reduce-overhead")
    outs = []
    for seed in range(6):
        x = _x(seed, "cuda")
        r = c(x)
        outs.append(r)
        np.testing.assert_allclose(float(r), float(_small(x)), rtol=1e-5)
    # each result is its own copy: later replays do not overwrite it
    np.testing.assert_allclose(float(outs[0]), float(_small(_x(0, "cuda"))), rtol=1e-5)
    assert c.stats["cudagraph_captures"] == 1 and c.stats["cudagraph_replays"] == 5
    c(_x(9, "cuda", (10, 100)))  # a new shape: a new key (warm-up, then capture)
    c(_x(9, "cuda", (10, 100)))
    assert c.stats["cudagraph_captures"] == 2


@needs_cuda
def test_a_mutated_argument_is_written_back():
    def bump(x, y):
        x += 1
        return x * y

    c = ember.compile(bump, mode="reduce-overhead")
    x, y = ember.zeros(8, device="cuda"), ember.full(8, 2.0, device="cuda")
    for k in range(1, 5):
        r = c(x, y)
        np.testing.assert_array_equal(ember.asnumpy(x), np.full(8, k))
        np.testing.assert_array_equal(ember.asnumpy(r), np.full(8, 2 * k))
    assert c.stats["cudagraph_replays"] == 3


def _mlp(seed, capturable):
    ember.random.seed(seed)
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).to("cuda")
    opt = ember.optim.Adam(model.parameters(), lr=1e-3, capturable=capturable)
    rng = np.random.default_rng(seed)
    x = ember.asarray(rng.standard_normal((64, 784), dtype=np.float32), device="cuda")
    y = ember.asarray(rng.integers(0, 10, 64), device="cuda")
    crit = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return model, step


@needs_cuda
def test_the_seed_training_step_replays_with_capturable_adam():
    ref_model, ref_step = _mlp(0, False)
    model, step = _mlp(0, True)
    c = ember.compile(step, mode="reduce-overhead")
    for _ in range(8):
        want, got = float(ref_step()), float(c())
        np.testing.assert_allclose(got, want, rtol=1e-4)
    for a, b in zip(model.parameters(), ref_model.parameters(), strict=True):
        np.testing.assert_allclose(ember.asnumpy(a), ember.asnumpy(b), rtol=1e-4, atol=1e-6)
    assert c.stats["cudagraph_captures"] == 1 and c.stats["cudagraph_replays"] == 7


@needs_cuda
def test_adam_without_capturable_is_refused_and_stays_correct():
    ref_model, ref_step = _mlp(1, False)
    model, step = _mlp(1, False)
    c = ember.compile(step, mode="reduce-overhead")
    for _ in range(4):
        np.testing.assert_allclose(float(c()), float(ref_step()), rtol=1e-4)
    assert c.stats["cudagraph_replays"] == 0
    assert any("capturable" in r for r in _reasons(c)), _reasons(c)


@needs_cuda
def test_an_lr_change_captures_again():
    ref_model, ref_step = _mlp(2, True)
    model, step = _mlp(2, True)
    c = ember.compile(step, mode="reduce-overhead")
    opts = [cell.cell_contents for cell in step.__closure__
            if isinstance(cell.cell_contents, ember.optim.Optimizer)]  # fmt: skip
    ref_opts = [cell.cell_contents for cell in ref_step.__closure__
                if isinstance(cell.cell_contents, ember.optim.Optimizer)]  # fmt: skip
    for k in range(6):
        if k == 4:
            for o in opts + ref_opts:
                o.param_groups[0]["lr"] = 5e-4
        np.testing.assert_allclose(float(c()), float(ref_step()), rtol=1e-4)
    assert c.stats["cudagraph_captures"] == 2
    assert any("recapture" in r for r in _reasons(c))


@needs_cuda
def test_host_reads_and_random_numbers_are_refused():
    def reads(x):
        return x * float(x.sum())

    c = ember.compile(reads, mode="reduce-overhead")
    for seed in range(3):
        x = _x(seed, "cuda")
        np.testing.assert_allclose(ember.asnumpy(c(x)), ember.asnumpy(reads(x)), rtol=1e-5)
    assert any("the capture failed" in r for r in _reasons(c)), _reasons(c)

    def noisy(x):
        return nn.functional.dropout(x, 0.5, True)

    d = ember.compile(noisy, mode="reduce-overhead")
    x = _x(0, "cuda")
    d(x)
    b, e = d(x), d(x)
    assert not np.array_equal(ember.asnumpy(b), ember.asnumpy(e))
    assert any("random numbers" in r for r in _reasons(d)), _reasons(d)
    assert d.stats["cudagraph_replays"] == 0


@needs_cuda
def test_outputs_that_require_grad_are_refused():
    w = _x(3, "cuda", (10,)).requires_grad_()

    def f(x):
        return (x * w).sum()

    c = ember.compile(f, mode="reduce-overhead")
    for _ in range(3):
        r = c(_x(4, "cuda", (10,)))
        r.backward()
    assert any("require grad" in r for r in _reasons(c)), _reasons(c)


def test_private_argument_copies_on_the_cpu():
    """The capture's helpers, which only a GPU reaches otherwise: private copies of nested
    arguments (same shape, dtype, device, data; own memory), copying a call's arrays into
    them, and the top-level arrays a mutation is written back to."""
    from ember._compile import _cudagraph as cg

    a = ember.asarray(np.arange(6.0).reshape(2, 3), device="cpu")
    b = ember.asarray(np.arange(4, dtype=np.int32), device="cpu")[::2]  # non-contiguous
    args = [a, (b, 3), {"k": a.T}]
    static = cg._static_copy(args)
    flat, orig = cg._flat_arrays(static, []), cg._flat_arrays(args, [])
    assert len(flat) == 3
    for s, o in zip(flat, orig, strict=True):
        assert (s.shape, s.dtype, s.device) == (o.shape, o.dtype, o.device)
        np.testing.assert_array_equal(ember.asnumpy(s), ember.asnumpy(o))
        assert ember._core._kernels.data_ptr(s) != ember._core._kernels.data_ptr(o)
    new = [a + 1, (b * 2, 3), {"k": (a + 1).T}]
    cg._copy_into(static, new)
    for s, o in zip(cg._flat_arrays(static, []), cg._flat_arrays(new, []), strict=True):
        np.testing.assert_array_equal(ember.asnumpy(s), ember.asnumpy(o))
    cl = ember.ones((2, 3, 4, 5), device="cpu").contiguous(memory_format=ember.channels_last)
    assert cg._static_copy(cl).strides == cl.strides  # the capture sees the warm-up's layout
    top = list(cg._indexed(cg._static_copy([a, 1, b]), {"w": cg._static_copy(a), "n": 2}))
    assert [k for k, _ in top] == [0, 2, "w"]
    assert cg._arg_key(a) != cg._arg_key(a.astype("float32"))
    assert cg._value_key((1, a))[1][1][0] == "a"
