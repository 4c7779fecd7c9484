"""Keras 3's ``CategoryEncoding``, ``Discretization`` and ``Hashing`` preprocessing layers.

Their numeric work runs on the inputs' device with ember ops (bucketing is ``searchsorted``,
the encodings are built by :func:`encode_categorical`). ``Hashing`` is bit-exact with Keras's:
FarmHash64 (``tf.strings.to_hash_bucket_fast``) or, with a ``salt``, SipHash-2-4
(``tf.strings.to_hash_bucket_strong``) of each value's string (integers as decimal text, floats
truncated to integers first, as Keras does). Strings are hashed on the host, in Python; numbers
where they are: their decimal text is built and hashed with vectorized uint64 ember ops on their
device (no host copy). ``Discretization.adapt`` reproduces Keras's quantile summary exactly (a
sort on the device, the small summary on the host)."""

from __future__ import annotations

import numpy as _np

import ember as _e

from .._array import asnumpy
from ._layer import Layer, host_strings, register, to_array
from ._layers_preproc import categorical_shape, check_output_mode, encode_categorical
from ._preproc_hash import fingerprint64, fingerprint64_ints, siphash24, siphash24_ints

__all__ = ["CategoryEncoding", "Discretization", "Hashing"]


def _no_sparse(sparse, who):
    if sparse:
        raise ValueError(
            f"{who}: `sparse=True` can only be used with the TensorFlow backend. Received: "
            f"sparse={sparse!r}"
        )


def _int_indices(x):
    if x.dtype.kind == "f":
        return x.astype(_e.int64)
    return x if x.dtype == _e.int64 else x.astype(_e.int64)


@register
class CategoryEncoding(Layer):
    """Integer inputs in ``[0, num_tokens)`` -> ``one_hot`` (an axis of `num_tokens` added, a
    trailing axis of 1 replaced), ``multi_hot`` or ``count`` (the last axis reduced; a rank-1
    input is one sample) float32 on the inputs' device. ``count_weights`` (same shape as the
    inputs, "count" mode only) sums weights instead of ones. Values out of range raise
    ValueError (one read of a flag per call)."""

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in ("count", "one_hot", "multi_hot"):
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError(
                "num_tokens must be set to use this layer. If the number of tokens is not known "
                "beforehand, use the IntegerLookup layer instead."
            )
        if isinstance(num_tokens, bool) or not isinstance(num_tokens, (int, _np.integer)):
            raise ValueError(f"`num_tokens` must be an int. Received: num_tokens={num_tokens!r}")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        _no_sparse(sparse, "CategoryEncoding")
        self.num_tokens = int(num_tokens)
        self.output_mode = output_mode
        self.sparse = False

    def call(self, inputs, count_weights=None):
        if count_weights is not None and self.output_mode != "count":
            raise ValueError(
                "`count_weights` is not used when `output_mode` is not `'count'`. Received "
                f"`count_weights={count_weights}`."
            )
        x = _int_indices(inputs if isinstance(inputs, _e.ndarray) else to_array(inputs))
        n = self.num_tokens
        if x.size and bool(_e.any((x < 0) | (x >= n))):
            raise ValueError(
                f"Input values must be in the range 0 <= values < num_tokens with num_tokens={n}"
            )
        w = None
        if count_weights is not None:
            w = to_array(count_weights, dtype="float32", device=x.device)
            if tuple(w.shape) != tuple(x.shape):
                raise ValueError(
                    "`count_weights` must have the shape of the inputs. Received: "
                    f"count_weights.shape={tuple(w.shape)}, inputs.shape={tuple(x.shape)}"
                )
        return encode_categorical(x, self.output_mode, n, w, who="CategoryEncoding")

    def compute_output_shape(self, input_shape):
        s = tuple(input_shape)
        if self.output_mode == "one_hot" and len(s) == 1:
            return s + (self.num_tokens,)
        return categorical_shape(s, self.output_mode, self.num_tokens)

    def _output_dtype(self, inputs):
        return "float32"

    def get_config(self):
        return {
            **super().get_config(),
            "num_tokens": self.num_tokens,
            "output_mode": self.output_mode,
            "sparse": False,
        }


