"""ember.nn: Parameter, Module (registration, traversal, train/eval, to, state dicts through
ember.save/ember.load, repr), containers, layers against NumPy, layer errors, ember.nn.init,
ember.nn.utils; gradients and PyTorch comparisons (where torch is)."""

from __future__ import annotations

import copy
import math
from collections import OrderedDict

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from _helpers import to_numpy
from _nn_helpers import _cpu_by_default, em, gradcheck, no_grad  # noqa: F401
from ember import nn
from ember.nn import init


def rng(seed=0):
    return np.random.default_rng(seed)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(3, 2, bias=False)
        self.bn = nn.BatchNorm1d(2)
        self.register_buffer("scale", ember.ones(2, dtype=ember.float32))
        self.register_buffer("cache", ember.zeros(2), persistent=False)

    def forward(self, x):
        return self.bn(self.fc2(self.act(self.fc1(x)))) * self.scale


# ---------------------------------------------------------------------------------------------
# Parameter
# ---------------------------------------------------------------------------------------------


def test_parameter_is_an_ndarray():
    data = ember.ones((2, 3), dtype=ember.float32)
    p = nn.Parameter(data)
    assert isinstance(p, ember.ndarray) and isinstance(p, nn.Parameter)
    assert p.shape == (2, 3) and p.dtype == ember.float32 and p.requires_grad
    out = ember.exp(p) + p @ ember.ones((3, 1), dtype=ember.float32)
    assert type(out) is ember.ndarray  # ops give plain arrays
    with no_grad():
        data[0, 0] = 5.0  # shares memory with its data
    assert float(p[0, 0]) == 5.0
    assert repr(p).startswith("Parameter containing:\narray([[5., 1., 1.]")
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    empty = nn.Parameter()
    assert empty.shape == (0,) and empty.dtype == ember.float32
    assert nn.Parameter([1.0, 2.0]).shape == (2,)


def test_parameter_deepcopy_is_independent():
    p = nn.Parameter(ember.ones(3))
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q is not p and q.requires_grad
    with no_grad():
        q[0] = 7.0
    assert float(p[0]) == 1.0


def test_parameter_is_a_fresh_leaf():
    x = ember.ones(3)
    x.requires_grad_(True)
    y = x * 2
    p = nn.Parameter(y)
    assert p.is_leaf and p.requires_grad and p.grad is None
    (p * p).sum().backward()
    np.testing.assert_allclose(to_numpy(p.grad), 4.0)
    assert x.grad is None  # no path back to the array it was made from


# ---------------------------------------------------------------------------------------------
# Module registration and traversal
# ---------------------------------------------------------------------------------------------


def test_registration_and_names():
    m = MLP()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight", "bn.weight", "bn.bias"]
    assert len(list(m.parameters())) == 5
    assert [n for n, _ in m.named_buffers()] == [
        "scale",
        "cache",
        "bn.running_mean",
        "bn.running_var",
        "bn.num_batches_tracked",
    ]
    assert [n for n, _ in m.named_children()] == ["fc1", "act", "fc2", "bn"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "act", "fc2", "bn"]
    assert list(m.modules())[0] is m
    assert m.fc2.bias is None and "bias" in m.fc2._parameters
    assert [n for n, _ in m.named_parameters(recurse=False)] == []
    assert [n for n, _ in m.fc1.named_parameters(prefix="x")] == ["x.weight", "x.bias"]
    assert m.get_submodule("bn") is m.bn and m.get_parameter("fc1.bias") is m.fc1.bias
    assert {"fc1", "scale", "bn"} <= set(dir(m))


def test_shared_modules_and_parameters_appear_once():
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.modules())) == 3
    assert len(list(seq.children())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    tied = nn.Module()
    tied.a = nn.Linear(2, 2)
    tied.b = nn.Linear(2, 2)
    tied.b.weight = tied.a.weight
    assert len(list(tied.parameters())) == 3


def test_setattr_rules():
    m = nn.Module()
    m.w = nn.Parameter(ember.ones(2))
    assert "w" in m._parameters and "w" not in m.__dict__
    with pytest.raises(TypeError, match="cannot assign ndarray as parameter 'w'"):
        m.w = ember.ones(2)
    m.w = None
    assert m.w is None and list(m.parameters()) == []
    m.register_buffer("b", ember.zeros(2))
    m.b = ember.ones(3)  # a plain array assigned to a buffer name replaces the buffer
    assert m.b.shape == (3,) and "b" in m._buffers
    with pytest.raises(TypeError, match="as buffer 'b'"):
        m.b = 3
    m.sub = nn.ReLU()
    with pytest.raises(TypeError, match="as child module 'sub'"):
        m.sub = 3
    m.sub = nn.Parameter(ember.ones(1))  # moves from modules to parameters
    assert "sub" not in m._modules and "sub" in m._parameters
    m.plain = 3
    assert m.plain == 3 and "plain" in m.__dict__
    del m.sub
    assert "sub" not in m._parameters
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
        m.nope  # noqa: B018


def test_register_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="buffer name can.+t contain"):
        m.register_buffer("a.b", ember.ones(1))
    with pytest.raises(KeyError, match="parameter name can.+t be empty string"):
        m.register_parameter("", None)
    with pytest.raises(TypeError, match="ember.nn.Parameter or None required"):
        m.register_parameter("p", ember.ones(1))
    with pytest.raises(TypeError, match="an ember.ndarray or None required"):
        m.register_buffer("b", [1.0])
    m.x = 1
    with pytest.raises(KeyError, match="attribute 'x' already exists"):
        m.register_buffer("x", ember.ones(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("c", ember.ones(1))

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(ember.ones(1))


def test_train_eval_and_apply():
    m = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5), nn.Sequential(nn.BatchNorm1d(2)))
    assert all(x.training for x in m.modules())
    assert m.eval() is m and not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    with pytest.raises(ValueError, match="boolean"):
        m.train("yes")
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "Dropout", "BatchNorm1d", "Sequential", "Sequential"]

    def zero_linear(mod):
        if isinstance(mod, nn.Linear):
            init.zeros_(mod.weight)

    m.apply(zero_linear)
    assert not to_numpy(m[0].weight).any()


