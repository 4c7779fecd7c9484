"""The "ember" Dask DataFrame backend: ``dask.config.set({"dataframe.backend": "ember"})`` makes
``dd.from_dict``, ``dd.read_parquet``, ``dd.read_csv`` and ``dd.read_json`` produce
ember.frame partitions, and ``ddf.to_backend("ember")`` moves a collection's partitions to
ember.frame, as dask_cudf's backend entrypoint does for cuDF.

Partitions go to :func:`frame_device` (Dask config ``dataframe.ember.device``, else ember's
default device); ``device=`` on each function overrides it. File readers parse on the host
(Dask's pandas readers with pyarrow, with all their options: many files, ``columns``,
``filters``, ``index``, divisions from statistics) and every partition is copied to the device
once, inside the same task. :func:`to_parquet` writes through pyarrow: each partition is copied
to the host explicitly (a file is host bytes)."""

from __future__ import annotations

import pandas as pd
from dask import config
from dask.dataframe.backends import DataFrameBackendEntrypoint
from dask.dataframe.dask_expr._expr import ToBackend
from dask.dataframe.dispatch import to_pandas_dispatch
from dask.utils import Dispatch

from . import _frame_dispatch
from ._frame_dispatch import frame_device

__all__ = ["EmberFrameBackendEntrypoint", "to_ember_frame_dispatch", "to_parquet"]

# Moves a partition of another dataframe library to ember.frame (``to_backend("ember")``).
to_ember_frame_dispatch = Dispatch("to_ember_frame_dispatch")


def _pandas_to_ember(data, device=None, **kwargs):
    import ember.frame as ef

    return ef.from_pandas(data, device=frame_device() if device is None else str(device))


def _ember_to_ember(data, device=None, **kwargs):
    if device is None or str(device) == data.device:
        return data
    return data.to(str(device))


def _ember_to_pandas(data, nullable=False, **kwargs):
    """``to_backend("pandas")``: an explicit copy of the partition to the host."""
    import ember.frame as ef

    if isinstance(data, ef.Index):
        return data.to_pandas()
    return data.to_pandas(nullable=nullable)


class ToEmberBackend(ToBackend):
    """The expression ``to_backend("ember")`` adds: each partition through
    :data:`to_ember_frame_dispatch`."""

    @staticmethod
    def operation(df, options):
        return to_ember_frame_dispatch(df, **options)

    def _simplify_down(self):
        import ember.frame as ef

        meta = self.frame._meta
        if isinstance(meta, (ef.DataFrame, ef.Series, ef.Index)):
            dev = self.options.get("device")
            if dev is None or str(dev) == meta.device:
                return self.frame


def _pandas_backend(func, *args, device=None, **kwargs):
    """Dask's pandas implementation of ``func``, its partitions moved to ember.frame."""
    import dask.dataframe as dd

    with config.set({"dataframe.backend": "pandas"}):
        out = getattr(dd, func)(*args, **kwargs)
    return EmberFrameBackendEntrypoint.to_backend(out, device=device)


class EmberFrameBackendEntrypoint(DataFrameBackendEntrypoint):
    """The Dask DataFrame backend entrypoint for ember.frame (registered as "ember")."""

    def __init__(self):
        _frame_dispatch.register()
        _register_conversions()

    @classmethod
    def to_backend_dispatch(cls):
        return to_ember_frame_dispatch

    @classmethod
    def to_backend(cls, data, **kwargs):
        """``data`` with ember.frame partitions (``device=`` picks their device)."""
        from dask.dataframe.dask_expr._collection import new_collection

        import ember.frame as ef

        _frame_dispatch.register()
        _register_conversions()
        if kwargs.get("device") is None:
            if isinstance(data._meta, (ef.DataFrame, ef.Series, ef.Index)):
                return data  # already ember.frame partitions, and no device asked for
            # the device is fixed when the graph is built, not when a worker runs it
            kwargs["device"] = frame_device()
        return new_collection(ToEmberBackend(data, kwargs))

    @staticmethod
    def from_dict(
        data,
        npartitions,
        orient="columns",
        dtype=None,
        columns=None,
        constructor=None,
        device=None,
    ):
        """``dd.from_dict`` with ember.frame partitions: the frame is built on the device, then
        split into ``npartitions`` by ``dd.from_pandas``."""
        import dask.dataframe as dd

        import ember.frame as ef

        if constructor not in (None, ef.DataFrame):
            raise TypeError(
                "ember.dask from_dict: the ember backend builds ember.frame.DataFrame "
                f"partitions, not constructor={constructor!r}"
            )
        if orient != "columns":
            pdf = pd.DataFrame.from_dict(data, orient=orient, dtype=dtype, columns=columns)
            df = ef.from_pandas(pdf, device=device or frame_device())
        else:
            df = ef.DataFrame(data, columns=columns, dtype=dtype, device=device or frame_device())
        with config.set({"dataframe.backend": "pandas"}):
            return dd.from_pandas(df, npartitions=npartitions)

    @staticmethod
    def read_parquet(*args, device=None, **kwargs):
        return _pandas_backend("read_parquet", *args, device=device, **kwargs)

    @staticmethod
    def read_csv(*args, device=None, **kwargs):
        return _pandas_backend("read_csv", *args, device=device, **kwargs)

    @staticmethod
    def read_json(*args, device=None, **kwargs):
        return _pandas_backend("read_json", *args, device=device, **kwargs)

    @staticmethod
    def read_orc(*args, device=None, **kwargs):
        return _pandas_backend("read_orc", *args, device=device, **kwargs)

    @staticmethod
    def read_hdf(*args, device=None, **kwargs):
        return _pandas_backend("read_hdf", *args, device=device, **kwargs)


def to_parquet(df, path, **kwargs):
    """``df.to_parquet(path, **kwargs)`` for a collection of ember.frame partitions: Dask's
    pyarrow writer, each partition copied to the host explicitly first (Dask picks its parquet
    engine by the partition type's module name, which only knows pandas and cuDF)."""
    return df.to_backend("pandas").to_parquet(path, **kwargs)


_conversions = False


def _register_conversions():
    global _conversions
    if _conversions:
        return
    import ember.frame as ef

    types = (ef.DataFrame, ef.Series, ef.Index)
    to_ember_frame_dispatch.register((pd.DataFrame, pd.Series, pd.Index), _pandas_to_ember)
    to_ember_frame_dispatch.register(types, _ember_to_ember)
    to_pandas_dispatch.register(types, _ember_to_pandas)
    _conversions = True


def register():
    """Registers the "ember" backend with dask.dataframe (what the entry points do for an
    installed ember; idempotent)."""
    global _registered
    if _registered:
        return
    from dask.dataframe import backends as legacy
    from dask.dataframe.dask_expr import _backends as expr

    entry = EmberFrameBackendEntrypoint()
    expr.dataframe_creation_dispatch.register_backend("ember", entry)
    legacy.dataframe_creation_dispatch.register_backend("ember", entry)
    _registered = True


_registered = False
