"""ember.compile (torch.compile's API, a lazy mode over ember.fuse's generator): compiled results
equal eager ember's (bitwise on the CPU where ember.fuse is) over the op table, dtypes,
broadcasting, non-contiguous, 0-d and empty arrays; what breaks a graph (a host read, a Python
branch on data, a callback, a non-fusable op) runs eagerly and deferral resumes; autograd; the
seed MLP's Adam training step; recompiles; the fallbacks; errors. Modules and diagnostics:
test_compile_more.py."""

from __future__ import annotations

import re

import ember
import numpy as np
import pytest
from _fuse_helpers import equal_results  # noqa: E402
from _fuse_helpers import supported_ops as _supported  # noqa: E402
from _fuse_helpers import values as _values


def _equal(got, want, device):
    assert type(got) is ember.ndarray, type(got)
    equal_results(got, want, device)


def _table_function(good):
    """def fn(a, b, c): return (ember.<row>(a, ...), ...) with the names in the code (they are
    what ember.compile swaps for deferring versions during a call)."""
    args = ["a", "b", "c"]
    body = ", ".join(f"ember.{n}({', '.join(args[:k])})" for n, k in good)
    ns = {"ember": ember}
    exec(f"def fn(a, b, c):\n    return ({body},)\n", ns)
    return ns["fn"]


@pytest.mark.parametrize(
    "dtype",
    ["bool", "int8", "uint8", "int64", "uint64", "float16", "float32", "float64", "complex128"],
)
def test_every_op_table_row_compiled_equals_eager(dtype, device):
    good = _supported(dtype)
    fn = _table_function(good)
    x, y, z = (_values(dtype, seed=s, device=device) for s in range(3))
    cf = ember.compile(fn)
    got = cf(x, y, z)
    want = fn(x, y, z)
    assert len(good) >= 30
    for (name, _), g, w in zip(good, got, want, strict=True):
        _equal(g, w, device), name
    # one fused kernel computed every row (the rows are all returned: no eager step)
    assert cf.stats["fused_kernels"] == 1 and cf.stats["eager_kernels"] == 0


def _chain(a, b, c):
    return ember.sqrt(ember.abs(a * b + c)) - ember.exp(-ember.abs(a)) / (b * b + 1)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64"])
def test_chain_rounds_like_eager(dtype, device):
    x, y, z = (_values(dtype, seed=s, device=device) for s in range(3))
    cf = ember.compile(_chain)
    _equal(cf(x, y, z), _chain(x, y, z), device)
    assert cf.stats["fused_kernels"] == 1


@pytest.mark.parametrize(
    "da,db",
    [("int8", "uint8"), ("int16", "float16"), ("uint64", "int64"), ("bool", "int8"),
     ("float32", "complex64"), ("int32", "float64")],
)  # fmt: skip
def test_mixed_dtypes_and_python_operators(da, db, device):
    def fn(a, b):
        return a + b, a * b - 1, a < b, ember.where(a > b, a, b), -a, abs(b), 2 - a

    x, y = _values(da, device=device), _values(db, seed=3, device=device)
    try:
        want = fn(x, y)
    except TypeError as exc:  # -bool: eager's error, raised by the compiled call too
        with pytest.raises(TypeError, match=re.escape(str(exc))):
            ember.compile(fn)(x, y)
        return
    for g, w in zip(ember.compile(fn)(x, y), want, strict=True):
        _equal(g, w, device)


@pytest.mark.parametrize("dtype", ["int8", "float16"])
@pytest.mark.parametrize("scalar", [3, 2.5, True, 1j, 300, np.float32(1.5)])
def test_python_and_numpy_scalars(dtype, scalar, device):
    x = _values(dtype, device=device)

    def fn(a, s):
        return a * s + 1, a > s, a - s

    try:
        want = fn(x, scalar)
    except (OverflowError, TypeError) as exc:
        with pytest.raises(type(exc)):
            ember.compile(fn)(x, scalar)
        return
    for g, w in zip(ember.compile(fn)(x, scalar), want, strict=True):
        _equal(g, w, device)


