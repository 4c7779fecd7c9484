"""CUDA graphs: ember.cuda.graph() / CUDAGraph capture and replay, the graph's private memory,
and the clear errors for what a capture cannot contain."""

import gc

import ember
import numpy as np
import pytest
from conftest import cuda_unavailable_reason

needs_cuda = pytest.mark.skipif(
    cuda_unavailable_reason() is not None, reason=f"no CUDA device: {cuda_unavailable_reason()}"
)
without_cuda = pytest.mark.skipif(
    cuda_unavailable_reason() is None, reason="checks the behaviour without a CUDA device"
)


# ---- without a GPU ----------------------------------------------------------------------------


@without_cuda
def test_capture_needs_cuda():
    g = ember.cuda.CUDAGraph()
    with pytest.raises(ValueError, match=r"CUDAGraph\.capture_begin: CUDA is not available"):
        with ember.cuda.graph(g):
            pass
    assert not g.captured
    assert repr(g) == "<ember.cuda.CUDAGraph empty>"


def test_argument_checks():
    with pytest.raises(TypeError, match=r"ember\.cuda\.graph: expected an ember\.cuda\.CUDAGraph"):
        with ember.cuda.graph("g"):
            pass
    g = ember.cuda.CUDAGraph()
    with pytest.raises(TypeError, match="stream must be an ember.cuda.Stream, got int"):
        g.capture_begin(stream=3)
    with pytest.raises(ValueError, match="replay: nothing has been captured"):
        g.replay()
    with pytest.raises(ValueError, match="capture_end: the graph is not capturing"):
        g.capture_end()
    assert g.num_nodes == 0


# ---- on a GPU ---------------------------------------------------------------------------------


def _body(x):
    y = x
    for i in range(20):
        y = y * np.float32(1.0 + i / 1000) + np.float32(0.25)
    return ember.tanh(y)


@needs_cuda
def test_elementwise_chain_replays_on_new_input():
    rng = np.random.default_rng(0)
    x = ember.asarray(rng.standard_normal((257, 33), dtype=np.float32), device="cuda")
    _body(x)  # compiled before the capture
    with ember.cuda.graph() as g:
        y = _body(x)
    assert g.captured and g.num_nodes >= 41
    for _ in range(3):
        new = rng.standard_normal((257, 33), dtype=np.float32)
        x[...] = ember.asarray(new, device="cuda")
        g.replay()
        np.testing.assert_array_equal(ember.asnumpy(y), ember.asnumpy(_body(x)))
        np.testing.assert_allclose(ember.asnumpy(y), np.tanh(_body_np(new)), rtol=2e-6, atol=1e-6)


def _body_np(x):
    y = x
    for i in range(20):
        y = y * np.float32(1.0 + i / 1000) + np.float32(0.25)
    return y


def _dependent_chain(x):
    y = x * np.float32(1.5)
    for i in range(30):  # in place: each kernel reads and overwrites what the one before wrote
        y += np.float32(i)
        y *= np.float32(0.5)
    z = ember.empty_like(y)
    z[::2] = y[1::2]  # strided copies
    z[1::2] = y[::2]
    return z * z.sum()  # a reduction (another family) in between


@needs_cuda
def test_dependent_launches_in_a_graph_wait_for_the_kernel_before():
    # The elementwise and copy kernels go into a graph as programmatic dependents of the kernel
    # before them (DESIGN.md §13): over arrays of many blocks, each must still see all of its
    # predecessor's writes, and overwrite nothing it still reads.
    rng = np.random.default_rng(3)
    x = ember.asarray(rng.standard_normal(1 << 22, dtype=np.float32), device="cuda")
    _dependent_chain(x)
    with ember.cuda.graph() as g:
        y = _dependent_chain(x)
    for _ in range(3):
        new = rng.standard_normal(1 << 22, dtype=np.float32)
        x[...] = ember.asarray(new, device="cuda")
        g.replay()
        np.testing.assert_array_equal(ember.asnumpy(y), ember.asnumpy(_dependent_chain(x)))
    v = new * np.float32(1.5)
    for i in range(30):
        v = (v + np.float32(i)) * np.float32(0.5)
    w = np.empty_like(v)
    w[::2], w[1::2] = v[1::2], v[::2]
    np.testing.assert_allclose(ember.asnumpy(y), w * w.sum(dtype=np.float64), rtol=1e-4)


