"""NAdam, RAdam and LBFGS: NumPy replays of PyTorch's formulas over several steps, and L-BFGS
on a quadratic and on Rosenbrock's function, on both devices."""

from __future__ import annotations

import math

import ember
import ember.optim as optim
import numpy as np
import pytest


def _grad(w):
    return 2 * w + np.sin(w)  # of sum(w^2) - sum(cos(w))


def _loss(w):
    return (w * w).sum() - ember.cos(w).sum()


def _run(cls, device, steps=6, **kw):
    w0 = np.array([1.5, -0.7, 0.2])
    w = ember.asarray(w0.copy(), device=device)
    w.requires_grad_()
    opt = cls([w], **kw)
    for _ in range(steps):
        opt.zero_grad()
        _loss(w).backward()
        opt.step()
    return w0, ember.asnumpy(w.detach())


def test_nadam_matches_pytorchs_formula(device):
    lr, b1, b2, eps, md = 2e-3, 0.9, 0.999, 1e-8, 4e-3
    w0, got = _run(optim.NAdam, device, lr=lr)
    w, m, v, mu_prod = w0.copy(), np.zeros(3), np.zeros(3), 1.0
    for t in range(1, 7):
        g = _grad(w)
        mu = b1 * (1 - 0.5 * 0.96 ** (t * md))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * md))
        mu_prod *= mu
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = np.sqrt(v / (1 - b2**t)) + eps
        w = (
            w
            - lr * (1 - mu) / (1 - mu_prod) * g / denom
            - lr * mu_next / (1 - mu_prod * mu_next) * m / denom
        )
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_radam_matches_pytorchs_formula(device):
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
    w0, got = _run(optim.RAdam, device, steps=8, lr=lr, betas=(b1, 0.6))
    b2 = 0.6  # rho_t passes 5 within these steps: both branches run
    w, m, v = w0.copy(), np.zeros(3), np.zeros(3)
    rho_inf = 2 / (1 - b2) - 1
    for t in range(1, 9):
        g = _grad(w)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        mh = m / (1 - b1**t)
        rho = rho_inf - 2 * t * b2**t / (1 - b2**t)
        if rho > 5:
            rect = math.sqrt(
                (rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho)
            )
            w = w - lr * mh * rect * math.sqrt(1 - b2**t) / (np.sqrt(v) + eps)
        else:
            w = w - lr * mh
    np.testing.assert_allclose(got, w, rtol=1e-12)


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_solves_a_quadratic(device, line_search):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((5, 5))
    a = q @ q.T + 5 * np.eye(5)
    b = rng.standard_normal(5)
    A, B = ember.asarray(a, device=device), ember.asarray(b, device=device)  # noqa: N806
    x = ember.zeros(5, dtype=ember.float64, device=device)
    x.requires_grad_()
    opt = optim.LBFGS([x], lr=1, max_iter=100, line_search_fn=line_search)

    def closure():
        opt.zero_grad()
        loss = 0.5 * (x * (A @ x)).sum() - (B * x).sum()
        loss.backward()
        return loss

    for _ in range(20 if line_search else 50):
        opt.step(closure)
    tol = 1e-5 if line_search else 1e-4  # a fixed step stops on the loss change first
    np.testing.assert_allclose(ember.asnumpy(x.detach()), np.linalg.solve(a, b), rtol=tol, atol=tol)


def test_lbfgs_rosenbrock_and_errors():
    x = ember.asarray(np.array([-1.5, 2.0]))
    x.requires_grad_()
    opt = optim.LBFGS([x], max_iter=200, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss

    for _ in range(5):
        opt.step(closure)
    np.testing.assert_allclose(ember.asnumpy(x.detach()), [1.0, 1.0], atol=1e-4)
    with pytest.raises(RuntimeError, match="needs a closure"):
        opt.step(None)
    with pytest.raises(ValueError, match="line_search_fn"):
        optim.LBFGS([x], line_search_fn="armijo")


@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW])
@pytest.mark.parametrize("amsgrad", [False, True])
def test_capturable_adam_equals_adam(device, cls, amsgrad):
    """capturable=True keeps each step count as a 0-d float32 array on the parameter's device
    and the update reads it there; the trajectory is bitwise the host-count one's (complex
    parameters take the composed path, whose bias corrections are then float32 arrays, as
    PyTorch's capturable Adam computes them: equal to rounding)."""
    dtypes = ["float32", "float64", "complex64"] if device == "cpu" else ["float32", "complex64"]
    for dt in dtypes:
        ref = None
        for capturable in (False, True):
            w = ember.asarray(np.array([1.5, -0.7, 0.2, 3.0]), dtype=dt, device=device)
            w.requires_grad_()
            opt = cls([w], lr=0.1, amsgrad=amsgrad, capturable=capturable)
            for _ in range(5):
                opt.zero_grad()
                (ember.abs(w * w) - ember.cos(ember.real(w))).sum().backward()
                opt.step()
            got = ember.asnumpy(w.detach())
            step = opt.state[w]["step"]
            if capturable:
                assert isinstance(step, ember.ndarray) and step.dtype == ember.float32
                assert str(step.device) == str(ember.Device(device)) and float(step) == 5.0
                if dt.startswith("complex"):
                    np.testing.assert_allclose(got, ref, rtol=1e-4, err_msg=dt)
                else:
                    np.testing.assert_array_equal(got, ref, err_msg=dt)
            else:
                assert step == 5.0
                ref = got


def test_capturable_adam_state_dict_round_trip(device):
    w = ember.asarray(np.array([1.0, 2.0]), dtype="float32", device=device)
    w.requires_grad_()
    opt = optim.Adam([w], lr=0.1, capturable=True)
    for _ in range(2):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    sd = opt.state_dict()
    plain = optim.Adam([w], lr=0.1)  # a host count continues from the array's value
    plain.load_state_dict(sd)
    opt.zero_grad()
    (w * w).sum().backward()
    plain.step()
    assert float(plain.state[w]["step"]) == 3.0
    again = optim.Adam([w], lr=0.1, capturable=True)
    again.load_state_dict(plain.state_dict())  # and a host count becomes an array
    opt.zero_grad()
    (w * w).sum().backward()
    again.step()
    assert isinstance(again.state[w]["step"], ember.ndarray)
    assert float(again.state[w]["step"]) == 4.0


def test_optimizer_step_checks_the_step_counts():
    from ember import _core

    p = ember.ones(3, dtype="float32")
    g, m, v = ember.ones(3, dtype="float32"), ember.zeros(3, dtype="float32"), ember.zeros(3)
    with pytest.raises(ValueError, match="step count of parameter 0 must be a 1-element float32"):
        _core._optimizer_step(
            "adam", [p], [g], [m], [ember.zeros(3, dtype="float32")], None, lr=0.1,
            beta1=0.9, beta2=0.999, eps=1e-8, steps=[ember.ones(2, dtype="float32")],
        )  # fmt: skip
    with pytest.raises(ValueError, match="got 0 step counts for 1 parameters"):
        _core._optimizer_step("adam", [p], [g], [m], [v.astype("float32")], None, lr=0.1, steps=[])
    with pytest.raises(ValueError, match="Adam's only"):
        _core._optimizer_step("sgd", [p], [g], None, None, None, lr=0.1, steps=[p[:1]])
