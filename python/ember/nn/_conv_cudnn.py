"""Convolutions of GPU arrays through cuDNN (``_cudnn.run``), as an autograd Function: the
forward, and a backward of two cuDNN calls (data and filter gradients). A backward that must
itself be differentiable (``create_graph=True``) recomputes through the composed path instead,
so double backward stays exact. ``conv(...)`` returns None when cuDNN does not take the call
(no library, ``backends.cudnn.enabled = False``, an unsupported dtype, no engine for the
problem); the caller then runs the composed convolution on the same device."""

from __future__ import annotations

from .. import _core
from ..autograd import Function, is_grad_enabled
from . import _cudnn


def _is_channels_last(x):
    nd = x.ndim - 2
    return x.transpose((0, *range(2, 2 + nd), 1)).flags.c_contiguous


def _pack(x, channels_last):
    """x (N, C, *S) packed in the wanted order: itself when it already is, else one copy."""
    nd = x.ndim - 2
    to_last = (0, *range(2, 2 + nd), 1)
    if channels_last:
        if _is_channels_last(x):
            return x
        return x.transpose(to_last).copy().transpose((0, nd + 1, *range(1, nd + 1)))
    return x if x.flags.c_contiguous else x.copy()


def _empty(shape, like, channels_last):
    nd = len(shape) - 2
    if not channels_last:
        return _core.empty(shape, dtype=like.dtype, device=like.device)
    last = (shape[0], *shape[2:], shape[1])
    out = _core.empty(last, dtype=like.dtype, device=like.device)
    return out.transpose((0, nd + 1, *range(1, nd + 1)))


def _lift(x, nd):
    """A 1-d problem as a 2-d one (cuDNN's convolutions start at 2 spatial dimensions)."""
    return x[:, :, None] if nd == 1 else x


class _CudnnConv(Function):
    @staticmethod
    def forward(ctx, x, w, geom, out_shape, channels_last):
        ctx.save_for_backward(x, w)
        ctx.geom, ctx.channels_last = geom, channels_last
        y = _empty(out_shape, x, channels_last)
        nd = x.ndim - 2
        g2 = _lift_geom(geom, nd)
        if not _cudnn.run("fwd", _lift(x, nd), _lift(w, nd), _lift(y, nd), g2, channels_last):
            raise _NoEngine
        return y

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        geom, cl = ctx.geom, ctx.channels_last
        if is_grad_enabled():  # create_graph: a differentiable backward (the composed path)
            return (*_composed_grads(x, w, g, geom), None, None, None)
        nd = x.ndim - 2
        g2 = _lift_geom(geom, nd)
        g = _pack(g, cl)
        dx = dw = None
        if ctx.needs_input_grad[0]:
            dx = _empty(tuple(x.shape), x, cl)
            if not _cudnn.run("bwd_data", _lift(dx, nd), _lift(w, nd), _lift(g, nd), g2, cl):
                return (*_composed_grads(x, w, g, geom), None, None, None)
        if ctx.needs_input_grad[1]:
            dw = _empty(tuple(w.shape), w, cl)
            if not _cudnn.run("bwd_filter", _lift(x, nd), _lift(dw, nd), _lift(g, nd), g2, cl):
                return (*_composed_grads(x, w, g, geom), None, None, None)
        return dx, dw, None, None, None


class _NoEngine(Exception):
    pass


def _lift_geom(geom, nd):
    if nd != 1:
        return geom
    s, d, lo, hi, groups = geom
    return ((1, *s), (1, *d), (0, *lo), (0, *hi), groups)


def _composed_grads(x, w, g, geom):
    """(dx, dw) through the composed path. Under create_graph (grad mode on in the backward)
    it differentiates the saved x and w themselves, so the gradients keep their history back to
    the inputs (double backward); otherwise detached copies (no history is wanted)."""
    from ..autograd import grad
    from ._functional_conv import _conv_channels_last
    from ._grad_mode import enable_grad

    s, d, lo, hi, groups = geom
    graph = is_grad_enabled()
    xs = x if graph and x.requires_grad else x.detach().requires_grad_()
    ws = w if graph and w.requires_grad else w.detach().requires_grad_()
    with enable_grad():
        y = _conv_channels_last(xs, ws, None, s, d, lo, hi, groups)
        return grad([y], [xs, ws], [g], create_graph=graph)


def usable(x, w):
    if x.device.type != "cuda" or x.dtype != w.dtype or str(x.dtype) not in _cudnn._DATA:
        return False
    from ..backends import cudnn

    if not cudnn.enabled or _cudnn.load() is None:
        return False
    return _cudnn.ready(x.device.index)


def conv(x, w, bias, s, d, lo, hi, groups, out_spatial):
    """The convolution through cuDNN, or None when cuDNN does not take it."""
    if not usable(x, w):
        return None
    nd = x.ndim - 2
    cl = _is_channels_last(x) and not x.flags.c_contiguous
    xp, wp = _pack(x, cl), _pack(w, cl)
    out_shape = (x.shape[0], w.shape[0], *out_spatial)
    geom = (tuple(s), tuple(d), tuple(lo), tuple(hi), groups)
    try:
        y = _CudnnConv.apply(xp, wp, geom, out_shape, cl)
    except _NoEngine:
        return None
    if bias is None:
        return y
    if cl:  # the bias added in memory order, so the result stays channels_last
        to_last = (0, *range(2, 2 + nd), 1)
        return (y.transpose(to_last) + bias).transpose((0, nd + 1, *range(1, nd + 1)))
    return y + bias.reshape((1, -1) + (1,) * nd)
