"""NumPy's file I/O under NumPy's names: ember.save/load of .npy, savez/savez_compressed and load
of .npz (an NpzFile mapping), np.save on ember arrays, files exchanged with NumPy both ways,
allow_pickle as NumPy; the dispatch rule of ember.save (file first: .npy; object first:
safetensors) and ember.load's format detection."""

from __future__ import annotations

import io
import pickle

import ember
import ml_dtypes
import numpy as np
import pytest
from _helpers import ALL_DTYPES, np_dtype, to_ember, to_numpy


def sample(dtype, shape=(3, 4)):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 5
    if dtype == "bool":
        return a > 0
    if dtype == "bfloat16":
        return a.astype(ml_dtypes.bfloat16)
    return a.astype(np_dtype(dtype))


def same(got, want, device):
    assert isinstance(got, ember.ndarray)
    assert got.device == ember.Device(device)
    w = np.asarray(want)
    g = to_numpy(got)
    assert g.shape == w.shape and g.dtype == w.dtype
    np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_npy_round_trip_and_numpy_reads_it(device, tmp_path, dtype):
    a = sample(dtype)
    p = tmp_path / "a.npy"
    ember.save(p, to_ember(a, device))
    same(ember.load(p, device=device), a, device)
    if dtype != "bfloat16":  # NumPy stores ml_dtypes' bfloat16 as raw 2-byte items
        np.testing.assert_array_equal(np.load(p), a)
        assert np.load(p).dtype == a.dtype


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (7,)])
def test_npy_shapes_and_views(device, tmp_path, shape):
    a = sample("float32", shape)
    p = tmp_path / "s.npy"
    ember.save(str(p), to_ember(a, device))
    same(ember.load(str(p), device=device), a, device)
    x = ember.arange(20, device=device).reshape(4, 5)[::2, ::-2]
    ember.save(p, x)
    np.testing.assert_array_equal(np.load(p), to_numpy(x))


def test_npy_name_gets_the_suffix_as_numpy(tmp_path):
    ember.save(str(tmp_path / "noext"), ember.arange(3))
    assert (tmp_path / "noext.npy").exists()
    np.testing.assert_array_equal(ember.load(tmp_path / "noext.npy", device="cpu"), [0, 1, 2])


def test_numpy_save_on_an_ember_array_writes_npy(tmp_path):
    p = tmp_path / "np.npy"
    np.save(p, ember.arange(5, dtype=ember.int16, device="cpu"))
    got = np.load(p)
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got, np.arange(5))


def test_numpy_files_load_into_ember(device, tmp_path):
    a = np.linspace(0, 1, 12).reshape(3, 4)
    np.save(tmp_path / "n.npy", a)
    same(ember.load(tmp_path / "n.npy", device=device), a, device)
    np.save(tmp_path / "f.npy", np.asfortranarray(a))
    same(ember.load(tmp_path / "f.npy", device=device), a, device)
    np.save(tmp_path / "b.npy", a.astype(">f8"))  # big-endian
    same(ember.load(tmp_path / "b.npy", device=device), a, device)


def test_file_objects(device):
    buf = io.BytesIO()
    ember.save(buf, ember.arange(4, device=device))
    buf.seek(0)
    same(ember.load(buf, device=device), np.arange(4), device)
    buf = io.BytesIO()
    np.savez(buf, x=np.ones(2))
    buf.seek(0)
    with ember.load(buf, device=device) as z:
        same(z["x"], np.ones(2), device)


@pytest.mark.parametrize("fn", ["savez", "savez_compressed"])
def test_npz_round_trip(device, tmp_path, fn):
    p = tmp_path / "z.npz"
    a, b = sample("float64"), sample("int8", (5,))
    getattr(ember, fn)(p, to_ember(a, device), named=to_ember(b, device))
    with ember.load(p, device=device) as z:
        assert isinstance(z, ember.NpzFile)
        assert z.files == ["named", "arr_0"]  # NumPy's order: keywords first
        assert list(z) == z.files and len(z) == 2
        assert "named" in z and "nope" not in z
        same(z["arr_0"], a, device)
        same(z.f.named, b, device)
        with pytest.raises(KeyError):
            z["nope"]
    with np.load(p) as z:  # NumPy reads ember's archives
        np.testing.assert_array_equal(z["named"], b)