def _summarize(x, epsilon):
    """Keras's ``summarize``: every `step`-th value of the sorted data from `start` (the sort
    and the pick on the device), with weight `step`, as a (2, k) float32 NumPy array."""
    v = _e.sort(x.reshape((-1,)))
    n = int(v.shape[0])
    increment = n / (1.0 / epsilon)
    step = max(increment, 1)
    picks = _e.arange(int(increment), n, int(step), device=v.device)
    bounds = asnumpy(_e.take(v, picks)).astype(_np.float32)
    return _np.stack([bounds, _np.ones_like(bounds) * _np.float32(step)])


def _compress(summary, epsilon):
    """Keras's ``compress_summary``: interpolated cumulative-weight quantiles."""
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + _np.arange(0.0, 1.0, epsilon)
    cum = summary[1].cumsum()
    cum_pct = cum / cum[-1]
    new_bins = _np.interp(percents, cum_pct, summary[0])
    cum = _np.interp(percents, cum_pct, cum)
    weights = cum - _np.concatenate((_np.array([0]), cum[:-1]))
    return _np.stack((new_bins, weights)).astype("float32")


@register
class Discretization(Layer):
    """Buckets numbers by `bin_boundaries` (``b[i-1] <= x < b[i]`` -> ``i``, as
    ``np.digitize``), compared in float32 on the inputs' device; ``output_mode`` "int" (int64,
    the inputs' shape) or "one_hot" / "multi_hot" / "count" over ``len(bin_boundaries) + 1``
    bins.

    ``adapt`` computes ``num_bins - 1`` boundaries as Keras 3 does, exactly: Keras's quantile
    summary keeps every ``step``-th sorted value (``step = max(n * epsilon, 1)``, so with
    ``n <= 1 / epsilon`` every value), merges batches' summaries, then interpolates the
    cumulative weights at ``1/num_bins, 2/num_bins, ...`` (``np.interp``). The boundaries are
    thus approximate quantiles within about `epsilon` of the data, not NumPy's quantiles."""

    def __init__(
        self,
        bin_boundaries=None,
        num_bins=None,
        epsilon=0.01,
        output_mode="int",
        sparse=False,
        dtype=None,
        name=None,
        **kwargs,
    ):
        super().__init__(name=name, **kwargs)
        _no_sparse(sparse, "Discretization")
        self.output_mode = check_output_mode(
            output_mode, ("int", "one_hot", "multi_hot", "count"), "Discretization", False
        )
        if num_bins is not None and (
            isinstance(num_bins, bool) or not isinstance(num_bins, (int, _np.integer))
        ):
            raise ValueError(f"`num_bins` must be an int or None. Received: num_bins={num_bins!r}")
        if num_bins is not None and num_bins < 0:
            raise ValueError(
                f"`num_bins` must be greater than or equal to 0. Received: `num_bins={num_bins}`"
            )
        if bin_boundaries is not None:
            b = _np.asarray(bin_boundaries, dtype=_np.float64)
            if b.ndim != 1 or (b.size > 1 and _np.any(_np.diff(b) < 0)):
                raise ValueError(
                    "`bin_boundaries` must be a sorted 1-D list of numbers. Received: "
                    f"bin_boundaries={bin_boundaries}"
                )
            if num_bins is not None and len(b) != num_bins - 1:
                raise ValueError(
                    "Both `num_bins` and `bin_boundaries` should not be set. Received: "
                    f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`"
                )
            bin_boundaries = [float(v) for v in b]
        if not isinstance(epsilon, (int, float)) or isinstance(epsilon, bool) or epsilon <= 0:
            raise ValueError(f"`epsilon` must be a positive number. Received: epsilon={epsilon!r}")
        self.input_bin_boundaries = bin_boundaries
        self.bin_boundaries = list(bin_boundaries) if bin_boundaries is not None else []
        self.num_bins = None if num_bins is None else int(num_bins)
        self.epsilon = float(epsilon)
        self.sparse = False
        self.__dict__["_summary"] = None
        self.__dict__["_cache"] = {}

    def adapt(self, data, batch_size=None, steps=None):
        """Learns ``num_bins - 1`` boundaries from `data` (an array, or an iterable of batches
        whose summaries are merged as Keras's ``merge_summaries``)."""
        if self.input_bin_boundaries is not None:
            raise ValueError(
                "Cannot adapt a Discretization layer that has been initialized with "
                "`bin_boundaries`, use `num_bins` instead."
            )
        if not self.num_bins:
            raise ValueError(
                "Discretization.adapt: `num_bins` must be set (>= 1) to learn boundaries. "
                f"Received: num_bins={self.num_bins}"
            )
        direct = isinstance(data, (list, tuple, _np.ndarray, _e.ndarray))
        summary = _np.zeros((2, 0), dtype=_np.float32)
        for i, batch in enumerate([data] if direct else data):
            if steps is not None and i >= steps:
                break
            x = batch if isinstance(batch, _e.ndarray) else _e.asarray(_np.asarray(batch))
            x = x.astype(_e.float32) if x.dtype != _e.float32 else x
            merged = _np.concatenate((_summarize(x, self.epsilon), summary), axis=1)
            merged = _np.take(merged, _np.argsort(merged[0]), axis=1)
            summary = _compress(merged, self.epsilon)
        if summary.shape[1] == 0:
            raise ValueError("Discretization.adapt: `data` holds no values")
        bounds = _compress(summary, 1.0 / self.num_bins)[0, :-1]
        self.__dict__["bin_boundaries"] = [float(v) for v in bounds]
        self.__dict__["_cache"] = {}

    def _bounds(self, device):
        key = str(device)
        if key not in self._cache:
            self._cache[key] = _e.asarray(
                _np.asarray(self.bin_boundaries, dtype=_np.float32), device=device
            )
        return self._cache[key]

    def call(self, inputs):
        x = inputs if isinstance(inputs, _e.ndarray) else to_array(inputs)
        x = x.astype(_e.float32) if x.dtype != _e.float32 else x
        if self.bin_boundaries:
            idx = _e.searchsorted(self._bounds(x.device), x, side="right")
        else:
            idx = _e.zeros(x.shape, dtype=_e.int64, device=x.device)
        depth = len(self.bin_boundaries) + 1
        return encode_categorical(idx, self.output_mode, depth, who="Discretization")

    def compute_output_shape(self, input_shape):
        depth = len(self.bin_boundaries) + 1
        return categorical_shape(tuple(input_shape), self.output_mode, depth)

    def _output_dtype(self, inputs):
        return "int64" if self.output_mode == "int" else "float32"

    def get_config(self):
        return {
            **super().get_config(),
            "bin_boundaries": list(self.bin_boundaries) or None,
            "num_bins": self.num_bins,
            "epsilon": self.epsilon,
            "output_mode": self.output_mode,
            "sparse": False,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        b, n = config.get("bin_boundaries"), config.get("num_bins")
        if b is not None and n is not None and len(b) != n - 1:
            # boundaries adapted from fewer values than num_bins: keep both, as learned
            config["num_bins"] = None
            layer = cls(**config)
            layer.__dict__["num_bins"] = n
            return layer
        return cls(**config)


@register
class Hashing(Layer):
    """Hashes strings or numbers into ``num_bins`` bins, bit-exact with Keras 3 / TensorFlow:
    ``FarmHash64(str(value)) % num_bins`` (``salt``: SipHash-2-4 keyed by ``(salt0, salt1)``).
    With ``mask_value``, that value goes to bin 0 and the others to ``1 + hash % (num_bins-1)``.
    Output: int64 bins (the inputs' shape) or "one_hot" / "multi_hot" / "count" float32."""

    def __init__(
        self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, **kwargs
    ):
        dtype = kwargs.pop("dtype", None)
        if isinstance(dtype, dict):
            dtype = dtype.get("config", dtype).get("name")
        super().__init__(**kwargs)
        if (
            num_bins is None
            or isinstance(num_bins, bool)
            or not isinstance(num_bins, (int, _np.integer))
            or num_bins <= 0
        ):
            raise ValueError(
                "The `num_bins` for `Hashing` cannot be `None` or non-positive values. "
                f"Received: num_bins={num_bins}."
            )
        accepted = ("int", "one_hot", "multi_hot", "count")
        if output_mode not in accepted:
            raise ValueError(
                "Invalid value for argument `output_mode`. Expected one of "
                f"{accepted}. Received: output_mode={output_mode}"
            )
        if dtype is None:
            dtype = "int64" if output_mode == "int" else "float32"
        dtype = str(getattr(dtype, "name", dtype))
        if output_mode == "int" and dtype not in ("int32", "int64"):
            raise ValueError(
                "When `output_mode=\"int\"`, `dtype` should be an integer type, 'int32' or "
                f"'int64'. Received: dtype={dtype}"
            )
        _no_sparse(sparse, "Hashing")
        if salt is not None:
            if (
                isinstance(salt, (tuple, list))
                and len(salt) == 2
                and all(isinstance(s, (int, _np.integer)) for s in salt)
            ):
                salt = [int(s) for s in salt]
            elif isinstance(salt, (int, _np.integer)) and not isinstance(salt, bool):
                salt = [int(salt), int(salt)]
            else:
                raise ValueError(
                    "The `salt` argument for `Hashing` can only be a tuple of size 2 integers, "
                    f"or a single integer. Received: salt={salt}."
                )
        self.num_bins = int(num_bins)
        self.mask_value = mask_value
        self.salt = salt
        self.strong_hash = salt is not None
        self.output_mode = output_mode
        self.sparse = False
        self.__dict__["_out_dtype"] = dtype
        self.__dict__["_device"] = None

    def __call__(self, inputs, *args, **kwargs):
        text = host_strings(inputs)
        return super().__call__(inputs if text is None else text, *args, **kwargs)

    def build(self, input_shape=None):
        self.__dict__["_device"] = _e.get_default_device()

    def _hash(self, s):
        if self.salt is not None:
            return siphash24(self.salt[0], self.salt[1], s)
        return fingerprint64(s)

    def call(self, inputs):
        text = host_strings(inputs)
        bins = self.num_bins
        masked = self.mask_value is not None and bins > 1
        if masked:
            bins -= 1
        if text is not None:  # strings: hashed on the host, the bins copied to the device once
            keys = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in text.ravel()]
            out = _np.fromiter((self._hash(k) % bins for k in keys), _np.int64, count=len(keys))
            out = out.reshape(text.shape)
            if masked:
                out = _np.where(text == self.mask_value, 0, out + 1)
            idx = _e.asarray(out, device=self._device or _e.get_default_device())
        else:  # numbers: the decimal text hashed on their device
            x = inputs if isinstance(inputs, _e.ndarray) else to_array(inputs)
            if x.dtype.kind not in "iuf":
                raise TypeError(f"Hashing: expected strings or numbers, got dtype {x.dtype}")
            flat = x.reshape((-1,)).astype(_e.int64)  # floats truncate, as Keras's cast
            if self.salt is not None:
                h = siphash24_ints(self.salt[0], self.salt[1], flat)
            else:
                h = fingerprint64_ints(flat)
            idx = (h % bins).astype(_e.int64).reshape(x.shape)
            if masked:
                is_mask = x == self.mask_value if not isinstance(self.mask_value, str) else None
                idx = idx + 1 if is_mask is None else _e.where(is_mask, 0, idx + 1)
        if self.output_mode == "int":
            return idx if self._out_dtype == "int64" else idx.astype(self._out_dtype)
        out = encode_categorical(idx, self.output_mode, self.num_bins, who="Hashing")
        return out if self._out_dtype == "float32" else out.astype(self._out_dtype)

    def compute_output_shape(self, input_shape):
        return categorical_shape(tuple(input_shape), self.output_mode, self.num_bins)

    def _output_dtype(self, inputs):
        return self._out_dtype

    def get_config(self):
        return {
            **super().get_config(),
            "dtype": self._out_dtype,
            "num_bins": self.num_bins,
            "salt": self.salt,
            "mask_value": self.mask_value,
            "output_mode": self.output_mode,
            "sparse": False,
        }
