"""The fused optimizer step (ember._core._optimizer_step) against NumPy re-implementations of
PyTorch's update formulas, on both devices, over dtypes, several tensors of mixed sizes (the GPU
kernel's chunks), non-contiguous arrays and bad input."""

from __future__ import annotations

import ember
import numpy as np
import pytest

step = ember._core._optimizer_step

SHAPES = [(7,), (3, 5), (4097,), (2, 3000), ()]  # 4097 and 6000: more than one 4096-chunk


def ref_update(kind, p, g, s, h, steps_done):
    """One step of PyTorch's single-tensor formulas, in float64; s: list of 3 state arrays."""
    if h.get("maximize"):
        g = -g
    lr, wd = h["lr"], h.get("weight_decay", 0.0)
    if kind == "sgd":
        if wd:
            g = g + wd * p
        mom = h.get("momentum", 0.0)
        if mom:
            s[0] = g.copy() if steps_done == 0 else mom * s[0] + (1 - h.get("dampening", 0.0)) * g
            g = g + mom * s[0] if h.get("nesterov") else s[0]
        return p - lr * g
    if kind == "adam":
        b1, b2, eps = h["beta1"], h["beta2"], h["eps"]
        if h.get("decoupled"):
            p = p * (1 - lr * wd)
        elif wd:
            g = g + wd * p
        t = steps_done + 1
        s[0] = s[0] + (g - s[0]) * (1 - b1)
        s[1] = s[1] * b2 + (1 - b2) * g * g
        second = s[1]
        if h.get("amsgrad"):
            s[2] = np.maximum(s[2], s[1])
            second = s[2]
        denom = np.sqrt(second) / np.sqrt(1 - b2**t) + eps
        return p - (lr / (1 - b1**t)) * (s[0] / denom)
    if kind == "rmsprop":
        if wd:
            g = g + wd * p
        a = h["beta2"]
        s[0] = a * s[0] + (1 - a) * g * g
        if h.get("centered"):
            s[1] = s[1] + (g - s[1]) * (1 - a)
            avg = np.sqrt(s[0] - s[1] * s[1]) + h["eps"]
        else:
            avg = np.sqrt(s[0]) + h["eps"]
        if h.get("momentum", 0.0):
            s[2] = h["momentum"] * s[2] + g / avg
            return p - lr * s[2]
        return p - lr * (g / avg)
    assert kind == "adagrad"
    if wd:
        g = g + wd * p
    s[0] = s[0] + g * g
    return p - lr * (g / (np.sqrt(s[0]) + h["eps"]))


def call_args(kind, h, steps_done):
    """The binding's keyword arguments for step number steps_done + 1 of `h`."""
    kw = {k: v for k, v in h.items() if k not in ("lr_decay",)}
    if kind == "sgd":
        kw["first"] = steps_done == 0
    if kind == "adam":
        t = steps_done + 1
        kw["bias1"] = 1 - h["beta1"] ** t
        kw["bias2_sqrt"] = float(np.sqrt(1 - h["beta2"] ** t))
    return kw


