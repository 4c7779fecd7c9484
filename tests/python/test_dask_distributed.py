"""ember arrays with dask.distributed: the serializer families ember.dask registers, and a
LocalCluster computing on ember chunks (threads; and worker processes, once)."""

from __future__ import annotations

import pickle

import ember
import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import ember.dask  # noqa: E402

distributed = pytest.importorskip("distributed")

from distributed.protocol import deserialize, serialize  # noqa: E402
from distributed.protocol.cuda import cuda_serialize  # noqa: E402

RNG = np.random.default_rng(33)
CLUSTER = {"threads_per_worker": 1, "dashboard_address": ":0", "silence_logs": 40}


def _data(shape, dtype):
    if dtype == "bool":
        return RNG.random(shape) > 0.5
    if dtype.startswith(("int", "uint")):
        return RNG.integers(0, 100, shape).astype(dtype)
    a = RNG.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "uint16", "int64", "float16", "float32", "float64", "complex64"]
)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (2, 3, 4)])
def test_dask_family_round_trip(device, dtype, shape):
    a = _data(shape, dtype)
    x = ember.asarray(a, device=device)
    header, frames = serialize(x)
    assert header["serializer"] == "dask"  # ember's own family, not a pickle of the object
    assert len(frames) == 1 and memoryview(frames[0]).nbytes == a.nbytes
    y = deserialize(header, frames)
    assert type(y) is ember.ndarray and y.device == x.device
    assert y.dtype == x.dtype and y.shape == x.shape
    np.testing.assert_array_equal(ember.asnumpy(y), a)


def test_dask_family_cpu_frame_is_the_array_memory():
    x = ember.asarray(np.arange(12.0).reshape(3, 4))
    header, frames = serialize(x)
    frame = np.frombuffer(frames[0], dtype=np.float64)
    x[1, 1] = -1.0  # the frame is a view of the array's memory: no copy was made
    assert frame[5] == -1.0


def test_dask_family_views_and_bfloat16(device):
    a = RNG.standard_normal((6, 8))
    x = ember.asarray(a, device=device)
    for view, ref in [(x[:, 1::3], a[:, 1::3]), (x.T, a.T), (x[::-1, 2], a[::-1, 2])]:
        y = deserialize(*serialize(view))
        assert y.shape == ref.shape
        np.testing.assert_array_equal(ember.asnumpy(y), ref)
    b = ember.asarray(a, device=device).astype("bfloat16")
    y = deserialize(*serialize(b))
    assert y.dtype == ember.bfloat16
    np.testing.assert_array_equal(
        ember.asnumpy(y.astype("float32")), ember.asnumpy(b.astype("float32"))
    )


def test_gradients_do_not_travel(device):
    x = ember.ones(3, device=device).requires_grad_()
    y = deserialize(*serialize(x * 2))
    assert not y.requires_grad
    np.testing.assert_array_equal(ember.asnumpy(y), [2.0, 2.0, 2.0])


def test_cuda_family_declines_cpu_arrays():
    x = ember.ones(4)
    with pytest.raises(NotImplementedError):
        cuda_serialize(x)
    # asked for "cuda" first, a CPU array falls through to "dask"
    header, frames = serialize(x, serializers=("cuda", "dask", "pickle"))
    assert header["serializer"] == "dask"


def test_cuda_family_on_gpu(device):
    if device != "cuda":
        pytest.skip("the cuda family carries GPU arrays")
    a = RNG.standard_normal((5, 3)).astype("float32")
    x = ember.asarray(a, device=device)
    header, frames = serialize(x, serializers=("cuda", "dask"))
    assert header["serializer"] == "cuda"
    assert hasattr(frames[0], "__cuda_array_interface__")
    y = deserialize(header, frames)
    assert y.device == x.device
    np.testing.assert_array_equal(ember.asnumpy(y), a)


def test_pickle_of_per_device_random_class_for_workers(device):
    from ember.dask import _random

    cls = _random.generator_class(device)
    assert pickle.loads(pickle.dumps(cls)) is cls


