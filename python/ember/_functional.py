"""Functional programming helpers: apply_along_axis, apply_over_axes and piecewise (Python
loops over slices or conditions, each step an ember op)."""

from __future__ import annotations

import builtins
import operator

from . import _core
from ._creation import zeros_like
from ._joining import stack
from ._manipulation import _asarray, moveaxis

__all__ = [
    "apply_along_axis",
    "apply_over_axes",
    "piecewise",
]


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to each 1-D slice of arr along axis (a Python loop over the slices; the
    results are stacked where the axis was)."""
    x = _asarray(arr)
    ax = operator.index(axis) % builtins.max(x.ndim, 1)
    moved = moveaxis(x, ax, -1)
    lead = tuple(moved.shape[:-1])
    flat = moved.reshape((-1, moved.shape[-1]))
    if flat.shape[0] == 0:
        raise ValueError("ember.apply_along_axis: cannot apply to 0 slices")
    results = [_asarray(func1d(flat[i], *args, **kwargs)) for i in range(flat.shape[0])]
    r = stack(results).reshape(lead + tuple(results[0].shape))
    if results[0].ndim == 0:
        return r
    nd = results[0].ndim
    # the result's own dimensions go where the axis was
    order = list(range(len(lead)))
    out_axes = order[:ax] + list(range(len(lead), len(lead) + nd)) + order[ax:]
    return _core.permute_dims(r, tuple(out_axes))


def apply_over_axes(func, a, axes):
    """func(a, axis) applied over each of `axes` in turn, keeping the dimensions (NumPy's
    apply_over_axes)."""
    x = _asarray(a)
    for ax in [axes] if isinstance(axes, int) else axes:
        ax = operator.index(ax) % x.ndim
        try:
            r = func(x, ax)  # NumPy's call
        except TypeError:
            r = func(x, axis=ax)  # ember's reductions take axis by keyword (Array API)
        if r.ndim == x.ndim:
            x = r
        elif r.ndim == x.ndim - 1:
            x = _core.expand_dims(r, axis=ax)
        else:
            raise ValueError(
                "ember.apply_over_axes: function is not returning an array of the correct shape"
            )
    return x


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[k](x) (or the constant funclist[k]) where condlist[k] holds; an extra function
    covers the rest."""
    x = _asarray(x)
    if (
        isinstance(condlist, _core.ndarray)
        and condlist.ndim <= x.ndim
        or not isinstance(condlist, list | tuple)
    ):
        condlist = [condlist]
    conds = [_asarray(c).astype(_core.bool) for c in condlist]
    n = len(conds)
    if len(funclist) == n + 1:
        rest = (
            ~_core.any(stack([_core.broadcast_to(c, x.shape) for c in conds]), axis=0)
            if n
            else (_core.ones(x.shape, dtype=_core.bool, device=x.device))
        )
        conds.append(rest)
    elif len(funclist) != n:
        raise ValueError(
            f"ember.piecewise: with {n} condition(s), funclist must have {n} or "
            f"{n + 1} entries, got {len(funclist)}"
        )
    out = zeros_like(x)
    for c, f in zip(conds, funclist, strict=True):
        val = f(x, *args, **kw) if callable(f) else f
        out = _core.where(c, val, out)
    return out