def test_forward_hooks():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre"))
    h2 = m.register_forward_hook(lambda mod, args, out: out * 0)
    out = m(ember.ones((1, 2), dtype=ember.float32))
    assert calls == ["pre"] and not to_numpy(out).any()
    h1.remove()
    h2.remove()
    assert to_numpy(m(ember.ones((1, 2), dtype=ember.float32))).any()


def test_zero_grad_and_requires_grad_():
    m = nn.Linear(3, 2)
    for p in m.parameters():
        p.grad = ember.ones(p.shape, dtype=p.dtype)
    m.zero_grad(set_to_none=False)
    assert all(not to_numpy(p.grad).any() for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


# ---------------------------------------------------------------------------------------------
# to(), state dicts
# ---------------------------------------------------------------------------------------------


def test_to_dtype():
    m = MLP()
    before = to_numpy(m.fc1.weight).copy()
    assert m.to(ember.float64) is m
    assert all(p.dtype == ember.float64 for p in m.parameters())
    assert isinstance(m.fc1.weight, nn.Parameter) and m.fc1.weight.requires_grad
    assert m.bn.num_batches_tracked.dtype == ember.int64  # integer buffers keep their dtype
    assert m.scale.dtype == ember.float64
    np.testing.assert_array_equal(to_numpy(m.fc1.weight), before.astype(np.float64))
    m.float()
    assert m.fc1.weight.dtype == ember.float32
    m.to(dtype="float64")
    assert m.fc1.weight.dtype == ember.float64
    with pytest.raises(TypeError, match="only floating-point or complex dtypes"):
        m.to(ember.int32)
    with pytest.raises(TypeError, match="expected a device, a dtype or an array"):
        m.to(3)


def test_to_device(device):
    m = MLP()
    ids = [id(p) for p in m.parameters()]
    m.to("cpu")
    assert [id(p) for p in m.parameters()] == ids
    m.to(device)
    assert [id(p) for p in m.parameters()] == ids  # moved in place: the same Parameter objects
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in m.parameters())
    assert all(p.device == ember.Device(device) for p in m.parameters())
    assert all(b.device == ember.Device(device) for b in m.buffers())
    x = ember.asarray(rng(1).standard_normal((5, 4)).astype(np.float32), device=device)
    opt = ember.optim.SGD(m.parameters(), lr=0.1)  # built after .to, on the moved parameters
    out = m(x)
    assert out.device == ember.Device(device)
    m.to(device, ember.float64)
    assert m.fc1.weight.dtype == ember.float64
    m.to(ember.asarray(np.zeros(1, np.float32), device=device))
    assert m.fc1.weight.dtype == ember.float32
    assert opt.param_groups[0]["params"]


def test_optimizer_built_before_to_trains_the_moved_parameters(device):
    m = nn.Linear(3, 1)
    opt = ember.optim.SGD(m.parameters(), lr=0.5)
    m.to(device, ember.float64)
    x = ember.ones((4, 3), dtype=ember.float64, device=device)
    before = to_numpy(m.weight).copy()
    opt.zero_grad()
    m(x).sum().backward()
    assert m.weight.grad is not None and m.weight.grad.device == ember.Device(device)
    opt.step()
    np.testing.assert_allclose(to_numpy(m.weight), before - 0.5 * 4, rtol=1e-12)


def test_set_data_refuses_a_non_leaf():
    a = ember.ones(3, requires_grad=True)
    with pytest.raises(ValueError, match="leaf"):
        ember._core._set_data(a * 2, ember.zeros(3))


def test_to_moves_gradients():
    m = nn.Linear(2, 2)
    m.weight.grad = ember.ones((2, 2), dtype=ember.float32)
    m.double()
    assert m.weight.grad is not None and m.weight.grad.dtype == ember.float64


def test_state_dict_contents():
    m = MLP()
    sd = m.state_dict()
    assert list(sd) == [
        "scale",
        "fc1.weight",
        "fc1.bias",
        "fc2.weight",
        "bn.weight",
        "bn.bias",
        "bn.running_mean",
        "bn.running_var",
        "bn.num_batches_tracked",
    ]
    assert "cache" not in sd  # non-persistent
    assert not isinstance(sd["fc1.weight"], nn.Parameter)
    with no_grad():
        sd["fc1.bias"][...] = 0  # shares memory with the parameter
    assert not to_numpy(m.fc1.bias).any()
    assert isinstance(m.state_dict(keep_vars=True)["fc1.weight"], nn.Parameter)


def test_state_dict_round_trip_through_save_load(tmp_path):
    a, b = MLP(), MLP()
    a.train()
    a(ember.asarray(rng(2).standard_normal((6, 4)).astype(np.float32)))  # running stats move
    path = tmp_path / "model.safetensors"
    ember.save(a.state_dict(), path)
    loaded = ember.load(path)
    result = b.load_state_dict(loaded)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert ka == kb
        np.testing.assert_array_equal(to_numpy(va), to_numpy(vb))
    assert int(b.bn.num_batches_tracked) == 1
    a.eval()
    b.eval()
    x = ember.asarray(rng(3).standard_normal((3, 4)).astype(np.float32))
    np.testing.assert_array_equal(to_numpy(a(x)), to_numpy(b(x)))


