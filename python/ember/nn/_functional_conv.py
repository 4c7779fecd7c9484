"""Convolution, padding and pooling in ember.nn.functional (PyTorch's names and semantics):
``pad`` (constant, reflect, replicate, circular), ``unfold``/``fold``, ``conv1d/2d/3d`` (stride,
padding incl. "same"/"valid", dilation, groups), ``conv_transpose1d/2d``, ``max_pool1d/2d/3d``
(``return_indices``), ``avg_pool1d/2d``, ``adaptive_avg_pool1d/2d``, ``adaptive_max_pool2d``,
``pixel_shuffle``. Composed of differentiable ember ops (a gather of the receptive fields, then
one matmul per group), so every one has gradients on both devices. GPU convolutions go through
cuDNN when it is present (``_conv_cudnn.py``); this path is their fallback.
"""

from __future__ import annotations

import itertools
import math

from .. import _core
from .._array import asarray
from .._joining import concatenate, stack
from ..amp import LOW, cast_policy
from ..autograd import Function, is_grad_enabled
from . import _conv_cudnn
from ._functional_checks import _F, _array

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "fold",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "pad",
    "pixel_shuffle",
    "unfold",
]


def _tuple(v, n, who, name):
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,) * n
    t = tuple(v)
    if len(t) == 1:
        t = t * n
    if len(t) != n or not all(isinstance(x, int) and not isinstance(x, bool) for x in t):
        raise ValueError(f"{who}: {name} must be an int or {n} ints, got {v!r}")
    return t


# ---- padding -----------------------------------------------------------------------------------