@needs_cuda
def test_capture_runs_nothing_until_replay():
    x = ember.zeros(1000, device="cuda")
    x + 1.0
    with ember.cuda.graph() as g:
        x += 1.0  # in place: captured, not run
    assert float(ember.max(x)) == 0.0
    g.replay()
    g.replay()
    np.testing.assert_array_equal(ember.asnumpy(x), np.full(1000, 2.0, np.float32))


@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mlp_forward_identical_to_eager(dtype):
    ember.random.seed(3)
    model = ember.nn.Sequential(
        ember.nn.Linear(64, 128), ember.nn.ReLU(), ember.nn.Linear(128, 10), ember.nn.Softmax(dim=1)
    ).to("cuda", dtype=dtype)
    rng = np.random.default_rng(1)
    x = ember.asarray(rng.standard_normal((32, 64)).astype(dtype), device="cuda")
    with ember.no_grad():
        model(x)
        with ember.cuda.graph() as g:
            out = model(x)
        for _ in range(2):
            x[...] = ember.asarray(rng.standard_normal((32, 64)).astype(dtype), device="cuda")
            g.replay()
            np.testing.assert_array_equal(ember.asnumpy(out), ember.asnumpy(model(x)))


@needs_cuda
def test_raw_kernel_in_a_graph():
    k = ember.RawKernel(
        r"""extern "C" __global__ void twice_plus(float* y, const float* x, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = 2.0f * x[i] + y[i];
        }""",
        "twice_plus",
    )
    x = ember.arange(300, dtype="float32", device="cuda")
    y = ember.zeros(300, dtype="float32", device="cuda")
    with ember.cuda.graph() as g:
        k((2,), (256,), (y, x, np.int32(300)))
        z = y + 1.0
    g.replay()
    g.replay()
    ref = 4.0 * np.arange(300, dtype=np.float32)
    np.testing.assert_array_equal(ember.asnumpy(y), ref)
    np.testing.assert_array_equal(ember.asnumpy(z), ref + 1.0)


@needs_cuda
def test_host_synchronization_is_refused_and_the_capture_discarded():
    x = ember.ones(16, device="cuda")
    before = ember.cuda.current_stream()
    cases = [
        ("copying an array to the host", lambda: ember.asnumpy(x + 1.0)),
        ("copying an array to the host", lambda: (x * 2.0).sum().item()),
        ("ember.cuda.synchronize", ember.cuda.synchronize),
        ("copying an array to the host", lambda: x[x > 0.5]),
        ("copying host data to the GPU", lambda: ember.asarray(np.ones(3), device="cuda")),
        ("Stream.synchronize", lambda: ember.cuda.current_stream().synchronize()),
    ]
    for what, fn in cases:
        g = ember.cuda.CUDAGraph()
        with pytest.raises(ember.cuda.CudaError, match=f"{what}.*cannot be captured"):
            with ember.cuda.graph(g):
                fn()
        assert not g.captured
        assert ember.cuda.current_stream() == before
        np.testing.assert_array_equal(ember.asnumpy(x + 1.0), np.full(16, 2.0, np.float32))


@needs_cuda
def test_capture_state_errors():
    g = ember.cuda.CUDAGraph()
    with ember.cuda.graph(g):
        with pytest.raises(ValueError, match="already capturing"):
            g.capture_begin()
        with pytest.raises(ValueError, match="captures do not nest"):
            ember.cuda.CUDAGraph().capture_begin()
        with pytest.raises(ValueError, match="still capturing"):
            g.replay()
    with pytest.raises(ValueError, match="default stream"):
        with ember.cuda.graph(stream=ember.cuda.default_stream()):
            pass


@needs_cuda
def test_capture_on_a_given_stream_and_replay_on_another():
    s = ember.cuda.Stream()
    x = ember.arange(10.0, device="cuda")
    with ember.cuda.graph(stream=s) as g:
        assert ember.cuda.current_stream() == s
        y = x * 3.0
    assert ember.cuda.current_stream() == ember.cuda.default_stream()
    other = ember.cuda.Stream()
    other.wait_stream(ember.cuda.default_stream())  # x was made on the default stream
    with ember.cuda.stream(other):
        g.replay()
    other.synchronize()
    np.testing.assert_array_equal(ember.asnumpy(y), 3.0 * np.arange(10.0))