def test_load_state_dict_strict_and_errors():
    m = MLP()
    sd = m.state_dict()
    del sd["fc1.bias"]
    sd["extra"] = ember.ones(1)
    sd["fc9.weight"] = ember.ones(1)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(sd)
    text = str(info.value)
    assert text.startswith("Error(s) in loading state_dict for MLP:")
    assert 'Missing key(s) in state_dict: "fc1.bias".' in text
    assert 'Unexpected key(s) in state_dict: "extra", "fc9.weight".' in text
    r = m.load_state_dict(sd, strict=False)
    assert r.missing_keys == ["fc1.bias"] and r.unexpected_keys == ["extra", "fc9.weight"]
    sd = m.state_dict()
    sd["fc1.weight"] = ember.ones((2, 2))
    with pytest.raises(
        RuntimeError,
        match=r"size mismatch for fc1.weight: copying a param with "
        r"shape \(2, 2\) from checkpoint, the shape in current model is \(3, 4\)",
    ):
        m.load_state_dict(sd, strict=False)
    with pytest.raises(TypeError, match="dict-like"):
        m.load_state_dict([1, 2])


def test_load_state_dict_casts_and_assign():
    m = nn.Linear(2, 2)
    sd = OrderedDict(weight=em(np.eye(2)), bias=em([1.0, 2.0]))  # float64 into float32
    w = m.weight
    m.load_state_dict(sd)
    assert m.weight is w and m.weight.dtype == ember.float32
    np.testing.assert_array_equal(to_numpy(m.weight), np.eye(2))
    m.load_state_dict(sd, assign=True)
    assert m.weight is not w and m.weight.dtype == ember.float64
    assert isinstance(m.weight, nn.Parameter)


def test_deepcopy_module():
    m = MLP()
    c = copy.deepcopy(m)
    with no_grad():
        c.fc1.weight[...] = 0
        c.bn.running_mean[...] = 5
    assert to_numpy(m.fc1.weight).any() and not to_numpy(m.bn.running_mean).any()
    assert isinstance(c.fc1.weight, nn.Parameter)


# ---------------------------------------------------------------------------------------------
# repr
# ---------------------------------------------------------------------------------------------


def test_repr_like_pytorch():
    seq = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10), nn.Softmax(dim=1))
    assert repr(seq) == (
        "Sequential(\n"
        "  (0): Linear(in_features=784, out_features=128, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Linear(in_features=128, out_features=10, bias=True)\n"
        "  (3): Softmax(dim=1)\n"
        ")"
    )
    assert repr(MLP()) == (
        "MLP(\n"
        "  (fc1): Linear(in_features=4, out_features=3, bias=True)\n"
        "  (act): ReLU()\n"
        "  (fc2): Linear(in_features=3, out_features=2, bias=False)\n"
        "  (bn): BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)\n"
        ")"
    )
    nested = nn.Sequential(nn.Sequential(nn.Tanh()), nn.ModuleDict({"a": nn.Identity()}))
    assert repr(nested) == (
        "Sequential(\n  (0): Sequential(\n    (0): Tanh()\n  )\n"
        "  (1): ModuleDict(\n    (a): Identity()\n  )\n)"
    )
    cases = {
        nn.LeakyReLU(0.2): "LeakyReLU(negative_slope=0.2)",
        nn.GELU(): "GELU(approximate='none')",
        nn.GELU("tanh"): "GELU(approximate='tanh')",
        nn.Softplus(): "Softplus(beta=1.0, threshold=20.0)",
        nn.Dropout(0.1): "Dropout(p=0.1, inplace=False)",
        nn.Embedding(10, 3, padding_idx=0): "Embedding(10, 3, padding_idx=0)",
        nn.LayerNorm(8): "LayerNorm((8,), eps=1e-05, elementwise_affine=True)",
        nn.RMSNorm([2, 3]): "RMSNorm((2, 3), eps=None, elementwise_affine=True)",
        nn.Flatten(): "Flatten(start_dim=1, end_dim=-1)",
        nn.Unflatten(1, (2, 5)): "Unflatten(dim=1, unflattened_size=(2, 5))",
        nn.Bilinear(2, 3, 4): "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)",
        nn.CrossEntropyLoss(): "CrossEntropyLoss()",
        nn.ReLU(inplace=True): "ReLU(inplace=True)",
        nn.ModuleList(): "ModuleList()",
        nn.LogSoftmax(dim=-1): "LogSoftmax(dim=-1)",
    }
    for mod, text in cases.items():
        assert repr(mod) == text


# ---------------------------------------------------------------------------------------------
# containers
# ---------------------------------------------------------------------------------------------


def test_sequential():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and s[0] is a and s[-1] is c and list(s) == [a, b, c]
    sub = s[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == [b, c]
    assert [n for n, _ in sub.named_children()] == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]  # noqa: B018
    x = ember.asarray(rng(4).standard_normal((5, 2)).astype(np.float32))
    np.testing.assert_allclose(to_numpy(s(x)), to_numpy(c(b(a(x)))))
    d = nn.Tanh()
    s.append(d)
    assert s[3] is d
    del s[1]
    assert list(s) == [a, c, d] and list(s._modules) == ["0", "1", "2"]
    s.insert(1, b)
    assert list(s) == [a, b, c, d]
    assert s.pop(0) is a and len(s) == 3
    s[0] = nn.Sigmoid()
    assert isinstance(s[0], nn.Sigmoid)
    named = nn.Sequential(OrderedDict(first=nn.ReLU(), second=nn.Tanh()))
    assert [n for n, _ in named.named_children()] == ["first", "second"]
    assert named.first is named[0]
    assert len(nn.Sequential(a) + nn.Sequential(b)) == 2


