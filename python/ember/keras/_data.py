"""How fit/evaluate/predict take their data: arrays (NumPy, ember, lists of them for several
inputs, dicts by input name) moved once to the model's device and cut into batches there
(a device-side permutation per epoch when shuffling), or an iterable of batches (an
``ember.data.DataLoader``, a generator, a list of ``(x, y)`` tuples)."""

from __future__ import annotations

import math
import numbers

import numpy as _np

import ember as _e

from ._layer import flatten, host_strings, map_structure, to_array


def _is_arraylike(x):
    return isinstance(x, (_e.ndarray, _np.ndarray)) or (
        hasattr(x, "__array__") and not isinstance(x, (list, tuple, dict))
    )


def _is_array_struct(x):
    if x is None:
        return True
    if _is_arraylike(x):
        return True
    if isinstance(x, (list, tuple)) and x and all(_is_arraylike(a) for a in x):
        return True
    if isinstance(x, dict) and x and all(_is_arraylike(a) for a in x.values()):
        return True
    return False


def _to_device(x, device):
    """An ember array on `device` from an array-like (host data is copied to the device once;
    an ember array on another device is moved explicitly, as the input pipeline would). Text
    (arrays of str, for TextVectorization) stays a NumPy array on the host."""
    if x is None:
        return None
    if not isinstance(x, _e.ndarray):
        text = host_strings(x)
        if text is not None:
            return text
    if isinstance(x, _e.ndarray):
        if device is not None and x.device != device:
            if x.device.type != "cpu":
                raise ValueError(
                    f"the data is on {x.device} but the model's weights are on {device}; ember "
                    f"does not move GPU data implicitly: move it with x.to({str(device)!r}) or "
                    "build the model on that device (with ember.device(...))"
                )
            x = x.to(device)  # host data goes to the model's device, as an input pipeline does
        return x.astype(_e.float32) if x.dtype == _e.float64 else x
    return to_array(x, device=device)


def _n_samples(struct, who):
    sizes = {int(a.shape[0]) for a in flatten(struct) if a is not None}
    if len(sizes) > 1:
        raise ValueError(
            f"{who}: all input arrays (`x`) and target arrays (`y`) must have the same number "
            f"of samples; got sizes {sorted(sizes)}"
        )
    return sizes.pop() if sizes else 0


def check_batch_size(batch_size, who, default=32):
    if batch_size is None:
        return default
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral):
        raise TypeError(f"{who}: batch_size must be a positive int, got {batch_size!r}")
    if batch_size <= 0:
        raise ValueError(f"{who}: batch_size must be a positive int, got {batch_size}")
    return int(batch_size)


class ArrayData:
    """(x, y, sample_weight) as device arrays; ``batches(epoch)`` yields slices of them."""

    def __init__(self, x, y, sample_weight, batch_size, device, shuffle, who, steps=None):
        if x is None:
            raise ValueError(f"{who}: x must be given (arrays or a data loader), got None")
        self.x = map_structure(lambda a: _to_device(a, device), x)
        self.y = None if y is None else map_structure(lambda a: _to_device(a, device), y)
        self.sw = None if sample_weight is None else _to_device(sample_weight, device)
        self.n = _n_samples((self.x, self.y, self.sw), who)
        self.batch_size = batch_size
        if device is None:  # no weights yet: the data's device (host data went to the default)
            first = next((a for a in flatten(self.x) if isinstance(a, _e.ndarray)), None)
            device = first.device if first is not None else _e.get_default_device()
        self.device = device
        self.shuffle = shuffle
        self.steps = steps if steps is not None else max(1, math.ceil(self.n / batch_size))
        self._offset = 0

    def __len__(self):
        return self.steps

    def batches(self):
        from . import initializers

        x, y, sw = self.x, self.y, self.sw
        if self.shuffle and self.n > 1:
            perm = initializers.global_rng().permutation(self.n, device=self.device)
            host = None  # the permutation on the host, for text arrays (read back once)
            if any(isinstance(a, _np.ndarray) for a in flatten((x, y, sw))):
                host = _np.asarray(_e.asnumpy(perm))

            def take(a):
                if a is None:
                    return None
                return a[host] if isinstance(a, _np.ndarray) else a[perm]

            x, y, sw = map_structure(take, (x, y, sw))
        bs, n = self.batch_size, self.n
        plain = all(t is None or isinstance(t, _e.ndarray) for t in (x, y, sw))
        for _ in range(self.steps):
            if self._offset >= n:
                self._offset = 0
            a, b = self._offset, min(self._offset + bs, n)
            self._offset = b
            if plain:  # one array each: slice directly (views, no copies)
                yield (x[a:b], None if y is None else y[a:b], None if sw is None else sw[a:b])
            else:
                yield map_structure(lambda t, a=a, b=b: None if t is None else t[a:b], (x, y, sw))
        if self.steps * bs >= n:
            self._offset = 0


