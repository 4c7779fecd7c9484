"""The "ember" Dask array backend: ``dask.config.set({"array.backend": "ember"})`` makes
``da.ones``, ``da.zeros``, ``da.empty``, ``da.full``, ``da.arange`` and ``da.random`` create
ember chunks, as the "cupy" backend (dask.array.cupy_entry_point) does for CuPy.

The creation functions are Dask's own, given an ember ``meta`` (an empty array on the backend
device): Dask then makes every chunk with the NumPy function of the meta's type
(``np.ones_like(meta, shape=...)``), which ``__array_function__`` sends to ember on the meta's
device. Each also takes ``device=`` (default: :func:`ember.dask.backend_device`). The random
generators are ember's (``ember.dask._random``)."""

from __future__ import annotations

import dask.array as da
from dask import config
from dask.array.backends import ArrayBackendEntrypoint, array_creation_dispatch
from dask.array.core import Array

import ember

from . import _dispatch, _random
from ._dispatch import backend_device, to_ember_dispatch

__all__ = ["EmberBackendEntrypoint"]


def _device(device):
    return backend_device() if device is None else ember.Device(str(device))


def _with_ember_meta(attr, *args, meta=None, device=None, **kwargs):
    # Dask's own creation function (the numpy backend's), with an ember meta
    if meta is None:
        meta = ember.empty((), device=_device(device))
    with config.set({"array.backend": "numpy"}):
        return getattr(da, attr)(*args, meta=meta, **kwargs)


class EmberBackendEntrypoint(ArrayBackendEntrypoint):
    """The Dask array backend entrypoint for ember (registered as "ember")."""

    def __init__(self):
        _dispatch.register()

    @classmethod
    def to_backend_dispatch(cls):
        return to_ember_dispatch

    @classmethod
    def to_backend(cls, data: Array, **kwargs):
        """``data`` with ember chunks (``device=`` picks their device; ember chunks elsewhere
        are moved there)."""
        if isinstance(data._meta, ember.ndarray):
            dev = kwargs.get("device")
            if dev is None or ember.Device(str(dev)) == data._meta.device:
                return data
        return data.map_blocks(cls.to_backend_dispatch(), **kwargs)

    @property
    def RandomState(self):
        return _random.generator_class(backend_device(), legacy=True)

    @property
    def default_bit_generator(self):
        return _random.generator_class(backend_device())

    @staticmethod
    def ones(*args, **kwargs):
        return _with_ember_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args, **kwargs):
        return _with_ember_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args, **kwargs):
        return _with_ember_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args, **kwargs):
        return _with_ember_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args, like=None, device=None, **kwargs):
        if like is None:
            like = ember.empty((), device=_device(device))
        with config.set({"array.backend": "numpy"}):
            return da.arange(*args, like=like, **kwargs)


def register():
    """Registers the "ember" backend with dask.array (what the ``dask.array.backends`` entry
    point does for an installed ember; idempotent)."""
    global _registered
    if not _registered:
        array_creation_dispatch.register_backend("ember", EmberBackendEntrypoint())
        _registered = True


_registered = False