def test_module_list_repr_groups_repeats():
    ml = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)])
    assert repr(ml) == (
        "ModuleList(\n"
        "  (0-1): 2 x Linear(in_features=2, out_features=2, bias=True)\n"
        "  (2): ReLU()\n"
        "  (3): Linear(in_features=2, out_features=2, bias=True)\n"
        ")"
    )


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(ml) == 3 and len(list(ml.parameters())) == 6
    ml.append(nn.ReLU())
    ml.extend([nn.Tanh()])
    ml += [nn.Sigmoid()]
    assert len(ml) == 6 and isinstance(ml[-1], nn.Sigmoid)
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    del ml[0]
    assert list(ml._modules) == [str(i) for i in range(5)]
    ml.insert(0, nn.Identity())
    assert isinstance(ml[0], nn.Identity) and len(ml) == 6
    with pytest.raises(TypeError, match="iterable"):
        ml.extend(3)
    md = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Linear(1, 1)})
    assert list(md) == ["a", "b"] and "a" in md and len(md) == 2
    md["c"] = nn.Tanh()
    md.update([("d", nn.Identity())])
    assert list(md.keys()) == ["a", "b", "c", "d"]
    assert isinstance(md.pop("a"), nn.ReLU) and "a" not in md
    assert len(list(md.parameters())) == 2
    md.clear()
    assert len(md) == 0


# ---------------------------------------------------------------------------------------------
# layers against NumPy
# ---------------------------------------------------------------------------------------------


def test_linear_layer(device):
    m = nn.Linear(4, 3, device=device)
    assert m.weight.shape == (3, 4) and m.bias.shape == (3,) and m.weight.dtype == ember.float32
    assert m.weight.device == ember.Device(device)
    x = rng(5).standard_normal((2, 5, 4)).astype(np.float32)
    out = m(ember.asarray(x, device=device))
    ref = x @ to_numpy(m.weight).T + to_numpy(m.bias)
    np.testing.assert_allclose(to_numpy(out), ref, rtol=1e-5, atol=1e-6)
    m64 = nn.Linear(4, 3, bias=False, dtype=ember.float64)
    assert m64.weight.dtype == ember.float64 and m64.bias is None


def test_linear_shape_error_names_layer_and_shapes():
    m = nn.Linear(784, 128)
    with pytest.raises(ValueError) as info:
        m(ember.ones((64, 100), dtype=ember.float32))
    assert str(info.value) == (
        "Linear(784, 128): input has 100 features in its last dimension, expected 784 "
        "(input shape (64, 100))"
    )
    with pytest.raises(ValueError, match=r"Linear\(784, 128\): input is 0-d"):
        m(ember.ones(()))
    with pytest.raises(TypeError, match=r"Linear\(784, 128\): input must be an ember.ndarray"):
        m([1.0] * 784)


def test_default_initializations():
    ember.random.seed(0)
    m = nn.Linear(400, 300)
    w, b = to_numpy(m.weight), to_numpy(m.bias)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), ...)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    assert np.abs(b).max() <= bound and b.std() > 0.5 * bound / math.sqrt(3)
    e = to_numpy(nn.Embedding(1000, 50).weight)
    assert abs(e.mean()) < 0.01 and abs(e.std() - 1) < 0.01
    e = to_numpy(nn.Embedding(10, 4, padding_idx=-1).weight)
    assert not e[9].any() and e[:9].all()
    ln = nn.LayerNorm((2, 3))
    assert (to_numpy(ln.weight) == 1).all() and (to_numpy(ln.bias) == 0).all()
    bn = nn.BatchNorm1d(3)
    assert (to_numpy(bn.weight) == 1).all() and (to_numpy(bn.running_var) == 1).all()
    bl = nn.Bilinear(16, 3, 2)
    assert np.abs(to_numpy(bl.weight)).max() <= 0.25


