"""ember.ndarray as a Dask chunk type: the registrations ``dask.array.backends`` makes for CuPy
(chunk type, the data-directed dispatch tables, ``sizeof``), made for ember.

Every registered function is an ember function, so a task on an ember chunk runs ember's kernels
on the chunk's device. The one table that cannot see its data is ``empty_lookup`` (Dask calls it
with a shape and a dtype for the small work arrays of ``percentile``): its arrays go to the
backend device (:func:`backend_device`)."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
from dask.array import dispatch as _d
from dask.array.backends import _nannumel, _numel_arraylike
from dask.array.percentile import _percentile
from dask.sizeof import sizeof
from dask.utils import Dispatch

import ember
from ember import ndarray

__all__ = ["backend_device", "to_ember_dispatch"]

# Moves a chunk of another array library to ember (``Array.to_backend("ember")``): the
# counterpart of dask.array.dispatch.to_cupy_dispatch.
to_ember_dispatch = Dispatch("to_ember_dispatch")


def backend_device():
    """The device the "ember" backend creates on: the Dask config value ``array.ember.device``
    when set (e.g. ``dask.config.set({"array.ember.device": "cuda"})``), else ember's default
    device of the calling thread."""
    dev = dask.config.get("array.ember.device", None)
    if dev is None:
        return ember.get_default_device()
    try:
        return ember.Device(str(dev))
    except Exception as e:
        raise ValueError(
            f"ember.dask: the Dask config value array.ember.device={dev!r} is not a device"
        ) from e


def _take(a, indices, axis=None):
    if not isinstance(indices, ndarray):  # Dask's host index array: uploaded as indices
        indices = ember.asarray(indices, device=a.device)
    return ember.take(a, indices, axis=axis)


def _empty(shape, dtype=None, **kwargs):
    if "device" not in kwargs:
        kwargs["device"] = backend_device()
    return ember.empty(shape, dtype=dtype if dtype is not None else "float64", **kwargs)


def _divide(x1, x2, out=None, dtype=None):
    r = ember.divide(x1, x2) if out is None else ember.divide(x1, x2, out=out)
    return r if dtype is None else r.astype(dtype)


def _to_numpy(data, **kwargs):
    """``Array.to_backend("numpy")``: an explicit copy of each chunk to the host."""
    host = ember.asnumpy(data)
    return np.asarray(host, **kwargs) if kwargs else host


def _numpy_to_ember(data, device=None, **kwargs):
    return ember.asarray(data, device=backend_device() if device is None else device, **kwargs)


def _ember_to_ember(data, device=None, **kwargs):
    if device is None and not kwargs:
        return data
    return ember.asarray(data, device=device, **kwargs)


def _register_cupy():
    import cupy

    @to_ember_dispatch.register(cupy.ndarray)
    def _cupy_to_ember(data, device=None, **kwargs):
        # zero copy through __cuda_array_interface__ / DLPack
        return ember.asarray(data, device=device, **kwargs)


def _array_collection_type(meta):
    from dask._dispatch import get_collection_type

    create = get_collection_type.dispatch(np.ndarray)(meta)
    if isinstance(create, type):  # dask-expr arrays: the Array class keeps the meta
        return create

    def create_ember_array(expr):
        # Dask's builder makes a da.Array from the dtype only (a NumPy meta): the same graph,
        # with the expression's ember meta
        arr = create(expr)
        if isinstance(arr, da.Array) and not isinstance(arr._meta, ndarray):
            meta = da.utils.meta_from_array(expr._meta, ndim=arr.ndim)
            arr = da.Array(arr.dask, arr.name, arr.chunks, meta=meta)
        return arr

    return create_ember_array


_registered = False


def register():
    """Registers ember.ndarray with dask.array (idempotent)."""
    global _registered
    if _registered:
        return
    from dask.array.chunk_types import is_valid_chunk_type

    if not is_valid_chunk_type(ndarray):
        da.register_chunk_type(ndarray)
    _d.concatenate_lookup.register(ndarray, ember.concatenate)
    _d.take_lookup.register(ndarray, _take)
    _d.tensordot_lookup.register(ndarray, ember.tensordot)
    _d.einsum_lookup.register(ndarray, ember.einsum)
    _d.empty_lookup.register(ndarray, _empty)
    _d.divide_lookup.register(ndarray, _divide)
    _d.percentile_lookup.register(ndarray, _percentile)
    _d.numel_lookup.register(ndarray, _numel_arraylike)
    _d.nannumel_lookup.register(ndarray, _nannumel)
    _d.to_numpy_dispatch.register(ndarray, _to_numpy)
    to_ember_dispatch.register(np.ndarray, _numpy_to_ember)
    to_ember_dispatch.register(ndarray, _ember_to_ember)
    to_ember_dispatch.register_lazy("cupy", _register_cupy)
    # Dask's memory accounting (spilling, scheduling) reads sizeof: the chunk's bytes
    sizeof.register(ndarray, lambda x: int(x.nbytes))
    # the collection of a dask-expr result whose meta is an ember array (``ddf.values``,
    # ``to_dask_array``) is a dask Array, as for NumPy (else dask-expr makes it a Scalar)
    try:
        from dask._dispatch import get_collection_type
    except ImportError:  # older Dask
        pass
    else:
        get_collection_type.register(ndarray, _array_collection_type)
    from . import _linalg

    _linalg.register()
    _registered = True
