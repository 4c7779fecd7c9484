"""Dask over ember arrays: ``import ember.dask`` registers ember with dask.array the way CuPy is
registered, and with dask.distributed when it is installed.

- chunk type: ``da.from_array(x, chunks=...)`` of an ember array keeps ember chunks and an ember
  ``_meta``; Dask's ufuncs, reductions, ``map_blocks``, ``rechunk``, slicing, ``concatenate``,
  ``tensordot``/``matmul``, ``einsum``, ``percentile``, ``linalg`` run ember's functions on the
  chunks' device (NumPy's protocols on ember.ndarray send Dask's ``np.*`` calls to ember);
- backend: ``dask.config.set({"array.backend": "ember"})`` makes ``da.ones``/``zeros``/
  ``empty``/``full``/``arange`` and ``da.random`` create ember chunks, on
  :func:`backend_device` (Dask config ``array.ember.device``, else ember's default device);
- distributed: "dask" and "cuda" serializer families for ember.ndarray (``_distributed``);
- tokens: ``ember.ndarray.__dask_tokenize__`` hashes the data in place, on its device;
- :class:`LocalCluster`: distributed's, with ember.dask preloaded on the workers and one worker
  process per visible GPU (``CUDA_VISIBLE_DEVICES`` per worker, as dask-cuda does), whose
  results spill from the GPU to host memory past ``device_memory_limit``
  (:class:`DeviceHostFile`, dask-cuda's model).

An installed ember also declares the backend as a ``dask.array.backends`` entry point, so
``array.backend = "ember"`` works before ``import ember.dask``. Worker processes register when
they import ember.dask: :class:`LocalCluster` preloads it; on another cluster start the workers
with ``--preload ember.dask`` (or the config ``distributed.worker.preload``)."""

from __future__ import annotations

import sys

from . import _dispatch, backend
from ._dispatch import backend_device, to_ember_dispatch
from .backend import EmberBackendEntrypoint

__all__ = [
    "DeviceHostFile",
    "EmberBackendEntrypoint",
    "EmberFrameBackendEntrypoint",
    "LocalCluster",
    "frame_device",
    "to_parquet",
    "backend_device",
    "register",
    "to_ember_dispatch",
]


def register():
    """Registers ember with dask.array (chunk type, dispatch, the "ember" backend) and, when
    distributed is installed, its serializers. Runs on ``import ember.dask``; idempotent."""
    _dispatch.register()
    backend.register()
    try:
        import dask.dataframe  # noqa: F401
    except ImportError:  # dask.dataframe needs pandas and pyarrow
        pass
    else:
        from . import frame_backend

        frame_backend.register()
    try:
        import distributed.protocol  # noqa: F401
    except ImportError:
        return
    from . import _distributed

    _distributed.register()
    if "dask.dataframe" in sys.modules:
        from . import _frame_serialize

        _frame_serialize.register()


register()


def __getattr__(name):
    if name in ("EmberFrameBackendEntrypoint", "to_parquet", "frame_device"):
        from . import frame_backend

        return getattr(frame_backend, name)
    if name == "DeviceHostFile":  # zict comes with distributed: imported when asked for
        from ._spill import DeviceHostFile

        return DeviceHostFile
    if name == "LocalCluster":  # distributed is optional: imported when asked for
        from ._cluster import LocalCluster

        return LocalCluster
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
