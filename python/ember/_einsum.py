"""einsum: NumPy's subscripts (explicit ``->``, implicit output, ``...``, repeated labels),
lowered to views, sums and one batched matmul per pair of operands, left to right or in the
order of NumPy's path (``optimize=``); and einsum_path, NumPy's contraction order computed from
the operands' shapes alone."""

from __future__ import annotations

import string

import numpy as _np

from . import _core
from ._array import asarray
from ._core import broadcast_to, matmul, ndarray, permute_dims
from ._core import sum as _sum
from ._dtypes import can_cast
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


def einsum(subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """Einstein summation, as ``numpy.einsum``: each pair of operands is contracted as one
    batched matmul, left to right, or in the order NumPy's ``einsum_path`` picks when `optimize`
    is True, ``"greedy"``, ``"optimal"`` or an explicit path (``["einsum_path", (0, 1), ...]``).
    `dtype` casts the operands first (under `casting`, as NumPy); `out` receives the result.
    `order` is accepted for NumPy's sake: ember arrays are C-ordered."""
    who = "ember.einsum"
    if not isinstance(subscripts, str):
        raise TypeError(f"{who}: subscripts must be a string")
    if not operands:
        raise ValueError(f"{who}: at least one operand is needed")
    if order not in ("K", "C", "A", "F"):
        raise ValueError(f"{who}: order must be one of 'K', 'C', 'A', 'F', got {order!r}")
    first = next((o for o in operands if isinstance(o, ndarray)), None)
    dev = first.device if first is not None else None
    ops = [o if isinstance(o, ndarray) else asarray(o, device=dev) for o in operands]
    if dtype is not None:
        for o in ops:
            if not can_cast(o.dtype, _core.dtype(dtype), casting=casting):
                raise TypeError(
                    f"{who}: cannot cast an operand from {o.dtype} to {_core.dtype(dtype)} "
                    f"under casting={casting!r}"
                )
        ops = [o.astype(dtype) for o in ops]
    terms, result_labels = _parse(subscripts, ops)
    sizes = _sizes(terms, ops)
    if optimize is not False and optimize is not None and len(ops) > 2:
        path = optimize if isinstance(optimize, list) else None
        if path is None:
            path = einsum_path(subscripts, *ops, optimize=optimize)[0]
        result = _by_path(terms, ops, result_labels, path[1:], sizes)
    else:
        result = _evaluate(terms, ops, result_labels, sizes)
    want = _core._result_type(*ops)  # NumPy's einsum keeps the operands' type (sums included)
    if result.dtype != want:
        result = result.astype(want)
    if out is None:
        return result
    if not isinstance(out, ndarray):
        raise TypeError(f"{who}: out must be an ember array, got {type(out).__name__}")
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(f"{who}: out has shape {out.shape}, the result {result.shape}")
    out[...] = result
    return out


def _evaluate(terms, ops, out, sizes):
    """The labelled operands contracted left to right into the labels `out`."""

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


def _by_path(terms, ops, out, steps, sizes):
    """Contracts the operands in NumPy's path order: each step takes the operands at its
    indices and appends their product, keeping the labels something later still needs."""
    terms, ops = list(terms), list(ops)
    for step in steps:
        if not isinstance(step, tuple) or not all(
            isinstance(i, int) and 0 <= i < len(ops) for i in step
        ):
            raise ValueError(f"ember.einsum: invalid contraction {step!r} in the path")
        taken_terms = [terms[i] for i in step]
        taken_ops = [ops[i] for i in step]
        for i in sorted(step, reverse=True):
            del terms[i], ops[i]
        later = set(out).union(*(set(t) for t in terms))
        labels = "".join(dict.fromkeys(c for t in taken_terms for c in t if c in later))
        terms.append(labels)
        ops.append(_evaluate(taken_terms, taken_ops, labels, sizes))
    return _evaluate(terms, ops, out, sizes)


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
