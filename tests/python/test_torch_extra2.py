"""PyTorch functions, methods, optimizers and schedulers of ember/_torch_extra2.py and
ember/optim (Adamax, Adadelta, CyclicLR, swa_utils), checked against NumPy replays."""

import math

import ember as em
import numpy as np
import pytest


def _np(x):
    return em.asnumpy(x)


def test_diag_embed_tensor_split_take_along_dim(device):
    a = np.arange(6.0).reshape(2, 3)
    x = em.asarray(a, device=device)
    d = _np(em.diag_embed(x, offset=1))
    for b in range(2):
        np.testing.assert_array_equal(d[b], np.diag(a[b], 1))
    np.testing.assert_array_equal(_np(em.diag_embed(x, 0, 0, 2))[:, 1, :], np.diag(a[1]))
    parts = em.tensor_split(em.arange(7, device=device), 3)
    assert [p.shape[0] for p in parts] == [3, 2, 2]
    assert [_np(p).tolist() for p in em.tensor_split(em.arange(7), [1, 5])] == [
        [0], [1, 2, 3, 4], [5, 6]]  # fmt: skip
    i = np.array([[2], [0]])
    got = em.take_along_dim(x, em.asarray(i, device=device), dim=1)
    np.testing.assert_array_equal(_np(got), np.take_along_axis(a, i, 1))
    np.testing.assert_allclose(_np(em.tensordot(x, x, dims=([1], [1]))), a @ a.T)


def test_math_functions(device):
    sp = pytest.importorskip("scipy.special")
    a = np.array([0.5, 1.5, 3.0])
    x = em.asarray(a, device=device)
    np.testing.assert_allclose(_np(em.lgamma(x)), sp.gammaln(a), rtol=1e-6)
    np.testing.assert_allclose(_np(em.digamma(x)), sp.digamma(a), rtol=1e-6)
    np.testing.assert_allclose(_np(em.polygamma(1, x)), sp.polygamma(1, a), rtol=1e-6)
    np.testing.assert_allclose(_np(em.erfinv(x / 4)), sp.erfinv(a / 4), rtol=1e-6)
    np.testing.assert_allclose(_np(em.xlogy(x, x)), a * np.log(a), rtol=1e-6)
    m = np.array([[3.0, -4.0], [1.0, 0.0]])
    r = _np(em.renorm(em.asarray(m, device=device), 2, 0, 1.0))
    np.testing.assert_allclose(r[0], m[0] / (5 + 1e-7), rtol=1e-6)
    np.testing.assert_allclose(r[1], m[1])
    y = np.array([[1.0, 2.0, 4.0]])
    np.testing.assert_allclose(_np(em.cumulative_trapezoid(em.asarray(y))), [[1.5, 4.5]])
    np.testing.assert_allclose(_np(em.clamp_min(x, 1.0)), np.maximum(a, 1))
    np.testing.assert_allclose(_np(x.clamp_max(1.0)), np.minimum(a, 1))
    np.testing.assert_array_equal(_np(em.msort(em.asarray([[3, 1], [1, 2]]))), [[1, 1], [3, 2]])
    np.testing.assert_allclose(_np(em.pinverse(em.asarray(m))), np.linalg.pinv(m), atol=1e-10)


def test_diag_embed_grad():
    x = em.ones((3,), requires_grad=True)
    (em.diag_embed(x) * em.arange(9.0).reshape(3, 3)).sum().backward()
    np.testing.assert_allclose(_np(x.grad), [0, 4, 8])


def test_random_fills(device):
    em.manual_seed(0)
    n = 20000
    g = em.empty(n, device=device).geometric_(0.25)
    assert _np(g).min() >= 1 and abs(_np(g).mean() - 4) < 0.2
    c = em.empty(n, device=device).cauchy_(1.0, 2.0)
    assert abs(np.median(_np(c)) - 1.0) < 0.1
    ln = _np(em.empty(n, device=device).log_normal_(0.0, 0.5))
    assert abs(np.log(ln).std() - 0.5) < 0.02
    p = _np(em.poisson(em.full((n,), 3.0, device=device)))
    assert abs(p.mean() - 3) < 0.1 and abs(p.var() - 3) < 0.2
    z = _np(em.normal(em.zeros(n, device=device), em.full((n,), 2.0, device=device)))
    assert abs(z.std() - 2) < 0.1
    assert em.normal(1.0, 2.0, (3, 2)).shape == (3, 2)
    with pytest.raises(ValueError):
        em.empty(3).geometric_(1.5)


