"""PyTorch's functions of ember/_torch_extra.py, nn.ParameterList/ParameterDict,
utils.checkpoint, ember.testing, cuda.amp, F.glu/gumbel_softmax/affine_grid/grid_sample and
load(weights_only=, map_location=): against NumPy (and PyTorch itself where it is installed),
on both devices."""

from __future__ import annotations

import itertools

import ember
import ember as torch
import numpy as np
import pytest

F = ember.nn.functional
nn = ember.nn


def _n(x):
    return ember.asnumpy(x)


def _a(device, a):
    return ember.asarray(np.array(a), device=device)  # a copy: in-place ops leave `a` alone


def test_bucketize_and_histc(device):
    b = np.array([1.0, 3.0, 5.0, 7.0])
    x = np.array([[0.0, 1.0, 2.0], [5.0, 7.0, 9.0]])
    for right in (False, True):
        got = torch.bucketize(_a(device, x), _a(device, b), right=right)
        np.testing.assert_array_equal(
            _n(got), np.searchsorted(b, x, side="right" if right else "left")
        )
    assert torch.bucketize(_a(device, x), _a(device, b), out_int32=True).dtype == ember.int32
    v = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    got = torch.histc(_a(device, v), bins=7, min=-1, max=2)
    ref, _ = np.histogram(v[(v >= -1) & (v <= 2)], bins=7, range=(-1, 2))
    np.testing.assert_array_equal(_n(got), ref)
    got = _a(device, v).histc(bins=5)
    np.testing.assert_array_equal(_n(got), np.histogram(v, bins=5, range=(v.min(), v.max()))[0])
    with pytest.raises(ValueError, match="max must be larger than min"):
        torch.histc(_a(device, v), min=2, max=1)
    with pytest.raises(TypeError, match="floating"):
        torch.histc(_a(device, np.arange(3)))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float64])
def test_cummax_cummin(device, dtype):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 5, (3, 9)).astype(dtype)  # ties: the later index wins (PyTorch)
    for fn, acc, better in ((torch.cummax, np.maximum, np.greater_equal),
                            (torch.cummin, np.minimum, np.less_equal)):  # fmt: skip
        for dim in (0, 1, -1):
            v, i = fn(_a(device, a), dim=dim)
            np.testing.assert_array_equal(_n(v), acc.accumulate(a, axis=dim))
            am = np.moveaxis(a, dim, -1)
            ref = np.zeros(am.shape, np.int64)
            for idx in np.ndindex(am.shape[:-1]):
                best = 0
                for k in range(am.shape[-1]):
                    if better(am[idx][k], am[idx][best]):
                        best = k
                    ref[idx][k] = best
            np.testing.assert_array_equal(_n(i), np.moveaxis(ref, -1, dim))
    v, i = _a(device, a).cummax(0)
    assert v.shape == a.shape and i.dtype == ember.int64


def test_cummax_nan_and_gradient(device):
    v, i = torch.cummax(_a(device, np.array([1.0, np.nan, 3.0, 0.0])), 0)
    assert np.isnan(_n(v)[1:]).all() and _n(i).tolist() == [0, 1, 1, 1]
    x = ember.asarray([1.0, 3.0, 2.0, 5.0], device=device, requires_grad=True)
    torch.cummax(x, 0).values.sum().backward()
    np.testing.assert_array_equal(_n(x.grad), [1, 2, 0, 1])


def test_construction_helpers(device):
    got = torch.block_diag(_a(device, np.ones((2, 2))), _a(device, np.array([5.0, 6.0])),
                           _a(device, np.array(7.0)))  # fmt: skip
    ref = np.zeros((4, 5))
    ref[:2, :2] = 1
    ref[2, 2:4] = [5, 6]
    ref[3, 4] = 7
    np.testing.assert_array_equal(_n(got), ref)
    a, b = np.arange(3), np.arange(10, 12)
    got = torch.cartesian_prod(_a(device, a), _a(device, b))
    np.testing.assert_array_equal(_n(got), list(itertools.product(a, b)))
    for r, rep in ((2, False), (3, False), (2, True)):
        got = torch.combinations(_a(device, np.arange(4) * 10), r=r, with_replacement=rep)
        gen = itertools.combinations_with_replacement if rep else itertools.combinations
        np.testing.assert_array_equal(_n(got), np.array(list(gen(np.arange(4) * 10, r))))


