"""Keras's sequence utilities: ``pad_sequences`` (NumPy in, NumPy out, as Keras) and
``timeseries_dataset_from_array`` (a re-iterable of ember batches, which ``fit``, ``evaluate``
and ``predict`` take as they take any iterable of batches)."""

from __future__ import annotations

import numpy as _np

import ember as _e

__all__ = ["TimeseriesDataset", "pad_sequences", "timeseries_dataset_from_array"]


def pad_sequences(
    sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0
):
    """Pads (and truncates) a list of sequences to one length: (num_samples, maxlen, ...).

    `padding` / `truncating` "pre" (default) or "post" choose the side; `maxlen` defaults to the
    longest sequence; `value` fills."""
    if padding not in ("pre", "post"):
        raise ValueError(f'pad_sequences: padding type "{padding}" not understood (`padding`)')
    if truncating not in ("pre", "post"):
        raise ValueError(
            f'pad_sequences: truncating type "{truncating}" not understood (`truncating`)'
        )
    if not hasattr(sequences, "__len__"):
        raise ValueError("pad_sequences: `sequences` must be iterable.")
    if maxlen is not None and (isinstance(maxlen, bool) or int(maxlen) < 0):
        raise ValueError(f"pad_sequences: `maxlen` must be a non-negative int, got {maxlen!r}")
    lengths, sample_shape, found = [], (), False
    for s in sequences:
        try:
            lengths.append(len(s))
        except TypeError:
            raise ValueError(
                f"pad_sequences: `sequences` must be a list of iterables. Found non-iterable: {s!r}"
            ) from None
        if not found and len(s):
            sample_shape = _np.asarray(s).shape[1:]
            found = True
    if maxlen is None:
        maxlen = max(lengths) if lengths else 0
    maxlen = int(maxlen)
    is_str = _np.issubdtype(_np.dtype(dtype), _np.str_)
    if isinstance(value, str) and dtype is not object and not is_str:
        raise ValueError(
            f"pad_sequences: `dtype` {dtype} is not compatible with `value`'s type: "
            f"{type(value)}. You should set `dtype=object` for variable length strings."
        )
    out = _np.full((len(sequences), maxlen) + tuple(sample_shape), value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s) or maxlen == 0:
            continue
        trunc = s[-maxlen:] if truncating == "pre" else s[:maxlen]
        trunc = _np.asarray(trunc, dtype=dtype)
        if trunc.shape[1:] != tuple(sample_shape):
            raise ValueError(
                f"pad_sequences: shape of sample {trunc.shape[1:]} of sequence at position {i} "
                f"is different from expected shape {tuple(sample_shape)}"
            )
        if padding == "post":
            out[i, : len(trunc)] = trunc
        else:
            out[i, -len(trunc) :] = trunc
    return out


class TimeseriesDataset:
    """Batches of windows ``data[start + i * sampling_rate]`` (and ``targets[start]``), in
    order or reshuffled each pass; ``len()`` is the number of batches."""

    def __init__(self, data, targets, starts, sequence_length, sampling_rate, batch_size, rng):
        self.data, self.targets = data, targets
        self.starts = starts
        self.offsets = _np.arange(sequence_length) * sampling_rate
        self.batch_size = batch_size
        self._rng = rng

    def __len__(self):
        if self.batch_size is None:
            return len(self.starts)
        return -(-len(self.starts) // self.batch_size)

    def _take(self, a, idx):
        if isinstance(a, _e.ndarray):
            return _e.take(a, _e.asarray(idx, device=a.device), axis=0)
        return _e.asarray(_np.ascontiguousarray(a[idx]))

    def __iter__(self):
        starts = self.starts
        if self._rng is not None:
            starts = starts[self._rng.permutation(len(starts))]
        step = self.batch_size or 1
        for b in range(0, len(starts), step):
            s = starts[b : b + step]
            x = self._take(self.data, s[:, None] + self.offsets[None, :])
            y = None if self.targets is None else self._take(self.targets, s)
            if self.batch_size is None:
                x = x[0]
                y = None if y is None else y[0]
            yield x if y is None else (x, y)


def _check_int(v, who, name, low):
    if isinstance(v, bool) or not isinstance(v, (int, _np.integer)) or v < low:
        raise ValueError(f"{who}: `{name}` must be an int >= {low}. Received: {name}={v!r}")
    return int(v)


def timeseries_dataset_from_array(
    data,
    targets,
    sequence_length,
    sequence_stride=1,
    sampling_rate=1,
    batch_size=128,
    shuffle=False,
    seed=None,
    start_index=None,
    end_index=None,
):
    """Keras's sliding windows over `data` (rows are time steps): window i starts at
    ``start_index + i * sequence_stride`` and takes `sequence_length` rows `sampling_rate`
    apart; its target is ``targets[start]`` (the row where it starts, Keras's rule). Returns a
    re-iterable of ``(batch_of_windows, batch_of_targets)`` (windows only when `targets` is
    None) as ember arrays, the last batch possibly smaller; ``batch_size=None`` yields single
    windows. ``shuffle`` reorders the windows each pass (seeded by `seed`)."""
    who = "timeseries_dataset_from_array"
    if not isinstance(data, _e.ndarray):
        data = _np.asarray(data)
    n = int(data.shape[0])
    sequence_length = _check_int(sequence_length, who, "sequence_length", 1)
    sequence_stride = _check_int(sequence_stride, who, "sequence_stride", 1)
    sampling_rate = _check_int(sampling_rate, who, "sampling_rate", 1)
    if batch_size is not None:
        batch_size = _check_int(batch_size, who, "batch_size", 1)
    start = 0 if start_index is None else _check_int(start_index, who, "start_index", 0)
    if start_index is not None and start >= n:
        raise ValueError(
            f"{who}: `start_index` must be lower than the length of the data. Received: "
            f"start_index={start_index}, for data of length {n}"
        )
    end = n if end_index is None else _check_int(end_index, who, "end_index", 1)
    if end_index is not None and (end <= start or end > n):
        raise ValueError(
            f"{who}: `end_index` must be higher than `start_index` and at most the length of "
            f"the data. Received: start_index={start_index}, end_index={end_index}, for data "
            f"of length {n}"
        )
    if targets is not None:
        if not isinstance(targets, _e.ndarray):
            targets = _np.asarray(targets)
        if int(targets.shape[0]) != n:
            raise ValueError(
                f"{who}: expected data and targets to have the same number of time steps "
                f"(axis=0). Received: data.shape={tuple(data.shape)}, "
                f"targets.shape={tuple(targets.shape)}"
            )
    num = end - start - (sequence_length - 1) * sampling_rate
    if targets is not None:
        num = min(num, int(targets.shape[0]) - start)
    starts = start + _np.arange(0, max(num, 0), sequence_stride, dtype=_np.int64)
    rng = None
    if shuffle:
        rng = _np.random.default_rng(seed if seed is not None else _np.random.randint(10**6))
        starts = starts[rng.permutation(len(starts))]
    return TimeseriesDataset(data, targets, starts, sequence_length, sampling_rate, batch_size, rng)
