"""ember.nn.functional: sampling and gating — ``affine_grid``, ``grid_sample`` (bilinear,
nearest, bicubic; zeros, border, reflection padding; ``align_corners``), ``gumbel_softmax``,
``glu``. Composed of ember's differentiable ops (gathers with ``take_along_axis``), so gradients
reach both the input and the grid, on either device."""

from __future__ import annotations

from .. import _core
from .._indexing import take_along_axis
from ._functional_activation import sigmoid, softmax
from ._functional_checks import _F, _array

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def glu(input, dim=-1):  # noqa: A002
    """Gated linear unit: ``a * sigmoid(b)`` of the two halves of ``input`` along ``dim``."""
    who = _F + "glu"
    _array(input, who)
    if input.ndim == 0:
        raise ValueError(f"{who}: glu does not support 0-d inputs")
    d = dim % input.ndim
    n = input.shape[d]
    if n % 2:
        raise ValueError(f"{who}: halving dimension must be even, but dimension {dim} is size {n}")
    key_a = [slice(None)] * input.ndim
    key_b = [slice(None)] * input.ndim
    key_a[d], key_b[d] = slice(0, n // 2), slice(n // 2, n)
    return input[tuple(key_a)] * sigmoid(input[tuple(key_b)])


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with Gumbel
    noise ``g``; ``hard`` gives one-hot samples whose gradient is the soft sample's
    (straight-through)."""
    who = _F + "gumbel_softmax"
    _array(logits, who, "logits")
    if logits.dtype.kind != "f":
        raise TypeError(f"{who}: logits must be floating, got {logits.dtype}")
    from .. import random

    e = random._global.exponential(1.0, logits.shape, dtype=logits.dtype, device=logits.device)
    gumbels = -_core.log(e)
    y = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    idx = _core.argmax(y.detach(), axis=dim, keepdims=True)
    d = dim % logits.ndim
    shape = [1] * logits.ndim
    shape[d] = logits.shape[d]
    pos = _core.arange(logits.shape[d], dtype="int64", device=logits.device).reshape(shape)
    y_hard = (pos == idx).astype(logits.dtype)
    return y_hard - y.detach() + y


def _base(n, align_corners, dtype, device):
    """The n normalized coordinates of a grid axis in [-1, 1]."""
    a = _core.arange(n, dtype=dtype, device=device)
    if align_corners:
        return a * (2.0 / (n - 1)) - 1.0 if n > 1 else a * 0.0
    return (a * 2.0 + 1.0) / n - 1.0


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps ``theta`` ((N, 2, 3) for 4-d ``size`` (N, C, H, W),
    (N, 3, 4) for 5-d): (N, H, W, 2) (or (N, D, H, W, 3)) of normalized (x, y[, z])."""
    who = _F + "affine_grid"
    _array(theta, who, "theta")
    align = bool(align_corners) if align_corners is not None else False
    size = tuple(int(s) for s in size)
    if theta.dtype.kind != "f":
        raise TypeError(f"{who}: theta must be floating, got {theta.dtype}")
    if len(size) == 4:
        n, _, h, w = size
        if theta.shape != (n, 2, 3):
            raise ValueError(
                f"{who}: expected theta of shape ({n}, 2, 3) for size {size}, got "
                f"{tuple(theta.shape)}"
            )
        dt, dev = theta.dtype, theta.device
        xs = _core.broadcast_to(_base(w, align, dt, dev).reshape(1, w), (h, w))
        ys = _core.broadcast_to(_base(h, align, dt, dev).reshape(h, 1), (h, w))
        ones = _core.ones((h, w), dtype=dt, device=dev)
        from .._joining import stack

        base = stack([xs, ys, ones], axis=-1).reshape(1, h * w, 3)
        return (base @ theta.mT).reshape(n, h, w, 2)
    if len(size) == 5:
        n, _, d, h, w = size
        if theta.shape != (n, 3, 4):
            raise ValueError(
                f"{who}: expected theta of shape ({n}, 3, 4) for size {size}, got "
                f"{tuple(theta.shape)}"
            )
        dt, dev = theta.dtype, theta.device
        shp = (d, h, w)
        xs = _core.broadcast_to(_base(w, align, dt, dev).reshape(1, 1, w), shp)
        ys = _core.broadcast_to(_base(h, align, dt, dev).reshape(1, h, 1), shp)
        zs = _core.broadcast_to(_base(d, align, dt, dev).reshape(d, 1, 1), shp)
        ones = _core.ones(shp, dtype=dt, device=dev)
        from .._joining import stack

        base = stack([xs, ys, zs, ones], axis=-1).reshape(1, d * h * w, 4)
        return (base @ theta.mT).reshape(n, d, h, w, 3)
    raise ValueError(f"{who}: size must have 4 or 5 entries (N, C, [D,] H, W), got {size}")


def _unnormalize(coord, n, align):
    if align:
        return (coord + 1.0) * ((n - 1) / 2.0)
    return ((coord + 1.0) * n - 1.0) / 2.0


def _reflect(c, n, align):
    """Reflects coordinates into the sampled range (PyTorch's reflection padding)."""
    if align:
        lo, hi = 0.0, float(n - 1)
    else:
        lo, hi = -0.5, n - 0.5
    span = hi - lo
    if span <= 0:
        return c * 0.0
    c = _core.abs(c - lo)
    flips = _core.floor(c / span)
    extra = c - flips * span
    even = _core.remainder(flips, 2.0) == 0
    out = _core.where(even, extra + lo, hi - extra)
    return _core.clip(out, 0.0, float(n - 1))


def _cubic(t, a=-0.75):
    """The 4 cubic-convolution weights of fractional offset t (PyTorch's A = -0.75)."""

    def near(x):  # |x| <= 1
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a

    return [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):  # noqa: A002
    """Samples 4-d ``input`` (N, C, H, W) at the normalized (x, y) locations of ``grid``
    (N, Ho, Wo, 2): (N, C, Ho, Wo). ``mode`` bilinear/nearest/bicubic, ``padding_mode``
    zeros/border/reflection, ``align_corners`` as PyTorch (default False)."""
    who = _F + "grid_sample"
    _array(input, who)
    _array(grid, who, "grid")
    if mode not in _MODES:
        raise ValueError(f"{who}: mode must be one of {_MODES}, got {mode!r}")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"{who}: padding_mode must be one of {_PADDINGS}, got {padding_mode!r}")
    if input.ndim != 4:
        raise ValueError(f"{who}: input must be 4-d (N, C, H, W), got shape {tuple(input.shape)}")
    n, c, h, w = input.shape
    if grid.ndim != 4 or grid.shape[0] != n or grid.shape[3] != 2:
        raise ValueError(
            f"{who}: grid must be (N, H_out, W_out, 2) with N = {n}, got shape {tuple(grid.shape)}"
        )
    if input.dtype.kind != "f" or grid.dtype != input.dtype:
        raise TypeError(
            f"{who}: input and grid must be floating arrays of one dtype, got {input.dtype} "
            f"and {grid.dtype}"
        )
    align = bool(align_corners) if align_corners is not None else False
    ho, wo = grid.shape[1], grid.shape[2]
    ix = _unnormalize(grid[..., 0], w, align)
    iy = _unnormalize(grid[..., 1], h, align)
    # bilinear and nearest pad the sampling coordinate itself; bicubic pads each of its 16 taps
    # (PyTorch's rule)
    if padding_mode == "border" and mode != "bicubic":
        ix, iy = _core.clip(ix, 0.0, float(w - 1)), _core.clip(iy, 0.0, float(h - 1))
    elif padding_mode == "reflection" and mode != "bicubic":
        ix, iy = _reflect(ix, w, align), _reflect(iy, h, align)
    flat = input.reshape(n, c, h * w)
    zero = padding_mode == "zeros"

    def tap(xi, yi):
        """input at integer (xi, yi) (float arrays (N, Ho, Wo)): (N, C, Ho, Wo); zero outside
        (for border/reflection the coordinates are already inside)."""
        xc = _core.clip(xi, 0.0, float(w - 1)).astype("int64")
        yc = _core.clip(yi, 0.0, float(h - 1)).astype("int64")
        idx = (yc * w + xc).reshape(n, 1, ho * wo)
        v = take_along_axis(flat, _core.broadcast_to(idx, (n, c, ho * wo)), axis=2)
        v = v.reshape(n, c, ho, wo)
        if zero:
            inside = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
            v = v * inside.astype(input.dtype).reshape(n, 1, ho, wo)
        return v

    if mode == "nearest":
        # round half to even, as PyTorch's nearbyint
        return tap(_core.round(ix).detach(), _core.round(iy).detach())
    x0 = _core.floor(ix).detach()
    y0 = _core.floor(iy).detach()
    tx, ty = ix - x0, iy - y0
    if mode == "bilinear":
        out = None
        for dy, wy in ((0.0, 1.0 - ty), (1.0, ty)):
            for dx, wx in ((0.0, 1.0 - tx), (1.0, tx)):
                term = tap(x0 + dx, y0 + dy) * (wx * wy).reshape(n, 1, ho, wo)
                out = term if out is None else out + term
        return out
    # bicubic: 4 x 4 taps; PyTorch clamps/reflects each tap's coordinate for border/reflection
    wxs, wys = _cubic(tx), _cubic(ty)
    out = None
    for j, wy in enumerate(wys):
        yj = y0 + (j - 1.0)
        for i, wx in enumerate(wxs):
            xi = x0 + (i - 1.0)
            if padding_mode == "border":
                xs, ys = _core.clip(xi, 0.0, float(w - 1)), _core.clip(yj, 0.0, float(h - 1))
            elif padding_mode == "reflection":
                xs, ys = _reflect(xi, w, align), _reflect(yj, h, align)
            else:
                xs, ys = xi, yj
            term = tap(xs, ys) * (wx * wy).reshape(n, 1, ho, wo)
            out = term if out is None else out + term
    return out