def test_scalars_change_between_calls_without_recompiling(device):
    def fn(a, s):
        return (a * s + s) ** 2

    cf = ember.compile(fn)
    x = _values("float32", device=device)
    for s in (0.5, 2.0, -3.25, 1e10):
        _equal(cf(x, s), fn(x, s), device)
    assert cf.stats["compiles"] == 1 and cf.stats["recompiles"] == 0


def test_broadcasting_non_contiguous_0d_and_empty(device):
    rng = np.random.default_rng(0)
    a = ember.asarray(rng.standard_normal((4, 6)).astype(np.float32), device=device)
    b = ember.asarray(rng.standard_normal((6,)).astype(np.float32), device=device)
    c = ember.asarray(np.float32(1.5), device=device)

    def fn(x, y, z):
        return ember.exp(x * y) - z, (x + z) * 2

    cf = ember.compile(fn)
    for x in (a, a.T.T, a[:, ::2].T, a[::2]):
        y = b[: x.shape[-1]] if x.shape[-1] <= 6 else b
        for g, w in zip(cf(x, y, c), fn(x, y, c), strict=True):
            _equal(g, w, device)
    # 0-d operands only, and empty arrays
    for g, w in zip(cf(c, c, c), fn(c, c, c), strict=True):
        _equal(g, w, device)
    e = ember.zeros((0, 6), dtype="float32", device=device)
    for g, w in zip(cf(e, b, c), fn(e, b, c), strict=True):
        _equal(g, w, device)
    # the layouts and sizes shared one plan; the 0-d call (new ndims) needed its own
    assert [e[1] for e in cf.events if e[0] == "recompile"] == ["new ndim"]


@pytest.mark.parametrize(
    "red,dtype",
    [(r, d) for r in ("sum", "prod", "max", "min", "mean") for d in ("int32", "float32")]
    + [("any", "bool"), ("all", "bool"), ("any", "float32")],
)
def test_reductions_with_axis(red, dtype, device):
    x = _values(dtype, n=24, device=device).reshape(2, 3, 4)
    if dtype == "float32":
        x = ember.where(ember.isfinite(x), x, 1.0)

    def fn(a):
        y = a * 2 if dtype != "bool" else ember.logical_not(a)
        return (
            getattr(y, red)(),
            getattr(y, red)(axis=1),
            getattr(y, red)(axis=(0, 2), keepdims=True),
        )

    for g, w in zip(ember.compile(fn)(x), fn(x), strict=True):
        if dtype == "float32" and red in ("sum", "mean", "prod"):
            np.testing.assert_allclose(ember.asnumpy(g), ember.asnumpy(w), rtol=1e-5)
            assert g.dtype == w.dtype
        else:
            _equal(g, w, device)


def test_issue_function_relu_chain_sum(device):
    """The issue's 4-op function, relu spelled as ember.maximum, F.relu and x.relu()."""
    F = ember.nn.functional
    x = ember.asarray(np.linspace(-3, 3, 1000).astype(np.float32), device=device)

    def f1(x):
        return ember.maximum(x * 2 + 1, 0).sum()

    def f2(x):
        return F.relu(x * 2 + 1).sum()

    def f3(x):
        return (x * 2 + 1).relu().sum()

    for fn in (f1, f2, f3):
        cf = ember.compile(fn)
        _equal(cf(x), fn(x), device)
        assert cf.stats["fused_kernels"] == 1 and cf.stats["eager_kernels"] == 0
        assert cf.stats["graph_breaks"] == 0