def test_bilinear_layer(device):
    m = nn.Bilinear(3, 2, 4, device=device)
    r = rng(6)
    x1, x2 = (
        r.standard_normal((5, 3)).astype(np.float32),
        r.standard_normal((5, 2)).astype(np.float32),
    )
    out = m(ember.asarray(x1, device=device), ember.asarray(x2, device=device))
    ref = np.einsum("bi,oij,bj->bo", x1, to_numpy(m.weight), x2) + to_numpy(m.bias)
    np.testing.assert_allclose(to_numpy(out), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(
        ValueError, match=r"Bilinear\(3, 2, 4\): inputs have shapes \(5, 2\) and \(5, 2\)"
    ):
        m(ember.ones((5, 2)), ember.ones((5, 2)))
    with pytest.raises(ValueError, match="leading dimensions differ"):
        m(ember.ones((5, 3)), ember.ones((4, 2)))


def test_identity_flatten_unflatten(device):
    x = ember.asarray(np.arange(120.0).reshape(2, 3, 4, 5), device=device)
    assert nn.Identity(1, k=2)(x) is x
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    assert nn.Flatten(-2, -1)(x).shape == (2, 3, 20)
    np.testing.assert_array_equal(to_numpy(nn.Flatten()(x)), np.arange(120.0).reshape(2, 60))
    y = nn.Unflatten(1, (3, 4))(ember.ones((2, 12)))
    assert y.shape == (2, 3, 4)
    assert nn.Unflatten(-1, (-1, 2))(ember.ones((2, 12))).shape == (2, 6, 2)
    with pytest.raises(
        ValueError, match=r"Unflatten\(dim=1, unflattened_size=\(5, 2\)\): unflattened_size"
    ):
        nn.Unflatten(1, (5, 2))(ember.ones((2, 12)))
    with pytest.raises(IndexError, match="out of range"):
        nn.Flatten(5)(x)


@pytest.mark.parametrize(
    "layer, fn",
    [
        (nn.ReLU(), F.relu),
        (nn.LeakyReLU(0.3), lambda t: F.leaky_relu(t, 0.3)),
        (nn.GELU(), F.gelu),
        (nn.GELU("tanh"), lambda t: F.gelu(t, approximate="tanh")),
        (nn.SiLU(), F.silu),
        (nn.Sigmoid(), F.sigmoid),
        (nn.Tanh(), F.tanh),
        (nn.Softplus(2.0, 1.0), lambda t: F.softplus(t, 2.0, 1.0)),
        (nn.Softmax(dim=0), lambda t: F.softmax(t, 0)),
        (nn.LogSoftmax(dim=1), lambda t: F.log_softmax(t, 1)),
    ],
)
def test_activation_layers_call_their_functional(device, layer, fn):
    x = ember.asarray(rng(7).standard_normal((3, 4)), device=device)
    np.testing.assert_array_equal(to_numpy(layer(x)), to_numpy(fn(x)))


def test_dropout_layer():
    d = nn.Dropout(0.4)
    x = ember.ones((100, 100), dtype=ember.float32)
    assert abs((to_numpy(d(x)) != 0).mean() - 0.6) < 0.02
    d.eval()
    assert d(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(-0.1)


def test_embedding_layer(device):
    m = nn.Embedding(6, 3, padding_idx=2, device=device)
    idx = np.array([[0, 2], [5, 5]])
    out = m(ember.asarray(idx, device=device))
    np.testing.assert_array_equal(to_numpy(out), to_numpy(m.weight)[idx])
    with pytest.raises(TypeError, match=r"Embedding\(6, 3\): input must have an integer dtype"):
        m(ember.ones(2))
    with pytest.raises(IndexError, match="out of range for 6 embeddings"):
        m(em([6]))
    pre = nn.Embedding.from_pretrained(em(np.eye(3)))
    assert not pre.weight.requires_grad
    np.testing.assert_array_equal(to_numpy(pre(em([2, 0]))), np.eye(3)[[2, 0]])
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(3, 2, padding_idx=3)


def test_layer_norm_and_rms_norm_layers(device):
    x = rng(8).standard_normal((2, 3, 4)).astype(np.float32)
    ln = nn.LayerNorm((3, 4), device=device)
    with no_grad():
        ln.weight[...] = ember.asarray(
            rng(9).standard_normal((3, 4)).astype(np.float32), device=device
        )
    out = ln(ember.asarray(x, device=device))
    np.testing.assert_allclose(
        to_numpy(out),
        to_numpy(F.layer_norm(ember.asarray(x, device=device), (3, 4), ln.weight, ln.bias)),
    )
    m = x.mean(axis=(1, 2), keepdims=True)
    v = x.var(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(
        to_numpy(out), (x - m) / np.sqrt(v + 1e-5) * to_numpy(ln.weight), rtol=1e-4, atol=1e-5
    )
    assert nn.LayerNorm(4, elementwise_affine=False).weight is None
    assert nn.LayerNorm(4, bias=False).bias is None
    with pytest.raises(
        ValueError, match=r"LayerNorm\(\(3, 4\)\): input shape \(2, 4\) does not end"
    ):
        ln(ember.ones((2, 4)))
    rms = nn.RMSNorm(4, eps=1e-6, device=device)
    out = rms(ember.asarray(x, device=device))
    np.testing.assert_allclose(
        to_numpy(out), x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-6), rtol=1e-5
    )
    with pytest.raises(ValueError, match=r"RMSNorm\(\(4,\)\)"):
        rms(ember.ones((4, 3)))


def test_batch_norm_layer(device):
    bn = nn.BatchNorm1d(3, momentum=0.5, device=device)
    r = rng(10)
    xs = [r.standard_normal((8, 3)).astype(np.float32) * 2 + 1 for _ in range(3)]
    rm, rv = np.zeros(3), np.ones(3)
    for x in xs:
        out = to_numpy(bn(ember.asarray(x, device=device)))
        np.testing.assert_allclose(
            out, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-4, atol=1e-5
        )
        rm = 0.5 * rm + 0.5 * x.mean(0)
        rv = 0.5 * rv + 0.5 * x.var(0, ddof=1)
    np.testing.assert_allclose(to_numpy(bn.running_mean), rm, rtol=1e-5)
    np.testing.assert_allclose(to_numpy(bn.running_var), rv, rtol=1e-5)
    assert int(bn.num_batches_tracked) == 3
    bn.eval()
    x = xs[0]
    np.testing.assert_allclose(
        to_numpy(bn(ember.asarray(x, device=device))),
        (x - rm) / np.sqrt(rv + 1e-5),
        rtol=1e-4,
        atol=1e-5,
    )
    assert int(bn.num_batches_tracked) == 3  # eval does not count
    # (N, C, L) input
    bn3 = nn.BatchNorm1d(3, device=device)
    x3 = r.standard_normal((4, 3, 5)).astype(np.float32)
    out = to_numpy(bn3(ember.asarray(x3, device=device)))
    ref = (x3 - x3.mean((0, 2), keepdims=True)) / np.sqrt(x3.var((0, 2), keepdims=True) + 1e-5)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


def test_batch_norm_momentum_none_and_no_tracking():
    bn = nn.BatchNorm1d(2, momentum=None, affine=False)
    assert bn.weight is None
    r = rng(11)
    xs = [r.standard_normal((5, 2)) for _ in range(4)]
    for x in xs:
        bn(em(x, dtype=np.float32))
    np.testing.assert_allclose(
        to_numpy(bn.running_mean), np.mean([x.mean(0) for x in xs], 0), rtol=1e-5
    )
    free = nn.BatchNorm1d(2, track_running_stats=False)
    assert free.running_mean is None and "running_mean" not in free.state_dict()
    free.eval()  # no running stats: batch statistics even in eval
    x = xs[0].astype(np.float32)
    np.testing.assert_allclose(
        to_numpy(free(em(x))), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-4, atol=1e-5
    )


def test_batch_norm_errors():
    bn = nn.BatchNorm1d(4)
    with pytest.raises(
        ValueError, match=r"BatchNorm1d\(4\): expected 2D or 3D input \(got 4D input\)"
    ):
        bn(ember.ones((2, 4, 1, 1)))
    with pytest.raises(
        ValueError,
        match=r"BatchNorm1d\(4\): input has 3 channels in dimension 1, expected 4 "
        r"\(input shape \(2, 3\)\)",
    ):
        bn(ember.ones((2, 3)))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        bn(ember.ones((1, 4)))
    bn.eval()
    assert bn(ember.ones((1, 4), dtype=ember.float32)).shape == (1, 4)


def test_loss_modules(device):
    r = rng(12)
    x, y = em(r.standard_normal((4, 3)), device), em(r.standard_normal((4, 3)), device)
    t = em(r.integers(0, 3, 4), device)
    w = em([1.0, 2.0, 0.5], device)
    pairs = [
        (nn.MSELoss(), F.mse_loss(x, y)),
        (nn.L1Loss(reduction="sum"), F.l1_loss(x, y, reduction="sum")),
        (nn.SmoothL1Loss(beta=0.5), F.smooth_l1_loss(x, y, beta=0.5)),
        (nn.HuberLoss(delta=2.0), F.huber_loss(x, y, delta=2.0)),
        (
            nn.KLDivLoss(reduction="batchmean", log_target=True),
            F.kl_div(x, y, reduction="batchmean", log_target=True),
        ),
    ]
    for mod, ref in pairs:
        np.testing.assert_array_equal(to_numpy(mod(x, y)), to_numpy(ref))
    ce = nn.CrossEntropyLoss(weight=w, ignore_index=1, label_smoothing=0.1)
    np.testing.assert_array_equal(
        to_numpy(ce(x, t)), to_numpy(F.cross_entropy(x, t, w, ignore_index=1, label_smoothing=0.1))
    )
    assert "weight" in ce.state_dict()
    nll = nn.NLLLoss(reduction="none")
    np.testing.assert_array_equal(to_numpy(nll(x, t)), to_numpy(F.nll_loss(x, t, reduction="none")))
    p = F.sigmoid(x)
    np.testing.assert_array_equal(
        to_numpy(nn.BCELoss()(p, F.sigmoid(y))), to_numpy(F.binary_cross_entropy(p, F.sigmoid(y)))
    )
    pw = em([1.0, 2.0, 3.0], device)
    bce = nn.BCEWithLogitsLoss(pos_weight=pw)
    np.testing.assert_array_equal(
        to_numpy(bce(x, p)), to_numpy(F.binary_cross_entropy_with_logits(x, p, pos_weight=pw))
    )
    with pytest.raises(ValueError, match="reduction must be one of"):
        nn.MSELoss(reduction="avg")
    assert nn.KLDivLoss(reduction="batchmean").reduction == "batchmean"


# ---------------------------------------------------------------------------------------------
# ember.nn.init
# ---------------------------------------------------------------------------------------------


def test_calculate_gain():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01**2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="unsupported nonlinearity 'swish'"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", "a")


def test_init_fills_in_place(device):
    t = ember.empty((300, 200), dtype=ember.float32, device=device)
    assert init.uniform_(t, -2, 3) is t
    a = to_numpy(t)
    assert a.min() >= -2 and a.max() <= 3 and abs(a.mean() - 0.5) < 0.05
    init.normal_(t, 1.0, 0.5)
    a = to_numpy(t)
    assert abs(a.mean() - 1.0) < 0.01 and abs(a.std() - 0.5) < 0.01
    init.constant_(t, 0.25)
    assert (to_numpy(t) == 0.25).all()
    init.ones_(t)
    assert (to_numpy(t) == 1).all()
    init.zeros_(t)
    assert (to_numpy(t) == 0).all()
    e = ember.empty((3, 5), device=device)
    init.eye_(e)
    np.testing.assert_array_equal(to_numpy(e), np.eye(3, 5))
    with pytest.raises(ValueError, match="2-d"):
        init.eye_(ember.empty(3))


def test_fan_based_inits():
    t = ember.empty((200, 300), dtype=ember.float64)
    init.xavier_uniform_(t, gain=2.0)
    bound = 2.0 * math.sqrt(6 / 500)
    a = to_numpy(t)
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.99 * bound
    init.xavier_normal_(t)
    assert abs(to_numpy(t).std() - math.sqrt(2 / 500)) < 0.002
    init.kaiming_uniform_(t, mode="fan_in", nonlinearity="relu")
    bound = math.sqrt(2) * math.sqrt(3 / 300)
    assert np.abs(to_numpy(t)).max() <= bound and np.abs(to_numpy(t)).max() > 0.99 * bound
    init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert abs(to_numpy(t).std() - math.sqrt(2 / 200)) < 0.002
    init.kaiming_normal_(t, a=0.5, nonlinearity="leaky_relu")
    assert abs(to_numpy(t).std() - math.sqrt(2 / 1.25) / math.sqrt(300)) < 0.002
    conv = ember.empty((8, 4, 3, 3))
    init.kaiming_uniform_(conv)  # fan_in = 4 * 9
    assert np.abs(to_numpy(conv)).max() <= math.sqrt(2 / (1 + 0.01**2)) * math.sqrt(3 / 36)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(ember.empty(3))
    with pytest.raises(ValueError, match="mode must be 'fan_in' or 'fan_out'"):
        init.kaiming_uniform_(t, mode="fan")
    with pytest.raises(TypeError, match="floating-point"):
        init.normal_(ember.zeros(3, dtype=ember.int32))
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(ember.empty((0, 3)))


def test_trunc_normal_and_orthogonal():
    stats = pytest.importorskip("scipy.stats")
    g = ember.random.default_rng(5)
    t = ember.empty((400, 100), dtype=ember.float64)
    init.trunc_normal_(t, mean=1.0, std=2.0, a=-1.0, b=2.0, generator=g)
    a = to_numpy(t).ravel()
    assert a.min() >= -1.0 and a.max() <= 2.0
    assert stats.kstest(a, stats.truncnorm(-1.0, 0.5, loc=1.0, scale=2.0).cdf).pvalue > 1e-3
    init.trunc_normal_(t, a=3.0, b=3.5, generator=g)  # far tail: the uniform proposal
    a = to_numpy(t).ravel()
    assert a.min() >= 3.0 and a.max() <= 3.5
    assert stats.kstest(a, stats.truncnorm(3.0, 3.5).cdf).pvalue > 1e-3
    with pytest.raises(ValueError, match="need a < b"):
        init.trunc_normal_(t, a=1.0, b=0.0)
    for shape in ((6, 4), (4, 6), (3, 2, 2)):
        q = ember.empty(shape, dtype=ember.float64)
        init.orthogonal_(q, gain=2.0)
        m = to_numpy(q).reshape(shape[0], -1)
        small = min(m.shape)
        gram = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
        np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-12)


def test_init_generator_reproducible():
    a, b = ember.empty((5, 5)), ember.empty((5, 5))
    init.normal_(a, generator=ember.random.default_rng(7))
    init.normal_(b, generator=ember.random.default_rng(7))
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
    with pytest.raises(TypeError, match="ember.random.Generator"):
        init.normal_(a, generator=3)


def test_init_on_parameters_is_not_recorded():
    p = nn.Parameter(ember.ones((3, 3)))
    init.xavier_uniform_(p)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None


# ---------------------------------------------------------------------------------------------
# ember.nn.utils
# ---------------------------------------------------------------------------------------------


def test_clip_grad_norm_and_value():
    m = nn.Linear(3, 2, bias=True)
    m.weight.grad = ember.full((2, 3), 2.0, dtype=ember.float32)
    m.bias.grad = ember.full((2,), 2.0, dtype=ember.float32)
    total = nn.utils.clip_grad_norm_(m.parameters(), max_norm=1.0)
    assert float(total) == pytest.approx(2.0 * math.sqrt(8))
    norm = math.sqrt(sum(float((p.grad * p.grad).sum()) for p in m.parameters()))
    assert norm == pytest.approx(1.0, rel=1e-5)
    total = nn.utils.clip_grad_norm_(m.parameters(), max_norm=10.0, norm_type=math.inf)
    assert float(total) == pytest.approx(1 / math.sqrt(8), rel=1e-5)
    nn.utils.clip_grad_value_(m.parameters(), 0.1)
    assert np.abs(to_numpy(m.weight.grad)).max() <= 0.1


# ---------------------------------------------------------------------------------------------
# gradients through layers (finite differences, float64)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda: nn.Linear(3, 2, dtype=ember.float64), (4, 3)),
        (lambda: nn.Bilinear(3, 3, 2, dtype=ember.float64), None),
        (lambda: nn.LayerNorm(4, dtype=ember.float64), (3, 4)),
        (lambda: nn.RMSNorm(4, dtype=ember.float64), (3, 4)),
        (lambda: nn.BatchNorm1d(3, dtype=ember.float64), (4, 3)),
        (
            lambda: nn.Sequential(
                nn.Linear(3, 4, dtype=ember.float64),
                nn.GELU(),
                nn.Linear(4, 2, dtype=ember.float64),
                nn.LogSoftmax(1),
            ),
            (5, 3),
        ),
    ],
)
def test_layer_gradients(device, make, shape):
    ember.random.seed(3)
    module = make().to(device)
    r = rng(13)
    if shape is None:  # Bilinear: two inputs
        x1, x2 = r.standard_normal((2, 3)), r.standard_normal((2, 3))
        gradcheck(lambda a, b: module(a, b), [x1, x2], device=device)
        return
    x = r.standard_normal(shape)
    gradcheck(lambda inp: module(inp), [x], device=device)
    # parameters: the analytic .grad of each against finite differences of the loss
    params = list(module.parameters())
    cot = ember.asarray(
        r.standard_normal(module(ember.asarray(x, device=device)).shape), device=device
    )

    def loss():
        return float((module(ember.asarray(x, device=device)) * cot).sum())

    module.zero_grad()
    (module(ember.asarray(x, device=device)) * cot).sum().backward()
    for p in params:
        g = to_numpy(p.grad)
        num = np.zeros(p.shape)
        for idx in np.ndindex(p.shape):
            with no_grad():
                orig = float(p[idx])
                p[idx] = orig + 1e-6
                fp = loss()
                p[idx] = orig - 1e-6
                fm = loss()
                p[idx] = orig
            num[idx] = (fp - fm) / 2e-6
        np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-7)