def test_unique_consecutive(device):
    a = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    out, inv, cnt = torch.unique_consecutive(_a(device, a), return_inverse=True,
                                             return_counts=True)  # fmt: skip
    assert _n(out).tolist() == [1, 2, 3, 1, 2] and _n(cnt).tolist() == [2, 2, 1, 2, 1]
    assert _n(inv).tolist() == [0, 0, 1, 1, 2, 3, 3, 4]
    m = np.array([[1, 1, 2, 2], [3, 3, 4, 5]])
    got = torch.unique_consecutive(_a(device, m), dim=1)
    np.testing.assert_array_equal(_n(got), [[1, 2, 2], [3, 4, 5]])
    assert _n(torch.unique_consecutive(_a(device, np.array([], np.int64)))).size == 0


def test_statistics_pairs(device):
    a = np.random.default_rng(2).standard_normal((4, 5))
    s, m = torch.std_mean(_a(device, a), dim=1)
    np.testing.assert_allclose(_n(s), a.std(1, ddof=1))
    np.testing.assert_allclose(_n(m), a.mean(1))
    v, m = torch.var_mean(_a(device, a), dim=0, correction=0, keepdim=True)
    np.testing.assert_allclose(_n(v), a.var(0, keepdims=True))
    r = torch.aminmax(_a(device, a))
    assert float(r.min) == a.min() and float(r.max) == a.max()
    r = _a(device, a).aminmax(dim=1)
    np.testing.assert_array_equal(_n(r[0]), a.min(1))
    np.testing.assert_array_equal(_n(_a(device, a).amax(dim=(0, 1))), a.max())
    np.testing.assert_array_equal(_n(_a(device, a).amin(1, keepdim=True)), a.min(1, keepdims=True))
    assert _a(device, a).movedim(0, 1).shape == (5, 4) and torch.movedim(
        _a(device, a), 1, 0
    ).shape == (5, 4)


def test_index_writes(device):
    a = np.zeros((3, 4), np.float32)
    src = np.arange(8, dtype=np.float32).reshape(2, 4)
    idx = np.array([2, 2])
    got = _a(device, a).index_add_(0, _a(device, idx), _a(device, src), alpha=2)
    ref = a.copy()
    np.add.at(ref, idx, 2 * src)
    np.testing.assert_array_equal(_n(got), ref)
    got = torch.index_fill(_a(device, a), 1, _a(device, np.array([0, 3])), -1.0)
    ref = a.copy()
    ref[:, [0, 3]] = -1
    np.testing.assert_array_equal(_n(got), ref)
    got = _a(device, a).index_copy(1, _a(device, np.array([1, 0])), _a(device, np.ones((3, 2))))
    ref = a.copy()
    ref[:, [1, 0]] = 1
    np.testing.assert_array_equal(_n(got), ref)
    with pytest.raises(IndexError, match="dim 2 is out of range"):
        _a(device, a).index_fill_(2, _a(device, np.array([0])), 1)
    with pytest.raises(TypeError, match="integer array"):
        _a(device, a).index_fill_(0, _a(device, np.array([0.5])), 1)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_matches_reference(device, reduce, include_self):
    rng = np.random.default_rng(3)
    base = rng.integers(1, 5, (4, 3)).astype(np.float64)
    src = rng.integers(1, 5, (6, 3)).astype(np.float64)
    index = rng.integers(0, 4, (6, 3))
    got = torch.scatter_reduce(_a(device, base), 0, _a(device, index), _a(device, src), reduce,
                               include_self=include_self)  # fmt: skip
    ref = base.copy()
    for j in range(3):
        for t in range(4):
            vals = list(src[index[:, j] == t, j])
            if not vals:
                continue
            pool = ([base[t, j]] if include_self else []) + vals
            ref[t, j] = {"sum": sum, "prod": np.prod, "mean": np.mean, "amax": max,
                         "amin": min}[reduce](pool)  # fmt: skip
    np.testing.assert_allclose(_n(got), ref)
    with pytest.raises(ValueError, match="reduce argument must be one of"):
        torch.scatter_reduce(_a(device, base), 0, _a(device, index), _a(device, src), "max")