def test_reduction_epilogues_are_one_kernel(device):
    x = ember.asarray(np.linspace(-2, 2, 24).reshape(4, 6), device=device)

    def f1(a):
        return ember.maximum(a * 2 + 1, 0).sum() * 0.5 + 1

    def f2(a):
        return ember.sqrt((a * a).sum(axis=1)), ember.exp(-a).mean(axis=0, keepdims=True) - 1

    for fn, kernels in ((f1, 1), (f2, 2)):
        cf = ember.compile(fn)
        got, want = cf(x), fn(x)
        for g, w in zip(
            got if isinstance(got, tuple) else (got,),
            want if isinstance(want, tuple) else (want,),
            strict=True,
        ):
            if device == "cpu":
                _equal(g, w, device)
            else:
                # the GPU's fused and eager reductions may sum in different orders, and
                # `mean - 1` cancels: a 1-ulp difference of the mean shows as ~10 ulps
                assert type(g) is ember.ndarray and g.dtype == w.dtype
                np.testing.assert_allclose(ember.asnumpy(g), ember.asnumpy(w), rtol=1e-13)
        assert cf.stats["fused_kernels"] == kernels


def test_intermediates_are_not_stored_and_shared_values_are_stored_once(device):
    x = _values("float32", device=device)

    def fn(a):
        t = a * 3  # used twice, not returned: not stored
        u = ember.sin(t) + ember.cos(t)  # returned and used again: stored once
        return u, u * 2

    cf = ember.compile(fn)
    for g, w in zip(cf(x), fn(x), strict=True):
        _equal(g, w, device)
    fused = [e for e in cf.events if e[0] == "fused"]
    assert len(fused) == 1 and fused[0][2] == ("add", "multiply")  # its outputs: u and u*2


# ---- graph breaks -----------------------------------------------------------------------------


def test_item_and_data_dependent_branch(device):
    x = _values("float64", device=device)
    x = ember.where(ember.isfinite(x), x, 0.5)

    def fn(a):
        y = a * 2 + 1
        if y.sum().item() > 0:  # a host read: computed here, deferral resumes
            y = ember.tanh(y)
        else:
            y = -y
        if bool((y > 0.5).any()):
            y = y - 1
        return y * 3

    cf = ember.compile(fn)
    _equal(cf(x), fn(x), device)
    _equal(cf(-x), fn(-x), device)  # the other branch
    assert cf.stats["graph_breaks"] >= 2


def test_host_callback_and_non_fusable_ops_in_the_middle(device):
    seen = []
    rng = np.random.default_rng(1)
    x = ember.asarray(rng.standard_normal((4, 3)), device=device)
    w = ember.asarray(rng.standard_normal((3, 5)), device=device)

    def fn(a, w, log):
        h = ember.exp(a * 0.5)
        log(h.shape, float(h[0, 0]))  # a callback reading a value
        z = (h @ w).reshape(-1)  # matmul, reshape: eager on the computed h
        z = ember.sort(z * -1.0)[:7]  # sort and indexing
        return ember.sqrt(ember.abs(z)) + ember.concat([z, z])[:7]

    cf = ember.compile(fn)
    got = cf(x, w, lambda *v: seen.append(v))
    want = fn(x, w, lambda *v: None)
    _equal(got, want, device)
    assert seen and seen[0][0] == (4, 3)
    assert any(e[0] == "break" for e in cf.events)


def test_print_inside(capsys, device):
    x = ember.arange(4, dtype="float32", device=device)

    @ember.compile
    def fn(a):
        y = a + 1
        print(y)
        return y * 2

    _equal(fn(x), (x + 1) * 2, device)
    assert "[1. 2. 3. 4.]" in capsys.readouterr().out


def test_in_place_writes_and_escaping_values(device):
    x = ember.arange(6, dtype="float32", device=device)
    kept = []

    @ember.compile
    def fn(a):
        y = a * 2
        kept.append(y + 1)  # escapes through a list: computed when the call ends
        a += 1  # writes into the argument, as eager does
        y[0] = 100.0
        return y

    x0 = x.copy()
    got = fn(x)
    np.testing.assert_array_equal(ember.asnumpy(x), ember.asnumpy(x0) + 1)
    want = x0 * 2
    want[0] = 100.0
    _equal(got, want, device)
    assert isinstance(kept[0], ember.ndarray)
    np.testing.assert_array_equal(ember.asnumpy(kept[0]), ember.asnumpy(x0 * 2 + 1))