def test_training_reduces_loss_and_buffers_untracked():
    ember.random.seed(1)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.BatchNorm1d(16), nn.Linear(16, 3))
    r = rng(14)
    x = ember.asarray(r.standard_normal((32, 4)).astype(np.float32))
    t = ember.asarray((r.standard_normal(32) > 0).astype(np.int64) + (r.standard_normal(32) > 1))
    opt = ember.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = nn.CrossEntropyLoss()(model(x), t)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.5 * losses[0]
    assert not model[2].running_mean.requires_grad
    assert all(p.is_leaf for p in model.parameters())


def test_embedding_layer_padding_gradient():
    m = nn.Embedding(4, 2, padding_idx=0, dtype=ember.float64)
    m(em([[0, 1, 0, 3]])).sum().backward()
    np.testing.assert_array_equal(to_numpy(m.weight.grad), [[0, 0], [1, 1], [0, 0], [1, 1]])


# ---------------------------------------------------------------------------------------------
# against PyTorch (on the GPU machine, where torch is installed)
# ---------------------------------------------------------------------------------------------


def _torch_pair(torch, name):
    tnn = torch.nn
    return {
        "linear": (nn.Linear(5, 3), tnn.Linear(5, 3), (4, 5)),
        "bilinear": (nn.Bilinear(5, 5, 3), tnn.Bilinear(5, 5, 3), (4, 5)),
        "layernorm": (nn.LayerNorm(5), tnn.LayerNorm(5), (4, 5)),
        "rmsnorm": (nn.RMSNorm(5, eps=1e-6), tnn.RMSNorm(5, eps=1e-6), (4, 5)),
        "batchnorm": (nn.BatchNorm1d(5), tnn.BatchNorm1d(5), (6, 5)),
        "batchnorm3d": (nn.BatchNorm1d(5), tnn.BatchNorm1d(5), (6, 5, 3)),
        "mlp": (
            nn.Sequential(
                nn.Linear(5, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3), nn.Softmax(dim=1)
            ),
            tnn.Sequential(
                tnn.Linear(5, 8), tnn.GELU(), tnn.LayerNorm(8), tnn.Linear(8, 3), tnn.Softmax(dim=1)
            ),
            (4, 5),
        ),
    }[name]