def test_method_forms(device):
    x = _a(device, np.array([[1.0, -2.0, 3.0]]))
    np.testing.assert_array_equal(_n(x.where(x > 0, 0.0)), [[1, 0, 3]])
    assert x.allclose(x + 1e-9) and not x.allclose(x + 1)
    assert x.squeeze(dim=0).shape == (3,) and x.squeeze(dim=1).shape == (1, 3)
    assert torch.squeeze(x, dim=(0, 1)).shape == (3,)
    with pytest.raises(ValueError):  # NumPy's positional form keeps NumPy's error
        x.squeeze(1)
    y = _a(device, np.arange(6.0))
    np.testing.assert_array_equal(_n(torch.flip(y, dims=[0])), np.arange(6.0)[::-1])
    np.testing.assert_array_equal(_n(torch.roll(y, shifts=2, dims=0)), np.roll(np.arange(6.0), 2))


def test_generator():
    g = torch.Generator().manual_seed(7)
    assert g.initial_seed() == 7
    a = torch.randn(4, generator=g)
    b = torch.randn(4, generator=torch.Generator().manual_seed(7))
    np.testing.assert_array_equal(_n(a), _n(b))
    st = g.get_state()
    c = torch.rand(3, generator=g)
    g.set_state(st)
    np.testing.assert_array_equal(_n(torch.rand(3, generator=g)), _n(c))
    assert st.dtype == ember.uint8 and st.shape == (16,)
    assert torch.Generator().initial_seed() == 67280421310721
    p = torch.randperm(6, generator=torch.Generator().manual_seed(1))
    assert sorted(_n(p).tolist()) == list(range(6))


def test_parameter_containers(device):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.pl = nn.ParameterList([torch.zeros(2, device=device), nn.Parameter(torch.ones(3))])
            self.pd = nn.ParameterDict({"w": torch.ones(2, 2, device=device)})

        def forward(self, x):
            return (x * self.pl[0]).sum() + self.pl[1].sum() + self.pd["w"].sum()

    m = M()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["pl.0", "pl.1", "pd.w"]
    assert all(isinstance(p, nn.Parameter) for p in m.pl) and len(m.pl) == 2 and "w" in m.pd
    m.pl.append(torch.zeros(1))
    assert len(list(m.parameters())) == 4 and list(m.state_dict()) == [
        "pl.0",
        "pl.1",
        "pl.2",
        "pd.w",
    ]
    m(torch.ones(2, device=device)).backward()
    np.testing.assert_array_equal(_n(m.pl[0].grad), [1, 1])
    assert m.pd.pop("w").shape == (2, 2) and len(m.pd) == 0
    with pytest.raises(TypeError, match="keys must be strings"):
        m.pd[1] = torch.ones(1)