def pad(input, pad, mode="constant", value=None):  # noqa: A002
    """PyTorch's ``pad``: `pad` lists (before, after) sizes from the last dimension backwards;
    modes constant (with `value`), reflect, replicate, circular. Negative sizes crop."""
    who = _F + "pad"
    _array(input, who)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"{who}: pad must have an even length of at most 2 * ndim, got {pad!r}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise ValueError(
            f"{who}: mode must be constant, reflect, replicate or circular, got {mode!r}"
        )
    x = input
    for i in range(len(pad) // 2):
        dim = input.ndim - 1 - i
        lo, hi = int(pad[2 * i]), int(pad[2 * i + 1])
        x = _pad_dim(x, dim, lo, hi, mode, 0.0 if value is None else value, who)
    return x


def _take(x, dim, idx):
    return (
        _core._take_in_range(x, asarray(idx, dtype="int64", device=x.device), axis=dim)
        if len(idx)
        else _slice(x, dim, 0, 0)
    )


def _slice(x, dim, a, b):
    s = [slice(None)] * x.ndim
    s[dim] = slice(a, b)
    return x[tuple(s)]


def _pad_dim(x, dim, lo, hi, mode, value, who):
    n = x.shape[dim]
    if lo < 0:
        x, n, lo = _slice(x, dim, -lo, n), n + lo, 0
    if hi < 0:
        x, n, hi = _slice(x, dim, 0, n + hi), n + hi, 0
    if lo == 0 and hi == 0:
        return x
    if mode == "constant":
        parts = []
        for k in (lo, None, hi):
            if k is None:
                parts.append(x)
            elif k:
                shape = list(x.shape)
                shape[dim] = k
                parts.append(_core.full(tuple(shape), value, dtype=x.dtype, device=x.device))
        return concatenate(parts, axis=dim)
    if mode == "reflect":
        if lo >= n or hi >= n:
            raise ValueError(f"{who}: reflect padding must be smaller than the dimension ({n})")
        idx = [lo - i for i in range(lo)] + list(range(n)) + [n - 2 - i for i in range(hi)]
    elif mode == "replicate":
        idx = [0] * lo + list(range(n)) + [n - 1] * hi
    else:  # circular
        if lo > n or hi > n:
            raise ValueError(f"{who}: circular padding must not exceed the dimension ({n})")
        idx = [(i - lo) % n for i in range(n + lo + hi)]
    return _take(x, dim, idx)


# ---- receptive fields ----------------------------------------------------------------------------


def _out_sizes(spatial, k, s, d):
    outs = [(spatial[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(len(k))]
    if any(o <= 0 for o in outs):
        raise ValueError(
            f"the kernel (dilated: {[d[i] * (k[i] - 1) + 1 for i in range(len(k))]}) is larger "
            f"than the padded input {list(spatial)}"
        )
    return outs


def _tap_views(x, k, s, d, outs, first):
    """One strided view per kernel tap (row-major over the taps) of the spatial dimensions
    ``first .. first + len(k) - 1`` of x: no gather, only slices."""
    nd = len(k)
    views = []
    for tap in itertools.product(*(range(kk) for kk in k)):
        idx = [slice(None)] * x.ndim
        for i in range(nd):
            a = tap[i] * d[i]
            idx[first + i] = slice(a, a + s[i] * (outs[i] - 1) + 1, s[i])
        views.append(x[tuple(idx)])
    return views


def _tap_index(t, axis):
    return (slice(None),) * axis + (t,)


class _TapStack(Function):
    """im2col: the taps' strided views of x stacked along `axis`. Its backward is col2im (the
    taps added back into one buffer, in place, one strided add per tap), and col2im's backward
    is this again, so both directions stay differentiable."""

    @staticmethod
    def forward(ctx, x, k, s, d, outs, first, axis):
        ctx.geometry = (tuple(x.shape), k, s, d, outs, first, axis)
        taps = _tap_views(x, k, s, d, outs, first)
        return stack(taps, axis=axis)

    @staticmethod
    def backward(ctx, g):
        shape, k, s, d, outs, first, axis = ctx.geometry
        return _TapScatter.apply(g, shape, k, s, d, outs, first, axis), *(None,) * 6


class _TapScatter(Function):
    """col2im: each tap (index `t` along `axis` of the columns) added into its strided view of a
    zero array of `shape`."""

    @staticmethod
    def forward(ctx, cols, shape, k, s, d, outs, first, axis):
        ctx.geometry = (k, s, d, outs, first, axis)
        out = _core.zeros(shape, dtype=cols.dtype, device=cols.device)
        for t, view in enumerate(_tap_views(out, k, s, d, outs, first)):
            view += cols[_tap_index(t, axis)]
        return out

    @staticmethod
    def backward(ctx, g):
        k, s, d, outs, first, axis = ctx.geometry
        return _TapStack.apply(g, k, s, d, outs, first, axis), *(None,) * 7


class _ZeroPad(Function):
    """x inside a zero border (`lo`/`hi` per dimension, non-negative), written once into a new
    C-ordered array (whatever x's strides): the layout copy and the padding in one pass."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.inner = tuple(slice(a, a + n) for a, n in zip(lo, x.shape, strict=True))
        shape = tuple(n + a + b for n, a, b in zip(x.shape, lo, hi, strict=True))
        out = _core.zeros(shape, dtype=x.dtype, device=x.device)
        out[ctx.inner] = x
        return out

    @staticmethod
    def backward(ctx, g):
        return g[ctx.inner], None, None


def _stacked_taps(x, k, s, d, outs, first, axis):
    """_TapStack when a gradient is wanted, else the plain stack (no autograd node)."""
    if x.requires_grad and is_grad_enabled():
        return _TapStack.apply(x, k, s, d, outs, first, axis)
    return stack(_tap_views(x, k, s, d, outs, first), axis=axis)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """PyTorch's ``unfold`` (im2col) of a 4-d input: (N, C * kh * kw, L)."""
    who = _F + "unfold"
    _array(input, who)
    if input.ndim != 4:
        raise ValueError(f"{who}: input must be 4-d (N, C, H, W), got {input.ndim}-d")
    k, d, p, s = (
        _tuple(v, 2, who, n)
        for v, n in (
            (kernel_size, "kernel_size"),
            (dilation, "dilation"),
            (padding, "padding"),
            (stride, "stride"),
        )
    )
    x = pad(input, (p[1], p[1], p[0], p[0]))
    outs = _out_sizes(x.shape[2:], k, s, d)
    n, c = input.shape[:2]
    f = _stacked_taps(x, k, s, d, outs, 2, 2)  # (N, C, kh * kw, Oh, Ow)
    return f.reshape((n, c * k[0] * k[1], outs[0] * outs[1]))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """PyTorch's ``fold`` (col2im), unfold's adjoint: sums the blocks back into (N, C, H, W)."""
    who = _F + "fold"
    _array(input, who)
    out_hw = _tuple(output_size, 2, who, "output_size")
    k, d, p, s = (
        _tuple(v, 2, who, n)
        for v, n in (
            (kernel_size, "kernel_size"),
            (dilation, "dilation"),
            (padding, "padding"),
            (stride, "stride"),
        )
    )
    n, ckk, nb = input.shape
    c = ckk // (k[0] * k[1])
    hp, wp = out_hw[0] + 2 * p[0], out_hw[1] + 2 * p[1]
    oh = (hp - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (wp - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if oh * ow != nb or c * k[0] * k[1] != ckk:
        raise ValueError(
            f"{who}: input of shape {input.shape} does not match the blocks ({oh} x {ow}) "
            "of the output"
        )
    # unfold's adjoint: each tap added back into the padded planes, then the padding cut off
    cols = input.reshape((n, c, k[0] * k[1], oh, ow))
    full = _TapScatter.apply(cols, (n, c, hp, wp), k, s, d, [oh, ow], 2, 2)
    return full[:, :, p[0] : p[0] + out_hw[0], p[1] : p[1] + out_hw[1]]


# ---- convolution ---------------------------------------------------------------------------------


def _conv(input, weight, bias, stride, padding, dilation, groups, nd, who):
    _array(input, who)
    _array(weight, who, "weight")
    if input.ndim != nd + 2:
        raise ValueError(f"{who}: input must be {nd + 2}-d (N, C, ...), got {input.ndim}-d")
    if weight.ndim != nd + 2:
        raise ValueError(
            f"{who}: weight must be {nd + 2}-d (C_out, C_in / groups, ...), got {weight.ndim}-d"
        )
    c_in, c_out = input.shape[1], weight.shape[0]
    if groups <= 0 or c_in % groups or c_out % groups or weight.shape[1] * groups != c_in:
        raise ValueError(
            f"{who}: input has {c_in} channels, weight {tuple(weight.shape)} with groups={groups}"
        )
    k = tuple(weight.shape[2:])
    s = _tuple(stride, nd, who, "stride")
    d = _tuple(dilation, nd, who, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            p_lo = p_hi = (0,) * nd
        elif padding == "same":
            if any(v != 1 for v in s):
                raise ValueError(f"{who}: padding='same' needs stride 1")
            total = [d[i] * (k[i] - 1) for i in range(nd)]
            p_lo = tuple(t // 2 for t in total)
            p_hi = tuple(t - t // 2 for t in total)
        else:
            raise ValueError(
                f"{who}: padding must be 'same', 'valid', an int or ints, got {padding!r}"
            )
    else:
        p_lo = p_hi = _tuple(padding, nd, who, "padding")
    if input.device.type == "cuda":
        padded = tuple(n + a + b for n, a, b in zip(input.shape[2:], p_lo, p_hi, strict=True))
        outs = _out_sizes(padded, k, s, d)
        y = _conv_cudnn.conv(input, weight, bias, s, d, p_lo, p_hi, groups, outs)
        if y is not None:
            return y
    return _conv_channels_last(input, weight, bias, s, d, p_lo, p_hi, groups)


def _channels_last_memory(x):
    """Whether x (N, C, *S) is laid out as (N, *S, C) in memory (PyTorch's channels_last)."""
    nd = x.ndim - 2
    return x.transpose((0, *range(2, 2 + nd), 1)).flags.c_contiguous and not x.flags.c_contiguous


def _conv_channels_last(input, weight, bias, s, d, p_lo, p_hi, groups):
    """The convolution in (N, *S, C) order: the padded input once in that order, one strided
    view per kernel tap, the taps stacked into rows of (taps, C) per output position, then one
    matmul (a batched one over groups; a weighted sum of taps when each group has one input and
    one output channel). The result keeps the input's memory format."""
    nd = input.ndim - 2
    n, c_in, c_out = input.shape[0], input.shape[1], weight.shape[0]
    k = tuple(weight.shape[2:])
    to_last = (0, *range(2, 2 + nd), 1)
    xl = input.transpose(to_last)  # (N, *S, C): a view; a copy below unless already in order
    if any(p_lo) or any(p_hi):
        xl = _ZeroPad.apply(xl, (0, *p_lo, 0), (0, *p_hi, 0))
    elif not xl.flags.c_contiguous:
        xl = xl.copy()  # channels_last inputs without padding (1x1 convs) need no copy
    outs = _out_sizes(xl.shape[1 : 1 + nd], k, s, d)
    kk, positions = math.prod(k), n * math.prod(outs)
    if kk == 1:  # one tap: its strided view is the columns (a copy only when strided)
        cols = _tap_views(xl, k, s, d, outs, 1)[0]
    else:
        cols = _stacked_taps(xl, k, s, d, outs, 1, 1 + nd)  # (N, *O, KK, C)
    cg_in, cg_out = c_in // groups, c_out // groups
    # weight (C_out, C_in/g, *K) -> (C_out, KK, C_in/g): the taps' order of the rows
    wl = weight.reshape((c_out, cg_in, kk)).swapaxes(1, 2)
    if groups == 1:
        y = cols.reshape((positions, kk * c_in)) @ wl.reshape((c_out, kk * c_in)).T
    elif cg_in == 1 and cg_out == 1:  # depthwise: a weighted sum of the taps
        y = (cols.reshape((positions, kk, c_in)) * wl.reshape((c_out, kk)).T).sum(axis=1)
    else:
        cg = cols.reshape((positions, kk, groups, cg_in)).transpose((2, 0, 1, 3))
        cg = cg.reshape((groups, positions, kk * cg_in))
        wg = wl.reshape((groups, cg_out, kk * cg_in)).swapaxes(1, 2)
        y = (cg @ wg).swapaxes(0, 1).reshape((positions, c_out))  # (P, G * C_out/g)
    if bias is not None:
        y = y + bias
    y = y.reshape((n, *outs, c_out)).transpose((0, 1 + nd, *range(1, 1 + nd)))
    return y if _channels_last_memory(input) else y.copy()


@cast_policy(LOW)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """1-d convolution (cross-correlation) of (N, C_in, L) with (C_out, C_in/groups, k)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, _F + "conv1d")


@cast_policy(LOW)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """2-d convolution (cross-correlation) of (N, C_in, H, W) with (C_out, C_in/groups, kh, kw)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, _F + "conv2d")


@cast_policy(LOW)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """3-d convolution of (N, C_in, D, H, W) with (C_out, C_in/groups, kd, kh, kw)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, _F + "conv3d")


def _conv_transpose(
    input, weight, bias, stride, padding, output_padding, groups, dilation, nd, who
):
    """The adjoint of conv with `weight` (C_in, C_out/groups, *k): its input gradient."""
    _array(input, who)
    _array(weight, who, "weight")
    s = _tuple(stride, nd, who, "stride")
    p = _tuple(padding, nd, who, "padding")
    op = _tuple(output_padding, nd, who, "output_padding")
    d = _tuple(dilation, nd, who, "dilation")
    k = tuple(weight.shape[2:])
    n, c_in = input.shape[:2]
    c_out = weight.shape[1] * groups
    size = tuple(
        (input.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1
        for i in range(nd)
    )
    from ..autograd import grad
    from ._grad_mode import enable_grad

    with enable_grad():
        z = _core.zeros((n, c_out, *size), dtype=input.dtype, device=input.device)
        z.requires_grad_()
        # conv_transpose(x, W) is the adjoint of conv(., W): W is (C_in, C_out / g, *k) as is
        y = _conv(z, weight, None, s, p, d, groups, nd, who)
        (g,) = grad([y], [z], [input], create_graph=True)
    return g if bias is None else g + bias.reshape((1, c_out) + (1,) * nd)


@cast_policy(LOW)
def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):  # noqa: A002
    """Transposed 1-d convolution (the gradient of conv1d with respect to its input)."""
    args = (stride, padding, output_padding, groups, dilation)
    return _conv_transpose(input, weight, bias, *args, 1, _F + "conv_transpose1d")


@cast_policy(LOW)
def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):  # noqa: A002
    """Transposed 2-d convolution (the gradient of conv2d with respect to its input)."""
    args = (stride, padding, output_padding, groups, dilation)
    return _conv_transpose(input, weight, bias, *args, 2, _F + "conv_transpose2d")


@cast_policy(LOW)
def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):  # noqa: A002
    """Transposed 3-d convolution (the gradient of conv3d with respect to its input)."""
    args = (stride, padding, output_padding, groups, dilation)
    return _conv_transpose(input, weight, bias, *args, 3, _F + "conv_transpose3d")


# ---- pooling -------------------------------------------------------------------------------------


def _pool(
    input,
    kernel_size,
    stride,
    padding,
    dilation,
    ceil_mode,
    nd,
    who,
    kind,
    return_indices=False,
    count_include_pad=True,
):
    _array(input, who)
    batched = input.ndim == nd + 2
    if input.ndim not in (nd + 1, nd + 2):
        raise ValueError(f"{who}: input must be {nd + 1}-d or {nd + 2}-d, got {input.ndim}-d")
    x = input if batched else input[None]
    k = _tuple(kernel_size, nd, who, "kernel_size")
    s = _tuple(stride if stride is not None else kernel_size, nd, who, "stride")
    p = _tuple(padding, nd, who, "padding")
    d = _tuple(dilation, nd, who, "dilation")
    if any(p[i] * 2 > k[i] for i in range(nd)):
        raise ValueError(
            f"{who}: padding should be at most half of the kernel size, got {p} for {k}"
        )
    extra = [0] * nd
    if ceil_mode:
        for i in range(nd):
            size = x.shape[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1
            o = -(-size // s[i]) + 1
            if (o - 1) * s[i] >= x.shape[2 + i] + p[i]:
                o -= 1
            extra[i] = max(0, (o - 1) * s[i] + d[i] * (k[i] - 1) + 1 - (x.shape[2 + i] + 2 * p[i]))
    fill = -math.inf if kind == "max" else 0.0
    pads = []
    for i in reversed(range(nd)):
        pads += [p[i], p[i] + extra[i]]
    xp = pad(x, pads, value=fill)
    outs = _out_sizes(xp.shape[2:], k, s, d)
    # (K, N, C, *O): the taps' strided views stacked tap-major (contiguous copies)
    flat = _stacked_taps(xp, k, s, d, outs, 2, 0)
    if kind == "max":
        y = flat.max(axis=0)
        if return_indices:
            arg = flat.argmax(axis=0)
            idx = _flat_indices(arg, outs, k, s, d, p, x.shape[2:], nd, x.device)
            y, idx = (y, idx) if batched else (y[0], idx[0])
            return y, idx
    else:
        if count_include_pad and not any(extra):
            y = flat.mean(axis=0)
        else:
            # how many real (or counted padding) elements each window holds
            ones = _core.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype, device=x.device)
            regular = [v for i in reversed(range(nd)) for v in (p[i], p[i])]
            overhang = [v for i in reversed(range(nd)) for v in (0, extra[i])]
            m = pad(
                pad(ones, regular, value=1.0 if count_include_pad else 0.0), overhang, value=0.0
            )
            cnt = stack(_tap_views(m, k, s, d, outs, 2), axis=0).sum(axis=0)
            y = flat.sum(axis=0) / cnt
    return y if batched else y[0]


def _flat_indices(arg, outs, k, s, d, p, spatial, nd, device):
    """max_pool's indices: the flat position in each input plane (as PyTorch's)."""
    coords = []
    rem = arg
    for i in reversed(range(nd)):
        coords.append(rem % k[i])
        rem = rem // k[i]
    coords.reverse()
    flat = None
    for i in range(nd):
        shape = [1] * (2 + nd)
        shape[2 + i] = outs[i]
        o = _core.arange(outs[i], dtype="int64", device=device).reshape(tuple(shape))
        pos = o * s[i] + coords[i] * d[i] - p[i]
        flat = pos if flat is None else flat * spatial[i] + pos
    return flat


def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):  # noqa: A002
    """Max over sliding windows of the last dimension."""
    return _pool(
        input,
        kernel_size,
        stride,
        padding,
        dilation,
        ceil_mode,
        1,
        _F + "max_pool1d",
        "max",
        return_indices,
    )


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):  # noqa: A002
    """Max over sliding windows of the last two dimensions."""
    return _pool(
        input,
        kernel_size,
        stride,
        padding,
        dilation,
        ceil_mode,
        2,
        _F + "max_pool2d",
        "max",
        return_indices,
    )


def max_pool3d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):  # noqa: A002
    """Max over sliding windows of the last three dimensions."""
    return _pool(
        input,
        kernel_size,
        stride,
        padding,
        dilation,
        ceil_mode,
        3,
        _F + "max_pool3d",
        "max",
        return_indices,
    )


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):  # noqa: A002
    """Mean over sliding windows of the last dimension."""
    return _pool(
        input,
        kernel_size,
        stride,
        padding,
        1,
        ceil_mode,
        1,
        _F + "avg_pool1d",
        "avg",
        count_include_pad=count_include_pad,
    )


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):  # noqa: A002
    """Mean over sliding windows of the last two dimensions."""
    y = _pool(
        input,
        kernel_size,
        stride,
        padding,
        1,
        ceil_mode,
        2,
        _F + "avg_pool2d",
        "avg",
        count_include_pad=count_include_pad,
    )
    if divisor_override:
        k = _tuple(kernel_size, 2, _F + "avg_pool2d", "kernel_size")
        y = y * (k[0] * k[1] / divisor_override)
    return y


def _adaptive(input, output_size, nd, who, kind):
    _array(input, who)
    batched = input.ndim == nd + 2
    x = input if batched else input[None]
    out = (
        _tuple(output_size, nd, who, "output_size")
        if not isinstance(output_size, int)
        else (output_size,) * nd
    )
    out = tuple(x.shape[2 + i] if out[i] is None else out[i] for i in range(nd))
    spatial = x.shape[2:]
    cells = []
    for pos in itertools.product(*(range(o) for o in out)):
        sl = [slice(None), slice(None)]
        for i in range(nd):
            a = (pos[i] * spatial[i]) // out[i]
            b = -(-((pos[i] + 1) * spatial[i]) // out[i])
            sl.append(slice(a, b))
        region = x[tuple(sl)].reshape(x.shape[:2] + (-1,))
        cells.append(region.max(axis=-1) if kind == "max" else region.mean(axis=-1))
    from .._joining import stack

    y = stack(cells, axis=-1).reshape(x.shape[:2] + out)
    return y if batched else y[0]


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """Means over `output_size` adaptive windows of the last dimension."""
    return _adaptive(input, output_size, 1, _F + "adaptive_avg_pool1d", "avg")


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """Means over adaptive windows of the last two dimensions (PyTorch's window bounds)."""
    return _adaptive(input, output_size, 2, _F + "adaptive_avg_pool2d", "avg")


def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    """Maxima over adaptive windows of the last two dimensions."""
    if return_indices:
        raise ValueError(_F + "adaptive_max_pool2d: return_indices is not supported")
    return _adaptive(input, output_size, 2, _F + "adaptive_max_pool2d", "max")


def pixel_shuffle(input, upscale_factor):  # noqa: A002
    """(N, C r^2, H, W) -> (N, C, H r, W r)."""
    who = _F + "pixel_shuffle"
    _array(input, who)
    r = int(upscale_factor)
    n, c, h, w = input.shape[-4:] if input.ndim >= 4 else (None,) * 4
    if input.ndim != 4 or c % (r * r):
        raise ValueError(
            f"{who}: input must be (N, C * r^2, H, W), got {tuple(input.shape)} for r={r}"
        )
    x = input.reshape((n, c // (r * r), r, r, h, w))
    return x.transpose((0, 1, 4, 2, 5, 3)).reshape((n, c // (r * r), h * r, w * r))
