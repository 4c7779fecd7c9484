"""ember.nn.utils: gradient clipping; parameters to and from one vector; ``rnn`` (packed
sequences); ``parametrize``/``parametrizations``, ``weight_norm``/``spectral_norm`` and
``prune``."""

from __future__ import annotations

import math

from ... import _core
from ..._core import ndarray
from .._grad_mode import no_grad
from . import parametrizations, parametrize, prune, rnn
from .parametrizations import legacy_spectral_norm as spectral_norm
from .parametrizations import legacy_weight_norm as weight_norm
from .parametrizations import remove_spectral_norm, remove_weight_norm

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "prune",
    "remove_spectral_norm",
    "remove_weight_norm",
    "rnn",
    "spectral_norm",
    "vector_to_parameters",
    "weight_norm",
]


def _grads(parameters):
    if isinstance(parameters, ndarray):
        parameters = [parameters]
    return [p.grad for p in parameters if getattr(p, "grad", None) is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients in place so that their joint `norm_type` norm (as if concatenated)
    is at most `max_norm`; returns that total norm (a 0-d array in the gradients' promoted
    dtype; no host sync unless `error_if_nonfinite`)."""
    who = "ember.nn.utils.clip_grad_norm_"
    grads = _grads(parameters)
    max_norm = float(max_norm)
    norm_type = float(norm_type)
    if not grads:
        return _core.zeros((), dtype=_core.float32)
    with no_grad():
        if norm_type == math.inf:
            total = None
            for g in grads:
                m = _core.abs(g).max() if g.size else None
                if m is not None:
                    total = m if total is None else _core.maximum(total, m)
            if total is None:
                total = _core.zeros((), dtype=grads[0].dtype, device=grads[0].device)
        else:
            total = None
            for g in grads:
                s = (g * g).sum() if norm_type == 2.0 else (_core.abs(g) ** norm_type).sum()
                total = s if total is None else total + s
            total = total ** (1.0 / norm_type)
        if error_if_nonfinite and not bool(_core.isfinite(total)):
            raise RuntimeError(
                f"{who}: the total norm of order {norm_type} of the gradients is non-finite; "
                "set error_if_nonfinite=False to clip anyway"
            )
        coef = _core.minimum(max_norm / (total + 1e-6), 1.0)
        for g in grads:
            g *= coef.astype(g.dtype)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient element to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g[...] = _core.clip(g, -clip_value, clip_value)


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one 1-d array (differentiable)."""
    from ..._joining import concatenate

    ps = [parameters] if isinstance(parameters, ndarray) else list(parameters)
    if not ps:
        raise ValueError("ember.nn.utils.parameters_to_vector: no parameters")
    return concatenate([p.reshape((-1,)) for p in ps])


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of the 1-d `vec` into each parameter, in place."""
    if not isinstance(vec, ndarray) or vec.ndim != 1:
        raise TypeError("ember.nn.utils.vector_to_parameters: vec must be a 1-d array")
    at = 0
    with no_grad():
        for p in [parameters] if isinstance(parameters, ndarray) else parameters:
            n = p.size
            p[...] = vec[at : at + n].reshape(p.shape)
            at += n
    if at != vec.size:
        raise ValueError(
            f"ember.nn.utils.vector_to_parameters: vec has {vec.size} elements, the parameters {at}"
        )
