"""Counting and binning, composed from searchsorted and scatter-add (any device, no host copy
of the data): bincount, digitize, histogram, histogram_bin_edges, histogram2d and
histogramdd."""

from __future__ import annotations

import builtins
import operator

import numpy as _np

from . import _core
from ._manipulation import _asarray, flip
from ._sorting import searchsorted

__all__ = [
    "bincount",
    "digitize",
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
]


def bincount(x, /, weights=None, minlength=0):
    """Counts of each value of a 1-D array of non-negative integers (sums of `weights` when
    given), of length max(x) + 1 or `minlength`."""
    who = "ember.bincount"
    x = _asarray(x)
    if x.ndim != 1:
        raise ValueError(f"{who}: expected a 1-D array, got shape {x.shape}")
    if x.dtype.kind not in "iub":
        raise TypeError(f"{who}: expected integers, got dtype {x.dtype}")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError(f"{who}: minlength must be non-negative, got {minlength}")
    n = 0
    if x.shape[0]:
        lo = int(_core.min(x).item())
        if lo < 0:
            raise ValueError(f"{who}: the values must be non-negative, got {lo}")
        n = int(_core.max(x).item()) + 1
    size = builtins.max(n, minlength)
    if weights is None:
        out = _core.zeros(size, dtype=_core.int64, device=x.device)
        if x.shape[0]:
            _core._add_at(out, x, 1)
        return out
    w = _asarray(weights)
    if w.shape != x.shape:
        raise ValueError(f"{who}: weights have shape {w.shape} but x has {x.shape}")
    t = _core.complex128 if w.dtype.kind == "c" else _core.float64
    out = _core.zeros(size, dtype=t, device=x.device)
    if x.shape[0]:
        _core._add_at(out, x, w.astype(t))
    return out