@pytest.mark.parametrize(
    "name", ["linear", "bilinear", "layernorm", "rmsnorm", "batchnorm", "batchnorm3d", "mlp"]
)
def test_layers_against_torch(device, name):
    torch = pytest.importorskip("torch")
    if name == "rmsnorm" and not hasattr(torch.nn, "RMSNorm"):
        pytest.skip("this torch has no RMSNorm")
    ours, theirs, shape = _torch_pair(torch, name)
    theirs.load_state_dict(
        {k: torch.tensor(np.array(to_numpy(v), copy=True)) for k, v in ours.state_dict().items()}
    )
    ours.to(device)
    x = rng(15).standard_normal(shape).astype(np.float32)
    args_t = [torch.tensor(x)] * (2 if name == "bilinear" else 1)
    tout = theirs(*args_t)
    cot = rng(16).standard_normal(tuple(tout.shape)).astype(np.float32)
    (tout * torch.tensor(cot)).sum().backward()
    xe = ember.asarray(x, device=device)
    eout = ours(*([xe] * (2 if name == "bilinear" else 1)))
    np.testing.assert_allclose(to_numpy(eout), tout.detach().numpy(), rtol=1e-4, atol=1e-5)
    if hasattr(ember.ndarray, "requires_grad"):
        (eout * ember.asarray(cot, device=device)).sum().backward()
        for (n, p), (tn, tp) in zip(
            ours.named_parameters(), theirs.named_parameters(), strict=True
        ):
            assert n == tn
            np.testing.assert_allclose(
                to_numpy(p.grad), tp.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=n
            )
    for (n, b), (_, tb) in zip(ours.named_buffers(), theirs.named_buffers(), strict=True):
        np.testing.assert_allclose(to_numpy(b), tb.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)


