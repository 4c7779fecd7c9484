"""NumPy's __array_ufunc__ / __array_function__ on ember arrays, the Array API inspection
namespace, broadcast_shapes, and the fill / view / get / set methods, on both devices; and the
namespace checked against the Array API's list of names (from array-api-strict, when
installed)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import em, to_numpy

RNG = np.random.default_rng(5)


def test_ufuncs_run_in_ember_and_stay_on_the_device(device):
    a = RNG.standard_normal((3, 4))
    x = em(a, device)
    for fn in [np.sin, np.exp, np.abs, np.negative, np.isnan]:
        r = fn(x)
        assert isinstance(r, ember.ndarray) and r.device == x.device
        np.testing.assert_allclose(to_numpy(r), fn(a), rtol=1e-12)
    r = np.add(x, x)
    np.testing.assert_allclose(to_numpy(r), a + a)
    r = np.arctan2(x, 2.0)
    np.testing.assert_allclose(to_numpy(r), np.arctan2(a, 2.0), rtol=1e-12)
    r = np.add(x, 1, dtype=np.float32)
    assert r.dtype == ember.float32


def test_ufunc_out_where_and_reduce(device):
    a = RNG.standard_normal((3, 4))
    x = em(a, device)
    out = ember.zeros((3, 4), device=device)
    r = np.multiply(x, 2.0, out=out)
    assert r is out
    np.testing.assert_allclose(to_numpy(out), a * 2)
    out = ember.zeros((3, 4), device=device)
    np.sqrt(ember.abs(x), out=out, where=em(a > 0, device))
    np.testing.assert_allclose(to_numpy(out), np.where(a > 0, np.sqrt(np.abs(a)), 0))
    np.testing.assert_allclose(to_numpy(np.add.reduce(x)), a.sum(axis=0))
    np.testing.assert_allclose(to_numpy(np.maximum.reduce(x, axis=1)), a.max(axis=1))
    np.testing.assert_allclose(
        to_numpy(np.multiply.reduce(x, axis=None, keepdims=True)),
        np.multiply.reduce(a, axis=None, keepdims=True),
    )


def test_unsupported_ufunc_uses_raise_type_error_naming_them(device):
    x = ember.ones(3, device=device)
    with pytest.raises(TypeError, match="numpy.add.outer"):
        np.add.outer(x, x)
    with pytest.raises(TypeError, match="numpy.isnat"):  # the one NumPy ufunc ember lacks
        np.isnat(x)
    with pytest.raises(TypeError, match="numpy.sin with where= but no out="):
        np.sin(x, where=True & np.array([True, False, True]))


def test_array_functions_dispatch(device):
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    x, y = em(a, device), em(b, device)
    r = np.concatenate([x, y])
    assert isinstance(r, ember.ndarray) and r.device == x.device
    np.testing.assert_allclose(to_numpy(r), np.concatenate([a, b]))
    np.testing.assert_allclose(to_numpy(np.sum(x, axis=1)), a.sum(axis=1))
    np.testing.assert_allclose(to_numpy(np.mean(x)), a.mean())
    np.testing.assert_allclose(to_numpy(np.transpose(x)), a.T)
    np.testing.assert_allclose(to_numpy(np.where(x > 0, x, y)), np.where(a > 0, a, b))
    m = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    np.testing.assert_allclose(to_numpy(np.linalg.inv(em(m, device))), np.linalg.inv(m))
    np.testing.assert_allclose(
        to_numpy(np.fft.fft(em(a, device))), np.fft.fft(a), rtol=1e-10, atol=1e-12
    )


def test_missing_array_function_raises_naming_it(device):
    x = ember.ones(3, device=device)
    assert not hasattr(ember, "datetime_as_string")  # ember has no datetimes
    with pytest.raises(TypeError, match="numpy.datetime_as_string is not supported on ember"):
        np.datetime_as_string(x)
    with pytest.raises(TypeError, match="numpy.fft.hfft2|numpy.fft._pocketfft.hfft2|is not"):
        if hasattr(np.fft, "hfft2"):
            np.fft.hfft2(x)
        else:
            raise TypeError("numpy.fft.hfft2 is not there")


def test_asarray_still_refuses_a_hidden_copy(device):
    if device == "cpu":
        return
    with pytest.raises(TypeError, match="asnumpy"):
        np.asarray(ember.ones(3, device=device))


def test_namespace_info(device):
    info = ember.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] is True and caps["data-dependent shapes"] is True
    assert caps["max dimensions"] == 64
    assert info.default_device() == ember.get_default_device()
    devices = info.devices()
    assert ember.Device("cpu") in devices and ember.Device(device) in devices
    d = info.default_dtypes(device=ember.Device(device))
    assert d == {
        "real floating": ember.float64,
        "complex floating": ember.complex128,
        "integral": ember.int64,
        "indexing": ember.int64,
    }
    assert ember.ones(2, device=device).dtype == d["real floating"]
    assert ember.arange(2, device=device).dtype == d["integral"]
    all_ = info.dtypes()
    assert set(all_) == {
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float32", "float64", "complex64", "complex128",
    }  # fmt: skip
    assert info.dtypes(kind="bool") == {"bool": ember.bool}
    assert set(info.dtypes(kind=("real floating", "complex floating"))) == {
        "float32", "float64", "complex64", "complex128",
    }  # fmt: skip
    assert set(info.dtypes(kind="integral")) == set(info.dtypes(kind="signed integer")) | set(
        info.dtypes(kind="unsigned integer")
    )
    with pytest.raises(ValueError, match="unknown kind 'floats'"):
        info.dtypes(kind="floats")
    with pytest.raises(ValueError, match="not a device"):
        info.dtypes(device="tpu")


def test_broadcast_shapes():
    assert ember.broadcast_shapes((2, 1), (3,), ()) == np.broadcast_shapes((2, 1), (3,), ())
    assert ember.broadcast_shapes() == ()
    assert ember.broadcast_shapes((0, 1), (1, 5)) == (0, 5)
    with pytest.raises(ValueError, match="ember.broadcast_shapes"):
        ember.broadcast_shapes((2,), (3,))


def test_fill_get_set(device):
    x = ember.zeros((2, 3), dtype=ember.int32, device=device)
    x.fill(7)
    np.testing.assert_array_equal(x.get(), np.full((2, 3), 7, np.int32))
    a = RNG.integers(0, 9, (2, 3)).astype(np.int64)
    x.set(a)
    got = x.get()
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, a)
    out = np.empty((2, 3), np.int32)
    assert x.get(out=out) is out
    with pytest.raises(ValueError, match="ember.ndarray.set: the array has shape"):
        x.set(np.zeros(3))
    x[:, 1].fill(-1)
    assert x.get()[:, 1].tolist() == [-1, -1]


def test_view_dtype(device):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    x = em(a, device)
    np.testing.assert_array_equal(to_numpy(x.view(ember.uint32)), a.view(np.uint32))
    np.testing.assert_array_equal(to_numpy(x.view(ember.uint8)), a.view(np.uint8))
    np.testing.assert_array_equal(to_numpy(x.view(ember.float64)), a.view(np.float64))
    np.testing.assert_array_equal(to_numpy(x.view(ember.complex64)), a.view(np.complex64))
    np.testing.assert_array_equal(to_numpy(x[1:, 2:].view(ember.int16)), a[1:, 2:].view(np.int16))
    v = x.view()
    v[0, 0] = 5  # shares the data
    assert to_numpy(x)[0, 0] == 5
    with pytest.raises(ValueError, match="the last axis is not contiguous"):
        x.T.view(ember.float64)
    with pytest.raises(ValueError, match="not a multiple of 8"):
        x[:, :3].view(ember.float64)
    with pytest.raises(ValueError, match="0-d"):
        em(np.float32(1), device).view(ember.float64)


def _strict():
    return pytest.importorskip("array_api_strict")


def test_namespace_has_every_array_api_name():
    xp = _strict()
    xp.set_array_api_strict_flags(api_version="2024.12")
    own = {"ArrayAPIStrictFlags"}  # array-api-strict's own flag functions are not the standard's
    names = [n for n in xp.__all__ if n not in own and "array_api_strict" not in n]
    missing = [n for n in names if not hasattr(ember, n)]
    assert not missing, f"ember lacks these Array API names: {missing}"
    for ext in ("linalg", "fft"):
        theirs = getattr(xp, ext).__all__
        lacks = [n for n in theirs if not hasattr(getattr(ember, ext), n)]
        assert not lacks, f"ember.{ext} lacks: {lacks}"
    assert ember.__array_api_version__ == "2024.12"


def _param_names(fn):
    """Parameter names of a Python function or a nanobind function (from its signature)."""
    import inspect
    import re

    sigs = getattr(fn, "__nb_signature__", None)
    if sigs:
        names = set()
        for text, *_ in sigs:
            inner = text[text.index("(") + 1 : text.rindex(")")]
            names |= set(re.findall(r"(?:^|, )\*{0,2}(\w+)(?=:|,|$| =)", inner))
        return names, any("**" in text for text, *_ in sigs)
    params = inspect.signature(fn).parameters.values()
    return {p.name for p in params}, any(p.kind == p.VAR_KEYWORD for p in params)


def test_functions_take_the_array_api_keywords():
    import inspect

    xp = _strict()
    xp.set_array_api_strict_flags(api_version="2024.12")
    wrong = []
    for ours, theirs in [(ember, xp), (ember.linalg, xp.linalg), (ember.fft, xp.fft)]:
        for name in theirs.__all__:
            ref = getattr(theirs, name)
            if not inspect.isfunction(ref) or name.startswith("__") or "strict" in name:
                continue
            keywords = {
                p.name
                for p in inspect.signature(ref).parameters.values()
                if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
            }
            have, var_kw = _param_names(getattr(ours, name))
            missing = sorted(keywords - have) if not var_kw else []
            if missing:
                wrong.append(f"{theirs.__name__.split('.')[-1]}.{name}: {missing}")
    assert not wrong, "functions lacking the standard's keyword parameters: " + "; ".join(wrong)
