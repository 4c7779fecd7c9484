"""einsum: NumPy's subscripts (explicit ``->``, implicit output, ``...``, repeated labels),
lowered to views, sums and one batched matmul per pair of operands, left to right; and
einsum_path, NumPy's contraction order computed from the operands' shapes alone."""

from __future__ import annotations

import string

import numpy as _np

from . import _core
from ._array import asarray
from ._core import broadcast_to, matmul, ndarray, permute_dims
from ._core import sum as _sum
from ._manipulation import _asarray

__all__ = [
    "einsum",
    "einsum_path",
]


_LETTERS = set(string.ascii_letters)


def _parse(subscripts, operands):
    who = "ember.einsum"
    s = subscripts.replace(" ", "")
    ins, arrow, out = s.partition("->")
    terms = ins.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"{who}: {len(terms)} operand subscripts for {len(operands)} operands")
    # '...' stands for the same broadcast dims everywhere: give them labels of their own.
    free = [c for c in string.ascii_letters if c not in s]
    nell = 0
    for t, x in zip(terms, operands, strict=True):
        if "..." in t:
            nell = max(nell, x.ndim - (len(t) - 3))
    ell = "".join(free[:nell])
    parsed = []
    for t, x in zip(terms, operands, strict=True):
        if t.count("...") > 1 or any(c not in _LETTERS for c in t.replace("...", "")):
            raise ValueError(f"{who}: invalid subscripts {t!r}")
        if "..." in t:
            k = x.ndim - (len(t) - 3)
            if k < 0:
                raise ValueError(f"{who}: operand has fewer dims than subscripts {t!r}")
            t = t.replace("...", ell[nell - k :])
        if len(t) != x.ndim:
            raise ValueError(
                f"{who}: subscripts {t!r} name {len(t)} dims for an operand with {x.ndim}"
            )
        parsed.append(t)
    if arrow:
        if any(c not in _LETTERS for c in out.replace("...", "")):
            raise ValueError(f"{who}: invalid output subscripts {out!r}")
        out = out.replace("...", ell)
        for c in out:
            if not any(c in t for t in parsed):
                raise ValueError(f"{who}: output label {c!r} is not in any operand")
        if len(set(out)) != len(out):
            raise ValueError(f"{who}: output subscripts {out!r} repeat a label")
    else:
        counts = {}
        for t in parsed:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return parsed, out


def _sizes(terms, operands):
    sizes = {}
    for t, x in zip(terms, operands, strict=True):
        for c, n in zip(t, x.shape, strict=True):
            if c in sizes and sizes[c] != n and n != 1 and sizes[c] != 1:
                raise ValueError(
                    f"ember.einsum: label {c!r} has sizes {sizes[c]} and {n} that do not broadcast"
                )
            if c not in sizes or sizes[c] == 1:
                sizes[c] = n
    return sizes


def _single(x, t, keep):
    """x with labels t: repeated labels to diagonals, labels not in `keep` summed out."""
    while len(set(t)) != len(t):
        c = next(c for c in t if t.count(c) > 1)
        i = t.index(c)
        j = t.index(c, i + 1)
        rest = [k for k in range(len(t)) if k not in (i, j)]
        x = _core._diagonal_view(_core.permute_dims(x, (*rest, i, j)), 0)
        t = "".join(t[k] for k in rest) + c
    drop = [k for k, c in enumerate(t) if c not in keep]
    if drop:
        x = _sum(x, axis=tuple(drop))
        t = "".join(c for c in t if c in keep)
    return x, t


def _contract(x, tx, y, ty, keep, sizes):
    """The product of two labelled operands, keeping the labels in `keep`."""
    batch = [c for c in tx if c in ty and c in keep]
    summed = [c for c in tx if c in ty and c not in keep]
    xk = [c for c in tx if c not in ty]
    yk = [c for c in ty if c not in tx]
    x = permute_dims(x, tuple(tx.index(c) for c in (*batch, *xk, *summed)))
    y = permute_dims(y, tuple(ty.index(c) for c in (*batch, *summed, *yk)))

    def full(a, labels):
        shape = tuple(sizes[c] for c in labels)
        return a if tuple(a.shape) == shape else _broadcast(a, shape)

    x = full(x, (*batch, *xk, *summed))
    y = full(y, (*batch, *summed, *yk))

    def size(labels):
        p = 1
        for c in labels:
            p *= sizes[c]
        return p

    nb, m, k, n = size(batch), size(xk), size(summed), size(yk)
    r = matmul(x.reshape(nb, m, k), y.reshape(nb, k, n))
    labels = "".join((*batch, *xk, *yk))
    return r.reshape(*(sizes[c] for c in labels)), labels


def _broadcast(a, shape):
    return broadcast_to(a, shape)


def einsum(subscripts, *operands):
    """Einstein summation, as ``numpy.einsum`` (without ``out``/``optimize``): the operands are
    contracted left to right, each pair as one batched matmul."""
    if not isinstance(subscripts, str):
        raise TypeError("ember.einsum: subscripts must be a string")
    if not operands:
        raise ValueError("ember.einsum: at least one operand is needed")
    first = next((o for o in operands if isinstance(o, ndarray)), None)
    dev = first.device if first is not None else None
    ops = [o if isinstance(o, ndarray) else asarray(o, device=dev) for o in operands]
    terms, out = _parse(subscripts, ops)
    sizes = _sizes(terms, ops)

    def needed(rest):
        return set(out).union(*(set(t) for t in rest))

    x, tx = _single(ops[0], terms[0], needed(terms[1:]))
    for i in range(1, len(ops)):
        y, ty = _single(ops[i], terms[i], needed([tx, *terms[i + 1 :]]))
        x, tx = _single(x, tx, needed([ty, *terms[i + 1 :]]))
        x, tx = _contract(x, tx, y, ty, needed(terms[i + 1 :]), sizes)
    x, tx = _single(x, tx, set(out))
    x = permute_dims(x, tuple(tx.index(c) for c in out)) if out else x
    shape = tuple(sizes[c] for c in out)
    return x if tuple(x.shape) == shape else _broadcast(x, shape)


def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """NumPy's einsum contraction order for operands of these shapes (computed from the shapes
    alone; no data moves)."""
    if einsum_call:
        raise ValueError("ember.einsum_path: einsum_call is NumPy-internal")
    stand_ins = [
        _np.broadcast_to(_np.zeros((), dtype=_np.float64), tuple(_asarray(op).shape))
        for op in operands
    ]
    return _np.einsum_path(subscripts, *stand_ins, optimize=optimize)
