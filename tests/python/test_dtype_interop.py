"""ember dtypes handed to NumPy (np.dtype, dtype= arguments, pandas), their NumPy attributes,
NumPy's other names of the dtypes, and pickling/copying dtypes and devices."""

from __future__ import annotations

import copy
import pickle

import ember
import ml_dtypes
import numpy as np
import pytest
from _helpers import ALL_DTYPES, np_dtype


def numpy_of(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np_dtype(name)


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_numpy_reads_ember_dtypes(device, name):
    x = ember.zeros(2, dtype=getattr(ember, name), device=device)
    want = numpy_of(name)
    assert np.dtype(x.dtype) == want
    assert np.dtype(getattr(ember, name)) == want
    assert np.zeros(3, dtype=x.dtype).dtype == want
    assert np.asarray([1, 0], dtype=x.dtype).dtype == want
    assert np.empty((2, 2), x.dtype).dtype == want
    assert np.array([1], dtype=x.dtype).astype(x.dtype).dtype == want


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_numpy_attributes(name):
    d, want = getattr(ember, name), numpy_of(name)
    assert d.dtype == want
    assert d.type is want.type
    for attr in ("char", "str", "byteorder", "itemsize", "name", "num", "alignment", "descr"):
        assert getattr(d, attr) == getattr(want, attr), attr
    assert d.kind == ("f" if name == "bfloat16" else want.kind)
    assert d.isnative and not d.hasobject
    assert d.shape == () and d.ndim == 0 and d.base == d
    assert d.names is None and d.fields is None and d.subdtype is None


def test_scalar_type_makes_numpy_scalars():
    assert ember.float32.type(1.5) == np.float32(1.5)
    assert type(ember.int8.type(3)) is np.int8
    assert ember.bool.type is np.bool_


def test_pandas_accepts_ember_dtypes():
    pd = pytest.importorskip("pandas")
    s = pd.Series([1, 2], dtype=ember.asarray([1.0], dtype=ember.float32).dtype)
    assert s.dtype == np.float32
    assert pd.Series([1, 2], dtype=ember.int16).dtype == np.int16


def test_numpy_names_of_the_dtypes():
    want = {
        "bool_": np.bool_,
        "byte": np.byte,
        "ubyte": np.ubyte,
        "short": np.short,
        "ushort": np.ushort,
        "intc": np.intc,
        "uintc": np.uintc,
        "long": np.long,
        "ulong": np.ulong,
        "longlong": np.longlong,
        "ulonglong": np.ulonglong,
        "intp": np.intp,
        "uintp": np.uintp,
        "half": np.half,
        "single": np.single,
        "double": np.double,
        "csingle": np.csingle,
        "cdouble": np.cdouble,
    }
    for name, t in want.items():
        d = getattr(ember, name)
        assert isinstance(d, ember.dtype), name
        assert np.dtype(d) == np.dtype(t), name
        assert name in ember.__all__
    assert ember.double is ember.float64 and ember.bool_ is ember.bool
    assert ember.zeros(2, dtype=ember.intp).dtype == ember.int64
    assert not hasattr(ember, "float_")  # gone in NumPy 2, as there


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_dtypes_pickle_and_copy(name):
    d = getattr(ember, name)
    for got in (
        pickle.loads(pickle.dumps(d)),
        pickle.loads(pickle.dumps(d, protocol=2)),
        copy.copy(d),
        copy.deepcopy(d),
    ):
        assert isinstance(got, ember.dtype)
        assert got == d and got.name == d.name


@pytest.mark.parametrize("spec", ["cpu", "cuda", "cuda:1"])
def test_devices_pickle_and_copy(spec):
    d = ember.Device(spec)
    for got in (pickle.loads(pickle.dumps(d)), copy.copy(d), copy.deepcopy(d)):
        assert isinstance(got, ember.Device)
        assert got == d and str(got) == str(d)


def test_dtype_helpers_still_take_ember_dtypes():
    # ember dtypes now have a .dtype (NumPy's): the helpers must not read it as an array's
    assert ember.can_cast(ember.bfloat16, ember.float32)
    assert not ember.can_cast(ember.float32, ember.bfloat16)
    assert ember.can_cast(ember.float32, ember.bfloat16, casting="same_kind")
    assert ember.issubdtype(ember.bfloat16, np.floating)
    assert ember.issubdtype(ember.float32, ember.float32)
    assert ember.isdtype(ember.bfloat16, "real floating")