@needs_cuda
def test_graph_memory_is_private_and_returned():
    gc.collect()
    base = ember.cuda.memory_allocated()
    x = ember.arange(1 << 16, dtype="float32", device="cuda")
    pre = x * 3.0  # ordinary memory the capture reads, then drops
    with ember.cuda.graph() as g:
        t = pre + 1.0  # a temporary of the capture: its chunk is reused below
        del pre
        y = t * 2.0
        del t
        w = y - 1.0
    ptr = y.__cuda_array_interface__["data"][0]
    # Much new memory while the graph lives: none of it may land on the graph's chunks or on
    # `pre`, which the replays still read.
    junk = [ember.full(1 << 16, 7.0, device="cuda") for _ in range(64)]
    g.replay()
    ref = (np.arange(1 << 16, dtype=np.float32) * 3 + 1) * 2
    np.testing.assert_array_equal(ember.asnumpy(y), ref)
    np.testing.assert_array_equal(ember.asnumpy(w), ref - 1)
    assert y.__cuda_array_interface__["data"][0] == ptr
    assert all(float(ember.min(j)) == 7.0 for j in junk)
    del junk, x
    assert ember.cuda.memory_reserved() >= ember.cuda.memory_allocated()
    del g  # y and w outlive the graph; their memory goes when they do
    np.testing.assert_array_equal(ember.asnumpy(w), ref - 1)
    del y, w
    gc.collect()
    assert ember.cuda.memory_allocated() == base


@needs_cuda
def test_recapture_and_reset():
    x = ember.ones(8, device="cuda")
    g = ember.cuda.CUDAGraph()
    with ember.cuda.graph(g):
        y = x + 1.0
    with ember.cuda.graph(g):  # replaces the first capture
        z = x + 2.0
    g.replay()
    np.testing.assert_array_equal(ember.asnumpy(z), np.full(8, 3.0, np.float32))
    assert "nodes" in repr(g)
    g.reset()
    assert not g.captured and g.num_nodes == 0
    with pytest.raises(ValueError, match="nothing has been captured"):
        g.replay()
    del y


@needs_cuda
def test_matmul_and_reductions_in_a_graph():
    rng = np.random.default_rng(5)
    a = ember.asarray(rng.standard_normal((96, 80), dtype=np.float32), device="cuda")
    b = ember.asarray(rng.standard_normal((80, 64), dtype=np.float32), device="cuda")
    (a @ b).sum(axis=0)
    with ember.cuda.graph() as g:
        c = a @ b
        s = c.sum(axis=0)
        m = ember.max(c, axis=1)
    a[...] = ember.asarray(rng.standard_normal((96, 80), dtype=np.float32), device="cuda")
    g.replay()
    c2 = a @ b
    np.testing.assert_array_equal(ember.asnumpy(c), ember.asnumpy(c2))
    np.testing.assert_array_equal(ember.asnumpy(s), ember.asnumpy(c2.sum(axis=0)))
    np.testing.assert_array_equal(ember.asnumpy(m), ember.asnumpy(ember.max(c2, axis=1)))


@needs_cuda
def test_training_step_with_plain_sgd_replays_like_eager():
    # Forward, backward and a plain SGD update captured once; each replay is one training step.
    # (Optimizers whose update depends on a host-side step count or lazily made state, such as
    # Adam's bias correction or SGD momentum's first step, bake the capture's values in.)
    def make():
        ember.random.seed(11)
        model = ember.nn.Sequential(
            ember.nn.Linear(20, 32), ember.nn.ReLU(), ember.nn.Linear(32, 4)
        ).to("cuda")
        return model, ember.optim.SGD(model.parameters(), lr=0.05)

    rng = np.random.default_rng(2)
    batches = [
        (rng.standard_normal((16, 20), dtype=np.float32), rng.integers(0, 4, 16)) for _ in range(4)
    ]
    loss_fn = ember.nn.CrossEntropyLoss()

    model, opt = make()
    eager = []
    for xb, yb in batches:
        opt.zero_grad()
        loss = loss_fn(model(ember.asarray(xb, device="cuda")), ember.asarray(yb, device="cuda"))
        loss.backward()
        opt.step()
        eager.append(float(loss))
    eager_w = [ember.asnumpy(p.detach()) for p in model.parameters()]

    model, opt = make()
    x = ember.asarray(batches[0][0], device="cuda")
    y = ember.asarray(batches[0][1], device="cuda")
    opt.zero_grad()
    with ember.cuda.graph() as g:
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    replayed = []
    for xb, yb in batches:
        x[...] = ember.asarray(xb, device="cuda")
        y[...] = ember.asarray(yb, device="cuda")
        g.replay()
        replayed.append(float(loss))
    assert replayed == eager
    for p, w in zip(model.parameters(), eager_w, strict=True):
        np.testing.assert_array_equal(ember.asnumpy(p.detach()), w)
