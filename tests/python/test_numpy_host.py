"""The host-side NumPy functions (printing, text and files, scalars) and packbits/unpackbits,
apply_over_axes, histogramdd and einsum_path against NumPy on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_numpy

RNG = np.random.default_rng(23)


def em(a, device):
    return ember.asarray(np.asarray(a), device=device)


def test_printing_and_scalars(device):
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
    assert ember.typename("f") == np.typename("f")
    assert ember.mintypecode(["d", "f"]) == "d"


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


@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits(device, bitorder):
    a = RNG.integers(0, 2, (3, 13)).astype(bool)
    for axis in [None, 0, 1]:
        got = ember.packbits(em(a, device), axis=axis, bitorder=bitorder)
        want = np.packbits(a, axis=axis, bitorder=bitorder)
        np.testing.assert_array_equal(to_numpy(got), want)
        assert to_numpy(got).dtype == np.uint8
        for count in [None, 5, -3, 30]:
            if axis is None and count == 30:
                continue
            np.testing.assert_array_equal(
                to_numpy(ember.unpackbits(got, axis=axis, count=count, bitorder=bitorder)),
                np.unpackbits(want, axis=axis, count=count, bitorder=bitorder),
            )
    with pytest.raises(TypeError, match="ember.unpackbits: expected a uint8"):
        ember.unpackbits(em([1, 2], device))


def test_apply_over_axes_histogramdd_einsum_path(device):
    a = RNG.standard_normal((2, 3, 4))
    x = em(a, device)
    np.testing.assert_allclose(
        to_numpy(ember.apply_over_axes(ember.sum, x, [0, 2])), np.apply_over_axes(np.sum, a, [0, 2])
    )
    pts = RNG.standard_normal((100, 3))
    h, edges = ember.histogramdd(em(pts, device), bins=(3, 4, 2))
    wh, wedges = np.histogramdd(pts, bins=(3, 4, 2))
    np.testing.assert_allclose(to_numpy(h), wh)
    for e, we in zip(edges, wedges, strict=True):
        np.testing.assert_allclose(to_numpy(e), we)
    hd, _ = ember.histogramdd(em(pts, device), bins=3, density=True)
    np.testing.assert_allclose(to_numpy(hd), np.histogramdd(pts, bins=3, density=True)[0])
    m1, m2, m3 = (RNG.standard_normal(s) for s in [(8, 2), (2, 9), (9, 3)])
    got = ember.einsum_path("ij,jk,kl->il", em(m1, device), em(m2, device), em(m3, device))
    assert got == np.einsum_path("ij,jk,kl->il", m1, m2, m3)


def test_show_config_and_runtime(capsys):
    d = ember.show_config(mode="dicts")
    assert d["ember"]["version"] == ember.__version__
    assert d["CPU"]["threads"] >= 1
    assert d["CPU"]["blas"] != "none" and d["CPU"]["lapack"]
    assert d["CUDA"]["available"] == ember.cuda.is_available()
    if not ember.cuda.is_available():
        assert d["CUDA"]["unavailable_reason"]
    assert ember.show_config() is None
    out = capsys.readouterr().out
    assert "CPU:" in out and f"  blas: {d['CPU']['blas']}" in out and "CUDA:" in out
    ember.show_runtime()
    out = capsys.readouterr().out
    assert f"  threads: {d['CPU']['threads']}" in out
    if ember.cuda.is_available():
        assert "cuda:0" in out and ember.cuda.get_device_name(0) in out
    else:
        assert "unavailable:" in out
    with pytest.raises(ValueError, match="ember.show_config: mode must be"):
        ember.show_config(mode="json")
