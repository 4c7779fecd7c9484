"""ember.optim's optimizers (SGD, Adam, AdamW, RMSprop, Adagrad): closed-form first steps,
20-step trajectories against NumPy re-implementations of PyTorch's formulas, param groups,
state dicts, closures, hyperparameter errors, training with autograd (once it exists), and
20-step trajectories against torch.optim where torch is installed."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from _helpers import to_numpy
from _nn_helpers import _cpu_by_default  # noqa: F401
from ember import nn
from ember.optim import SGD, Adagrad, Adam, AdamW, RMSprop, lr_scheduler

STEPS = 20
SHAPES = [(3, 4), (5,), ()]


def rng(seed=0):
    return np.random.default_rng(seed)


def make_problem(seed=0, dtype=np.float64):
    """Initial values and a fixed sequence of gradients for each parameter."""
    r = rng(seed)
    init = [r.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[(r.standard_normal(s) * 0.5).astype(dtype) for s in SHAPES] for _ in range(STEPS)]
    return init, grads


def ember_params(init, device="cpu"):
    return [nn.Parameter(ember.asarray(np.array(a, copy=True), device=device)) for a in init]


def run_ember(cls, kw, init, grads, device="cpu"):
    params = ember_params(init, device)
    opt = cls(params, **kw)
    traj = []
    for step_grads in grads:
        for p, g in zip(params, step_grads, strict=True):
            p.grad = ember.asarray(np.array(g, copy=True), device=device)
        opt.step()
        traj.append([to_numpy(p).copy() for p in params])
    return traj, opt, params


# ---------------------------------------------------------------------------------------------
# NumPy re-implementations of PyTorch's update rules (float64)
# ---------------------------------------------------------------------------------------------


def ref_sgd(
    init,
    grads,
    lr=1e-3,
    momentum=0.0,
    dampening=0.0,
    weight_decay=0.0,
    nesterov=False,
    maximize=False,
):
    ps = [a.astype(np.float64) for a in init]
    bufs = [None] * len(ps)
    traj = []
    for step_grads in grads:
        for i, g in enumerate(step_grads):
            g = -g if maximize else g.astype(np.float64)
            if weight_decay:
                g = g + weight_decay * ps[i]
            if momentum:
                bufs[i] = g.copy() if bufs[i] is None else momentum * bufs[i] + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            ps[i] = ps[i] - lr * g
        traj.append([p.copy() for p in ps])
    return traj


def ref_adam(
    init,
    grads,
    lr=1e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    amsgrad=False,
    maximize=False,
    decoupled=False,
):
    b1, b2 = betas
    ps = [a.astype(np.float64) for a in init]
    m = [np.zeros_like(p) for p in ps]
    v = [np.zeros_like(p) for p in ps]
    vmax = [np.zeros_like(p) for p in ps]
    traj = []
    for t, step_grads in enumerate(grads, 1):
        for i, g in enumerate(step_grads):
            g = -g if maximize else g.astype(np.float64)
            if weight_decay:
                if decoupled:
                    ps[i] = ps[i] * (1 - lr * weight_decay)
                else:
                    g = g + weight_decay * ps[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            vmax[i] = np.maximum(vmax[i], v[i])
            vv = vmax[i] if amsgrad else v[i]
            denom = np.sqrt(vv) / math.sqrt(1 - b2**t) + eps
            ps[i] = ps[i] - lr / (1 - b1**t) * m[i] / denom
        traj.append([p.copy() for p in ps])
    return traj


def ref_adamw(init, grads, weight_decay=1e-2, **kw):
    return ref_adam(init, grads, weight_decay=weight_decay, decoupled=True, **kw)


def ref_rmsprop(
    init,
    grads,
    lr=1e-2,
    alpha=0.99,
    eps=1e-8,
    weight_decay=0.0,
    momentum=0.0,
    centered=False,
    maximize=False,
):
    ps = [a.astype(np.float64) for a in init]
    sq = [np.zeros_like(p) for p in ps]
    ga = [np.zeros_like(p) for p in ps]
    buf = [np.zeros_like(p) for p in ps]
    traj = []
    for step_grads in grads:
        for i, g in enumerate(step_grads):
            g = -g if maximize else g.astype(np.float64)
            if weight_decay:
                g = g + weight_decay * ps[i]
            sq[i] = alpha * sq[i] + (1 - alpha) * g * g
            if centered:
                ga[i] = alpha * ga[i] + (1 - alpha) * g
                avg = np.sqrt(sq[i] - ga[i] ** 2) + eps
            else:
                avg = np.sqrt(sq[i]) + eps
            if momentum > 0:
                buf[i] = momentum * buf[i] + g / avg
                ps[i] = ps[i] - lr * buf[i]
            else:
                ps[i] = ps[i] - lr * g / avg
        traj.append([p.copy() for p in ps])
    return traj


def ref_adagrad(
    init,
    grads,
    lr=1e-2,
    lr_decay=0.0,
    weight_decay=0.0,
    initial_accumulator_value=0.0,
    eps=1e-10,
    maximize=False,
):
    ps = [a.astype(np.float64) for a in init]
    s = [np.full_like(p, initial_accumulator_value) for p in ps]
    traj = []
    for t, step_grads in enumerate(grads, 1):
        for i, g in enumerate(step_grads):
            g = -g if maximize else g.astype(np.float64)
            if weight_decay:
                g = g + weight_decay * ps[i]
            clr = lr / (1 + (t - 1) * lr_decay)
            s[i] = s[i] + g * g
            ps[i] = ps[i] - clr * g / (np.sqrt(s[i]) + eps)
        traj.append([p.copy() for p in ps])
    return traj


CONFIGS = [
    (SGD, ref_sgd, dict(lr=0.1)),
    (SGD, ref_sgd, dict(lr=0.1, momentum=0.9)),
    (SGD, ref_sgd, dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.1)),
    (SGD, ref_sgd, dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (SGD, ref_sgd, dict(lr=0.1, momentum=0.5, maximize=True)),
    (Adam, ref_adam, dict(lr=0.01)),
    (Adam, ref_adam, dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    (Adam, ref_adam, dict(lr=0.01, amsgrad=True)),
    (Adam, ref_adam, dict(lr=0.01, amsgrad=True, maximize=True, weight_decay=0.05)),
    (AdamW, ref_adamw, dict(lr=0.01)),
    (AdamW, ref_adamw, dict(lr=0.01, weight_decay=0.3, amsgrad=True)),
    (AdamW, ref_adamw, dict(lr=0.01, maximize=True)),
    (RMSprop, ref_rmsprop, dict(lr=0.01)),
    (RMSprop, ref_rmsprop, dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    (RMSprop, ref_rmsprop, dict(lr=0.01, momentum=0.9)),
    (RMSprop, ref_rmsprop, dict(lr=0.01, centered=True, momentum=0.5, maximize=True)),
    (Adagrad, ref_adagrad, dict(lr=0.1)),
    (
        Adagrad,
        ref_adagrad,
        dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.3),
    ),
    (Adagrad, ref_adagrad, dict(lr=0.1, eps=1e-6, maximize=True)),
]


def _id(c):
    cls, _, kw = c
    return cls.__name__ + "-" + "-".join(f"{k}={v}" for k, v in kw.items())


@pytest.mark.parametrize("config", CONFIGS, ids=[_id(c) for c in CONFIGS])
def test_trajectory_matches_numpy_reference(device, config):
    cls, ref, kw = config
    init, grads = make_problem(1)
    expected = ref(init, grads, **kw)
    got, _, _ = run_ember(cls, kw, init, grads, device)
    for step, (g, e) in enumerate(zip(got, expected, strict=True)):
        for a, b in zip(g, e, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13, err_msg=f"step {step + 1}")
    # float32 parameters follow the float64 trajectory to float32 accuracy
    init32 = [a.astype(np.float32) for a in init]
    grads32 = [[g.astype(np.float32) for g in gs] for gs in grads]
    got, _, params = run_ember(cls, kw, init32, grads32, device)
    assert all(p.dtype == ember.float32 for p in params)
    for a, b in zip(got[-1], expected[-1], strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


# ---------------------------------------------------------------------------------------------
# closed forms of the first steps
# ---------------------------------------------------------------------------------------------


def test_closed_form_first_steps():
    p0, g1, g2 = np.array([1.0, -2.0, 0.5]), np.array([0.3, -0.1, 2.0]), np.array([-1.0, 0.4, 0.2])

    def two_steps(cls, **kw):
        p = nn.Parameter(ember.asarray(p0.copy()))
        opt = cls([p], **kw)
        out = []
        for g in (g1, g2):
            p.grad = ember.asarray(g.copy())
            opt.step()
            out.append(to_numpy(p).copy())
        return out

    s1, s2 = two_steps(SGD, lr=0.1, momentum=0.9, dampening=0.2)
    np.testing.assert_allclose(s1, p0 - 0.1 * g1)  # the first buffer is the gradient itself
    np.testing.assert_allclose(s2, p0 - 0.1 * g1 - 0.1 * (0.9 * g1 + 0.8 * g2))
    s1, _ = two_steps(Adam, lr=0.01, eps=1e-8)
    np.testing.assert_allclose(s1, p0 - 0.01 * g1 / (np.abs(g1) + 1e-8))  # bias corrections cancel
    s1, _ = two_steps(AdamW, lr=0.01, weight_decay=0.5)
    np.testing.assert_allclose(s1, p0 * (1 - 0.005) - 0.01 * g1 / (np.abs(g1) + 1e-8))
    s1, _ = two_steps(RMSprop, lr=0.01, alpha=0.9)
    np.testing.assert_allclose(s1, p0 - 0.01 * g1 / (np.sqrt(0.1) * np.abs(g1) + 1e-8))
    s1, s2 = two_steps(Adagrad, lr=0.1, lr_decay=0.5)
    np.testing.assert_allclose(s1, p0 - 0.1 * g1 / (np.abs(g1) + 1e-10))
    np.testing.assert_allclose(s2, s1 - 0.1 / 1.5 * g2 / (np.sqrt(g1**2 + g2**2) + 1e-10))


# ---------------------------------------------------------------------------------------------
# behaviour
# ---------------------------------------------------------------------------------------------


def test_defaults_like_pytorch():
    p = [nn.Parameter(ember.ones(2))]
    assert SGD(p).defaults["lr"] == 1e-3
    a = Adam(p).defaults
    assert (a["lr"], a["betas"], a["eps"], a["weight_decay"], a["amsgrad"]) == (
        1e-3,
        (0.9, 0.999),
        1e-8,
        0,
        False,
    )
    assert AdamW(p).defaults["weight_decay"] == 1e-2
    r = RMSprop(p).defaults
    assert (r["lr"], r["alpha"], r["eps"], r["momentum"], r["centered"]) == (
        1e-2,
        0.99,
        1e-8,
        0,
        False,
    )
    g = Adagrad(p).defaults
    assert (g["lr"], g["lr_decay"], g["eps"], g["initial_accumulator_value"]) == (1e-2, 0, 1e-10, 0)


def test_parameters_without_grad_are_skipped():
    a, b = nn.Parameter(ember.ones(2)), nn.Parameter(ember.ones(2))
    opt = Adam([a, b], lr=0.1)
    a.grad = ember.ones(2)
    opt.step()
    assert to_numpy(b).tolist() == [1.0, 1.0] and b not in opt.state
    assert opt.state[a]["step"] == 1.0 and set(opt.state[a]) == {"step", "exp_avg", "exp_avg_sq"}
    sgd = SGD([a, b], lr=0.1, momentum=0.9)
    sgd.step()  # a's grad is still there; b has none
    assert "momentum_buffer" in sgd.state[a] and b not in sgd.state


def test_param_groups_use_their_own_hyperparameters():
    a, b = nn.Parameter(ember.zeros(2)), nn.Parameter(ember.zeros(2))
    opt = SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    a.grad, b.grad = ember.ones(2), ember.ones(2)
    opt.step()
    np.testing.assert_allclose(to_numpy(a), -0.1)
    np.testing.assert_allclose(to_numpy(b), -1.0)
    c = nn.Parameter(ember.zeros(1))
    opt.add_param_group({"params": [c], "momentum": 0.5})
    assert opt.param_groups[2]["lr"] == 0.1 and opt.param_groups[2]["momentum"] == 0.5


@pytest.mark.parametrize(
    "config",
    [CONFIGS[3], CONFIGS[8], CONFIGS[10], CONFIGS[15], CONFIGS[17]],
    ids=lambda c: c[0].__name__,
)
def test_state_dict_resume_matches_uninterrupted_run(config):
    cls, _, kw = config
    init, grads = make_problem(2)
    full, _, _ = run_ember(cls, kw, init, grads)
    first, opt, params = run_ember(cls, kw, init, grads[:10])
    sd = opt.state_dict()
    params2 = ember_params([to_numpy(p) for p in params])
    opt2 = cls(params2, **kw)
    opt2.load_state_dict(sd)
    for step_grads in grads[10:]:
        for p, g in zip(params2, step_grads, strict=True):
            p.grad = ember.asarray(g.copy())
        opt2.step()
    for a, b in zip(params2, full[-1], strict=True):
        np.testing.assert_allclose(to_numpy(a), b, rtol=1e-12, atol=1e-14)
    if cls is not SGD:  # SGD keeps no step count, as in PyTorch
        assert sd["state"][0]["step"] == 10.0


def test_closure_and_zero_grad():
    p = nn.Parameter(ember.ones(3))
    opt = SGD([p], lr=0.5)
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        p.grad = ember.full((3,), 2.0)
        return 7.0

    assert opt.step(closure) == 7.0 and calls == [1]
    np.testing.assert_allclose(to_numpy(p), 0.0)
    opt.zero_grad()
    assert p.grad is None


def test_lr_scheduler_drives_the_step():
    p = nn.Parameter(ember.zeros(1))
    opt = SGD([p], lr=1.0)
    sched = lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    values = []
    for _ in range(3):
        p.grad = ember.ones(1)
        opt.step()
        sched.step()
        values.append(float(p[0]))
    np.testing.assert_allclose(values, [-1.0, -1.5, -1.75])


def test_hyperparameter_errors():
    p = [nn.Parameter(ember.ones(2))]
    with pytest.raises(ValueError, match="Invalid learning rate: -0.1"):
        SGD(p, lr=-0.1)
    with pytest.raises(
        ValueError, match="Nesterov momentum requires a momentum and zero dampening"
    ):
        SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid momentum value: -1"):
        SGD(p, momentum=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        Adam(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid epsilon value: -1e-08"):
        AdamW(p, eps=-1e-8)
    with pytest.raises(ValueError, match="Invalid weight_decay value: -0.1"):
        RMSprop(p, weight_decay=-0.1)
    with pytest.raises(ValueError, match="Invalid alpha value"):
        RMSprop(p, alpha=-0.5)
    with pytest.raises(ValueError, match="Invalid lr_decay value"):
        Adagrad(p, lr_decay=-1)
    with pytest.raises(ValueError, match="Invalid initial_accumulator_value value"):
        Adagrad(p, initial_accumulator_value=-1)
    with pytest.raises(TypeError, match="lr must be a real number"):
        Adam(p, lr="fast")
    with pytest.raises(TypeError, match="betas must be a pair"):
        Adam(p, betas=0.9)
    with pytest.raises(ValueError, match="empty parameter list"):
        Adam([])


def test_optimizer_after_module_to():
    m = nn.Linear(3, 2)
    m.double()
    opt = Adam(m.parameters(), lr=0.1)
    for p in m.parameters():
        p.grad = ember.ones(p.shape, dtype=p.dtype)
    before = to_numpy(m.weight).copy()
    opt.step()
    assert opt.state[m.weight]["exp_avg"].dtype == ember.float64
    np.testing.assert_allclose(to_numpy(m.weight), before - 0.1, rtol=0, atol=1e-8)


def test_repr():
    text = repr(Adam([nn.Parameter(ember.ones(1))], lr=0.5))
    assert text.startswith("Adam (\nParameter Group 0\n") and "    lr: 0.5" in text


# ---------------------------------------------------------------------------------------------
# with autograd
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cls, kw",
    [
        (SGD, dict(lr=0.05, momentum=0.9)),
        (Adam, dict(lr=0.05)),
        (AdamW, dict(lr=0.05)),
        (RMSprop, dict(lr=0.01)),
        (Adagrad, dict(lr=0.5)),
    ],
)
def test_minimizes_least_squares(device, cls, kw):
    r = rng(3)
    a = ember.asarray(r.standard_normal((10, 4)), device=device)
    b = ember.asarray(r.standard_normal(10), device=device)
    x = nn.Parameter(ember.zeros(4, dtype=ember.float64, device=device))
    opt = cls([x], **kw)

    def loss():
        d = a @ x - b
        return (d * d).mean()

    start = float(loss().detach())
    for _ in range(200):
        opt.zero_grad()
        value = loss()
        value.backward()
        opt.step()
    best = np.linalg.lstsq(to_numpy(a), to_numpy(b), rcond=None)[0]
    d = to_numpy(a) @ best - to_numpy(b)
    optimum = float((d * d).mean())
    assert float(loss().detach()) < optimum + 0.1 * (start - optimum)
    assert x.is_leaf and x.grad_fn is None


def test_step_is_not_recorded():
    p = nn.Parameter(ember.ones(3))
    opt = Adam([p], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    assert not opt.state[p]["exp_avg"].requires_grad


# ---------------------------------------------------------------------------------------------
# against torch.optim (on the GPU machine, where torch is installed)
# ---------------------------------------------------------------------------------------------


def _torch_kwargs(kw):
    return {k: v for k, v in kw.items()}


@pytest.mark.parametrize("config", CONFIGS, ids=[_id(c) for c in CONFIGS])
def test_trajectory_matches_torch(device, config):
    torch = pytest.importorskip("torch")
    cls, _, kw = config
    init, grads = make_problem(4, np.float32)
    tparams = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    topt = getattr(torch.optim, cls.__name__)(tparams, **_torch_kwargs(kw))
    texpected = []
    for step_grads in grads:
        for p, g in zip(tparams, step_grads, strict=True):
            p.grad = torch.tensor(g.copy())
        topt.step()
        texpected.append([p.detach().numpy().copy() for p in tparams])
    got, _, _ = run_ember(cls, kw, init, grads, device)
    for step, (g, e) in enumerate(zip(got, texpected, strict=True)):
        for a, b in zip(g, e, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"step {step + 1}")
