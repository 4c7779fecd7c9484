"""ember.dask.DeviceHostFile: a Dask worker's results spill from the device to host memory past
``device_memory_limit`` (dask-cuda's model) and come back on use. On the CPU the "device" is
the CPU itself (``device_type="cpu"``: the same bookkeeping, host copies of CPU arrays); the
GPU tests spill real GPU arrays, also inside a distributed worker."""

from __future__ import annotations

import ember
import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import ember.dask  # noqa: E402
from ember.dask import DeviceHostFile  # noqa: E402
from ember.dask._spill import device_bytes  # noqa: E402

needs_cuda = pytest.mark.skipif(not ember.cuda.is_available(), reason="no CUDA device")
ptr = ember._core._kernels.data_ptr


def _arrays(n, device, size=100):
    return [ember.full(size, float(i), device=device) for i in range(n)]  # 800 bytes each


def test_least_recently_used_results_spill_and_come_back():
    d = DeviceHostFile(2500, device_type="cpu")
    a = _arrays(5, "cpu")
    for i, x in enumerate(a):
        d[i] = x
    assert d.device_bytes == 2400 and d.spilled_keys == {0, 1}
    assert d.spilled_bytes_total == 1600 and len(d) == 5 and set(d) == set(range(5))
    d[3]  # 3 is now the most recently used
    d[5] = a[0] + 10
    assert d.spilled_keys == {0, 1, 2}
    back = d[0]  # a spilled value comes back (and something else goes out)
    np.testing.assert_array_equal(ember.asnumpy(back), ember.asnumpy(a[0]))
    assert ptr(back) != ptr(a[0])  # it went through a host copy
    assert 0 not in d.spilled_keys and d.device_bytes <= 2500
    del d[1]
    assert 1 not in d and 1 not in d.spilled_keys and len(d) == 5
    assert "DeviceHostFile" in repr(d)


def test_nested_results_and_host_values():
    d = DeviceHostFile(1000, device_type="cpu")
    x, y = _arrays(2, "cpu")
    d["t"] = (x, 3, {"k": y}, [x])
    assert device_bytes(d["t"], "cpu") == 2400
    assert d.spilled_keys == {"t"}  # larger than the limit: straight to the host
    t = d["t"]
    assert isinstance(t, tuple) and t[1] == 3 and isinstance(t[2], dict) and isinstance(t[3], list)
    np.testing.assert_array_equal(ember.asnumpy(t[2]["k"]), ember.asnumpy(y))
    d["n"] = np.ones(1000)  # not an ember array on the counted device: weight 0, never spilled
    d["s"] = "text"
    assert d.device_bytes <= 1000 and "n" not in d.spilled_keys and d["s"] == "text"


def test_frames_spill():
    fd = pytest.importorskip("ember.frame")
    d = DeviceHostFile(10, device_type="cpu")
    df = fd.DataFrame({"a": [1, 2, 3], "b": [0.5, 1.5, None]}, device="cpu")
    d["f"] = df
    assert d.spilled_keys == {"f"}
    back = d["f"]
    assert isinstance(back, fd.DataFrame) and back.device == "cpu"
    assert back.to_pandas().equals(df.to_pandas())


def test_limits_parse_and_bad_limits_raise():
    assert DeviceHostFile("2kB", device_type="cpu").device_memory_limit == 2000
    assert DeviceHostFile(4096, device_type="cpu", memory_limit=1).device_memory_limit == 4096
    with pytest.raises(ValueError, match="must be positive"):
        DeviceHostFile(-5, device_type="cpu")
    with pytest.raises(ValueError, match="fractional device_memory_limit needs a GPU"):
        DeviceHostFile(0.5, device_type="cpu")
    if not ember.cuda.is_available():
        with pytest.raises(ValueError, match="needs a GPU"):
            DeviceHostFile(0.8)


def test_a_worker_computes_through_its_spilling_mapping():
    """distributed builds the mapping in the worker from (class, kwargs), as LocalCluster passes
    it; persisted chunks beyond the limit live on the host and the results stay right."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 64))
    with (
        distributed.LocalCluster(
            n_workers=1,
            processes=False,
            dashboard_address=":0",
            data=(DeviceHostFile, {"device_memory_limit": 8192, "device_type": "cpu"}),
        ) as cluster,
        distributed.Client(cluster),
    ):
        x = da.from_array(ember.asarray(a, device="cpu"), chunks=16).persist()  # 16 x 2 KiB
        distributed.wait(x)
        (w,) = cluster.workers.values()
        assert isinstance(w.data, DeviceHostFile)
        assert w.data.spilled_keys and w.data.device_bytes <= 8192
        got = (x * 2 + 1).sum(axis=0).compute()
        np.testing.assert_allclose(ember.asnumpy(got), (a * 2 + 1).sum(axis=0))


@needs_cuda
def test_gpu_results_spill_to_the_host_and_return():
    d = DeviceHostFile(2500)
    a = _arrays(5, "cuda")
    for i, x in enumerate(a):
        d[i] = x
    assert d.spilled_keys == {0, 1}
    assert d.host.d[0][2].device.type == "cpu"  # the host copy
    back = d[0]
    assert back.device.type == "cuda"
    np.testing.assert_array_equal(ember.asnumpy(back), ember.asnumpy(a[0]))
    d["cpu"] = ember.ones(10_000, device="cpu")  # host results do not count
    assert "cpu" not in d.spilled_keys and d.device_bytes <= 2500


@needs_cuda
def test_gpu_worker_spills_beyond_its_device_memory_limit():
    a = np.random.default_rng(1).standard_normal((256, 256))
    with (
        dask.config.set({"distributed.diagnostics.nvml": False}),
        ember.dask.LocalCluster(
            n_workers=1, device_memory_limit="64kB", dashboard_address=":0", silence_logs=40
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        x = da.from_array(ember.asarray(a, device="cuda"), chunks=32).persist()  # 64 x 8 KiB
        distributed.wait(x)
        info = client.run(
            lambda dask_worker: (
                type(dask_worker.data).__name__,
                len(dask_worker.data.spilled_keys),
                dask_worker.data.device_bytes,
            )
        )
        ((kind, spilled, held),) = info.values()
        assert kind == "DeviceHostFile" and spilled > 0 and held <= 64_000
        got = x.std(axis=0).compute()
        assert got.device.type == "cuda"
        np.testing.assert_allclose(ember.asnumpy(got), a.std(axis=0), rtol=1e-10)
