"""Adapters that let one benchmark case run unchanged on ember, NumPy, CuPy and PyTorch."""

from __future__ import annotations

import abc
import importlib
from typing import Any

import numpy as np

import ember


class Lib(abc.ABC):
    """One library on one device: moves host data in and out, synchronizes, spells the ops.

    Cases use Python operators (``a + b``, ``a < b``, slicing) directly; only the calls whose
    spelling differs between libraries go through these methods.
    """

    name = "?"
    device = "cpu"

    def version(self) -> str:
        return getattr(self.xp, "__version__", "?")

    @abc.abstractmethod
    def put(self, a: np.ndarray) -> Any:
        """Implemented by each library."""

    @abc.abstractmethod
    def get(self, x: Any) -> np.ndarray:
        """Implemented by each library."""

    def sync(self) -> None:
        """Waits for the library's queued work (the CPU libraries have none)."""
        return None

    # Array-API style namespaces (NumPy, CuPy, ember) share these spellings.
    def sum(self, x, axis=None):
        return self.xp.sum(x) if axis is None else self.xp.sum(x, axis=axis)

    def max(self, x, axis=None):
        return self.xp.max(x) if axis is None else self.xp.max(x, axis=axis)

    def mean(self, x, axis=None):
        return self.xp.mean(x) if axis is None else self.xp.mean(x, axis=axis)

    def exp(self, x):
        return self.xp.exp(x)

    def cumsum(self, x):
        return self.xp.cumsum(x)

    def sort(self, x):
        return self.xp.sort(x)

    def argsort(self, x):
        return self.xp.argsort(x)

    def unique(self, x):
        return self.xp.unique(x)

    def svdvals_full(self, x):
        """The singular values of a full SVD (U, S and Vh computed, as np.linalg.svd does)."""
        return self.xp.linalg.svd(x)[1]

    def dtype(self, np_dtype) -> Any:
        return np.dtype(np_dtype)

    def astype(self, x, np_dtype):
        dt = self.dtype(np_dtype)
        if hasattr(x, "astype"):
            return x.astype(dt)
        return self.xp.astype(x, dt)

    def transpose_copy(self, x):
        return x.T.copy()

    def reshape(self, x, shape):
        return x.reshape(shape)


class NumpyLib(Lib):
    name = "numpy"

    def __init__(self):
        self.xp = np

    def put(self, a):
        # Every library gets its own copy: libraries that shared one buffer would find it in
        # the cache warmed by each other's runs, which biases the ratios.
        return a.copy()

    def get(self, x):
        return np.asarray(x)


def device_sync(ember, device: str):
    """ember's synchronize for ``device``; without one, a 1-element host read, which waits for
    the work queued before it on the current stream."""
    sync = getattr(ember.cuda, "synchronize", None)
    if sync is not None:
        return sync
    probe = ember.zeros((1,), dtype=ember.float32, device=device)
    return lambda: ember.asnumpy(probe)


class EmberLib(Lib):
    name = "ember"

    def __init__(self, device: str):
        self.xp = ember
        self.device = device
        self.note = ""
        self._sync = None
        if device.startswith("cuda"):
            self._sync = device_sync(ember, device)
            if getattr(ember.cuda, "synchronize", None) is None:
                self.note = (
                    "ember: ember.cuda.synchronize() is missing; each sample ends with a "
                    "host read instead (which synchronizes the stream)"
                )

    def put(self, a):
        return self.xp.asarray(a, device=self.device)

    def get(self, x):
        if isinstance(x, (bool, int, float, complex)):
            # A Python scalar where NumPy gives an array: compared as-is, so a lost dtype
            # shows up as a mismatch instead of being hidden.
            return np.asarray(x)
        return self.xp.asnumpy(x)

    def sync(self):
        if self._sync is not None:
            self._sync()

    def dtype(self, np_dtype):
        name = np.dtype(np_dtype).name
        dt = getattr(self.xp, name, None)
        if dt is None:
            raise AttributeError(f"ember has no dtype named {name!r}")
        return dt


class CupyLib(Lib):
    name = "cupy"

    def __init__(self, device: str):
        import cupy

        self.xp = cupy
        self.device = device
        self._dev = cupy.cuda.Device(int(device.partition(":")[2] or 0))
        self._dev.use()

    def put(self, a):
        return self.xp.asarray(a)

    def get(self, x):
        return self.xp.asnumpy(x)

    def sync(self):
        self._dev.synchronize()


class TorchLib(Lib):
    def __init__(self, device: str):
        import torch

        self.xp = torch
        self.device = device
        self.name = f"torch-{device.split(':')[0]}"

    def put(self, a):
        return self.xp.from_numpy(np.array(a, copy=True, order="C")).to(self.device)

    def get(self, x):
        return x.detach().cpu().numpy()

    def sync(self):
        if self.device.startswith("cuda"):
            self.xp.cuda.synchronize()

    def sum(self, x, axis=None):
        return x.sum() if axis is None else x.sum(dim=axis)

    def max(self, x, axis=None):
        return x.max() if axis is None else x.amax(dim=axis)

    def mean(self, x, axis=None):
        return x.mean() if axis is None else x.mean(dim=axis)

    def exp(self, x):
        return x.exp()

    def cumsum(self, x):
        return self.xp.cumsum(x, dim=0)

    def sort(self, x):
        return self.xp.sort(x).values

    def unique(self, x):
        return self.xp.unique(x, sorted=True)

    def dtype(self, np_dtype):
        return getattr(self.xp, np.dtype(np_dtype).name)

    def astype(self, x, np_dtype):
        return x.to(self.dtype(np_dtype))

    def transpose_copy(self, x):
        # clone() would keep the transposed strides; NumPy's copy() is C-ordered.
        return x.T.contiguous()


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except Exception:  # a broken install is as good as none here
        return False
    return True


def discover(device: str) -> tuple[list[Lib], list[str]]:
    """ember first, then the other libraries on the same device; also notes on those skipped."""
    libs: list[Lib] = [EmberLib(device)]
    notes: list[str] = [libs[0].note] if libs[0].note else []
    on_cuda = device.startswith("cuda")
    if not on_cuda:
        libs.append(NumpyLib())
    else:
        notes.append("numpy: not timed on cuda (it runs on the host); used to check results")
    if on_cuda:
        if _importable("cupy"):
            try:
                lib = CupyLib(device)
                libs.append(lib)
            except Exception as e:  # e.g. no driver: skip, say why
                notes.append(f"cupy: unusable ({type(e).__name__}: {e})")
        else:
            notes.append("cupy: not installed")
    if _importable("torch"):
        import torch

        if on_cuda and not torch.cuda.is_available():
            notes.append("torch: installed, but torch.cuda.is_available() is False")
        else:
            libs.append(TorchLib(device))
    else:
        notes.append("torch: not installed")
    return libs, notes
