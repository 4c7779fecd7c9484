"""Keras 3's lookup layers: ``StringLookup`` and ``IntegerLookup`` (token -> index, or index ->
token with ``invert=True``), and the categorical encoding that every preprocessing layer shares.

Keras's index layout: the mask token at 0 (``output_mode="int"`` only, when ``mask_token`` is
set), then ``num_oov_indices`` OOV indices, then the vocabulary. One OOV index takes every
out-of-vocabulary token; with several, strings go to ``FarmHash64(token) % n`` (as
``tf.strings.to_hash_bucket_fast``) and integers to ``token % n`` (floor modulo); with none, an
out-of-vocabulary input is an error. ``adapt`` orders the vocabulary by descending count, ties by
descending token (UTF-8 bytes for strings, value for integers), as Keras's ``np.lexsort``.

Strings stay on the host (NumPy, as TextVectorization takes them); their indices are copied to
the device once per call. IntegerLookup looks integers up on their device (a sorted key array and
``searchsorted``). The "one_hot" / "multi_hot" / "count" / "tf_idf" outputs are built on the
device. ember's ``.keras`` files have no assets, so the config carries the vocabulary (and idf
weights), learned or set."""

from __future__ import annotations

import collections
import os

import numpy as _np

import ember as _e

from .._array import asnumpy
from ._layer import Layer, host_strings, register
from ._preproc_hash import fingerprint64

__all__ = ["IntegerLookup", "StringLookup", "encode_categorical"]

_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")
_DROP = 2**63 - 1  # the index of a mask token outside "int" mode: dropped by the encoding