def test_embedding_and_losses_against_torch(device):
    torch = pytest.importorskip("torch")
    w = rng(17).standard_normal((6, 3)).astype(np.float32)
    idx = np.array([[0, 2, 5], [5, 1, 2]])
    ours = nn.Embedding.from_pretrained(
        ember.asarray(w, device=device), freeze=False, padding_idx=2
    )
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=False, padding_idx=2)
    eo, to_ = ours(ember.asarray(idx, device=device)), theirs(torch.tensor(idx))
    np.testing.assert_allclose(to_numpy(eo), to_.detach().numpy())
    if hasattr(ember.ndarray, "requires_grad"):
        eo.sum().backward()
        to_.sum().backward()
        np.testing.assert_allclose(to_numpy(ours.weight.grad), theirs.weight.grad.numpy())
    x = rng(18).standard_normal((4, 3)).astype(np.float32)
    p = 1 / (1 + np.exp(-rng(19).standard_normal((4, 3)).astype(np.float32)))
    for ours_l, theirs_l in (
        (nn.BCELoss(), torch.nn.BCELoss()),
        (
            nn.BCEWithLogitsLoss(pos_weight=ember.asarray(np.float32([1, 2, 3]), device=device)),
            torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(np.float32([1, 2, 3]))),
        ),
        (nn.L1Loss(), torch.nn.L1Loss()),
        (nn.SmoothL1Loss(beta=0.3), torch.nn.SmoothL1Loss(beta=0.3)),
        (nn.HuberLoss(delta=0.3), torch.nn.HuberLoss(delta=0.3)),
    ):
        inp = p if isinstance(ours_l, nn.BCELoss) else x
        np.testing.assert_allclose(
            to_numpy(ours_l(ember.asarray(inp, device=device), ember.asarray(p, device=device))),
            theirs_l(torch.tensor(inp), torch.tensor(p)).numpy(),
            rtol=1e-5,
            atol=1e-6,
        )