def test_checkpoint_equals_plain_backward(device):
    from ember.utils.checkpoint import checkpoint, checkpoint_sequential

    def run(use_ckpt):
        torch.manual_seed(0)
        m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2)).to(device)
        x = torch.randn(5, 4, device=device, requires_grad=True)
        torch.manual_seed(1)
        y = checkpoint(m, x, use_reentrant=False) if use_ckpt else m(x)
        y.square().sum().backward()
        return [_n(p.grad) for p in m.parameters()] + [_n(x.grad)]

    for a, b in zip(run(False), run(True), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    torch.manual_seed(0)
    seq = nn.Sequential(*[nn.Linear(3, 3) for _ in range(4)]).to(device)
    x = torch.randn(2, 3, device=device, requires_grad=True)
    ref = seq(x)
    got = checkpoint_sequential(seq, 2, x, use_reentrant=True)
    np.testing.assert_allclose(_n(got), _n(ref), rtol=1e-6)
    got.sum().backward()
    assert x.grad is not None and seq[0].weight.grad is not None


def test_testing_assert_close(device):
    torch.testing.assert_close(
        _a(device, np.ones(3, np.float32)), _a(device, np.ones(3, np.float32)) + 1e-6
    )
    with pytest.raises(AssertionError, match=r"Mismatched elements: 1 / 2 \(50.0%\)"):
        torch.testing.assert_close(
            _a(device, np.array([1.0, 2.0])), _a(device, np.array([1.0, 2.1]))
        )
    with pytest.raises(AssertionError, match="'dtype' do not match"):
        torch.testing.assert_close(_a(device, np.ones(2)), _a(device, np.ones(2, np.float32)))
    with pytest.raises(AssertionError, match="'shape' do not match"):
        torch.testing.assert_close(_a(device, np.ones(2)), _a(device, np.ones(3)))
    torch.testing.assert_close({"a": [_a(device, np.ones(2))]}, {"a": [_a(device, np.ones(2))]})
    torch.testing.assert_close(1.0, 1.0 + 1e-9)
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        torch.testing.assert_close(1.0, 1.0, rtol=1e-3)
    t = torch.testing.make_tensor(3, 4, dtype=ember.float32, device=device, low=-1, high=1)
    assert t.shape == (3, 4) and float(t.min()) >= -1 and float(t.max()) < 1


def test_glu_and_gumbel(device):
    a = np.random.default_rng(4).standard_normal((2, 6))
    got = F.glu(_a(device, a))
    np.testing.assert_allclose(_n(got), a[:, :3] / (1 + np.exp(-a[:, 3:])), rtol=1e-6)
    with pytest.raises(ValueError, match="halving dimension must be even"):
        F.glu(_a(device, a), dim=0 if a.shape[0] % 2 else 1) if False else F.glu(
            _a(device, a[:, :5])
        )
    logits = ember.asarray(a, device=device, requires_grad=True)
    y = F.gumbel_softmax(logits, tau=0.5, hard=True)
    yy = _n(y)
    assert set(np.unique(yy)) <= {0.0, 1.0} and (yy.sum(1) == 1).all()
    (y * ember.asarray(np.arange(6.0), device=device)).sum().backward()
    assert logits.grad is not None and np.isfinite(_n(logits.grad)).all()
    soft = _n(F.gumbel_softmax(_a(device, a)))
    np.testing.assert_allclose(soft.sum(1), 1, rtol=1e-6)


def _ref_grid_sample(inp, grid, mode, padding, align):
    """PyTorch's grid_sample semantics written as loops (bilinear/nearest)."""
    n, c, h, w = inp.shape
    _, ho, wo, _ = grid.shape
    out = np.zeros((n, c, ho, wo))

    def unnorm(v, size):
        return (v + 1) * (size - 1) / 2 if align else ((v + 1) * size - 1) / 2

    def reflect(v, size):
        lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
        span = hi - lo
        v = abs(v - lo)
        flips = np.floor(v / span)
        extra = v - flips * span
        v = extra + lo if flips % 2 == 0 else hi - extra
        return min(max(v, 0), size - 1)

    def get(b, ch, y, x):
        if 0 <= x < w and 0 <= y < h:
            return inp[b, ch, y, x]
        return 0.0

    for b in range(n):
        for i in range(ho):
            for j in range(wo):
                x = unnorm(grid[b, i, j, 0], w)
                y = unnorm(grid[b, i, j, 1], h)
                if padding == "border":
                    x, y = min(max(x, 0), w - 1), min(max(y, 0), h - 1)
                elif padding == "reflection":
                    x, y = reflect(x, w), reflect(y, h)
                for ch in range(c):
                    if mode == "nearest":
                        out[b, ch, i, j] = get(b, ch, int(np.rint(y)), int(np.rint(x)))
                    else:
                        x0, y0 = int(np.floor(x)), int(np.floor(y))
                        tx, ty = x - x0, y - y0
                        out[b, ch, i, j] = (
                            get(b, ch, y0, x0) * (1 - tx) * (1 - ty)
                            + get(b, ch, y0, x0 + 1) * tx * (1 - ty)
                            + get(b, ch, y0 + 1, x0) * (1 - tx) * ty
                            + get(b, ch, y0 + 1, x0 + 1) * tx * ty
                        )
    return out


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_matches_loops(device, mode, padding, align):
    rng = np.random.default_rng(5)
    inp = rng.standard_normal((2, 3, 5, 4))
    grid = rng.uniform(-1.4, 1.4, (2, 3, 6, 2))
    got = F.grid_sample(_a(device, inp), _a(device, grid), mode=mode, padding_mode=padding,
                        align_corners=align)  # fmt: skip
    np.testing.assert_allclose(_n(got), _ref_grid_sample(inp, grid, mode, padding, align),
                               rtol=1e-10, atol=1e-12)  # fmt: skip


def test_affine_grid_and_gradients(device):
    theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    for align in (False, True):
        g = F.affine_grid(_a(device, theta), (1, 1, 3, 4), align_corners=align)
        xs = np.linspace(-1, 1, 4) if align else (np.arange(4) * 2 + 1) / 4 - 1
        ys = np.linspace(-1, 1, 3) if align else (np.arange(3) * 2 + 1) / 3 - 1
        np.testing.assert_allclose(_n(g)[0, :, :, 0], np.broadcast_to(xs, (3, 4)))
        np.testing.assert_allclose(_n(g)[0, :, :, 1], np.broadcast_to(ys[:, None], (3, 4)))
        # the identity map samples the input back exactly
        inp = np.random.default_rng(6).standard_normal((1, 2, 3, 4))
        out = F.grid_sample(_a(device, inp), g, align_corners=align)
        np.testing.assert_allclose(_n(out), inp, atol=1e-12)
    t5 = np.zeros((1, 3, 4))
    t5[0, :, :3] = np.eye(3)
    assert F.affine_grid(_a(device, t5), (1, 1, 2, 3, 4), align_corners=False).shape == (
        1,
        2,
        3,
        4,
        3,
    )
    inp = ember.asarray(np.random.default_rng(7).standard_normal((1, 1, 4, 4)), device=device,
                        requires_grad=True)  # fmt: skip
    grid = ember.asarray(np.random.default_rng(8).uniform(-1, 1, (1, 2, 2, 2)), device=device,
                         requires_grad=True)  # fmt: skip
    F.grid_sample(inp, grid, mode="bicubic", align_corners=False).sum().backward()
    assert inp.grad.shape == (1, 1, 4, 4) and grid.grad.shape == (1, 2, 2, 2)
    with pytest.raises(ValueError, match="mode must be one of"):
        F.grid_sample(inp, grid, mode="area")
    with pytest.raises(ValueError, match="expected theta of shape"):
        F.affine_grid(_a(device, theta), (2, 1, 3, 4))


def test_grid_sample_matches_torch_when_installed(device):
    real = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    inp = rng.standard_normal((2, 3, 5, 6))
    grid = rng.uniform(-1.3, 1.3, (2, 4, 3, 2))
    for mode, padding, align in itertools.product(
        ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (False, True)
    ):
        ref = real.nn.functional.grid_sample(real.tensor(inp), real.tensor(grid), mode=mode,
                                             padding_mode=padding, align_corners=align)  # fmt: skip
        got = F.grid_sample(_a(device, inp), _a(device, grid), mode=mode, padding_mode=padding,
                            align_corners=align)  # fmt: skip
        np.testing.assert_allclose(_n(got), ref.numpy(), rtol=1e-7, atol=1e-9,
                                   err_msg=f"{mode} {padding} {align}")  # fmt: skip


def test_load_keywords_and_cuda_amp(tmp_path, device):
    p = str(tmp_path / "x.pt")
    torch.save({"a": torch.arange(3.0)}, p)
    got = torch.load(p, weights_only=True, map_location=device)
    assert _n(got["a"]).tolist() == [0, 1, 2] and str(got["a"].device).startswith(device)
    with pytest.raises(TypeError, match="map_location must be a device"):
        torch.load(p, map_location=lambda s, loc: s)
    ac = torch.cuda.amp.autocast(dtype=ember.bfloat16)
    assert ac.device_type == "cuda" and ac.fast_dtype == ember.bfloat16
    assert torch.cuda.amp.GradScaler(init_scale=8.0).get_scale() == 8.0


def test_jit_script_and_trace_compile(device):
    @torch.jit.script
    def f(x, y):
        if float(x.sum()) > 0:  # control flow stays Python's: both branches work
            return x * y + 1
        return x - y

    one = torch.ones(3, device=device)
    assert _n(f(one, one)).tolist() == [2, 2, 2] and _n(f(-one, one)).tolist() == [-2, -2, -2]
    torch.manual_seed(0)
    m = nn.Linear(3, 2).to(device)
    x = torch.randn(4, 3, device=device)
    tm = torch.jit.trace(m, x)
    np.testing.assert_allclose(_n(tm(x)), _n(m(x)), rtol=1e-6)
    sm = torch.jit.script(m)
    np.testing.assert_allclose(_n(sm(x)), _n(m(x)), rtol=1e-6)
    assert not torch.jit.is_scripting() and torch.jit.annotate(list, [1]) == [1]
    assert torch.jit.ignore(len) is len and torch.jit.export(len) is len
    with pytest.raises(TypeError, match="expected a function or an nn.Module"):
        torch.jit.script(3)


def test_data_parallel_equals_the_module(device):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)
    x = torch.randn(7, 4, device=device)
    ref = net(x)
    ref.square().sum().backward()
    g_ref = [_n(p.grad) for p in net.parameters()]
    net.zero_grad()
    # three "devices" (the same one three times): the batch is split 3/2/2, the second and third
    # chunks run through functional_call on parameter copies, gradients flow back to net's
    dp = nn.DataParallel(net, device_ids=[device] * 3)
    y = dp(x)
    np.testing.assert_allclose(_n(y), _n(ref), rtol=1e-6, atol=1e-7)
    y.square().sum().backward()
    for a, p in zip(g_ref, net.parameters(), strict=True):
        np.testing.assert_allclose(_n(p.grad), a, rtol=1e-5, atol=1e-6)

    # tuple outputs gather elementwise; non-array arguments are repeated
    class Two(nn.Module):
        def forward(self, a, scale):
            return a * scale, (a + 1).sum(axis=1)

    outs = nn.DataParallel(Two(), device_ids=[device] * 2)(x, 2.0)
    np.testing.assert_allclose(_n(outs[0]), _n(x) * 2, rtol=1e-6)
    assert outs[1].shape == (7,)
    assert nn.DataParallel(net, device_ids=[device])(x).shape == (7, 2)
    with pytest.raises(TypeError, match="must be an nn.Module"):
        nn.DataParallel(lambda v: v)