def test_index_put_masked_scatter_sum_to_size(device):
    x = em.zeros((3, 2), device=device)
    x.index_put_((em.asarray([0, 0, 2]),), em.ones(2, device=device), accumulate=True)
    np.testing.assert_array_equal(_np(x), [[2, 2], [0, 0], [1, 1]])
    y = x.index_put((em.asarray([1]), em.asarray([1])), em.asarray([5.0]))
    assert _np(y)[1, 1] == 5 and _np(x)[1, 1] == 0
    m = em.asarray([[True, False], [False, True], [True, True]])
    s = _np(em.zeros((3, 2)).masked_scatter(m, em.arange(1.0, 7.0)))
    np.testing.assert_array_equal(s, [[1, 0], [0, 2], [3, 4]])
    with pytest.raises(ValueError):
        em.zeros((3, 2)).masked_scatter_(m, em.ones(2))
    np.testing.assert_array_equal(_np(em.ones((2, 3, 4)).sum_to_size(3, 1)), np.full((3, 1), 8))
    with pytest.raises(ValueError):
        em.ones((2, 3)).sum_to_size(4)


def test_memory_methods():
    a = np.arange(6, dtype=np.float32)
    x = em.asarray(a)
    assert x.data_ptr() == np.from_dlpack(x).ctypes.data
    assert x[2:].data_ptr() == x.data_ptr() + 8
    st = x.storage()
    assert st.size() == 6 and st.element_size() == 4 and st.nbytes() == 24
    assert x.untyped_storage().size() == 24
    assert x.share_memory_() is x and x.is_shared() is False
    np.testing.assert_array_equal(_np(x.pin_memory()), a)
    c = em.asarray(np.array([[1 + 2j, 3j], [1, 2]]))
    np.testing.assert_array_equal(_np(c.H), np.conj(_np(c)).T)
    with pytest.raises(ValueError):
        _ = em.ones(3).H


def test_flags():
    em.use_deterministic_algorithms(False)  # other tests (junk calls) may have set it
    assert em.are_deterministic_algorithms_enabled() is False
    em.use_deterministic_algorithms(True)
    try:
        assert em.are_deterministic_algorithms_enabled() is True
    finally:
        em.use_deterministic_algorithms(False)
    assert em.get_num_threads() >= 1
    with pytest.raises(ValueError):
        em.set_num_threads(0)


def _grads():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(4) for _ in range(5)]


def _run(opt_cls, **kw):
    p = em.asarray(np.linspace(-1, 1, 4))
    opt = opt_cls([p], **kw)
    for g in _grads():
        p.grad = em.asarray(g)
        opt.step()
    return _np(p)


def test_adamax_replay():
    lr, b1, b2, eps, wd = 0.01, 0.8, 0.9, 1e-8, 0.1
    p = np.linspace(-1, 1, 4)
    m = np.zeros(4)
    u = np.zeros(4)
    for t, g in enumerate(_grads(), 1):
        g = g + wd * p
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        p = p - lr / (1 - b1**t) * m / u
    got = _run(em.optim.Adamax, lr=lr, betas=(b1, b2), weight_decay=wd)
    np.testing.assert_allclose(got, p, rtol=1e-10)


def test_adadelta_replay():
    lr, rho, eps = 0.5, 0.8, 1e-6
    p = np.linspace(-1, 1, 4)
    v = np.zeros(4)
    acc = np.zeros(4)
    for g in _grads():
        g = -g
        v = rho * v + (1 - rho) * g * g
        d = np.sqrt(acc + eps) / np.sqrt(v + eps) * g
        acc = rho * acc + (1 - rho) * d * d
        p = p - lr * d
    got = _run(em.optim.Adadelta, lr=lr, rho=rho, maximize=True)
    np.testing.assert_allclose(got, p, rtol=1e-10)


@pytest.mark.parametrize("mode", ["triangular", "triangular2", "exp_range"])
def test_cycliclr_replay(mode):
    opt = em.optim.SGD([em.zeros(2)], lr=1.0, momentum=0.9)
    s = em.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, step_size_up=3, step_size_down=2,
                                       mode=mode, gamma=0.9)  # fmt: skip
    for it in range(14):
        cycle = math.floor(1 + it / 5)
        x = 1 + it / 5 - cycle
        f = x / 0.6 if x <= 0.6 else (x - 1) / (0.6 - 1)
        sc = {"triangular": 1.0, "triangular2": 1 / 2 ** (cycle - 1), "exp_range": 0.9**it}[mode]
        assert opt.param_groups[0]["lr"] == pytest.approx(0.1 + 0.9 * f * sc)
        assert opt.param_groups[0]["momentum"] == pytest.approx(0.9 - 0.1 * f * sc)
        s.step()


