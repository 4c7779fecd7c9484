"""ember arrays between Dask workers: ``distributed.protocol`` serializers, registered as
distributed registers CuPy's (distributed/protocol/cupy.py).

- "dask" family (the default, over TCP): a header (dtype, shape, device) and one frame of the
  array's bytes. A CPU array's frame is its own memory (a memoryview, no copy and no pickle of
  the object); a GPU array's bytes are copied to the host explicitly, because a TCP frame is
  host memory, and uploaded again on the receiving side, to that process's CUDA device.
- "cuda" family (transports that move device memory, e.g. UCX): the frame is the GPU array
  itself, viewed as bytes (an ember array with ``__cuda_array_interface__``); the receiver wraps
  whatever device buffer arrives with ``ember.asarray`` (zero copy). CPU arrays decline this
  family (NotImplementedError), so distributed falls through to "dask"."""

from __future__ import annotations

import numpy as np
from distributed.protocol import dask_deserialize, dask_serialize
from distributed.protocol.cuda import cuda_deserialize, cuda_serialize

import ember
from ember import ndarray

__all__ = ["register"]


def _bytes(x):
    """`x`'s bytes as a contiguous 1-d uint8 ember array on its device (a view when possible)."""
    return ember.ascontiguousarray(x).reshape(-1).view(ember.uint8)


def _header(x):
    return {"dtype": x.dtype.name, "shape": tuple(x.shape), "device": str(x.device)}


def _receiving_device(header):
    """Where a received array goes: the CPU for CPU data; for GPU data this process's default
    device when it is a GPU (a dask-cuda style worker sees its one GPU as cuda:0), else the
    sender's device name."""
    if header["device"] == "cpu":
        return ember.Device("cpu")
    dev = ember.get_default_device()
    return dev if dev.type == "cuda" else ember.Device(header["device"])


def _rebuild(raw, header):
    """The array from its bytes (a 1-d uint8 ember array)."""
    return raw.view(header["dtype"]).reshape(header["shape"])


def dask_serialize_ember(x):
    b = _bytes(x.detach())
    if b.device.type == "cpu":
        frame = memoryview(b)
    else:
        frame = memoryview(ember.asnumpy(b))  # explicit device -> host: a TCP frame is host bytes
    return _header(x), [frame]


def dask_deserialize_ember(header, frames):
    (frame,) = frames
    host = np.frombuffer(frame, dtype=np.uint8)
    raw = ember.asarray(host, device=_receiving_device(header))
    return _rebuild(raw, header)


def cuda_serialize_ember(x):
    if x.device.type != "cuda":
        raise NotImplementedError("ember.ndarray on the CPU: not for the cuda family")
    return _header(x), [_bytes(x.detach())]


def cuda_deserialize_ember(header, frames):
    (frame,) = frames
    raw = frame if isinstance(frame, ndarray) else ember.asarray(frame)  # zero copy (CAI)
    return _rebuild(raw.reshape(-1).view(ember.uint8), header)


_registered = False


def register():
    """Registers the serializers (idempotent)."""
    global _registered
    if _registered:
        return
    dask_serialize.register(ndarray)(dask_serialize_ember)
    dask_deserialize.register(ndarray)(dask_deserialize_ember)
    cuda_serialize.register(ndarray)(cuda_serialize_ember)
    cuda_deserialize.register(ndarray)(cuda_deserialize_ember)
    _registered = True