def _np_mha(q, k, v, E, H, w_in, b_in, bk, bv, zero, w_out, b_out, kpm=None, mask=None):
    """PyTorch's multi_head_attention_forward in NumPy (float64), (L, N, E) inputs."""
    L, N, _ = q.shape
    Dh = E // H
    qp = q @ w_in[:E].T + b_in[:E]
    kp = k @ w_in[E : 2 * E].T + b_in[E : 2 * E]
    vp = v @ w_in[2 * E :].T + b_in[2 * E :]
    add = np.zeros((N, L, k.shape[0]))
    if mask is not None:
        add = add + np.where(mask, -np.inf, 0.0)
    if kpm is not None:
        add = add + np.where(kpm[:, None, :], -np.inf, 0.0)
    if bk is not None:
        kp = np.concatenate([kp, np.broadcast_to(bk.reshape(1, 1, E), (1, N, E))])
        vp = np.concatenate([vp, np.broadcast_to(bv.reshape(1, 1, E), (1, N, E))])
        add = np.concatenate([add, np.zeros((N, L, 1))], axis=-1)
    S = kp.shape[0]
    qh = qp.reshape(L, N, H, Dh).transpose(1, 2, 0, 3)
    kh = kp.reshape(S, N, H, Dh).transpose(1, 2, 0, 3)
    vh = vp.reshape(S, N, H, Dh).transpose(1, 2, 0, 3)
    if zero:
        kh = np.concatenate([kh, np.zeros((N, H, 1, Dh))], axis=2)
        vh = np.concatenate([vh, np.zeros((N, H, 1, Dh))], axis=2)
        add = np.concatenate([add, np.zeros((N, L, 1))], axis=-1)
    sc = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(Dh) + add[:, None]
    sc = sc - sc.max(-1, keepdims=True)
    w = np.exp(sc)
    w = w / w.sum(-1, keepdims=True)
    out = (w @ vh).transpose(2, 0, 1, 3).reshape(L, N, E) @ w_out.T + b_out
    return out, w.mean(1)


