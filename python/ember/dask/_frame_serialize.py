"""ember.frame objects between Dask workers: ``distributed.protocol`` serializers for
DataFrame/Series/Index, built on the ember.ndarray ones (``_distributed``).

A frame is pickled with every ember array inside it (column data, masks, string offsets and
bytes, categories, index labels) taken out by ``persistent_id``: the pickle holds only the
structure (names, dtypes, index kind), and each array travels as its own frame through the
array serializer of the same family -- "dask": a CPU array's own memory, a GPU array's bytes
copied to the host explicitly; "cuda": the GPU array itself (all arrays must be on a GPU, else
the family declines and distributed falls back to "dask")."""

from __future__ import annotations

import io
import pickle

import ember

from ._distributed import (
    cuda_deserialize_ember,
    cuda_serialize_ember,
    dask_deserialize_ember,
    dask_serialize_ember,
)

__all__ = ["register"]


class _Pickler(pickle.Pickler):
    def __init__(self, buf, arrays):
        super().__init__(buf, protocol=pickle.HIGHEST_PROTOCOL)
        self._arrays = arrays

    def persistent_id(self, obj):
        if isinstance(obj, ember.ndarray):
            self._arrays.append(obj)
            return len(self._arrays) - 1
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, buf, arrays):
        super().__init__(buf)
        self._arrays = arrays

    def persistent_load(self, pid):
        return self._arrays[pid]


def _split(obj):
    arrays = []
    buf = io.BytesIO()
    _Pickler(buf, arrays).dump(obj)
    return buf.getvalue(), arrays


def _join(structure, arrays):
    return _Unpickler(io.BytesIO(structure), arrays).load()


def _serialize(obj, one):
    structure, arrays = _split(obj)
    headers, frames = [], []
    for a in arrays:
        h, fs = one(a)
        headers.append(h)
        frames.extend(fs)
    return {"structure": structure, "arrays": headers}, frames


def _deserialize(header, frames, one):
    arrays = [one(h, [f]) for h, f in zip(header["arrays"], frames, strict=True)]
    return _join(header["structure"], arrays)


def dask_serialize_frame(obj):
    return _serialize(obj, dask_serialize_ember)


def dask_deserialize_frame(header, frames):
    return _deserialize(header, frames, dask_deserialize_ember)


def cuda_serialize_frame(obj):
    if obj.device == "cpu" or not obj.device.startswith("cuda"):
        raise NotImplementedError("ember.frame object on the CPU: not for the cuda family")
    return _serialize(obj, cuda_serialize_ember)


def cuda_deserialize_frame(header, frames):
    return _deserialize(header, frames, cuda_deserialize_ember)


_registered = False


def register():
    """Registers the serializers for ember.frame's DataFrame/Series/Index (idempotent)."""
    global _registered
    if _registered:
        return
    from distributed.protocol import dask_deserialize, dask_serialize
    from distributed.protocol.cuda import cuda_deserialize, cuda_serialize

    import ember.frame as ef

    for t in (ef.DataFrame, ef.Series, ef.Index):
        dask_serialize.register(t)(dask_serialize_frame)
        dask_deserialize.register(t)(dask_deserialize_frame)
        cuda_serialize.register(t)(cuda_serialize_frame)
        cuda_deserialize.register(t)(cuda_deserialize_frame)
    _registered = True
