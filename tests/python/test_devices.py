"""Devices: ember.Device, the default device and its overrides, moving arrays, CUDA absence."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import ember
import numpy as np
import pytest
from _helpers import assert_close
from conftest import cuda_unavailable_reason

HAS_CUDA = cuda_unavailable_reason() is None


def test_device_object():
    d = ember.Device("cpu")
    assert str(d) == "cpu"
    assert "cpu" in repr(d)
    assert d == ember.Device("cpu")
    assert hash(d) == hash(ember.Device("cpu"))
    assert ember.Device(d) == d


@pytest.mark.parametrize("bad", ["tpu", "", "gpu", "cuda:x", "cuda:-1", "cpu:cpu", " cpu"])
def test_bad_device_string_raises_value_error(bad):
    with pytest.raises(ValueError):
        ember.Device(bad)
    with pytest.raises(ValueError):
        ember.zeros(3, device=bad)


@pytest.mark.parametrize("bad", [5, 1.5, object(), ["cpu"]], ids=repr)
def test_bad_device_type_raises_type_error(bad):
    with pytest.raises(TypeError):
        ember.Device(bad)


def test_array_device_attribute():
    x = ember.zeros(3, device="cpu")
    assert isinstance(x.device, ember.Device)
    assert str(x.device) == "cpu"
    assert x.device == ember.Device("cpu")


def test_cuda_is_available_returns_bool():
    assert isinstance(ember.cuda.is_available(), bool)


def test_default_device_without_cuda():
    if HAS_CUDA:
        pytest.skip("a GPU is present: default device is cuda:0")
    assert str(ember.get_default_device()) == "cpu"
    assert str(ember.zeros(2).device) == "cpu"


def test_set_default_device_roundtrip():
    before = ember.get_default_device()
    ember.set_default_device("cpu")
    try:
        assert str(ember.get_default_device()) == "cpu"
        assert str(ember.ones(2).device) == "cpu"
        assert str(ember.asarray([1, 2]).device) == "cpu"
        ember.set_default_device(ember.Device("cpu"))
        assert str(ember.get_default_device()) == "cpu"
    finally:
        ember.set_default_device(before)
    with pytest.raises(ValueError):
        ember.set_default_device("tpu")
    assert ember.get_default_device() == before


def test_device_context_manager_restores_on_exit_and_error():
    before = ember.get_default_device()
    with ember.device("cpu"):
        assert str(ember.get_default_device()) == "cpu"
        assert str(ember.arange(3).device) == "cpu"
        with ember.device("cpu"):
            assert str(ember.zeros(1).device) == "cpu"
    assert ember.get_default_device() == before
    with pytest.raises(RuntimeError, match="boom"), ember.device("cpu"):
        raise RuntimeError("boom")
    assert ember.get_default_device() == before


def test_to_cpu(device):
    a = np.arange(6.0).reshape(2, 3)
    x = ember.asarray(a, device=device)
    for y in (x.to("cpu"), x.to(ember.Device("cpu")), x.to_device("cpu"), x.cpu()):
        assert str(y.device) == "cpu"
        assert_close(y, a)


def test_to_same_device_keeps_values(device):
    x = ember.asarray([1.0, 2.0], device=device)
    y = x.to(device)
    assert str(y.device).split(":")[0] == device
    assert_close(y, np.array([1.0, 2.0]))


def test_results_stay_on_the_operands_device(device):
    x = ember.ones((2, 3), device=device)
    for r in (
        x + 1,
        ember.sin(x),
        ember.sum(x, axis=0),
        x[::2],
        x.T,
        x.astype(ember.int32),
    ):
        assert str(r.device).split(":")[0] == device


def test_cuda_request_without_gpu_raises_cleanly():
    if HAS_CUDA:
        pytest.skip("a GPU is present")
    # which exception is the backend's choice (RuntimeError, ValueError, ...): any, but no crash
    with pytest.raises(Exception):  # noqa: B017
        ember.zeros(3, device="cuda")
    with pytest.raises(Exception):  # noqa: B017
        ember.asarray([1.0]).to("cuda")
    with pytest.raises(Exception):  # noqa: B017
        ember.set_default_device("cuda")
    assert str(ember.get_default_device()) == "cpu"


@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_mixed_devices_raise_naming_both():
    x = ember.ones(3, device="cpu")
    y = ember.ones(3, device="cuda")
    with pytest.raises((ValueError, RuntimeError, TypeError)) as info:
        x + y
    msg = str(info.value)
    assert "cpu" in msg and "cuda" in msg


@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_repr_shows_non_cpu_device():
    x = ember.asarray([1.0, 2.0], dtype=ember.float32, device="cuda")
    r = repr(x)
    assert r.startswith("array([1., 2.], dtype=float32") and "cuda" in r


def test_repr_has_no_device_on_cpu():
    assert "device" not in repr(ember.zeros(2, device="cpu"))


def _run_python(code, **env):
    full_env = dict(os.environ)
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
        check=False,
    )


def test_import_without_gpu_and_ember_device_env():
    r = _run_python(
        "import ember; print(ember.cuda.is_available(), ember.get_default_device())",
        CUDA_VISIBLE_DEVICES="",
        EMBER_DEVICE="cpu",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "cpu"], r.stdout


def test_ember_device_env_rejects_garbage_without_crashing():
    r = _run_python("import ember; print(ember.get_default_device())", EMBER_DEVICE="tpu:7")
    assert r.returncode in (0, 1), r.stderr  # either ignored with a warning or a clean error
    assert "Segmentation" not in r.stderr and r.returncode >= 0


def test_cuda_api_without_gpu_raises_cleanly():
    if HAS_CUDA:
        pytest.skip("a GPU is present")
    assert ember.cuda.device_count() == 0
    reason = ember.cuda.unavailable_reason()
    assert reason and "\n" not in reason
    for call in (
        ember.cuda.synchronize,
        ember.cuda.current_device,
        ember.cuda.get_device_properties,
        ember.cuda.memory_stats,
        ember.cuda.memory_allocated,
        ember.cuda.empty_cache,
        ember.cuda.Stream,
        ember.cuda.Event,
        ember.cuda.current_stream,
        lambda: ember.cuda.set_device(0),
        lambda: ember.cuda.set_memory_limit(1 << 20),
        lambda: ember.ones(2, device="cpu").cuda(),
    ):
        with pytest.raises(ValueError, match="not available"):
            call()
    assert issubclass(ember.cuda.OutOfMemoryError, MemoryError)
    assert issubclass(ember.cuda.CudaError, RuntimeError)
    assert issubclass(ember.CompileError, RuntimeError)
    stats = ember.cuda.kernel_cache_stats()
    assert stats["compiles"] == 0 and stats["memory_hits"] == 0


def test_precompile_fills_the_disk_cache_without_a_gpu(tmp_path):
    # NVRTC is all precompilation needs: on a CI machine without a GPU it works given an arch.
    r = _run_python(
        "import json, ember; print(json.dumps(ember.cuda.precompile(arch=90, "
        "name_filter='ember_map_add_f32__f32_f32_f32_')))",
        EMBER_CACHE_DIR=str(tmp_path),
    )
    if r.returncode != 0 and "NVRTC" in r.stderr:
        pytest.skip(f"NVRTC is not available: {r.stderr.strip().splitlines()[-1]}")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["kernels"] == out["compiled"] == 5  # vectorized, scalar, strided 1-3 dims
    assert len(list(tmp_path.glob("*.cubin"))) == 5
    r = _run_python(
        "import sys, ember.__main__ as m; sys.exit(m.main(['cuda', 'precompile', '--arch', '90', "
        "'--filter', 'ember_map_add_f32__f32_f32_f32_']))",
        EMBER_CACHE_DIR=str(tmp_path),
    )
    assert r.returncode == 0 and "0 compiled, 5 already cached" in r.stdout, r.stdout + r.stderr
    with pytest.raises(ValueError):
        ember.cuda.precompile(arch=-1)


def test_host_data_goes_to_the_default_device():
    # DESIGN.md section 7: asarray(numpy array or list) lands on the default device; it shares
    # the host memory only when that device is the CPU.
    a = np.arange(4.0)
    with ember.device("cpu"):
        x = ember.asarray(a)
        assert x.device == ember.Device("cpu")
        a[0] = 7.0
        assert float(x[0]) == 7.0
    if ember.cuda.is_available():
        with ember.device("cuda"):
            y = ember.asarray([1.0, 2.0])
            assert y.device.type == "cuda"
            z = ember.asarray(a)
            assert z.device.type == "cuda"
            with pytest.raises(ValueError, match="copy=False"):
                ember.asarray(a, copy=False)
            # DLPack imports keep the producer's device.
            assert ember.from_dlpack(a).device == ember.Device("cpu")


def test_host_operands_stay_on_the_host_and_numpy_scalars_combine_everywhere(device):
    x = ember.ones(3, dtype=ember.float32, device=device)
    # a NumPy scalar (or 0-d array) is a strong scalar: works with arrays on any device
    for s in (np.float32(2), np.array(2, dtype=np.float32)):
        y = x * s
        assert y.device == x.device and y.dtype == ember.float32
        np.testing.assert_array_equal(ember.asnumpy(y), np.full(3, 2, np.float32))
    assert (x + np.float64(1)).dtype == ember.float64  # strong, as NumPy 2's 0-d arrays
    host = (np.ones(3, np.float32), [1.0, 2.0, 3.0])
    if device == "cpu":
        for h in host:
            assert (x + h).device == x.device
    else:
        for h in host:
            with pytest.raises(ValueError, match="different devices"):
                x + h


@pytest.mark.parametrize(
    "spec, want",
    [
        ("/GPU:0", "cuda:0"),
        ("GPU:1", "cuda:1"),
        ("gpu:2", "cuda:2"),
        ("/device:GPU:3", "cuda:3"),
        ("/physical_device:GPU:0", "cuda:0"),
        ("/job:localhost/replica:0/task:0/device:GPU:1", "cuda:1"),
        ("/CPU:0", "cpu"),
        ("cpu:0", "cpu"),
        ("/device:CPU:0", "cpu"),
    ],
)
def test_tensorflow_device_names(spec, want):
    # TensorFlow's spellings name ember's devices wherever a device is accepted
    assert str(ember.Device(spec)) == want
    if want == "cpu":
        assert ember.zeros(2, device=spec).device == ember.Device("cpu")


@pytest.mark.parametrize("spec", ["/CPU:1", "GPU:x", "/TPU:0", "cuda:12345", "", "gpux"])
def test_bad_device_names(spec):
    with pytest.raises(ValueError, match="ember.Device"):
        ember.Device(spec)
