"""The autograd engine and its Python API: leaves and .grad accumulation, retain_graph and the
freed-graph error, create_graph, grad mode (no_grad, enable_grad, set_grad_enabled, per thread),
detach, version counters, in-place rules, retain_grad, autograd.grad/backward options, anomaly
mode, custom Functions, the graph's nodes, creation with requires_grad, and bad input."""

from __future__ import annotations

import threading

import ember
import numpy as np
import pytest


def leaf(values, device, dtype=None):
    return ember.asarray(np.asarray(values, dtype=dtype), device=device, requires_grad=True)


def np_(x):
    return ember.asnumpy(x)


# ---- leaves, accumulation, graphs ------------------------------------------------------------


def test_leaf_attributes(device):
    x = leaf([1.0, 2.0], device)
    assert x.requires_grad and x.is_leaf and x.grad is None and x.grad_fn is None
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MultiplyBackward"
    z = ember.asarray([1.0], device=device)
    assert not z.requires_grad and z.is_leaf
    assert not (z * 2).requires_grad


def test_grads_accumulate_across_backward_calls(device):
    x = leaf([1.0, 2.0, 3.0], device)
    for k in range(1, 4):
        ember.sum(x * x).backward()
        assert np.allclose(np_(x.grad), 2 * k * np.array([1.0, 2.0, 3.0]))
    x.grad = None
    ember.sum(x).backward()
    assert np.array_equal(np_(x.grad), [1.0, 1.0, 1.0])


def test_grad_is_contiguous_and_own_memory(device):
    x = leaf([[1.0, 2.0], [3.0, 4.0]], device)
    ember.sum(ember.broadcast_to(x, (3, 2, 2))).backward()
    assert np.array_equal(np_(x.grad), np.full((2, 2), 3.0))
    g = ember.ones((2, 2), device=device)
    y = x * 1.0
    y.backward(g)
    g[...] = 100.0  # the accumulated grad does not alias the gradient passed in
    assert np.array_equal(np_(x.grad), np.full((2, 2), 4.0))


def test_same_input_used_twice_and_diamond(device):
    x = leaf([2.0], device)
    a = x * 3
    b = ember.exp(x)
    y = ember.sum(a * b + a + x)
    y.backward()
    want = 3 * np.exp(2) + 6 * np.exp(2) + 3 + 1
    assert np.allclose(np_(x.grad), [want])


