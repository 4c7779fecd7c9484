"""Printing, text and files (python/ember/_io.py) against NumPy on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import em, to_numpy

RNG = np.random.default_rng(23)


def test_printing(device):
    a = RNG.standard_normal((2, 3))
    x = em(a, device)
    assert ember.array2string(x, precision=2) == np.array2string(a, precision=2)
    assert ember.array_str(x) == np.array_str(a)
    assert ember.array_repr(x) == repr(x)
    with ember.printoptions(precision=1):
        assert ember.array_str(x) == np.array_str(a, precision=1)
    assert ember.get_printoptions()["precision"] == np.get_printoptions()["precision"]
    assert ember.binary_repr(5) == "101" and ember.base_repr(255, 16) == "FF"
    assert ember.format_float_positional(0.5) == "0.5"


@pytest.mark.parametrize("fn", ["savez", "savez_compressed"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "int64", "bool", "complex128"])
def test_savez_round_trip(fn, dtype, device, tmp_path):
    a = (RNG.standard_normal((3, 5)) * 3).astype(dtype)
    x = em(a, device)
    path = tmp_path / "a.npz"
    getattr(ember, fn)(path, x, x[:, ::2].T, ember.asarray(2.5, device=device), b=x[0], e=x[:0])
    with np.load(path, allow_pickle=False) as z:
        assert sorted(z.files) == ["arr_0", "arr_1", "arr_2", "b", "e"]
        np.testing.assert_array_equal(z["arr_0"], a)
        np.testing.assert_array_equal(z["arr_1"], a[:, ::2].T)
        assert z["arr_2"].shape == () and z["arr_2"] == 2.5
        np.testing.assert_array_equal(z["b"], a[0])
        assert z["e"].shape == (0, 5) and z["e"].dtype == a.dtype
    buf = __import__("io").BytesIO()
    getattr(ember, fn)(buf, [1, 2, 3])  # file objects and array-likes, as NumPy
    buf.seek(0)
    np.testing.assert_array_equal(np.load(buf)["arr_0"], [1, 2, 3])


def test_savez_refuses_objects(tmp_path):
    with pytest.raises(TypeError, match="unsupported NumPy dtype object"):
        ember.savez(tmp_path / "o.npz", np.array([{"a": 1}], dtype=object))


def test_text_and_files(device, tmp_path):
    a = RNG.standard_normal((3, 4))
    path = tmp_path / "a.txt"
    ember.savetxt(path, em(a, device))
    x = ember.loadtxt(path, device=device)
    assert x.device == ember.Device(device)
    np.testing.assert_allclose(to_numpy(x), a, rtol=1e-15)
    np.testing.assert_allclose(to_numpy(ember.genfromtxt(path, device=device)), a, rtol=1e-15)
    b = np.arange(6, dtype=np.int32)
    b.tofile(tmp_path / "b.bin")
    np.testing.assert_array_equal(
        to_numpy(ember.fromfile(tmp_path / "b.bin", dtype=np.int32, device=device)), b
    )
    np.testing.assert_array_equal(
        to_numpy(ember.frombuffer(b.tobytes(), dtype=np.int32, device=device)), b
    )
    np.testing.assert_array_equal(
        to_numpy(ember.fromiter(range(5), dtype=np.int64, device=device)), np.arange(5)
    )
    np.testing.assert_array_equal(
        to_numpy(ember.fromstring("1 2 3", dtype=np.int64, sep=" ", device=device)), [1, 2, 3]
    )
