"""ember.compile, continued: autograd through compiled code, the seed MLP's training step with
Adam, compiled modules (parameters, train/eval, state_dict), nested compiled calls, ember.fuse
inside, the diagnostics (stats, events, ember.debug's ledger)."""

from __future__ import annotations

import ember
import numpy as np
import pytest

nn = ember.nn
F = ember.nn.functional


def _arr(shape, seed, device, dtype="float64"):
    rng = np.random.default_rng(seed)
    return ember.asarray(rng.standard_normal(shape).astype(dtype), device=device)


def _np(a):
    return ember.asnumpy(a)


# ---- autograd -----------------------------------------------------------------------------------


def _loss(x, w, b):
    h = ember.tanh(x * w + b)  # fused, inputs require grad
    g = (h * h - ember.exp(-x) / 2) * 3
    return (g.sum(axis=1) ** 2).mean() + (h * b).max()


def test_gradients_through_a_compiled_forward_equal_eager(device):
    x = _arr((5, 4), 0, device)
    ws = [_arr((4,), 1, device).requires_grad_(), _arr((4,), 2, device).requires_grad_()]
    cf = ember.compile(_loss)
    lc = cf(x, *ws)
    lc.backward()
    got = [_np(w.grad) for w in ws]
    for w in ws:
        w.grad = None
    le = _loss(x, *ws)
    le.backward()
    np.testing.assert_allclose(float(lc), float(le), rtol=1e-12)
    for g, w in zip(got, ws, strict=True):
        np.testing.assert_allclose(g, _np(w.grad), rtol=1e-12)
    assert lc.requires_grad and cf.stats["fused_kernels"] >= 2
    # the backwards of the elementwise and sum/mean steps were fused kernels; max's has no
    # fused rule (its subgradient convention is eager autograd's): recomputed eagerly
    assert cf.stats["fused_backwards"] >= 2 and cf.stats["eager_backwards"] == 1
    assert [e[1] for e in cf.events if e[0] == "eager_backward"] == ["no fused derivative of max"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_backward_rules_with_broadcasting(dtype, device):
    x = _arr((3, 4), 20, device, dtype).requires_grad_()
    b = _arr((4,), 21, device, dtype).requires_grad_()
    c = _arr((3, 1), 22, device, dtype)

    def fn(x, b, c):
        t = ember.sin(x) * b - ember.cos(b) / (ember.exp(c) + 2) + ember.sqrt(ember.square(x) + 1)
        u = ember.where(t > 0, t, 0.5 * t) ** 3 + ember.log1p(ember.tanh(t) ** 2)
        v = ember.log(ember.reciprocal(ember.abs(b) + 1)) + ember.expm1(b * 0.1)
        return u.astype("float64").mean() + (v * 2).sum() + (x**2.5 / 7).sum(axis=0).sum()

    cf = ember.compile(fn)
    ember.autograd.backward(cf(x, b, c))
    got = [_np(x.grad), _np(b.grad)]
    x.grad = b.grad = None
    ember.autograd.backward(fn(x, b, c))
    tol = 1e-12 if dtype == "float64" else 2e-5
    for g, w in zip(got, [x.grad, b.grad], strict=True):
        np.testing.assert_allclose(g, _np(w), rtol=tol, atol=tol)
    # abs has no fused derivative (its subgradient at 0 is eager autograd's): that step's
    # backward is recomputed eagerly, the others are fused kernels
    assert cf.stats["fused_backwards"] >= 3
    assert [e[1] for e in cf.events if e[0] == "eager_backward"] == ["no fused derivative of abs"]


def test_double_backward_recomputes_eagerly(device):
    x = _arr((4,), 23, device).requires_grad_()
    cf = ember.compile(lambda a: (ember.sin(a) * a).sum())
    (g,) = ember.autograd.grad(cf(x), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    xn = _np(x)
    np.testing.assert_allclose(_np(g), np.cos(xn) * xn + np.sin(xn), rtol=1e-12)
    np.testing.assert_allclose(_np(gg), 2 * np.cos(xn) - xn * np.sin(xn), rtol=1e-12)
    assert cf.stats["eager_backwards"] == 1


def test_gradients_through_reduction_epilogues(device):
    x = _arr((3, 4), 24, device).requires_grad_()

    def fn(a):
        return (ember.tanh(a) * a).mean() * 3 + ember.sqrt(
            (a * a).sum(axis=1, keepdims=True) + 1
        ).sum()

    cf = ember.compile(fn)
    cf(x).backward()
    got = _np(x.grad)
    x.grad = None
    fn(x).backward()
    np.testing.assert_allclose(got, _np(x.grad), rtol=1e-12)
    assert cf.stats["eager_backwards"] == 0 and cf.stats["fused_backwards"] >= 2


def test_gradients_with_no_grad_parts_and_integer_results(device):
    x = _arr((6,), 3, device).requires_grad_()

    def fn(a):
        with ember.no_grad():
            scale = a * 2  # recorded without grad: a constant for the backward
        mask = (a > 0).astype("float64")  # a comparison: no gradient
        return (ember.sin(a) * scale + mask * a).sum()

    cf = ember.compile(fn)
    cf(x).backward()
    got = _np(x.grad)
    x.grad = None
    fn(x).backward()
    np.testing.assert_allclose(got, _np(x.grad), rtol=1e-12)


def test_retain_graph_and_grad_api(device):
    x = _arr((3, 3), 4, device).requires_grad_()
    cf = ember.compile(lambda a: (ember.exp(a) * a).sum())
    y = cf(x)
    (g1,) = ember.autograd.grad(y, x, retain_graph=True)
    (g2,) = ember.autograd.grad(y, x)
    want = _np(ember.exp(x) * (x + 1))
    np.testing.assert_allclose(_np(g1), want, rtol=1e-12)
    np.testing.assert_allclose(_np(g2), want, rtol=1e-12)


# ---- the seed MLP with Adam ----------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def _train(compiled, device, steps=3):
    ember.random.seed(0)
    model = MLP().to(device)
    opt = ember.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    xs = [
        ember.asarray(rng.random((64, 784), dtype=np.float32), device=device) for _ in range(steps)
    ]
    ys = [ember.asarray(rng.integers(0, 10, 64), device=device) for _ in range(steps)]

    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    step = ember.compile(train_step) if compiled else train_step
    losses = [float(step(x, y)) for x, y in zip(xs, ys, strict=True)]
    return model, losses, step


def test_mlp_adam_train_step_equals_eager(device):
    m1, l1, step = _train(True, device)
    m2, l2, _ = _train(False, device)
    np.testing.assert_allclose(l1, l2, rtol=1e-6)
    for (n1, p1), (_, p2) in zip(m1.named_parameters(), m2.named_parameters(), strict=True):
        np.testing.assert_allclose(_np(p1), _np(p2), rtol=1e-5, atol=1e-7, err_msg=n1)
    assert step.stats["calls"] == 3


def test_compiled_module(device):
    ember.random.seed(1)
    model = MLP().to(device)
    cm = ember.compile(model)
    x = _arr((8, 784), 5, device, "float32")
    np.testing.assert_allclose(_np(cm(x)), _np(model(x)), rtol=1e-6)
    assert cm._orig_mod is model
    assert [p is q for p, q in zip(cm.parameters(), model.parameters(), strict=True)]
    assert cm.train() is cm and cm.training and model.training
    assert cm.eval() is cm and not model.training
    sd = cm.state_dict()
    assert sorted(sd) == sorted(model.state_dict())
    cm.load_state_dict(sd)
    cm.fc1.weight.requires_grad_(False)
    assert not model.fc1.weight.requires_grad

    # a module whose forward names ember's elementwise functions: fused
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(ember.ones(5, dtype="float64", device=device))

        def forward(self, x):
            return ember.tanh(x * self.w + 1).sum()

    s = Scale()
    cs = ember.compile(s)
    x = _arr((3, 5), 6, device)
    y = cs(x)
    y.backward()
    g = _np(s.w.grad)
    s.w.grad = None
    s(x).backward()
    np.testing.assert_allclose(g, _np(s.w.grad), rtol=1e-12)
    assert cs.stats["fused_kernels"] == 1


# ---- composition ---------------------------------------------------------------------------------


def test_nested_compiled_calls_and_methods(device):
    @ember.compile
    def inner(a):
        return ember.exp(a) + 1

    @ember.compile
    def outer(a):
        return (inner(a) * inner(-a)).sum()

    class Obj:
        @ember.compile
        def method(self, a):
            return a * 2

    x = _arr((4,), 7, device)
    np.testing.assert_allclose(
        float(outer(x)), float(((ember.exp(x) + 1) * (ember.exp(-x) + 1)).sum()), rtol=1e-15
    )
    assert outer.stats["fused_kernels"] == 1 and inner.stats["calls"] == 0
    np.testing.assert_array_equal(_np(Obj().method(x)), _np(x * 2))


def test_fuse_inside_compile(device):
    @ember.fuse()
    def axpy(a, x, y):
        return a * x + y

    @ember.compile
    def fn(x, y):
        return ember.sqrt(ember.abs(axpy(2.0, x, y)))

    x, y = _arr((10,), 8, device), _arr((10,), 9, device)
    np.testing.assert_array_equal(_np(fn(x, y)), _np(ember.sqrt(ember.abs(2.0 * x + y))))
    assert fn.stats["fused_kernels"] == 1


def test_lazy_values_pass_for_arrays(device):
    seen = {}

    @ember.compile
    def fn(a):
        y = a * 2
        seen["isinstance"] = isinstance(y, ember.ndarray)
        seen["meta"] = (y.shape, y.dtype, y.ndim, str(y.device), len(y))
        seen["numpy"] = np.asarray(ember.asnumpy(y))  # an explicit host copy
        return y

    x = ember.arange(5, dtype="float32", device=device)
    fn(x)
    assert seen["isinstance"]
    assert seen["meta"] == ((5,), ember.float32, 1, str(x.device), 5)
    np.testing.assert_array_equal(seen["numpy"], np.arange(5) * 2)


# ---- diagnostics ---------------------------------------------------------------------------------


def test_stats_events_and_debug_ledger(device):
    @ember.compile
    def fn(a):
        y = ember.exp(a) * 2
        n = int((y > 1).sum())  # a break: int() reads the value
        return y + n

    x = _arr((6,), 10, device)
    with ember.debug.ledger(kinds=["compile"]) as led:
        fn(x)
        fn(x)
    st = fn.stats
    assert st["calls"] == 2 and st["graph_breaks"] == 2 and st["compiles"] == 2
    assert st["cache_hits"] == 2 and st["recompiles"] == 0
    kinds = [e[0] for e in fn.events]
    assert "break" in kinds and "fused" in kinds and "compile" in kinds
    mine = [e for e in led.events if e.op == "ember.compile"]
    assert len(mine) == 2 and all(e.reason == "a new graph" for e in mine)
    fn.reset_stats()
    assert fn.stats["calls"] == 0 and not fn.events


def test_modified_leaf_is_detected(device):
    w = _arr((4,), 11, device)

    @ember.compile
    def fn(a):
        y = a * w  # reads w: deferred
        w.add_(1.0)  # an in-place write into w before y is computed (no deferred value used)
        return y

    with pytest.raises(RuntimeError, match="modified in place"):
        fn(_arr((4,), 12, device))


def test_returned_arguments_are_the_callers_and_threads_are_independent(device):
    import threading

    x = _arr((5,), 13, device)

    @ember.compile
    def ident(a, b):
        return a, (b, [a * 2])

    r = ident(x, x)
    assert r[0] is x and r[1][0] is x and type(r[1][1][0]) is ember.ndarray

    @ember.compile
    def work(a, k):
        return ember.sin(a * k) + k

    out = {}

    def run(k):
        for _ in range(20):
            out[k] = work(x, float(k))

    ts = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for k in range(4):
        np.testing.assert_array_equal(_np(out[k]), _np(ember.sin(x * float(k)) + k))


# ---- the GPU kernels of compiled plans compile (NVRTC, sm_90; NVRTC runs without a GPU) -------


def _nvrtc_reason():
    try:
        ember._core._kernels.compile('extern "C" __global__ void k() {}', "probe", [], [], 90)
    except Exception as e:  # no NVRTC here
        return str(e).splitlines()[0]
    return None


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=f"no NVRTC: {_nvrtc_reason()}")
def test_cuda_sources_of_compiled_plans_compile_for_sm90():
    from ember._compile import _flush
    from ember._fusion import _codegen, _run

    @ember.compile
    def fn(a, b, s):
        t = ember.where(a > s, a * b, -b)
        return t.astype("float16"), (t * t).sum(axis=1), ember.exp(t).mean()

    before = set(_flush._plans)
    fn(_arr((3, 4), 14, "cpu", "float32"), _arr((4,), 15, "cpu", "float32"), 0.5)
    steps = [st for k in set(_flush._plans) - before for st in _flush._plans[k]]
    assert len(steps) == 3 and all(st.plan is not None for st in steps)
    for k, st in enumerate(steps):
        name = f"compiled_{k}"
        if st.plan.reduce is not None:
            src = _codegen.cuda_reduce_source(st.plan, name, 1, 1)
        else:
            src = _codegen.cuda_source(st.plan, name, 2)
        ember._core._kernels.compile(src, name, list(_run.OPTIONS), [], 90)


def test_ember_arrays_on_the_left_of_operators_defer_and_keep_gradients(device):
    b = _arr((4,), 30, device)
    w = _arr((), 31, device).requires_grad_()

    def fn(x):
        y = b * x + b  # a closure's array on the left: deferred by the reflected operators
        s = y.sum()
        return w * s, b > y, 2.0 - s  # w * (a 0-d deferred value): w's gradient flows

    cf = ember.compile(fn)
    x = _arr((4,), 32, device)
    got, want = cf(x), fn(x)
    for g, e in zip(got, want, strict=True):
        # the GPU's fused sum folds its 4 terms in another tree than eager's reduction kernel
        np.testing.assert_allclose(_np(g), _np(e), rtol=0 if device == "cpu" else 1e-15)
    assert cf.stats["graph_breaks"] == 0 and cf.stats["eager_kernels"] == 0
    got[0].backward()
    np.testing.assert_allclose(_np(w.grad), _np(want[0].detach() / w.detach()), rtol=1e-12)


def test_an_exception_inside_leaves_ember_as_it_was(device):
    exp = ember.exp

    @ember.compile
    def fn(a):
        y = ember.exp(a) * 2
        if float(y.sum()) > 0:
            raise KeyError("boom")
        return y

    with pytest.raises(KeyError):
        fn(ember.ones(3, device=device))
    assert ember.exp is exp and ember._compile._graph.current() is None
    np.testing.assert_array_equal(_np(fn(-ember.ones(0, device=device))), np.zeros(0))


def test_a_0d_deferred_value_keeps_its_gradient_in_any_ember_call(device):
    w = ember.asarray(np.float64(1.5), device=device).requires_grad_()
    x = ember.arange(4.0, device=device)

    @ember.compile
    def fn(a):
        s = (a * w).sum()  # 0-d, requires grad
        return ember._core.multiply(s, 3.0) + ember._core.maximum(s, 0.0)  # ember's C++ directly

    y = fn(x)
    y.backward()
    assert float(y) == 27.0 + 9.0 and float(w.grad) == 24.0


def test_chains_on_two_devices_in_one_flush(device):
    if device == "cpu":
        pytest.skip("needs a second device")
    a = _arr((4,), 40, "cpu")
    b = _arr((4,), 41, device)

    @ember.compile
    def fn(x, y):
        return x * 2 + 1, y * 2 + 1  # the same shape, two devices: two kernels

    ga, gb = fn(a, b)
    assert str(ga.device) == "cpu" and str(gb.device) == str(b.device)
    np.testing.assert_array_equal(_np(ga), _np(a * 2 + 1))
    np.testing.assert_array_equal(_np(gb), _np(b * 2 + 1))
    assert fn.stats["fused_kernels"] == 2