def encode_categorical(idx, mode, depth, count_weights=None, who="layer"):
    """Keras's categorical encoding of int64 indices `idx` (an ember array) to float32 on its
    device: "one_hot" adds an axis of `depth` (a trailing axis of 1 is replaced), "multi_hot" /
    "count" reduce the last axis (a rank-1 input is one sample). Indices outside [0, depth)
    contribute nothing."""
    if mode == "int":
        return idx
    if idx.ndim == 0:
        idx = idx.reshape((1,))
    if mode == "one_hot":
        if idx.ndim > 1 and idx.shape[-1] == 1:
            idx = idx[..., 0]
        return (idx[..., None] == _e.arange(depth, device=idx.device)).astype(_e.float32)
    if idx.ndim > 2:
        if mode == "multi_hot":
            hot = idx[..., None] == _e.arange(depth, device=idx.device)
            return _e.any(hot, axis=-2).astype(_e.float32)
        raise ValueError(
            f"{who}: when output_mode is anything other than 'multi_hot', 'one_hot', or 'int', "
            f"the rank must be 2 or less. Received output_mode: {mode} and input shape: "
            f"{tuple(idx.shape)}"
        )
    single = idx.ndim == 1
    x = idx.reshape((1, -1)) if single else idx
    b, n = x.shape
    w = None if count_weights is None else count_weights.reshape(x.shape)
    # by comparison with every index (no scatter: its bounds check would read back from the
    # device), a block of columns at a time to bound the (b, block, depth) temporary
    ar = _e.arange(depth, device=x.device)
    block = max(1, (1 << 24) // max(1, b * depth))
    out = None
    for s in range(0, max(n, 1), block):
        hot = x[:, s : s + block, None] == ar
        if mode == "multi_hot":
            part = _e.any(hot, axis=1)
            out = part if out is None else out | part
        elif w is None:
            part = _e.sum(hot.astype(_e.float32), axis=1)
            out = part if out is None else out + part
        else:
            zero = _e.zeros((), dtype=w.dtype, device=w.device)
            part = _e.sum(_e.where(hot, w[:, s : s + block, None], zero), axis=1)
            out = part if out is None else out + part
    out = out.astype(_e.float32) if out.dtype == _e.bool_ else out
    return out[0] if single else out


def categorical_shape(input_shape, mode, depth):
    """The output shape of :func:`encode_categorical` for `input_shape`."""
    s = tuple(input_shape)
    if mode == "int":
        return s
    if not s:
        return (depth,)
    if mode == "one_hot":
        return (s[:-1] if len(s) > 1 and s[-1] == 1 else s) + (depth,)
    return s[:-1] + (depth,)


def check_output_mode(mode, allowed, who, aliases=True):
    if aliases:
        mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(mode, mode)
    if mode not in allowed:
        raise ValueError(
            f"Unknown value for `output_mode` argument of layer {who}. Allowed values are: "
            f"{allowed}. Received: output_mode={mode!r}"
        )
    return mode


class _IndexLookup(Layer):
    """The shared part of StringLookup and IntegerLookup (Keras's IndexLookup)."""

    def __init__(
        self,
        max_tokens,
        num_oov_indices,
        mask_token,
        oov_token,
        vocabulary,
        idf_weights,
        invert,
        output_mode,
        sparse,
        pad_to_max_tokens,
        name=None,
        **kwargs,
    ):
        who = type(self).__name__
        has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        kwargs.pop("vocabulary_size", None)
        if sparse:
            raise ValueError(
                f"{who}: `sparse=True` can only be used with the TensorFlow backend. Received: "
                f"sparse={sparse!r}"
            )
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, (int, _np.integer))
        ):
            raise ValueError(f"{who}: `max_tokens` must be None or an int. Received: {max_tokens=}")
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(
                f"If set, `max_tokens` must be greater than 1 for {who}. Received: "
                f"max_tokens={max_tokens}"
            )
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError(
                "If pad_to_max_tokens is True, must set `max_tokens`. Received: "
                f"max_tokens={max_tokens}"
            )
        if (
            isinstance(num_oov_indices, bool)
            or not isinstance(num_oov_indices, (int, _np.integer))
            or num_oov_indices < 0
        ):
            raise ValueError(
                f"`num_oov_indices` must be greater than or equal to 0 for {who}. Received: "
                f"num_oov_indices={num_oov_indices!r}"
            )
        output_mode = check_output_mode(output_mode, _MODES, who)
        if invert and output_mode != "int":
            raise ValueError(
                "`output_mode` must be `'int'` when `invert` is true. Received: "
                f"output_mode={output_mode}"
            )
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError(
                "`idf_weights` should only be set if `output_mode` is `'tf_idf'`. Received: "
                f"idf_weights={idf_weights} and output_mode={output_mode}"
            )
        if output_mode == "tf_idf" and has_input_vocabulary and idf_weights is None:
            raise ValueError(
                "When specifying the `vocabulary` argument, in TF-IDF output mode, the "
                "`idf_weights` argument must also be provided."
            )
        super().__init__(name=name, **kwargs)
        self.max_tokens = None if max_tokens is None else int(max_tokens)
        self.num_oov_indices = int(num_oov_indices)
        self.mask_token = None if mask_token is None else self._token(mask_token)
        self.oov_token = None if oov_token is None else self._token(oov_token)
        self.invert = bool(invert)
        self.output_mode = output_mode
        self.pad_to_max_tokens = bool(pad_to_max_tokens)
        self._has_input_vocabulary = bool(has_input_vocabulary)
        d = self.__dict__
        d["_tokens"] = None  # the vocabulary without the special tokens
        d["_index"] = {}
        d["_idf"] = None  # NumPy float32, one weight per index
        d["_cache"] = {}  # device arrays: (what, device) -> array
        d["_device"] = None
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # ---- the index layout ----

    def _oov_start(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start(self):
        return self._oov_start() + self.num_oov_indices

    def vocabulary_size(self):
        """The number of indices: the special ones and the vocabulary."""
        return self._token_start() + len(self._tokens or ())

    def get_vocabulary(self, include_special_tokens=True):
        """The token of each index: the mask token (if any, "int" mode), ``oov_token`` once per
        OOV index, then the vocabulary (``include_special_tokens=False``: the vocabulary
        alone)."""
        tokens = list(self._tokens or ())
        if not include_special_tokens:
            return tokens
        return self._specials() + tokens

    def _specials(self):
        return [self.mask_token] * self._oov_start() + [self.oov_token] * self.num_oov_indices

    # ---- setting / learning the vocabulary ----

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the vocabulary: unique tokens (Keras's leading special tokens may be included,
        in their order) or, for a str, the path of a text file with one token per line (taken
        as is), and in "tf_idf" mode one idf weight per entry."""
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        elif idf_weights is not None:
            raise ValueError(
                "`idf_weights` should only be set if output_mode is `'tf_idf'`. Received: "
                f"output_mode={self.output_mode} and idf_weights={idf_weights}"
            )
        from_file = isinstance(vocabulary, (str, os.PathLike))
        if from_file:
            path = os.fspath(vocabulary)
            if not os.path.isfile(path):
                raise ValueError(f"Vocabulary file {path} does not exist.")
            if self.output_mode == "tf_idf":
                raise ValueError(
                    "output_mode `'tf_idf'` does not support loading a vocabulary from file."
                )
            with open(path, encoding="utf-8", newline="") as f:
                lines = [ln[:-1] if ln.endswith("\r") else ln for ln in f.read().split("\n")]
            if lines and lines[-1] == "":
                lines.pop()
            vocab = [self._token(t) for t in lines]
        else:
            if isinstance(vocabulary, _e.ndarray):
                vocabulary = asnumpy(vocabulary)
            vocab = [self._token(t) for t in _np.asarray(vocabulary, dtype=object).ravel()]
        if not vocab:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={vocab}")
        start = self._token_start()
        specials = self._specials()
        found = not from_file and vocab[:start] == specials
        tokens = vocab[start:] if found else vocab
        repeated = [t for t, c in collections.Counter(tokens).items() if c > 1]
        if repeated:
            raise ValueError(
                "The passed vocabulary has at least one repeated term. Please uniquify your "
                f"dataset. The repeated terms are: {repeated}"
            )
        for token, role, check in (
            (self.mask_token, "mask_token", True),
            (self.oov_token, "oov_token", self.invert),  # Keras: only an error when inverting
        ):
            if check and token is not None and token in tokens:
                what = "mask" if role == "mask_token" else "OOV"
                at = len(vocab) - 1 - vocab[::-1].index(token)
                raise ValueError(
                    f"Found reserved {what} token at unexpected location in `vocabulary`. "
                    "Note that passed `vocabulary` does not need to include the OOV and mask "
                    "tokens. Either remove all mask and OOV tokens, or include them only at the "
                    f"start of the vocabulary in precisely this order: {specials}. Received: "
                    f"{role}={token} at vocabulary index {at}"
                )
        size = start + len(tokens)
        if self.max_tokens is not None and size > self.max_tokens:
            raise ValueError(
                "Attempted to set a vocabulary larger than the maximum vocab size. Received "
                f"vocabulary size is {size}; `max_tokens` is {self.max_tokens}."
            )
        idf = None
        if self.output_mode == "tf_idf":
            w = _np.asarray(
                asnumpy(idf_weights) if isinstance(idf_weights, _e.ndarray) else idf_weights,
                dtype=_np.float64,
            )
            if len(vocab) != len(w):
                raise ValueError(
                    "`idf_weights` must be the same length as vocabulary. len(idf_weights) is "
                    f"{len(w)}; len(vocabulary) is {len(vocab)}"
                )
            if w.ndim != 1:
                raise ValueError(
                    f"TF-IDF data must be a 1-index array. Received: type(idf_weights)="
                    f"{type(idf_weights)}"
                )
            if not found:  # Keras: the special indices get the average weight
                w = _np.concatenate([_np.full(start, _np.average(w)), w])
            idf = w.astype(_np.float32)
        self._set_tokens(tokens, idf)

    def _set_tokens(self, tokens, idf):
        d = self.__dict__
        d["_tokens"] = list(tokens)
        start = self._token_start()
        d["_index"] = {t: start + i for i, t in enumerate(d["_tokens"])}
        d["_idf"] = idf
        d["_cache"] = {}

    def adapt(self, data, batch_size=None, steps=None):
        """Learns the vocabulary (and, in "tf_idf" mode, idf weights ``log(1 + N / (1 + df))``,
        the special indices getting their mean) from `data`: an array or list (a 1-D one is
        that many one-token documents, a 2-D one a document per row), or an iterable of such
        batches (each batch of rank 1 is one document, as Keras's ``update_state``)."""
        if self._has_input_vocabulary:
            raise ValueError(
                f"Cannot adapt layer '{self.name}' after setting a static vocabulary via "
                "`vocabulary` argument or `set_vocabulary()` method."
            )
        counts, docs, n_docs = collections.Counter(), collections.Counter(), 0
        direct = isinstance(data, (list, tuple, str, bytes, int, _np.ndarray, _e.ndarray))
        if not direct and not hasattr(data, "__iter__"):
            raise TypeError(
                f"{type(self).__name__}.adapt: data must be an array, a list, or an iterable of "
                f"batches of them. Received: {type(data).__name__}"
            )
        for i, batch in enumerate([data] if direct else data):
            if steps is not None and i >= steps:
                break
            rows = self._adapt_rows(batch, one_doc_1d=not direct)
            for tokens, c in rows[0].items():
                counts[tokens] += c
            docs.update(rows[1])
            n_docs += rows[2]
        for special in (self.mask_token, self.oov_token):
            if special is not None:
                counts.pop(special, None)
        if not counts:
            return
        order = sorted(counts, key=lambda t: (counts[t], self._sort_key(t)), reverse=True)
        if self.max_tokens:
            order = order[: self.max_tokens - self._token_start()]
        idf = None
        if self.output_mode == "tf_idf":
            dfs = _np.asarray([docs[t] for t in order], dtype=_np.float64)
            w = _np.log(1.0 + n_docs / (1.0 + dfs)).astype(_np.float32)
            idf = _np.concatenate([_np.full(self._token_start(), w.mean(), _np.float32), w])
        self._set_tokens(order, idf)

    # ---- calling ----

    def __call__(self, inputs, *args, **kwargs):
        text = host_strings(inputs)
        return super().__call__(inputs if text is None else text, *args, **kwargs)

    def build(self, input_shape=None):
        # no weights: host-string results go where the layers around it build theirs
        self.__dict__["_device"] = _e.get_default_device()

    def _depth(self):
        if self.pad_to_max_tokens:
            return self.max_tokens
        if self._tokens is None:
            raise RuntimeError(
                f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, "
                "you must set the layer's vocabulary before calling it. Either pass a "
                "`vocabulary` argument to the layer, or call `adapt` with some sample data."
            )
        return self.vocabulary_size()

    def _cached(self, what, device, make):
        key = (what, str(device))
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def _oov_error(self, values):
        raise ValueError(
            "When `num_oov_indices=0` all inputs should be in vocabulary, found OOV values "
            f"{list(values)}, consider setting `num_oov_indices=1`."
        )

    def call(self, inputs):
        if self.invert:
            return self._invert(inputs)
        idx = self._lookup(inputs)
        if self.output_mode == "int":
            return idx
        depth = self._depth()
        out = encode_categorical(
            idx,
            self.output_mode if self.output_mode != "tf_idf" else "count",
            depth,
            who=type(self).__name__,
        )
        if self.output_mode == "tf_idf":
            if self._idf is None:
                raise ValueError(
                    "When `output_mode` is `'tf_idf'`, `idf_weights` must be provided."
                )

            def weights():
                w = _np.zeros(depth, _np.float32)
                n = min(depth, len(self._idf))
                w[:n] = self._idf[:n]
                return _e.asarray(w, device=out.device)

            out = out * self._cached(("idf", depth), out.device, weights)
        return out

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        depth = (
            self.max_tokens
            if self.pad_to_max_tokens
            else (None if self._tokens is None else self.vocabulary_size())
        )
        return categorical_shape(input_shape, self.output_mode, depth)

    def _output_dtype(self, inputs):
        if self.invert:
            return self._vocab_dtype
        return "int64" if self.output_mode == "int" else "float32"

    def get_config(self):
        """Keras's config; "vocabulary" (and "idf_weights") hold the current vocabulary with its
        special tokens, learned or set (from a list or a file), so that ``from_config`` and
        ``load_model`` restore it (ember's ``.keras`` files have no assets)."""
        vocab = None if self._tokens is None else self.get_vocabulary()
        idf = None if self._idf is None else [float(v) for v in self._idf]
        return {
            **super().get_config(),
            "invert": self.invert,
            "max_tokens": self.max_tokens,
            "num_oov_indices": self.num_oov_indices,
            "oov_token": self.oov_token,
            "mask_token": self.mask_token,
            "output_mode": self.output_mode,
            "sparse": False,
            "pad_to_max_tokens": self.pad_to_max_tokens,
            "vocabulary_dtype": self._vocab_dtype,
            "idf_weights": idf,
            "vocabulary": vocab,
            "vocabulary_size": self.vocabulary_size(),
            "has_input_vocabulary": self._has_input_vocabulary,
        }


@register
class StringLookup(_IndexLookup):
    """Strings -> indices (``invert=True``: indices -> strings, a NumPy array of ``str`` on the
    host). See the module doc for the layout; inputs are strings on the host (a list or NumPy
    array; bytes are decoded with `encoding`)."""

    _vocab_dtype = "string"

    def __init__(
        self,
        max_tokens=None,
        num_oov_indices=1,
        mask_token=None,
        oov_token="[UNK]",
        vocabulary=None,
        idf_weights=None,
        invert=False,
        output_mode="int",
        pad_to_max_tokens=False,
        sparse=False,
        encoding="utf-8",
        name=None,
        **kwargs,
    ):
        kwargs.pop("vocabulary_dtype", None)
        self.__dict__["encoding"] = encoding
        super().__init__(
            max_tokens,
            num_oov_indices,
            mask_token,
            oov_token,
            vocabulary,
            idf_weights,
            invert,
            output_mode,
            sparse,
            pad_to_max_tokens,
            name=name,
            **kwargs,
        )

    def _token(self, t):
        if isinstance(t, bytes):
            return t.decode(self.encoding)
        if isinstance(t, (str, _np.str_)):
            return str(t)
        raise TypeError(f"StringLookup: expected strings, got {type(t).__name__} {t!r}")

    @staticmethod
    def _sort_key(t):
        return t.encode("utf-8")

    def _strings(self, data):
        a = host_strings(data)
        if a is None and isinstance(data, (list, tuple)) and not data:
            a = _np.zeros((0,), dtype=str)
        if a is None:
            raise TypeError(
                "StringLookup: the inputs must be strings (str, bytes, a list or a NumPy array "
                f"of them). Received: {type(data).__name__}"
            )
        return a

    def _adapt_rows(self, batch, one_doc_1d):
        a = self._strings(batch)
        if a.ndim == 0 or (a.ndim == 1 and one_doc_1d):
            a = a.reshape(1, -1)
        elif a.ndim == 1:
            a = a.reshape(-1, 1)
        rows = [[self._token(t) for t in r] for r in a.reshape(a.shape[0], -1)]
        docs = collections.Counter(t for r in rows for t in set(r))
        return collections.Counter(t for r in rows for t in r), docs, len(rows)

    def _lookup(self, inputs):
        a = self._strings(inputs)
        index, mask, n_oov, start = (
            self._index,
            self.mask_token,
            self.num_oov_indices,
            self._oov_start(),
        )
        mask_value = 0 if self.output_mode == "int" else _DROP
        missing = []

        def one(t):
            t = self._token(t)
            if t == mask:
                return mask_value
            i = index.get(t)
            if i is not None:
                return i
            if n_oov == 1:
                return start
            if n_oov == 0:
                missing.append(t)
                return -1
            return start + fingerprint64(t) % n_oov

        flat = _np.fromiter((one(t) for t in a.ravel()), dtype=_np.int64, count=a.size)
        if missing:
            self._oov_error(missing)
        return _e.asarray(flat.reshape(a.shape), device=self._device or _e.get_default_device())

    def _invert(self, inputs):
        x = asnumpy(inputs) if isinstance(inputs, _e.ndarray) else _np.asarray(inputs)
        if x.dtype.kind not in "iu":
            raise TypeError(f"StringLookup(invert=True): expected integer indices, got {x.dtype}")
        vocab = _np.asarray(self.get_vocabulary() or [self.oov_token], dtype=object)
        ok = (x >= 0) & (x < len(vocab)) & (x < self.vocabulary_size())
        out = _np.where(ok, vocab[_np.where(ok, x, 0)], self.oov_token)
        if self.mask_token is not None:
            out = _np.where(x == 0, self.mask_token, out)
        return out.astype(object)

    def get_config(self):
        return {**super().get_config(), "encoding": self.encoding}


@register
class IntegerLookup(_IndexLookup):
    """Integers -> indices (``invert=True``: indices -> integers), looked up on the inputs'
    device. See the module doc for the layout; float inputs are truncated to int64, as Keras
    casts them."""

    _vocab_dtype = "int64"

    def __init__(
        self,
        max_tokens=None,
        num_oov_indices=1,
        mask_token=None,
        oov_token=-1,
        vocabulary=None,
        vocabulary_dtype="int64",
        idf_weights=None,
        invert=False,
        output_mode="int",
        sparse=False,
        pad_to_max_tokens=False,
        name=None,
        **kwargs,
    ):
        if vocabulary_dtype != "int64":
            raise ValueError(
                "Only `vocabulary_dtype='int64'` is supported at this time. Received: "
                f"vocabulary_dtype={vocabulary_dtype}"
            )
        super().__init__(
            max_tokens,
            num_oov_indices,
            mask_token,
            oov_token,
            vocabulary,
            idf_weights,
            invert,
            output_mode,
            sparse,
            pad_to_max_tokens,
            name=name,
            **kwargs,
        )

    @staticmethod
    def _token(t):
        if isinstance(t, (str, bytes, _np.str_, _np.bytes_)):
            return int(t.strip())  # a vocabulary file's line
        if isinstance(t, (bool, _np.bool_)) or not float(t).is_integer():
            raise ValueError(f"IntegerLookup: tokens must be integers. Received: {t!r}")
        return int(t)

    @staticmethod
    def _sort_key(t):
        return t

    def _ints(self, data):
        x = data if isinstance(data, _e.ndarray) else _e.asarray(_np.asarray(data))
        if x.dtype.kind == "b" or x.dtype.kind not in "iuf":
            raise TypeError(f"{type(self).__name__}: expected integer inputs, got dtype {x.dtype}")
        return x if x.dtype == _e.int64 else x.astype(_e.int64)

    def _adapt_rows(self, batch, one_doc_1d):
        x = self._ints(batch)
        if x.ndim == 0 or (x.ndim == 1 and one_doc_1d):
            x = x.reshape((1, -1))
        elif x.ndim == 1:
            x = x.reshape((-1, 1))
        x = x.reshape((x.shape[0], -1))
        vals, cnts = _e.unique(x, return_counts=True)
        counts = collections.Counter(
            dict(zip(asnumpy(vals).tolist(), asnumpy(cnts).tolist(), strict=True))
        )
        docs = collections.Counter()
        if self.output_mode == "tf_idf" and x.size:
            s = _e.sort(x, axis=1)
            first = _e.concatenate(
                [_e.ones((s.shape[0], 1), dtype=_e.bool_, device=s.device), s[:, 1:] != s[:, :-1]],
                axis=1,
            )
            dv, dc = _e.unique(s[first], return_counts=True)
            docs = collections.Counter(
                dict(zip(asnumpy(dv).tolist(), asnumpy(dc).tolist(), strict=True))
            )
        return counts, docs, x.shape[0]

    def _lookup(self, inputs):
        x = self._ints(inputs)
        dev = x.device
        tokens = self._tokens or []
        n_oov, start = self.num_oov_indices, self._oov_start()
        if tokens:
            keys, vals = self._cached("keys", dev, lambda: self._sorted_keys(dev))
            pos = _e.minimum(_e.searchsorted(keys, x), len(tokens) - 1)
            found = _e.take(keys, pos, mode="clip") == x  # in range: no bounds-check read
            hit = _e.take(vals, pos, mode="clip")
        else:
            found = _e.zeros(x.shape, dtype=_e.bool_, device=dev)
            hit = _e.zeros(x.shape, dtype=_e.int64, device=dev)
        if n_oov == 1:
            miss = _e.full(x.shape, start, dtype=_e.int64, device=dev)
        elif n_oov > 1:
            miss = _e.remainder(x, n_oov) + start
        else:
            miss = _e.full(x.shape, -1, dtype=_e.int64, device=dev)
        idx = _e.where(found, hit, miss)
        is_mask = None
        if self.mask_token is not None:
            is_mask = x == self.mask_token
            mask_value = 0 if self.output_mode == "int" else _DROP
            idx = _e.where(is_mask, mask_value, idx)
        if n_oov == 0:
            bad = ~found if is_mask is None else ~found & ~is_mask
            if bool(_e.any(bad)):  # Keras asserts here too: one read of a flag
                self._oov_error(asnumpy(x[bad]).tolist())
        return idx

    def _sorted_keys(self, dev):
        t = _np.asarray(self._tokens, dtype=_np.int64)
        order = _np.argsort(t, kind="stable")
        start = self._token_start()
        return _e.asarray(t[order], device=dev), _e.asarray(order + start, device=dev)

    def _invert(self, inputs):
        x = self._ints(inputs)
        dev = x.device
        size = self.vocabulary_size()
        table = self._cached(
            "table",
            dev,
            lambda: _e.asarray(_np.asarray(self.get_vocabulary() or [0], _np.int64), device=dev),
        )
        ok = (x >= 0) & (x < size)
        out = _e.where(ok, _e.take(table, x, mode="clip"), self.oov_token)
        if self.mask_token is not None:
            out = _e.where(x == 0, self.mask_token, out)
        return out.astype(_e.int64)