def test_retain_graph_and_freed_graph_error(device):
    x = leaf([1.0, 2.0], device)
    y = ember.sum(ember.exp(x))
    y.backward(retain_graph=True)
    y.backward()
    assert np.allclose(np_(x.grad), 2 * np.exp([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="second time.*ExpBackward.*retain_graph=True"):
        y.backward()


def test_graph_without_saved_arrays_can_run_twice(device):
    x = leaf([1.0, 2.0], device)
    y = ember.sum(x * 2.0 + 1.0)
    y.backward()
    y.backward()  # as PyTorch: nothing was saved, nothing was freed
    assert np.array_equal(np_(x.grad), [4.0, 4.0])


def test_non_scalar_backward_needs_gradient(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    (x * 2).backward(gradient=ember.asarray([1.0, 10.0], device=device))
    assert np.array_equal(np_(x.grad), [2.0, 20.0])
    with pytest.raises(RuntimeError, match="shape"):
        (x * 2).backward(gradient=ember.ones((3,), device=device))
    z = ember.asarray([1 + 1j], device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar"):
        ember.sum(z * z).backward()


def test_backward_of_array_without_grad(device):
    x = ember.asarray([1.0], device=device)
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.sum(x).backward()


def test_integer_dtypes_cannot_require_grad(device):
    with pytest.raises(RuntimeError, match="floating point or complex"):
        ember.asarray([1, 2], device=device).requires_grad_()
    with pytest.raises(RuntimeError, match="floating point or complex"):
        ember.zeros(3, dtype=ember.int32, device=device, requires_grad=True)
    b = ember.asarray([True], device=device)
    with pytest.raises(RuntimeError):
        b.requires_grad = True


def test_non_differentiable_outputs(device):
    x = leaf([1.0, -2.0, 3.0], device)
    for y in (x > 0, ember.isnan(x), ember.argmax(x), ember.signbit(x), x.astype(ember.int64)):
        assert not y.requires_grad and y.grad_fn is None
    # zero-gradient ops still give zeros, as PyTorch
    ember.sum(ember.floor(x) + ember.sign(x) + ember.round(x)).backward()
    assert np.array_equal(np_(x.grad), [0.0, 0.0, 0.0])


def test_nextafter_has_no_derivative(device):
    x = leaf([1.0], device)
    y = ember.sum(ember.nextafter(x, 2.0))
    with pytest.raises(RuntimeError, match="derivative of ember.nextafter is not implemented"):
        y.backward()


def test_broadcast_reduction_in_engine(device):
    x = leaf([[1.0], [2.0]], device)  # (2, 1)
    b = leaf(3.0, device)  # 0-d
    y = ember.sum(x * ember.ones((2, 3), device=device) + b)
    y.backward()
    assert x.grad.shape == (2, 1) and np.array_equal(np_(x.grad), [[3.0], [3.0]])
    assert b.grad.shape == () and float(b.grad) == 6.0


def test_float32_and_mixed_dtypes(device):
    x = leaf([1.0, 2.0], device, dtype=np.float32)
    w = leaf([0.5, 0.25], device, dtype=np.float64)
    ember.sum(x * w).backward()
    assert x.grad.dtype == ember.float32 and w.grad.dtype == ember.float64
    assert np.allclose(np_(x.grad), [0.5, 0.25]) and np.allclose(np_(w.grad), [1.0, 2.0])
    h = leaf([1.0, 2.0], device, dtype=np.float16)
    ember.sum(h * h).backward()
    assert h.grad.dtype == ember.float16 and np.allclose(np_(h.grad).astype(float), [2.0, 4.0])


def test_deep_chain_does_not_overflow_the_stack(device):
    x = leaf([1.0], device)
    y = x
    for _ in range(20000):
        y = y * 1.0
    ember.sum(y).backward()
    assert float(x.grad) == 1.0
    del y  # freeing a long graph is not recursive either


# ---- grad mode -------------------------------------------------------------------------------


def test_no_grad_enable_grad_set_grad_enabled(device):
    x = leaf([1.0], device)
    assert ember.is_grad_enabled()
    with ember.no_grad():
        assert not ember.is_grad_enabled()
        y = x * 2
        with ember.enable_grad():
            z = x * 2
    assert not y.requires_grad and z.requires_grad
    ember.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        ember.set_grad_enabled(True)
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert ember.is_grad_enabled()


def test_grad_mode_decorators(device):
    x = leaf([1.0], device)

    @ember.no_grad()
    def f():
        return x * 2

    @ember.enable_grad()
    def g():
        return x * 2

    @ember.set_grad_enabled(False)
    def h():
        return x * 2

    assert ember.is_grad_enabled()
    assert not f().requires_grad and not h().requires_grad
    with ember.no_grad():
        assert g().requires_grad
    assert f.__name__ == "f"


def test_grad_mode_is_per_thread(device):
    x = leaf([1.0], device)
    seen = []
    with ember.no_grad():
        t = threading.Thread(target=lambda: seen.append((x * 2).requires_grad))
        t.start()
        t.join()
        assert not (x * 2).requires_grad
    assert seen == [True]


def test_inplace_on_leaf_under_no_grad_is_allowed(device):
    w = leaf([1.0, 2.0], device)
    ember.sum(w * w).backward()
    with ember.no_grad():
        w -= 0.5 * w.grad
        w[0] = 7.0
    assert np.array_equal(np_(w), [7.0, 0.0]) and w.requires_grad and w.is_leaf


# ---- detach, versions, in-place rules ----------------------------------------------------------


def test_detach(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf
    d[0] = 5.0  # shares memory
    assert float(y[0]) == 5.0
    ember.sum(ember.exp(x).detach() * x).backward()
    assert np.allclose(np_(x.grad), np.exp([1.0, 2.0]))
    z = (x * 3).detach_()
    assert not z.requires_grad


def test_version_counter(device):
    x = ember.zeros(3, device=device)
    v = x._version
    x += 1
    x[0] = 2.0
    x[1:] = ember.ones(2, device=device)
    assert x._version == v + 3
    y = x[1:]
    y *= 2  # a view shares the counter of its memory
    assert x._version == v + 4


def test_modified_saved_array_raises(device):
    x = leaf([1.0, 2.0], device)
    y = x * 1.0
    z = ember.sum(ember.exp(y) * y)
    y += 1
    with pytest.raises(
        RuntimeError,
        match="modified by an in-place operation.*MultiplyBackward is at version 1; "
        "expected version 0",
    ):
        z.backward()


def test_modified_saved_output_raises(device):
    x = leaf([1.0, 2.0], device)
    y = ember.exp(x)
    y[0] = 0.0
    with pytest.raises(RuntimeError, match="ExpBackward"):
        ember.sum(y).backward()


def test_inplace_on_leaf_that_requires_grad_raises(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="leaf array that requires grad.*in-place"):
        x += 1
    with pytest.raises(RuntimeError, match="leaf array that requires grad"):
        x[0] = 3.0
    with pytest.raises(RuntimeError, match="leaf array that requires grad"):
        x *= ember.ones(2, device=device)


def test_inplace_on_non_leaf_rebases_its_history(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    y *= 3
    assert y.grad_fn.name() == "MultiplyBackward"
    ember.sum(y).backward()
    assert np.array_equal(np_(x.grad), [6.0, 6.0])


def test_inplace_makes_non_grad_array_require_grad(device):
    x = leaf([1.0, 2.0], device)
    buf = ember.zeros(2, device=device)
    buf += x * x
    assert buf.requires_grad and not buf.is_leaf
    ember.sum(buf).backward()
    assert np.array_equal(np_(x.grad), [2.0, 4.0])


def test_setitem_value_that_requires_grad(device):
    x = leaf([1.0, 2.0], device)
    buf = ember.zeros((2, 2), device=device)
    buf[0] = x
    buf[1, 1] = 5.0
    ember.sum(buf * buf).backward()
    assert np.array_equal(np_(x.grad), [2.0, 4.0])


def test_inplace_through_views_rebases_the_base(device):
    x = leaf([1.0, 2.0, 3.0], device)
    y = x * 2
    v = y[1:]
    v *= 3  # y becomes [2, 12, 18]
    assert y.grad_fn.name() == "CopySlices" and v.grad_fn.name() == "ViewBackward"
    ember.sum(y * y).backward()
    assert np.allclose(np_(x.grad), [8.0, 144.0, 216.0])


def test_python_augmented_assignment_into_a_slice(device):
    x = leaf([[1.0, 2.0], [3.0, 4.0]], device)
    w = leaf([10.0, 20.0], device)
    y = x * 1.0
    y[:, 0] *= 2
    y[1] += w
    ember.sum(y * y).backward()
    yv = np.array([[2.0, 2.0], [16.0, 24.0]])
    assert np.allclose(np_(x.grad), 2 * yv * np.array([[2.0, 1.0], [2.0, 1.0]]))
    assert np.allclose(np_(w.grad), 2 * yv[1])


def test_chained_views_and_setitem_into_a_view(device):
    x = leaf(np.arange(6.0).reshape(2, 3), device)
    y = x + 0.0
    y.T[0] += 1.0  # through permute then index
    y[1][2] = 7.0  # setitem into a view of y
    ember.sum(y * x).backward()
    want = 2 * np.arange(6.0).reshape(2, 3) + np.array([[1.0, 0, 0], [1.0, 0, 0]])
    want[1, 2] = 0.0 + 7.0 - 0.0  # d/dx (7 * x) = 7 there, the assigned value has no x
    assert np.allclose(np_(x.grad), want)


def test_inplace_on_view_of_leaf_raises(device):
    x = leaf([1.0, 2.0, 3.0], device)
    xv = x[:2]
    with pytest.raises(RuntimeError, match="view of a leaf array that requires grad"):
        xv *= 2
    # a broadcast view is read-only (NumPy's rule), which refuses the write before autograd
    b = ember.broadcast_to((x * 1.0)[:1], (3,))
    with pytest.raises(ValueError, match="read-only"):
        b += 1


def test_view_follows_inplace_change_of_its_base(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    v = y.reshape(2, 1)
    y *= 3  # v's history is made again from y's new one
    ember.sum(v * 1.0).backward()
    assert np.array_equal(np_(x.grad), [6.0, 6.0])


def test_inplace_through_a_view_of_a_plain_buffer_with_setitem(device):
    x = leaf([1.0, 2.0], device)
    buf = ember.zeros(4, device=device)
    buf[1:3] += x  # Python writes the view back with setitem, which is recorded
    ember.sum(buf * buf).backward()
    assert np.array_equal(np_(x.grad), [2.0, 4.0])


# ---- retain_grad, grad(), backward(inputs=) ---------------------------------------------------


def test_retain_grad(device):
    x = leaf([1.0, 2.0], device)
    y = x * 3
    y.retain_grad()
    assert y.retains_grad
    z = ember.sum(y * y)
    z.backward()
    assert np.array_equal(np_(y.grad), [6.0, 12.0])
    w = x * 3
    ember.sum(w).backward()
    with pytest.warns(UserWarning, match="non-leaf"):
        assert w.grad is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.ones(2, device=device).retain_grad()


def test_autograd_grad(device):
    x = leaf([1.0, 2.0], device)
    w = leaf([3.0, 4.0], device)
    y = ember.sum(x * w)
    gx, gw = ember.autograd.grad(y, [x, w])
    assert np.array_equal(np_(gx), [3.0, 4.0]) and np.array_equal(np_(gw), [1.0, 2.0])
    assert x.grad is None and w.grad is None  # grad() does not accumulate
    h = x * 2
    (gh,) = ember.autograd.grad(ember.sum(h * h), h)  # w.r.t. a non-leaf
    assert np.array_equal(np_(gh), [4.0, 8.0])


def test_grad_outputs_and_several_outputs(device):
    x = leaf([1.0, 2.0], device)
    a, b = x * 2, x * x
    g1 = ember.asarray([1.0, 0.5], device=device)
    (gx,) = ember.autograd.grad([a, b], [x], grad_outputs=[g1, g1], retain_graph=True)
    assert np.allclose(np_(gx), 2 * np_(g1) + 2 * np.array([1.0, 2.0]) * np_(g1))
    ember.autograd.backward([ember.sum(a), ember.sum(b)])
    assert np.allclose(np_(x.grad), [4.0, 6.0])


def test_allow_unused(device):
    x = leaf([1.0], device)
    u = leaf([1.0], device)
    y = ember.sum(x * 2)
    with pytest.raises(RuntimeError, match="not used in the graph.*allow_unused"):
        ember.autograd.grad(y, [x, u], retain_graph=True)
    gx, gu = ember.autograd.grad(y, [x, u], allow_unused=True)
    assert float(gx) == 2.0 and gu is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.autograd.grad(ember.sum(x * 2), [ember.ones(1, device=device)])


def test_backward_inputs(device):
    x = leaf([1.0], device)
    w = leaf([2.0], device)
    y = ember.sum(x * w)
    y.backward(inputs=[x])
    assert float(x.grad) == 2.0 and w.grad is None
    ember.autograd.backward(ember.sum(x * w), inputs=[w])
    assert float(w.grad) == 1.0 and float(x.grad) == 2.0


def test_create_graph_second_derivative(device):
    x = leaf([2.0], device)
    y = ember.sum(x**3)
    y.backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and float(g) == 12.0
    (h,) = ember.autograd.grad(ember.sum(g), x)
    assert float(h) == 12.0  # d/dx 3x^2 = 6x
    s = leaf([0.3], device)
    (d1,) = ember.autograd.grad(ember.sum(ember.sin(s)), s, create_graph=True)
    (d2,) = ember.autograd.grad(ember.sum(d1), s, create_graph=True)
    (d3,) = ember.autograd.grad(ember.sum(d2), s)
    assert np.allclose([float(d1), float(d2), float(d3)], [np.cos(0.3), -np.sin(0.3), -np.cos(0.3)])


# ---- the graph's nodes -------------------------------------------------------------------------


def test_grad_fn_and_next_functions(device):
    x = leaf([1.0, 2.0], device)
    c = ember.asarray([1.0, 1.0], device=device)
    y = ember.sum(ember.exp(x) * c)
    fn = y.grad_fn
    assert isinstance(fn, ember.autograd.Node) and fn.name() == "SumBackward"
    ((mul, k),) = fn.next_functions
    assert mul.name() == "MultiplyBackward" and k == 0
    (exp_edge, none_edge) = mul.next_functions
    assert exp_edge[0].name() == "ExpBackward" and none_edge == (None, 0)
    ((acc, _),) = exp_edge[0].next_functions
    assert acc.name() == "AccumulateGrad"
    assert repr(fn) == "<SumBackward>"
    names = {
        (x @ ember.ones((2, 1), device=device)).grad_fn.name(),
        x.reshape(2, 1).grad_fn.name(),
        x[0].grad_fn.name(),
        ember.take(x, ember.asarray([0], device=device)).grad_fn.name(),
        x.max().grad_fn.name(),
    }
    assert names == {
        "MatmulBackward",
        "ReshapeBackward",
        "IndexBackward",
        "TakeBackward",
        "MaxBackward",
    }


def test_requires_grad_flag_rules(device):
    x = leaf([1.0], device)
    y = x * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False
    y.requires_grad = True  # already true: fine
    x.requires_grad = False
    assert not (x * 2).requires_grad
    assert x.requires_grad_() is x and x.requires_grad


def test_grad_setter(device):
    x = leaf([1.0, 2.0], device)
    x.grad = ember.ones(2, device=device)
    ember.sum(x).backward()
    assert np.array_equal(np_(x.grad), [2.0, 2.0])
    with pytest.raises(RuntimeError, match="shape"):
        x.grad = ember.ones(3, device=device)
    with pytest.raises(RuntimeError, match="dtype"):
        x.grad = ember.ones(2, dtype=ember.float32, device=device)
    with pytest.raises(TypeError):
        x.grad = [1.0, 2.0]
    x.grad = None
    assert x.grad is None


def test_creation_functions_take_requires_grad(device):
    made = [
        ember.zeros((2,), device=device, requires_grad=True),
        ember.ones((2,), device=device, requires_grad=True),
        ember.full((2,), 3.0, device=device, requires_grad=True),
        ember.empty((2,), device=device, requires_grad=True),
        ember.arange(0.0, 2.0, device=device, requires_grad=True),
        ember.linspace(0, 1, 2, device=device, requires_grad=True),
        ember.eye(2, device=device, requires_grad=True),
        ember.asarray([1.0, 2.0], device=device, requires_grad=True),
    ]
    base = ember.ones((2,), device=device)
    made += [
        ember.zeros_like(base, requires_grad=True),
        ember.ones_like(base, requires_grad=True),
        ember.full_like(base, 2.0, requires_grad=True),
        ember.empty_like(base, requires_grad=True),
    ]
    assert all(a.requires_grad and a.is_leaf for a in made)
    assert not ember.zeros(2, device=device).requires_grad


# ---- anomaly mode ------------------------------------------------------------------------------


def test_detect_anomaly_names_the_forward_op(device):
    x = leaf([1.0, -1.0], device)
    with ember.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="ember.log .recorded as LogBackward.*NaN or inf"):
            ember.log(x)
    ember.log(x)  # outside anomaly mode: no check


def test_detect_anomaly_names_the_backward_op(device):
    x = leaf([0.0, 1.0], device)
    with ember.autograd.detect_anomaly():
        y = ember.sum(ember.sqrt(x))
        with pytest.raises(RuntimeError, match="SqrtBackward returned NaN or inf") as e:
            y.backward()
    assert "recorded here" in str(e.value) and "test_autograd.py" in str(e.value)
    assert not ember.autograd.is_anomaly_enabled()


# ---- custom functions --------------------------------------------------------------------------


class Cube(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * x * x * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x * ctx.k, None


def test_custom_function(device):
    x = leaf([1.0, 2.0], device)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    ember.sum(y).backward()
    assert np.array_equal(np_(x.grad), [6.0, 24.0])
    with ember.no_grad():
        assert not Cube.apply(x, 1.0).requires_grad


def test_custom_function_saved_array_modified(device):
    x = leaf([1.0, 2.0], device)
    h = x * 1.0
    y = ember.sum(Cube.apply(h, 1.0))
    h += 1
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.backward()


def test_custom_function_bad_backward(device):
    class Bad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = leaf([1.0], device)
    with pytest.raises(RuntimeError, match="expected 1"):
        ember.sum(Bad.apply(x)).backward()


def test_custom_function_two_outputs_and_identity(device):
    class Split(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x, x * 2  # an input returned as is gets a new handle

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + 2 * g2

    x = leaf([1.0, 3.0], device)
    a, b = Split.apply(x)
    assert a is not x and x.is_leaf and not a.is_leaf
    ember.sum(b).backward()  # a got no gradient: materialized as zeros
    assert np.array_equal(np_(x.grad), [2.0, 2.0])


# ---- ops without a backward formula ------------------------------------------------------------


def test_decompositions_without_a_formula_raise_in_backward(device):
    # inv/solve/det/cholesky/eigh/svd/qr and the FFTs are differentiable (test_torch_probe6,
    # test_fft_grad); eig (general matrices) has no backward formula yet: its backward raises
    a = leaf([[2.0, 1.0], [0.5, 3.0]], device)
    y = ember.sum(ember.linalg.eig(a)[0])
    with pytest.raises(RuntimeError, match="derivative of ember.linalg.eig is not implemented"):
        y.backward()
    # without requires_grad nothing changes
    assert not ember.linalg.inv(ember.asarray([[2.0]], device=device)).requires_grad
