"""NumPy's ``initial=`` and ``where=`` of the reductions (sum, prod, max, min, any, all, mean,
var, std), composed from the reduction itself: masked-out elements count as the reduction's
identity (for max and min, as `initial`, which they then need), and `initial` joins the values of
every slice, so an empty slice gives `initial`. src/python/reductions.cpp calls :func:`reduce`
only when one of the two is given; `out=` is then handled there as for any reduction."""

from __future__ import annotations

from . import _core
from ._array import asarray

_IDENTITY = {"sum": 0, "prod": 1, "any": False, "all": True}
_COMBINE = {"sum": _core.add, "prod": _core.multiply, "max": _core.maximum, "min": _core.minimum}
_NUMPY_OP = {"max": "maximum", "min": "minimum"}


def _reduced_shape(x, axis, keepdims):
    """The result shape, and the number of elements each result reduces."""
    if axis is None:
        axes = set(range(x.ndim))
    else:
        ax = axis if isinstance(axis, (tuple, list)) else (axis,)
        axes = {int(a) % x.ndim if x.ndim else int(a) for a in ax}
    n = 1
    shape = []
    for d, s in enumerate(x.shape):
        if d in axes:
            n *= s
            if keepdims:
                shape.append(1)
        else:
            shape.append(s)
    return tuple(shape), n


def reduce(name, x, axis, dtype, ddof, keepdims, correction, initial, where):
    who = f"ember.{name}"
    if initial is not None and name not in _COMBINE:
        raise TypeError(f"{who}() got an unexpected keyword argument 'initial'")
    x = asarray(x) if not isinstance(x, _core.ndarray) else x
    fn = getattr(_core, name)
    kw = {} if dtype is None else {"dtype": dtype}
    if name in ("var", "std"):
        kw.update(ddof=ddof, correction=correction)
    if where is not None and where is not True:
        mask = asarray(where, device=x.device)
        if mask.dtype != _core.bool:
            raise TypeError(f"{who}: where must be a boolean array, got {mask.dtype}")
        mask = _core.broadcast_to(mask, x.shape) if mask.shape != x.shape else mask
        if name in ("mean", "var", "std"):
            return _masked_moment(name, x, mask, axis, dtype, keepdims, ddof, correction)
        if name in _IDENTITY:
            fill = _IDENTITY[name]
        elif initial is None:
            raise ValueError(
                f"{who}: reduction operation '{_NUMPY_OP[name]}' does not have an identity, so "
                "to use a where mask one has to specify 'initial'"
            )
        else:
            fill = initial
        x = _core.where(mask, x, asarray(fill, device=x.device).astype(x.dtype))
    if initial is None:
        return fn(x, axis=axis, keepdims=keepdims, **kw)
    shape, n = _reduced_shape(x, axis, keepdims)
    if n == 0 and name in ("max", "min"):  # no identity: the slices hold only `initial`
        return _core.full(shape, initial, dtype=x.dtype, device=x.device)
    r = fn(x, axis=axis, keepdims=keepdims, **kw)
    init = asarray(initial, device=x.device).astype(r.dtype)
    return _COMBINE[name](r, init).astype(r.dtype)


def _masked_moment(name, x, mask, axis, dtype, keepdims, ddof, correction):
    count = _core.sum(mask, axis=axis, keepdims=True)
    zero = asarray(0, device=x.device).astype(x.dtype)
    total = _core.sum(_core.where(mask, x, zero), axis=axis, keepdims=True, dtype=dtype)
    if total.dtype.kind not in "fc":
        total = total.astype(_core.float64)
    mean = total / count.astype(total.dtype)
    if name == "mean":
        return mean if keepdims else _squeeze(mean, axis, x.ndim)
    c = correction if correction is not None else (ddof if ddof is not None else 0)
    dev = x - mean
    sq = (_core.abs(dev) ** 2) if dev.dtype.kind == "c" else dev * dev
    s = _core.sum(
        _core.where(mask, sq, asarray(0, device=x.device).astype(sq.dtype)),
        axis=axis,
        keepdims=True,
    )
    var = s / (count.astype(s.dtype) - c)
    r = var if name == "var" else _core.sqrt(var)
    return r if keepdims else _squeeze(r, axis, x.ndim)


def _squeeze(r, axis, ndim):
    if axis is None:
        return r.reshape(())
    ax = axis if isinstance(axis, (tuple, list)) else (axis,)
    return _core.squeeze(r, axis=tuple(int(a) % ndim for a in ax))
