"""Device -> host spilling for Dask workers, dask-cuda's model (its ``DeviceHostFile``).

A worker keeps its task results in ``Worker.data``. :class:`DeviceHostFile` is that mapping for
ember: results on the GPU count against ``device_memory_limit`` (their bytes), and when they
pass it the least recently used ones are copied to host memory (ember CPU arrays and frames, an
explicit device->host copy) and their GPU memory freed; reading a spilled key copies it back to
the device it came from. Results on the CPU never count and are never moved. It is built on
zict (distributed's own dependency): a ``zict.Buffer`` whose fast side is a dict of the values as
they are and whose slow side stores host copies through ``zict.Func``.

``ember.dask.LocalCluster(device_memory_limit=...)`` gives each GPU worker one (default 0.8 of
its GPU's memory, as dask-cuda). Host memory beyond that is not spilled to disk by this mapping
(distributed's own host spilling needs its SpillBuffer): size the limit to leave host room.
"""

from __future__ import annotations

import zict

import ember

__all__ = ["DeviceHostFile", "device_bytes"]


def _on_device(v, kind):
    d = getattr(v, "device", None)
    if d is None:
        return False
    return (d.type if isinstance(d, ember.Device) else str(d).split(":")[0]) == kind


def _is_frame(v):
    import sys

    f = sys.modules.get("ember.frame")
    return f is not None and isinstance(v, (f.DataFrame, f.Series, f.Index))


def device_bytes(v, kind="cuda"):
    """Bytes that value `v` (an ember array or frame object, or a tuple/list/dict of them) holds
    on devices of type `kind`."""
    if isinstance(v, ember.ndarray):
        return int(v.nbytes) if _on_device(v, kind) else 0
    if _is_frame(v):
        if not _on_device(v, kind):
            return 0
        from dask.sizeof import sizeof

        return int(sizeof(v))
    if isinstance(v, (tuple, list)):
        return sum(device_bytes(x, kind) for x in v)
    if isinstance(v, dict):
        return sum(device_bytes(x, kind) for x in v.values())
    return 0


def _to_host(v, kind):
    """(structure of) host copies of `v`'s device arrays and frames, with their devices."""
    if isinstance(v, ember.ndarray) and _on_device(v, kind):
        return ("a", str(v.device), ember.asarray(v, device="cpu", copy=True))
    if _is_frame(v) and _on_device(v, kind):
        return ("f", str(v.device), v.to("cpu") if kind != "cpu" else v.copy())
    if isinstance(v, (tuple, list)):
        return ("s", type(v), [_to_host(x, kind) for x in v])
    if isinstance(v, dict):
        return ("d", type(v), {k: _to_host(x, kind) for k, x in v.items()})
    return ("v", None, v)


def _to_device(t):
    tag, where, h = t
    if tag == "a":
        return ember.asarray(h, device=where)
    if tag == "f":
        return h.to(where)
    if tag == "s":
        return where(_to_device(x) for x in h)
    if tag == "d":
        return where((k, _to_device(x)) for k, x in h.items())
    return h


def _resolve_limit(limit, kind):
    """Bytes from `limit`: an int, a string Dask parses ("10GB"), or a fraction (0, 1] of the
    memory of device 0 of `kind` (the worker's own GPU)."""
    if isinstance(limit, str):
        from dask.utils import parse_bytes

        limit = parse_bytes(limit)
    if isinstance(limit, float) and 0 < limit <= 1:
        if kind != "cuda":
            raise ValueError(
                "ember.dask.DeviceHostFile: a fractional device_memory_limit needs a GPU "
                f"(device type {kind!r}); give bytes"
            )
        if not ember.cuda.is_available():
            raise ValueError(
                "ember.dask.DeviceHostFile: a fractional device_memory_limit needs a GPU: "
                f"{ember.cuda.unavailable_reason()}"
            )
        return int(limit * ember.cuda.get_device_properties(0)["total_memory"])
    limit = int(limit)
    if limit <= 0:
        raise ValueError(
            f"ember.dask.DeviceHostFile: device_memory_limit must be positive, got {limit}"
        )
    return limit


class DeviceHostFile(zict.Buffer):
    """A worker's ``data`` mapping that keeps GPU results under `device_memory_limit` bytes by
    moving the least recently used ones to host memory (see the module's documentation): a
    ``zict.Buffer`` whose ``fast`` side holds values as they are, weighted by their device
    bytes, and whose ``slow`` side (``host``) holds host copies. Extra keyword arguments
    (distributed passes ``memory_limit``, ``local_directory``...) are accepted and ignored.
    `device_type` is the device type that counts (tests use ``"cpu"``)."""

    def __init__(self, device_memory_limit=0.8, device_type="cuda", **_):
        kind = self.device_type = device_type
        self.device_memory_limit = _resolve_limit(device_memory_limit, device_type)
        self.host = zict.Func(lambda v: _to_host(v, kind), _to_device, {})
        self.spilled_bytes_total = 0  # device bytes moved to the host so far
        super().__init__(
            {},
            self.host,
            self.device_memory_limit,
            weight=lambda k, v: device_bytes(v, kind),
            fast_to_slow_callbacks=[self._count],
        )

    def __del__(self):  # zict closes in __del__: not when __init__ raised before building
        if "fast" in self.__dict__:
            super().__del__()

    def _count(self, key, value):
        self.spilled_bytes_total += device_bytes(value, self.device_type)

    @property
    def device_bytes(self):
        """Bytes of results held on the device now."""
        return int(self.fast.total_weight)

    @property
    def spilled_keys(self):
        """Keys whose values are on the host now (spilled)."""
        return set(self.host.keys())

    def __repr__(self):
        return (
            f"<ember.dask.DeviceHostFile: {len(self)} keys, {self.device_bytes} of "
            f"{self.device_memory_limit} device bytes, {len(self.spilled_keys)} spilled>"
        )
