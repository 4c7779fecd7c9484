"""PyTorch's ``torch.nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm`` as
parametrizations (``ember.nn.utils.parametrize``), and the older hook-based
``nn.utils.weight_norm``/``spectral_norm`` (``remove_weight_norm``/``remove_spectral_norm``):
the same math, PyTorch's parameter and buffer names in each API."""

from __future__ import annotations

from ... import _core
from ..._manipulation import moveaxis
from .._grad_mode import no_grad
from .._module import Module
from .._parameter import Parameter
from . import parametrize

__all__ = ["spectral_norm", "weight_norm"]


def _norm_except_dim(v, dim):
    """The 2-norm of `v` over every dimension but `dim` (kept, size 1 elsewhere); all of `v`
    when dim is None (a 0-d result)."""
    if dim is None:
        return _core.sqrt((v * v).sum())
    dim %= v.ndim
    axes = tuple(d for d in range(v.ndim) if d != dim)
    return _core.sqrt((v * v).sum(axis=axes, keepdims=True))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        dim = None if self.dim == -1 else self.dim
        return weight_v * (weight_g / _norm_except_dim(weight_v, dim))

    def right_inverse(self, weight):
        dim = None if self.dim == -1 else self.dim
        return _norm_except_dim(weight, dim), weight


def weight_norm(module, name="weight", dim=0):
    """``module.<name> = g * v / ||v||`` with ``original0`` = g (the norms over every dimension
    but `dim`) and ``original1`` = v, as PyTorch's parametrization."""
    return parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


def _as_matrix(w, dim):
    if dim != 0:
        w = moveaxis(w, dim, 0)
    return w.reshape(w.shape[0], -1)


def _l2(x, eps):
    return x / _core.maximum(_core.sqrt((x * x).sum()), eps)


def _power_iterations(wm, u, v, n, eps):
    for _ in range(n):
        u[...] = _l2(wm @ v, eps)
        v[...] = _l2(wm.T @ u, eps)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim % ndim if ndim else 0
        self.eps = eps
        self.n_power_iterations = n_power_iterations
        if ndim > 1:
            wm = _as_matrix(weight.detach(), self.dim)
            from ... import random

            g = random._global
            u = g.normal(0.0, 1.0, (wm.shape[0],), dtype=weight.dtype, device=weight.device)
            v = g.normal(0.0, 1.0, (wm.shape[1],), dtype=weight.dtype, device=weight.device)
            self.register_buffer("_u", _l2(u, eps))
            self.register_buffer("_v", _l2(v, eps))
            with no_grad():
                _power_iterations(wm, self._u, self._v, 15, eps)

    def forward(self, weight):
        if weight.ndim == 1:
            return _l2(weight, self.eps)
        wm = _as_matrix(weight, self.dim)
        if self.training:
            with no_grad():
                _power_iterations(wm.detach(), self._u, self._v, self.n_power_iterations, self.eps)
        u, v = self._u.copy(), self._v.copy()
        sigma = (u * (wm @ v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """``module.<name> = W / sigma(W)`` with sigma estimated by power iteration (updated in
    training mode), as PyTorch's parametrization; `dim` defaults to 1 for transposed
    convolutions, else 0."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _core.ndarray):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if "Transpose" in type(module).__name__ else 0
    p = _SpectralNorm(weight, n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, p)


# ---- the older hook-based API (torch.nn.utils.weight_norm / spectral_norm) ---------------------


def legacy_weight_norm(module, name="weight", dim=0):
    """PyTorch's deprecated ``nn.utils.weight_norm``: parameters ``<name>_g`` and ``<name>_v``;
    ``module.<name>`` recomputed by a forward pre-hook."""
    w = getattr(module, name)
    d = None if dim is None else dim
    del module._parameters[name]
    with no_grad():
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(w, d).detach()))
        module.register_parameter(name + "_v", Parameter(w.detach()))

    def compute(m, _inputs=None):
        g, v = getattr(m, name + "_g"), getattr(m, name + "_v")
        object.__setattr__(m, name, v * (g / _norm_except_dim(v, d)))

    compute(module)
    handle = module.register_forward_pre_hook(compute)
    module.__dict__.setdefault("_legacy_norms", {})[name] = ("weight_norm", handle)
    return module


def legacy_spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """PyTorch's ``nn.utils.spectral_norm``: parameter ``<name>_orig``, buffers ``<name>_u`` and
    ``<name>_v``; ``module.<name>`` recomputed by a forward pre-hook (power iteration in
    training mode)."""
    w = getattr(module, name)
    if dim is None:
        dim = 1 if "Transpose" in type(module).__name__ else 0
    sn = _SpectralNorm(w, n_power_iterations, dim, eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", Parameter(w.detach()))
    module.register_buffer(name + "_u", sn._u)
    module.register_buffer(name + "_v", sn._v)

    def compute(m, _inputs=None):
        orig = getattr(m, name + "_orig")
        wm = _as_matrix(orig, dim)
        u, v = getattr(m, name + "_u"), getattr(m, name + "_v")
        if m.training:
            with no_grad():
                _power_iterations(wm.detach(), u, v, n_power_iterations, eps)
        sigma = (u.copy() * (wm @ v.copy())).sum()
        object.__setattr__(m, name, orig / sigma)

    compute(module)
    handle = module.register_forward_pre_hook(compute)
    module.__dict__.setdefault("_legacy_norms", {})[name] = ("spectral_norm", handle)
    return module


def _remove_legacy(module, name, kind):
    norms = module.__dict__.get("_legacy_norms", {})
    if norms.get(name, (None,))[0] != kind:
        raise ValueError(f"{kind} of '{name}' not found in {module}")
    _, handle = norms.pop(name)
    handle.remove()
    value = getattr(module, name).detach()
    module.__dict__.pop(name, None)
    for suffix in ("_g", "_v", "_orig"):
        module._parameters.pop(name + suffix, None)
    for suffix in ("_u", "_v"):
        module._buffers.pop(name + suffix, None)
    module.register_parameter(name, Parameter(value))
    return module


def remove_weight_norm(module, name="weight"):
    """Undoes ``nn.utils.weight_norm``: ``<name>`` is a plain parameter again."""
    return _remove_legacy(module, name, "weight_norm")


def remove_spectral_norm(module, name="weight"):
    """Undoes ``nn.utils.spectral_norm``."""
    return _remove_legacy(module, name, "spectral_norm")