@pytest.mark.parametrize(
    "bias_kv,zero", [(False, False), (True, False), (False, True), (True, True)]
)
def test_multi_head_attention_forward_matches_numpy(device, bias_kv, zero):
    rng = np.random.default_rng(10)
    L, S, N, E, H = 4, 5, 2, 8, 2
    q, k, v = (rng.standard_normal(s) for s in ((L, N, E), (S, N, E), (S, N, E)))
    w_in, b_in = rng.standard_normal((3 * E, E)) * 0.3, rng.standard_normal(3 * E) * 0.1
    w_out, b_out = rng.standard_normal((E, E)) * 0.3, rng.standard_normal(E) * 0.1
    bk = rng.standard_normal((1, 1, E)) if bias_kv else None
    bv = rng.standard_normal((1, 1, E)) if bias_kv else None
    kpm = np.zeros((N, S), bool)
    kpm[1, -2:] = True
    mask = np.triu(np.ones((L, S), bool), 1)
    ref, ref_w = _np_mha(q, k, v, E, H, w_in, b_in, bk, bv, zero, w_out, b_out, kpm, mask)
    A = lambda x: None if x is None else _a(device, x)  # noqa: E731
    out, w = F.multi_head_attention_forward(
        A(q), A(k), A(v), E, H, A(w_in), A(b_in), A(bk), A(bv), zero, 0.0, A(w_out), A(b_out),
        key_padding_mask=A(kpm), attn_mask=A(mask),
    )  # fmt: skip
    np.testing.assert_allclose(_n(out), ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(_n(w), ref_w, rtol=1e-9, atol=1e-12)
    # the module with the same weights (batch_first) agrees, and trains
    mha = nn.MultiheadAttention(E, H, add_bias_kv=bias_kv, add_zero_attn=zero, batch_first=True,
                                dtype="float64", device=device)  # fmt: skip
    with ember.no_grad():
        mha.in_proj_weight[...] = A(w_in)
        mha.in_proj_bias[...] = A(b_in)
        mha.out_proj.weight[...] = A(w_out)
        mha.out_proj.bias[...] = A(b_out)
        if bias_kv:
            mha.bias_k[...] = A(bk)
            mha.bias_v[...] = A(bv)
    o2, w2 = mha(A(q).swapaxes(0, 1), A(k).swapaxes(0, 1), A(v).swapaxes(0, 1),
                 key_padding_mask=A(kpm), attn_mask=A(mask))  # fmt: skip
    np.testing.assert_allclose(_n(o2).swapaxes(0, 1), ref, rtol=1e-9, atol=1e-12)
    o2.sum().backward()
    assert mha.in_proj_weight.grad is not None
    if bias_kv:
        assert mha.bias_k.grad is not None and mha.bias_v.grad is not None
    else:
        assert mha.bias_k is None


def test_multi_head_attention_forward_matches_torch_when_installed(device):
    real = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    L, S, N, E, H = 3, 4, 2, 8, 4
    q, k, v = (rng.standard_normal(s) for s in ((L, N, E), (S, N, E), (S, N, E)))
    w_in, b_in = rng.standard_normal((3 * E, E)), rng.standard_normal(3 * E)
    w_out, b_out = rng.standard_normal((E, E)), rng.standard_normal(E)
    bk, bv = rng.standard_normal((1, 1, E)), rng.standard_normal((1, 1, E))
    kpm = np.zeros((N, S), bool)
    kpm[0, -1] = True
    T = real.tensor
    ref, ref_w = real.nn.functional.multi_head_attention_forward(
        T(q), T(k), T(v), E, H, T(w_in), T(b_in), T(bk), T(bv), True, 0.0, T(w_out), T(b_out),
        training=False, key_padding_mask=T(kpm), average_attn_weights=False,
    )  # fmt: skip
    out, w = F.multi_head_attention_forward(
        _a(device, q), _a(device, k), _a(device, v), E, H, _a(device, w_in), _a(device, b_in),
        _a(device, bk), _a(device, bv), True, 0.0, _a(device, w_out), _a(device, b_out),
        training=False, key_padding_mask=_a(device, kpm), average_attn_weights=False,
    )  # fmt: skip
    np.testing.assert_allclose(_n(out), ref.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(_n(w), ref_w.numpy(), rtol=1e-9, atol=1e-12)