CASES = [
    ("sgd", {"lr": 0.1}),
    ("sgd", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
    ("sgd", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("adam", {"lr": 1e-2, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}),
    (
        "adam",
        {
            "lr": 1e-2,
            "beta1": 0.8,
            "beta2": 0.99,
            "eps": 1e-6,
            "weight_decay": 0.1,
            "amsgrad": True,
        },
    ),
    (
        "adam",
        {
            "lr": 1e-2,
            "beta1": 0.9,
            "beta2": 0.999,
            "eps": 1e-8,
            "weight_decay": 0.1,
            "decoupled": True,
            "maximize": True,
        },
    ),
    ("rmsprop", {"lr": 1e-2, "beta2": 0.99, "eps": 1e-8}),
    (
        "rmsprop",
        {
            "lr": 1e-2,
            "beta2": 0.9,
            "eps": 1e-8,
            "centered": True,
            "momentum": 0.5,
            "weight_decay": 0.01,
        },
    ),
    ("adagrad", {"lr": 0.1, "eps": 1e-10, "weight_decay": 0.05}),
]
USED = {"sgd": (0,), "adam": (0, 1, 2), "rmsprop": (0, 1, 2), "adagrad": (0,)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind,h", CASES)
def test_three_steps_match_the_reference(device, kind, h, dtype):
    rng = np.random.default_rng(0)
    ps = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    states = [[np.zeros(s, dtype) for _ in range(3)] for s in SHAPES]
    if kind == "adagrad":
        for st in states:
            st[0] += 0.1  # initial_accumulator_value
    ep = [ember.asarray(p, device=device) for p in ps]
    es = [[ember.asarray(x, device=device) for x in st] for st in states]
    ref_p = [p.astype(np.float64) for p in ps]
    ref_s = [[x.astype(np.float64) for x in st] for st in states]
    for t in range(3):
        gs = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
        eg = [ember.asarray(g, device=device) for g in gs]
        lists = [[st[k] for st in es] if k in USED[kind] else None for k in range(3)]
        step(kind, ep, eg, *lists, **call_args(kind, h, t))
        for i, g in enumerate(gs):
            ref_p[i] = ref_update(kind, ref_p[i], g.astype(np.float64), ref_s[i], h, t)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for i in range(len(SHAPES)):
        np.testing.assert_allclose(ember.asnumpy(ep[i]), ref_p[i], rtol=tol, atol=tol)
        for k in USED[kind]:
            np.testing.assert_allclose(ember.asnumpy(es[i][k]), ref_s[i][k], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_parameters_compute_in_float32(device, dtype):
    p = ember.asarray(np.linspace(-1, 1, 300), device=device).astype(dtype)
    g = ember.ones(300, dtype=dtype, device=device)
    m, v = ember.zeros_like(p), ember.zeros_like(p)
    kw = call_args("adam", CASES[3][1], 0)
    step("adam", [p], [g], [m], [v], None, **kw)
    want = np.linspace(-1, 1, 300) - 1e-2  # the first Adam step moves by lr * sign(g)
    got = ember.asnumpy(p.astype(ember.float32))
    np.testing.assert_allclose(got, want, atol=2e-2)
    assert p.dtype == getattr(ember, dtype)


def test_many_tensors_in_one_call(device):
    # more than the 48 tensors of one GPU launch
    n = 100
    ps = [ember.full((i + 1,), float(i), dtype=ember.float32, device=device) for i in range(n)]
    gs = [ember.ones((i + 1,), dtype=ember.float32, device=device) for i in range(n)]
    step("sgd", ps, gs, None, None, None, lr=0.5)
    for i, p in enumerate(ps):
        np.testing.assert_array_equal(ember.asnumpy(p), np.full(i + 1, i - 0.5, np.float32))


def test_non_contiguous_parameters_and_state_are_written_back(device):
    base = ember.asarray(np.arange(12.0).reshape(3, 4), device=device)
    p = base.T  # a view, not contiguous
    g = ember.ones((4, 3), device=device)
    buf_base = ember.zeros((3, 4), device=device)
    buf = buf_base.T
    step("sgd", [p], [g], [buf], None, None, lr=1.0, momentum=0.9, first=True)
    np.testing.assert_array_equal(ember.asnumpy(base), np.arange(12.0).reshape(3, 4) - 1)
    np.testing.assert_array_equal(ember.asnumpy(buf_base), np.ones((3, 4)))


def test_empty_and_zero_size(device):
    step("adam", [], [], [], [], None, lr=1.0, beta1=0.9, beta2=0.9, eps=1e-8)
    p = ember.zeros((0, 3), device=device)
    step("sgd", [p], [ember.zeros((0, 3), device=device)], None, None, None, lr=1.0)


def test_bad_input_raises_naming_ember_optim(device):
    p = ember.ones(3, device=device)
    with pytest.raises(ValueError, match="ember.optim.*shape"):
        step("sgd", [p], [ember.ones(4, device=device)], None, None, None, lr=1.0)
    with pytest.raises(TypeError, match="ember.optim.*dtype"):
        g32 = ember.ones(3, dtype=ember.float32, device=device)
        step("sgd", [p.astype(ember.float64)], [g32], None, None, None, lr=1.0)
    with pytest.raises(TypeError, match="floating point"):
        q = ember.ones(3, dtype=ember.int32, device=device)
        step("sgd", [q], [q], None, None, None, lr=1.0)
    with pytest.raises(ValueError, match="gradients"):
        step("sgd", [p], [], None, None, None, lr=1.0)
    with pytest.raises(ValueError, match="state 2"):
        step("adam", [p], [p + 0], [p + 0], None, None, lr=1.0)
    with pytest.raises(ValueError, match="unknown optimizer kind"):
        step("lion", [p], [p + 0], None, None, None, lr=1.0)
    with pytest.raises(TypeError, match="ember arrays"):
        step("sgd", [np.ones(3)], [p], None, None, None, lr=1.0)


def test_parameters_on_two_devices_raise():
    from conftest import cuda_unavailable_reason

    if cuda_unavailable_reason() is not None:
        pytest.skip("needs a GPU")
    a, b = ember.ones(3, device="cpu"), ember.ones(3, device="cuda")
    with pytest.raises(ValueError, match="is on cuda"):
        step("sgd", [a, b], [a + 0, b + 0], None, None, None, lr=1.0)