class IterData:
    """Batches from an iterable: each item ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sw)``."""

    def __init__(self, source, device, who, steps=None, shuffle=False):
        self.source = source
        self.device = device
        self.who = who
        self.shuffle = shuffle
        try:
            n = len(source)
        except TypeError:
            n = None
        self.steps = steps if steps is not None else n
        self._it = None

    def __len__(self):
        return self.steps

    def _unpack(self, item):
        if isinstance(item, (tuple, list)) and not _is_arraylike(item):
            if len(item) == 1:
                item = (item[0], None, None)
            elif len(item) == 2:
                item = (item[0], item[1], None)
            elif len(item) == 3:
                item = tuple(item)
            else:
                raise ValueError(
                    f"{self.who}: each batch must be x, (x,), (x, y) or (x, y, sample_weight); "
                    f"got a tuple of {len(item)} items"
                )
        else:
            item = (item, None, None)
        return map_structure(lambda a: None if a is None else _to_device(a, self.device), item)

    def batches(self):
        from ._pydataset import PyDataset, epoch_order

        src = self.source
        if isinstance(src, PyDataset) and src.num_batches is not None:
            src.on_epoch_begin()
            order = epoch_order(src, self.shuffle)
            for count, i in enumerate(order):
                if self.steps is not None and count >= self.steps:
                    break
                yield self._unpack(src[i])
            src.on_epoch_end()
            return
        if self.steps is None or self._it is None or not _is_iterator(self.source):
            self._it = iter(self.source)
        count = 0
        while self.steps is None or count < self.steps:
            try:
                item = next(self._it)
            except StopIteration:
                if self.steps is not None and count == 0:
                    raise ValueError(f"{self.who}: the data ran out of batches") from None
                self._it = iter(self.source) if not _is_iterator(self.source) else self._it
                if self.steps is None or _is_iterator(self.source):
                    return
                continue
            count += 1
            yield self._unpack(item)


def _is_iterator(x):
    return iter(x) is x


def make_data(x, y, sample_weight, batch_size, device, shuffle, who, steps=None):
    if _is_array_struct(x):
        return ArrayData(x, y, sample_weight, batch_size, device, shuffle, who, steps)
    if y is not None:
        raise ValueError(
            f"{who}: when x is a dataset, generator or data loader, y must not be given "
            "(the batches carry the targets)"
        )
    if sample_weight is not None:
        raise ValueError(
            f"{who}: sample_weight is not supported when x is a dataset, generator or data "
            "loader; yield (x, y, sample_weight) batches instead"
        )
    if not hasattr(x, "__iter__"):
        raise TypeError(
            f"{who}: x must be arrays (NumPy or ember, or a list/dict of them) or an iterable "
            f"of batches, got {type(x).__name__}"
        )
    return IterData(x, device, who, steps, shuffle=bool(shuffle))


def split_validation(x, y, sample_weight, validation_split, who):
    """Keras's validation_split: the LAST fraction of the samples, taken before shuffling."""
    if not _is_array_struct(x):
        raise ValueError(
            f"{who}: `validation_split` is only supported for arrays, not for datasets, "
            "generators or data loaders"
        )
    if not 0.0 < validation_split < 1.0:
        raise ValueError(f"{who}: validation_split must be between 0 and 1, got {validation_split}")
    n = _n_samples(map_structure(lambda a: _np.empty((int(_np.shape(a)[0]),)), (x, y)), who)
    split = int(math.floor(n * (1.0 - validation_split)))
    if split == 0 or split == n:
        raise ValueError(
            f"{who}: training data contains {n} samples, which is not sufficient to split it "
            f"into a validation and training set as specified by validation_split="
            f"{validation_split}"
        )

    def cut(a, lo, hi):
        return None if a is None else a[lo:hi]

    train = map_structure(lambda a: cut(a, 0, split), (x, y, sample_weight))
    val = map_structure(lambda a: cut(a, split, n), (x, y, sample_weight))
    return train, val


class ClassWeights:
    """Per-sample weights ``class_weight[label]`` (labels as ints, or the argmax of one-hot
    labels), times any given sample weights; the table is copied to the device once."""

    def __init__(self, class_weight, device, who):
        if not isinstance(class_weight, dict) or not class_weight:
            raise ValueError(
                f"{who}: class_weight must be a non-empty dict class -> weight, got "
                f"{class_weight!r}"
            )
        self.n = max(int(k) for k in class_weight) + 1
        table = _np.ones(self.n, dtype=_np.float32)
        for k, v in class_weight.items():
            table[int(k)] = float(v)
        self._host = table
        self._tables = {}  # device -> the table there (copied once per device)
        self.who = who

    def __call__(self, y, sample_weight):
        if isinstance(y, (list, tuple, dict)):
            raise ValueError(
                f"{self.who}: class_weight is only supported for models with one output"
            )
        if y.ndim == 2 and y.shape[1] > 1:
            labels = _e.argmax(y, axis=-1)
        else:
            labels = y.reshape(-1)
            if "int" not in str(labels.dtype):
                labels = labels.astype(_e.int64)
        key = str(labels.device)
        if key not in self._tables:
            self._tables[key] = (
                _e.asarray(self._host, device=labels.device),
                _e.arange(self.n, device=labels.device),
            )
        table, ids = self._tables[key]
        # a one-hot lookup: integer-array indexing would read the labels back to check bounds
        hot = _e.expand_dims(labels, axis=-1) == ids
        sw = _e.sum(_e.where(hot, table, 0.0), axis=-1)
        sw = _e.where((labels >= 0) & (labels < self.n), sw, 1.0).astype(_e.float32)
        if sample_weight is not None:
            sw = sw * sample_weight.astype(_e.float32).reshape(-1)
        return sw