def test_swa_utils():
    nn = em.nn
    model = nn.Linear(2, 1)
    avg = em.optim.swa_utils.AveragedModel(model)
    ws = []
    for k in range(3):
        with em.no_grad():
            model.weight[...] = float(k)
        ws.append(float(k))
        avg.update_parameters(model)
    np.testing.assert_allclose(_np(avg.module.weight), np.full((1, 2), np.mean(ws)))
    assert int(avg.n_averaged.item()) == 3
    opt = em.optim.SGD(model.parameters(), lr=1.0)
    sched = em.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(3):
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    np.testing.assert_allclose(lrs, [1.0, 0.55, 0.1, 0.1])
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    data = [em.asarray(np.random.default_rng(i).standard_normal((4, 2))) for i in range(3)]
    em.optim.swa_utils.update_bn(data, net)
    h = _np(net[0](em.concatenate(data)))
    np.testing.assert_allclose(_np(net[1].running_mean), h.mean(0), rtol=1e-5, atol=1e-6)


def test_cuda_memory_without_gpu():
    if em.cuda.is_available():
        assert em.cuda.memory_allocated() >= 0
    else:
        with pytest.raises(ValueError):
            em.cuda.memory_allocated()


def test_against_torch():
    torch = pytest.importorskip("torch")
    for ecls, tcls, kw in [
        (em.optim.Adamax, torch.optim.Adamax, dict(lr=0.01, weight_decay=0.1)),
        (em.optim.Adadelta, torch.optim.Adadelta, dict(lr=0.5, maximize=True)),
    ]:
        tp = torch.tensor(np.linspace(-1, 1, 4), requires_grad=True)
        topt = tcls([tp], **kw)
        for g in _grads():
            tp.grad = torch.tensor(g)
            topt.step()
        np.testing.assert_allclose(_run(ecls, **kw), tp.detach().numpy(), rtol=1e-9)
    topt = torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=1.0, momentum=0.9)
    eopt = em.optim.SGD([em.zeros(2)], lr=1.0, momentum=0.9)
    kw = dict(step_size_up=3, mode="triangular2")
    ts = torch.optim.lr_scheduler.CyclicLR(topt, 0.1, 1.0, **kw)
    es = em.optim.lr_scheduler.CyclicLR(eopt, 0.1, 1.0, **kw)
    for _ in range(10):
        assert eopt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"])
        ts.step()
        es.step()


def test_randint_like_keeps_a_floating_dtype(device):
    ember = em
    x = ember.ones(50, device=device)
    r = ember.randint_like(x, 5)
    v = ember.asnumpy(r)
    assert r.dtype == x.dtype and (v == np.round(v)).all() and v.min() >= 0 and v.max() < 5
    assert ember.randint_like(x.astype("int32"), 2, 5).dtype == ember.int32


def test_unique_method_and_manual_seed_generator(device):
    x = em.asarray([[1, 3], [1, 2]], device=device)
    np.testing.assert_array_equal(em.asnumpy(x.unique()), [1, 2, 3])
    vals, counts = x.unique(return_counts=True)
    np.testing.assert_array_equal(em.asnumpy(counts), [2, 1, 1])
    vals, inv = x.unique(return_inverse=True)
    assert tuple(inv.shape) == (2, 2)
    np.testing.assert_array_equal(em.asnumpy(vals)[em.asnumpy(inv)], em.asnumpy(x))
    rows, inv = em.asarray([[1, 2], [1, 2], [0, 1]], device=device).unique(
        dim=0, return_inverse=True
    )
    np.testing.assert_array_equal(em.asnumpy(rows), [[0, 1], [1, 2]])
    np.testing.assert_array_equal(em.asnumpy(inv), [1, 1, 0])
    g = em.manual_seed(7)
    assert g.initial_seed() == 7
    a = em.rand(4, device=device)
    em.manual_seed(7)
    np.testing.assert_array_equal(em.asnumpy(em.rand(4, device=device)), em.asnumpy(a))
