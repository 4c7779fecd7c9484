"""``nn.DataParallel`` (PyTorch's single-process data parallelism).

Each forward splits the array arguments along ``dim`` into one chunk per device, runs the module
on every chunk (on the first device the module itself; on the others the same module through
``ember.func.functional_call`` with its parameters and buffers copied to that device: the copies
are differentiable, so gradients flow back into the one set of parameters), and gathers the
outputs on ``output_device`` along ``dim``. As in PyTorch, buffer updates made on the other
devices (batch norm statistics) are dropped, and DistributedDataParallel is the faster choice
for several GPUs. With one device (or none: no GPU) it calls the module on that device."""

from __future__ import annotations

from .. import _core
from ._module import Module

__all__ = ["DataParallel"]


def _device(d):
    if isinstance(d, int) and not isinstance(d, bool):
        return _core.Device("cuda", d)
    return _core.Device(d) if not isinstance(d, _core.Device) else d


def _to(obj, dev):
    if isinstance(obj, _core.ndarray):
        return obj.to(dev)
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(_to(o, dev) for o in obj)
    if isinstance(obj, list):
        return [_to(o, dev) for o in obj]
    if isinstance(obj, dict):
        return {k: _to(v, dev) for k, v in obj.items()}
    return obj


def _scatter(obj, n, dim):
    """`obj` split into n parts along `dim` (arrays), or repeated (anything else)."""
    if isinstance(obj, _core.ndarray):
        if obj.ndim == 0:
            return [obj] * n
        from .._manipulation import array_split

        return list(array_split(obj, n, axis=dim))
    if isinstance(obj, (tuple, list)):
        parts = [_scatter(o, n, dim) for o in obj]
        return [type(obj)(p[i] for p in parts) for i in range(n)]
    if isinstance(obj, dict):
        parts = {k: _scatter(v, n, dim) for k, v in obj.items()}
        return [{k: v[i] for k, v in parts.items()} for i in range(n)]
    return [obj] * n


def _gather(outs, dev, dim):
    first = outs[0]
    if isinstance(first, _core.ndarray):
        from .._joining import concatenate

        moved = [o.to(dev) for o in outs]
        if first.ndim == 0:  # PyTorch gathers scalars into a vector (with a warning)
            from .._joining import stack

            return stack(moved)
        return concatenate(moved, axis=dim)
    if isinstance(first, (tuple, list)):
        return type(first)(_gather([o[i] for o in outs], dev, dim) for i in range(len(first)))
    if isinstance(first, dict):
        return {k: _gather([o[k] for o in outs], dev, dim) for k in first}
    return first


class DataParallel(Module):
    """``DataParallel(module, device_ids=None, output_device=None, dim=0)``: `module` run on
    slices of the batch on several devices. `device_ids`: GPU indices or devices (None: every
    visible GPU; with no GPU, the module's own device)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(
                f"ember.nn.DataParallel: module must be an nn.Module, got {type(module).__name__}"
            )
        self.module = module
        if device_ids is None:
            from .. import cuda

            n = cuda.device_count() if cuda.is_available() else 0
            device_ids = list(range(n))
        self.device_ids = [_device(d) for d in device_ids]
        if output_device is None:
            output_device = self.device_ids[0] if self.device_ids else None
        self.output_device = _device(output_device) if output_device is not None else None
        self.dim = int(dim)
        if self.device_ids:
            first = self.device_ids[0]
            for name, t in (*module.named_parameters(), *module.named_buffers()):
                if t.device != first:
                    raise RuntimeError(
                        f"ember.nn.DataParallel: module must have its parameters and buffers on "
                        f"device {first} (device_ids[0]) but found one of them ({name!r}) on "
                        f"device {t.device}"
                    )

    def forward(self, *inputs, **kwargs):
        devs = self.device_ids
        if not devs:
            return self.module(*inputs, **kwargs)
        if len(devs) == 1:
            return self.module(*_to(inputs, devs[0]), **_to(kwargs, devs[0]))
        n = len(devs)
        arg_parts = _scatter(tuple(inputs), n, self.dim)
        kw_parts = _scatter(dict(kwargs), n, self.dim)
        state = dict(self.module.named_parameters(remove_duplicate=False))
        state.update(dict(self.module.named_buffers(remove_duplicate=False)))
        from ..func import functional_call

        outs = []
        for i, (dev, args, kw) in enumerate(zip(devs, arg_parts, kw_parts, strict=True)):
            args, kw = _to(args, dev), _to(kw, dev)
            if i == 0:
                outs.append(self.module(*args, **kw))
            else:
                copies = {k: v.to(dev) for k, v in state.items()}
                outs.append(functional_call(self.module, copies, args, kw))
        return _gather(outs, self.output_device, self.dim)
