"""``ember.dask.LocalCluster``: a ``distributed.LocalCluster`` whose workers compute on ember
chunks, one worker per visible GPU as dask-cuda's LocalCUDACluster starts them.

Every worker preloads ``ember.dask`` (so it deserializes ember arrays with ember's serializers
before the first task). With GPUs, worker ``i`` is a process whose ``CUDA_VISIBLE_DEVICES``
lists the GPUs starting at the ``i``-th (dask-cuda's rotation): it sees its own GPU as
``cuda:0``, which is ember's default device there, so its chunks and draws go to that GPU.
Without GPUs it is distributed's LocalCluster with CPU workers."""

from __future__ import annotations

import os

import distributed

import ember

__all__ = ["LocalCluster", "visible_gpus"]


def visible_gpus():
    """The GPUs this process may hand out: ``CUDA_VISIBLE_DEVICES`` when set, else ember's
    CUDA devices (none on a machine without a usable GPU)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [d.strip() for d in env.split(",") if d.strip()]
    return [str(i) for i in range(ember.cuda.device_count())]


class LocalCluster(distributed.LocalCluster):
    """``distributed.LocalCluster(**kwargs)`` for ember: ``ember.dask`` preloaded on every
    worker; with GPUs (``devices``: GPU ids, default :func:`visible_gpus`) one single-threaded
    worker process per GPU (``n_workers`` of them at most), each seeing that GPU only, whose
    results spill from the GPU to host memory beyond ``device_memory_limit`` (a fraction of its
    GPU's memory, bytes, or a string such as "20GB"; default 0.8 as dask-cuda; None: no
    spilling) through :class:`ember.dask.DeviceHostFile`."""

    def __init__(
        self, n_workers=None, *, devices=None, preload=None, device_memory_limit=0.8, **kwargs
    ):
        preload = [preload] if isinstance(preload, str) else list(preload or [])
        if "ember.dask" not in preload:
            preload.append("ember.dask")
        gpus = visible_gpus() if devices is None else [str(d) for d in devices]
        self._gpus = gpus
        if not gpus:
            super().__init__(n_workers=n_workers, preload=preload, **kwargs)
            return
        if not kwargs.get("processes", True):
            raise ValueError(
                "ember.dask.LocalCluster: processes=False cannot give each worker its own GPU "
                f"(devices={gpus}); use processes=True or devices=[]"
            )
        n = len(gpus) if n_workers is None else int(n_workers)
        if not 0 <= n <= len(gpus):
            raise ValueError(
                f"ember.dask.LocalCluster: n_workers={n_workers!r} must be between 0 and the "
                f"number of GPUs ({len(gpus)}: {gpus})"
            )
        kwargs.setdefault("threads_per_worker", 1)
        if device_memory_limit:
            from ._spill import DeviceHostFile

            # built in each worker (its own GPU's memory for a fraction)
            kwargs.setdefault(
                "data", (DeviceHostFile, {"device_memory_limit": device_memory_limit})
            )
        super().__init__(n_workers=0, preload=preload, **kwargs)
        self.scale(n)

    def new_worker_spec(self):
        spec = super().new_worker_spec()
        if not self._gpus:
            return spec
        ((name, s),) = spec.items()
        i = int(name) % len(self._gpus)
        order = self._gpus[i:] + self._gpus[:i]
        options = dict(s["options"])
        options["env"] = {**options.get("env", {}), "CUDA_VISIBLE_DEVICES": ",".join(order)}
        return {name: {**s, "options": options}}
