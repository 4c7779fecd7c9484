"""ember.nn.utils.rnn (PyTorch's ``torch.nn.utils.rnn``): variable-length sequences for the
recurrent layers. ``PackedSequence`` keeps PyTorch's layout: ``data`` holds the time steps one
after the other, each with the sequences still running at that step (longest first),
``batch_sizes`` (a CPU int64 array) how many there are per step, ``sorted_indices`` /
``unsorted_indices`` the order of the batch. Packing and unpacking are one gather each (on the
data's device, differentiable); the lengths are host integers, as in PyTorch.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import _core
from ..._array import asarray, asnumpy

__all__ = [
    "PackedSequence",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]

_W = "ember.nn.utils.rnn."


class PackedSequence(NamedTuple):
    data: object
    batch_sizes: object
    sorted_indices: object = None
    unsorted_indices: object = None

    def to(self, *args, **kwargs):
        """The same packing with ``data`` (and the indices) moved or cast; ``batch_sizes``
        stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda a: a) if self.sorted_indices is None else (lambda a: a.to(data.device))
        si = None if self.sorted_indices is None else move(self.sorted_indices)
        ui = None if self.unsorted_indices is None else move(self.unsorted_indices)
        return PackedSequence(data, self.batch_sizes, si, ui)

    @property
    def is_cuda(self):
        return self.data.device.type == "cuda"


def _lengths(lengths, n, who):
    if isinstance(lengths, _core.ndarray):
        lengths = asnumpy(lengths)  # lengths are host integers (PyTorch wants a CPU tensor)
    lens = np.asarray(lengths)
    if lens.ndim != 1 or lens.shape[0] != n or (lens.size and lens.dtype.kind not in "iu"):
        raise ValueError(f"{who}: lengths must be {n} integers, got {lengths!r}")
    lens = lens.astype(np.int64)
    if lens.size and lens.min() <= 0:
        raise RuntimeError(f"{who}: every length must be positive, got {lens.tolist()}")
    return lens


def _pack_order(lens, enforce_sorted, who):
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise RuntimeError(
                f"{who}: lengths must be sorted in decreasing order with enforce_sorted=True, "
                f"got {lens.tolist()} (pass enforce_sorted=False)"
            )
        return None, None
    order = np.argsort(-lens, kind="stable")
    return order, np.argsort(order, kind="stable")


def _gather_rows(x, flat_idx):
    return _core.take(x, asarray(flat_idx, dtype="int64", device=x.device), axis=0)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):  # noqa: A002
    """Packs a padded batch, (L, N, *) (or (N, L, *) with batch_first) with the sequences'
    lengths, into a PackedSequence."""
    who = _W + "pack_padded_sequence"
    if not isinstance(input, _core.ndarray) or input.ndim < 2:
        raise TypeError(f"{who}: input must be an array of at least 2 dimensions")
    x = input.swapaxes(0, 1) if batch_first else input  # (L, N, *)
    L, N = x.shape[0], x.shape[1]  # noqa: N806
    lens = _lengths(lengths, N, who)
    if lens.size and lens.max() > L:
        raise ValueError(f"{who}: a length ({lens.max()}) exceeds the padded length {L}")
    order, inverse = _pack_order(lens, enforce_sorted, who)
    sorted_lens = lens if order is None else lens[order]
    ranks = np.arange(N) if order is None else order
    steps = int(sorted_lens[0]) if N else 0
    batch_sizes = np.array([(sorted_lens > t).sum() for t in range(steps)], dtype=np.int64)
    flat = np.concatenate([t * N + ranks[: batch_sizes[t]] for t in range(steps)] or [[]])
    data = _gather_rows(x.reshape((L * N, *x.shape[2:])), flat.astype(np.int64))
    si = None if order is None else asarray(order, dtype="int64", device=x.device)
    ui = None if inverse is None else asarray(inverse, dtype="int64", device=x.device)
    return PackedSequence(data, asarray(batch_sizes), si, ui)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The padded batch (L, N, *) (or (N, L, *)) and the lengths (a CPU int64 array) of a
    PackedSequence, in the batch's original order."""
    who = _W + "pad_packed_sequence"
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{who}: expected a PackedSequence, got {type(sequence).__name__}")
    bs = np.asarray(asnumpy(sequence.batch_sizes), dtype=np.int64)
    data = sequence.data
    steps, N = len(bs), int(bs[0]) if len(bs) else 0  # noqa: N806
    L = steps if total_length is None else int(total_length)  # noqa: N806
    if L < steps:
        raise ValueError(f"{who}: total_length {L} is less than the longest sequence ({steps})")
    sorted_lens = np.array([(bs > j).sum() for j in range(N)], dtype=np.int64)
    order = (
        np.arange(N)
        if sequence.sorted_indices is None
        else np.asarray(asnumpy(sequence.sorted_indices), dtype=np.int64)
    )
    # row of data for (t, original batch position), or the padding row after the data
    starts = np.concatenate([[0], np.cumsum(bs)[:-1]]) if steps else np.zeros(0, np.int64)
    src = np.full((L, N), data.shape[0], dtype=np.int64)
    for t in range(steps):
        src[t, order[: bs[t]]] = starts[t] + np.arange(bs[t])
    pad = _core.full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    from ..._joining import concatenate

    padded = _gather_rows(concatenate([data, pad]), src.reshape(-1))
    padded = padded.reshape((L, N, *data.shape[1:]))
    lengths = np.empty(N, dtype=np.int64)
    lengths[order] = sorted_lens
    out = padded.swapaxes(0, 1) if batch_first else padded
    return out, asarray(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Pads a list of (L_i, *) arrays to (L, N, *) (or (N, L, *) with batch_first)."""
    who = _W + "pad_sequence"
    seqs = list(sequences)
    if not seqs:
        raise RuntimeError(f"{who}: received an empty list of sequences")
    if padding_side not in ("right", "left"):
        raise ValueError(f"{who}: padding_side must be 'right' or 'left', got {padding_side!r}")
    trail = seqs[0].shape[1:]
    if any(s.shape[1:] != trail for s in seqs):
        raise ValueError(f"{who}: the sequences' trailing shapes differ")
    L = max(s.shape[0] for s in seqs)  # noqa: N806
    from ..._joining import concatenate, stack

    rows = []
    for s in seqs:
        fill = L - s.shape[0]
        if fill:
            p = _core.full((fill, *trail), padding_value, dtype=s.dtype, device=s.device)
            s = concatenate([s, p] if padding_side == "right" else [p, s])
        rows.append(s)
    return stack(rows, axis=0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of unpadded sequences of a padded batch."""
    x = padded_sequences if batch_first else padded_sequences.swapaxes(0, 1)
    lens = _lengths(lengths, x.shape[0], _W + "unpad_sequence")
    return [x[i, : int(n)] for i, n in enumerate(lens)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of (L_i, *) arrays."""
    seqs = list(sequences)
    lengths = [s.shape[0] for s in seqs]
    return pack_padded_sequence(pad_sequence(seqs), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