def test_fallback_paths(monkeypatch, device):
    i = ember.asarray(np.array([1, 2, 3], dtype=np.int32), device=device)

    @ember.compile
    def power(a, p):
        return a**p + 1

    # a negative integer power: the step runs eagerly, which raises as eager does
    with pytest.raises(ValueError):
        ember.asarray(i) ** -1
    with pytest.raises(ValueError):
        power(i, -1)
    # an int beyond the loop type: eager's OverflowError
    u = ember.asarray(np.array([1, 2], dtype=np.uint8), device=device)
    with pytest.raises(OverflowError):
        u + 300
    with pytest.raises(OverflowError):
        ember.compile(lambda a: a + 300)(u)
    # astype to the same dtype (a copy) and clip without bounds run eagerly, equal to eager
    f = ember.asarray(np.array([1.5, -2.0], dtype=np.float32), device=device)

    def same(a):
        return a.astype("float32") + 0, ember.clip(a, None, None), a.astype(ember.int16)

    for g, w in zip(ember.compile(same)(f), same(f), strict=True):
        _equal(g, w, device)
    # no host compiler (EMBER_FUSE_CPU=eager): the same results, eagerly
    monkeypatch.setenv("EMBER_FUSE_CPU", "eager")
    cf = ember.compile(_chain)
    x, y, z = (_values("float32", seed=s, device=device) for s in range(3))
    _equal(cf(x, y, z), _chain(x, y, z), device)
    if device == "cpu":
        assert cf.stats["eager_kernels"] == 1 and cf.stats["fused_kernels"] == 0
        assert any(e[0] == "eager" and "EMBER_FUSE_CPU" in e[1] for e in cf.events)


def test_errors_have_clear_messages():
    with pytest.raises(TypeError, match="ember.compile: model must be a function.*int"):
        ember.compile(42)
    with pytest.raises(ValueError, match="mode"):
        ember.compile(lambda x: x, mode="fastest")
    with pytest.raises(ValueError, match="backend"):
        ember.compile(lambda x: x, backend="tvm")
    with pytest.raises(TypeError, match="dynamic"):
        ember.compile(lambda x: x, dynamic="yes")

    @ember.compile(fullgraph=True)
    def f(a):
        return float((a * 2).sum())

    with pytest.raises(RuntimeError, match="fullgraph"):
        f(ember.ones(3))
    assert ember.compile(_chain, disable=True) is _chain


# ---- recompiles ---------------------------------------------------------------------------------


def test_batch_size_changes_do_not_recompile(device):
    @ember.compile
    def fn(x, b):
        return ember.tanh(x * 2 + b).sum(axis=1), (x - 1) * b

    b = ember.ones(8, dtype="float32", device=device)
    for n in (1, 3, 64, 7, 128, 2, 33, 16, 5, 1000):
        x = ember.ones((n, 8), dtype="float32", device=device)
        fn(x, b)
    assert fn.stats["compiles"] == 1 and fn.stats["recompiles"] == 0
    # a new dtype, a new ndim: one recompile each, with the reason
    fn(ember.ones((4, 8), dtype="float64", device=device), b)
    fn(ember.ones((2, 4, 8), dtype="float32", device=device), b)
    reasons = [e[1] for e in fn.events if e[0] == "recompile"]
    assert reasons == ["new dtype", "new ndim"]

    @ember.compile(dynamic=False)
    def static(x):
        return x * 2 + 1

    for n in (1, 2, 2, 3):
        static(ember.ones(n, device=device))
    assert static.stats["recompiles"] == 2
    assert [e[1] for e in static.events if e[0] == "recompile"] == ["new shape"] * 2
