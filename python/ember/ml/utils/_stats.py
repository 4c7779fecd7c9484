"""Weighted percentiles on the data's device (scikit-learn's ``utils.stats``)."""

from __future__ import annotations

import ember

__all__ = ["weighted_percentile"]


def weighted_percentile(a, w, q, average=False):
    """Per column of the 2-D ember array ``a``: the weighted ``q``-th percentile (NumPy's
    'inverted_cdf', or 'averaged_inverted_cdf' when ``average``), ``w`` 1-D or like ``a``.

    The sorted weights' cumulative sums are compared with q/100 of the total; the first
    position reaching it (searchsorted-left) is the percentile's sample. Returns a 1-D array.
    """
    n, d = a.shape
    if w.ndim == 1:
        w = ember.broadcast_to(w[:, None], (n, d))
    order = ember.argsort(a, axis=0)
    sa = ember.take_along_axis(a, order, axis=0)
    sw = ember.take_along_axis(w, order, axis=0)
    sw = ember.where(ember.isnan(sa), 0.0, sw)
    cdf = ember.cumsum(sw, axis=0)
    rank = q / 100.0 * cdf[-1]
    rank = ember.where(rank == 0, ember.nextafter(rank, rank + 1), rank)
    idx = (cdf < rank[None, :]).sum(axis=0).astype(ember.int64)
    idx = ember.clip(idx, 0, n - 1)
    val = ember.take_along_axis(sa, idx[None, :], axis=0)[0]
    if not average:
        return val
    # Averaged: the mean with the next sample of positive weight when the rank lands exactly
    # on a cumulative sum.
    at = ember.take_along_axis(cdf, idx[None, :], axis=0)[0]
    exact = (at - rank) <= ember.finfo(a.dtype).eps
    nxt = (cdf <= at[None, :]).sum(axis=0).astype(ember.int64)
    nxt = ember.where(nxt > n - 1, idx, nxt)
    val2 = ember.take_along_axis(sa, nxt[None, :], axis=0)[0]
    return ember.where(exact, (val + val2) / 2, val)