@pytest.fixture(scope="module")
def thread_client():
    with (
        distributed.LocalCluster(n_workers=2, processes=False, **CLUSTER) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_local_cluster_threads(thread_client, device):
    a = RNG.standard_normal((9, 6))
    x = ember.asarray(a, device=device)
    d = da.from_array(x, chunks=(4, 3))
    r = (d * 2 + 1).sum(axis=0).compute()
    assert type(r) is ember.ndarray and r.device == x.device
    np.testing.assert_allclose(ember.asnumpy(r), (a * 2 + 1).sum(axis=0))
    s = d.std(axis=0).compute()
    np.testing.assert_allclose(ember.asnumpy(s), a.std(axis=0))
    m = (d @ d.T).compute()
    np.testing.assert_allclose(ember.asnumpy(m), a @ a.T)
    p = d.rechunk((3, 6))[::2].persist()
    np.testing.assert_array_equal(ember.asnumpy(p.compute()), a[::2])
    fut = thread_client.scatter(x)
    back = fut.result()
    assert type(back) is ember.ndarray
    np.testing.assert_array_equal(ember.asnumpy(back), a)


def test_local_cluster_processes(device):
    """Two worker processes (ember.dask preloaded): chunks travel between them and back to
    the client through ember's serializers."""
    a = RNG.standard_normal((8, 6))
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, preload=["ember.dask"], **CLUSTER
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        x = ember.asarray(a, device=device)
        d = da.from_array(x, chunks=(2, 3))
        r = (d * 2 + 1).sum(axis=0).compute()
        assert type(r) is ember.ndarray and r.device == x.device
        np.testing.assert_allclose(ember.asnumpy(r), (a * 2 + 1).sum(axis=0))
        # a product whose blocks need chunks held by both workers
        m = (d @ d.T).compute()
        np.testing.assert_allclose(ember.asnumpy(m), a @ a.T)
        # each worker registered the serializers (preload) and serializes with them
        assert all(
            client.run(lambda: "ember.dask._distributed" in __import__("sys").modules).values()
        )
        kinds = client.run(lambda: serialize(__import__("ember").ones(2))[0]["serializer"])
        assert set(kinds.values()) == {"dask"}


def test_ember_local_cluster_cpu_workers():
    with (
        ember.dask.LocalCluster(devices=[], n_workers=1, processes=False, **CLUSTER) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert len(client.scheduler_info()["workers"]) == 1
        a = RNG.standard_normal((6, 4))
        r = da.from_array(ember.asarray(a), chunks=3).mean(axis=0).compute()
        assert type(r) is ember.ndarray
        np.testing.assert_allclose(ember.asnumpy(r), a.mean(axis=0))


def test_ember_local_cluster_one_worker_per_gpu():
    """GPU ids given explicitly: one single-threaded worker process per id, each with
    CUDA_VISIBLE_DEVICES starting at its own GPU (dask-cuda's rotation). No GPU is touched:
    the workers only report their environment."""
    # GPUs 3 and 5 need not exist: Distributed's NVML monitor (which would open them) is off, and
    # so is spilling (its limit is a fraction of the worker's GPU memory).
    with (
        dask.config.set({"distributed.diagnostics.nvml": False}),
        ember.dask.LocalCluster(devices=["3", "5"], device_memory_limit=None, **CLUSTER) as cluster,
        distributed.Client(cluster) as client,
    ):
        env = client.run(lambda: __import__("os").environ["CUDA_VISIBLE_DEVICES"])
        assert sorted(env.values()) == ["3,5", "5,3"]
        nthreads = client.nthreads()
        assert sorted(nthreads.values()) == [1, 1]
        assert all(client.run(lambda: "ember.dask" in __import__("sys").modules).values())


def test_ember_local_cluster_bad_arguments():
    with pytest.raises(ValueError, match="processes=False"):
        ember.dask.LocalCluster(devices=["0"], processes=False)
    with pytest.raises(ValueError, match="n_workers=3"):
        ember.dask.LocalCluster(devices=["0"], n_workers=3)


def test_importing_ember_where_distributed_is_loaded_registers_the_serializers():
    # what a Dask worker does when it unpickles an ember array's type: import ember
    import subprocess
    import sys

    code = (
        "import distributed, ember, sys\n"
        "from distributed.protocol import serialize\n"
        "h, f = serialize(ember.arange(3))\n"
        "assert 'ember.dask' in sys.modules and h['serializer'] == 'dask', h\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