def digitize(x, bins, right=False):
    """The index of the bin of each value (NumPy's digitize): for increasing bins, i with
    bins[i-1] <= x < bins[i] (bins[i-1] < x <= bins[i] when right)."""
    x, b = _asarray(x), _asarray(bins)
    if b.ndim != 1:
        raise ValueError(f"ember.digitize: bins must be 1-D, got shape {b.shape}")
    side = "left" if right else "right"
    n = b.shape[0]
    if n > 1 and bool((b[1:] < b[:-1]).any().item()):
        if bool((b[1:] > b[:-1]).any().item()):
            raise ValueError("ember.digitize: bins must be monotonically increasing or decreasing")
        return n - searchsorted(flip(b), x, side=side)
    return searchsorted(b, x, side=side)


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """(hist, bin_edges) of the flattened array, as NumPy's histogram: `bins` equal-width bins
    over `range` (default: the data's min and max), or explicit increasing edges; the last bin
    includes its right edge."""
    who = "ember.histogram"
    x = _asarray(a).reshape((-1,))
    if not isinstance(bins, _core.ndarray) and not hasattr(bins, "__len__"):
        bins = operator.index(bins)  # a count of bins (else explicit edges)
    if isinstance(bins, int):
        if bins < 1:
            raise ValueError(f"{who}: bins must be a positive integer, got {bins}")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.shape[0]:
            lo, hi = float(_core.min(x).item()), float(_core.max(x).item())
        else:
            lo, hi = 0.0, 1.0
        if (
            not (lo <= hi)
            or lo in (float("inf"), float("-inf"))
            or hi
            in (
                float("inf"),
                float("-inf"),
            )
        ):
            raise ValueError(f"{who}: range must be finite with min <= max, got ({lo}, {hi})")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _core.linspace(lo, hi, bins + 1, device=x.device)
    else:
        edges = _asarray(bins).astype(_core.float64)
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError(f"{who}: bin edges must be a 1-D array of at least 2 values")
        if bool((edges[1:] < edges[:-1]).any().item()):
            raise ValueError(f"{who}: bin edges must increase monotonically")
        edges = edges.to(x.device)
    nb = edges.shape[0] - 1
    xf = x.astype(_core.float64) if x.dtype.kind != "f" else x
    inside = (xf >= edges[0]) & (xf <= edges[-1])
    if range is not None or not isinstance(bins, int):
        keep = inside
        xf = xf[keep]
        w = None if weights is None else _asarray(weights).reshape((-1,))[keep]
    else:
        w = None if weights is None else _asarray(weights).reshape((-1,))
    idx = searchsorted(edges, xf.astype(edges.dtype), side="right") - 1
    idx = _core.clip(idx, 0, nb - 1)  # the last edge belongs to the last bin
    hist = bincount(idx, weights=w, minlength=nb)
    if w is not None:
        hist = hist.astype(w.dtype)  # NumPy's: the weights' dtype
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist.astype(_core.float64) / (widths * _core.sum(hist))
    return hist, edges


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The bin edges histogram would use."""
    return histogram(a, bins=bins, range=range, weights=weights)[1]


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """(H, xedges, yedges): the 2-D histogram of points (x, y)."""
    x, y = _asarray(x).reshape((-1,)), _asarray(y).reshape((-1,))
    if x.shape != y.shape:
        raise ValueError("ember.histogram2d: x and y must have the same length")
    bx, by = (bins, bins) if not isinstance(bins, list | tuple) else bins
    rx, ry = (None, None) if range is None else range
    ex = histogram(x, bins=bx, range=rx)[1]
    ey = histogram(y, bins=by, range=ry)[1]
    nx, ny = ex.shape[0] - 1, ey.shape[0] - 1
    inside = (x >= ex[0]) & (x <= ex[-1]) & (y >= ey[0]) & (y <= ey[-1])
    ix = _core.clip(searchsorted(ex, x.astype(ex.dtype), side="right") - 1, 0, nx - 1)
    iy = _core.clip(searchsorted(ey, y.astype(ey.dtype), side="right") - 1, 0, ny - 1)
    flat = (ix * ny + iy)[inside]
    w = None if weights is None else _asarray(weights).reshape((-1,))[inside]
    h = bincount(flat, weights=w, minlength=nx * ny).reshape((nx, ny))
    if density:
        area = (ex[1:] - ex[:-1])[:, None] * (ey[1:] - ey[:-1])[None, :]
        h = h.astype(_core.float64) / (area * _core.sum(h))
    elif w is None:
        h = h.astype(_core.float64)  # NumPy's histogram2d counts in float64
    return h, ex, ey


def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """(H, edges): the D-dimensional histogram of N points (an (N, D) array)."""
    s = _asarray(sample)
    if s.ndim == 1:
        s = s[:, None]
    if s.ndim != 2:
        raise ValueError("ember.histogramdd: sample must be (N, D)")
    d = s.shape[1]
    nbins = bins if isinstance(bins, list | tuple) else [bins] * d
    ranges = range if range is not None else [None] * d
    edges, idx, inside = [], None, None
    for k in builtins.range(d):
        col = s[:, k]
        e = histogram(col, bins=nbins[k], range=ranges[k])[1]
        edges.append(e)
        nk = e.shape[0] - 1
        i = _core.clip(searchsorted(e, col.astype(e.dtype), side="right") - 1, 0, nk - 1)
        ok = (col >= e[0]) & (col <= e[-1])
        idx = i if idx is None else idx * nk + i
        inside = ok if inside is None else inside & ok
    shape = tuple(e.shape[0] - 1 for e in edges)
    w = None if weights is None else _asarray(weights).reshape((-1,))[inside]
    flat = idx[inside]
    h = bincount(flat, weights=w, minlength=int(_np.prod(shape))).reshape(shape)
    h = h.astype(_core.float64)
    if density:
        vol = _core.ones(shape, dtype=_core.float64, device=s.device)
        for k, e in enumerate(edges):
            widths = (e[1:] - e[:-1]).reshape(tuple(-1 if j == k else 1 for j in builtins.range(d)))
            vol = vol * widths
        h = h / (vol * _core.sum(h))
    return h, edges