def test_numpy_npz_loads_into_ember(device, tmp_path):
    p = tmp_path / "n.npz"
    np.savez_compressed(p, w=np.eye(3), m=np.array([True, False]))
    z = ember.load(p, device=device)
    same(z["w"], np.eye(3), device)
    same(z["m"], np.array([True, False]), device)
    assert dict(z).keys() == {"w", "m"}
    z.close()


def test_allow_pickle_as_numpy(tmp_path):
    p = tmp_path / "o.npy"
    np.save(p, np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="allow_pickle"):
        ember.load(p)
    got = ember.load(p, allow_pickle=True)  # object arrays stay NumPy's
    assert isinstance(got, np.ndarray) and got[0] == {"a": 1}
    pk = tmp_path / "x.pkl"
    pk.write_bytes(pickle.dumps({"x": ember.arange(3, device="cpu")}))
    with pytest.raises(ValueError, match="allow_pickle"):
        ember.load(pk)
    got = ember.load(pk, allow_pickle=True)
    np.testing.assert_array_equal(to_numpy(got["x"]), [0, 1, 2])
    with pytest.raises(ValueError):
        ember.save(tmp_path / "p.npy", np.array([object()]), allow_pickle=False)


def test_save_dispatch_rule(tmp_path):
    w = ember.ones((2, 2), device="cpu")
    # object first: safetensors (ember's state dicts, PyTorch's argument order)
    ember.save({"w": w}, tmp_path / "m.safetensors")
    assert (tmp_path / "m.safetensors").read_bytes()[8:9] == b"{"
    got = ember.load(tmp_path / "m.safetensors", device="cpu")
    np.testing.assert_array_equal(to_numpy(got["w"]), np.ones((2, 2)))
    ember.save(w, tmp_path / "w.st")  # a bare array, object first: safetensors too
    np.testing.assert_array_equal(to_numpy(ember.load(tmp_path / "w.st", device="cpu")), 1)
    # file first: NumPy's .npy
    ember.save(tmp_path / "w.npy", w)
    assert (tmp_path / "w.npy").read_bytes()[:6] == b"\x93NUMPY"
    with pytest.raises(TypeError, match="ember.save: cannot tell"):
        ember.save("a.npy", "b.npy")
    with pytest.raises(TypeError, match="ember.save: cannot tell"):
        ember.save(w, w)
    with pytest.raises(TypeError, match="metadata"):
        ember.save(tmp_path / "x.npy", w, metadata={"k": "v"})


def test_explicit_safetensors_entry_points(device, tmp_path):
    p = tmp_path / "e.safetensors"
    ember.save_safetensors({"a": {"b": ember.arange(3, device=device)}}, p, metadata={"k": "v"})
    got = ember.load_safetensors(p, device=device)
    same(got["a"]["b"], np.arange(3), device)
    same(ember.load(p, device=device)["a"]["b"], np.arange(3), device)
    with pytest.raises(TypeError, match="ember.save_safetensors: obj must be"):
        ember.save_safetensors(1, p)


def test_npzfile_wraps_only_numpys():
    with pytest.raises(TypeError, match="ember.NpzFile"):
        ember.NpzFile([1, 2])


def test_load_names_unknown_files(tmp_path):
    p = tmp_path / "junk.bin"
    p.write_bytes(b"hello world, not an array file")
    with pytest.raises(ValueError, match="ember.load: .*junk.bin"):
        ember.load(p)
    with pytest.raises(TypeError, match="ember.load: file must be"):
        ember.load(12)
