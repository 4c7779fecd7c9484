"""Keras's ``TextVectorization``: strings -> token indices (``output_mode="int"``) or one row of
``multi_hot`` / ``count`` / ``tf_idf`` values per string.

The string work runs on the host, in Python (strings are Python ``str``, bytes or NumPy arrays
of them; ember arrays hold numbers): Keras's standardization (ASCII lowercasing, as
``tf.strings.lower``, and its punctuation regex), whitespace or character splitting, n-grams
joined by a space, and the vocabulary lookup of Keras's StringLookup (``""`` is padding, index 0
in "int" mode only; ``"[UNK]"`` takes every out-of-vocabulary token). The result is copied to the
device once per call. ``adapt`` orders the vocabulary as Keras does: by descending count, ties by
descending token (UTF-8 bytes)."""

from __future__ import annotations

import collections
import re
import string

import numpy as _np

import ember as _e

from ._layer import Layer, host_strings, register

__all__ = ["TextVectorization"]

_STRIP = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')  # Keras's DEFAULT_STRIP_REGEX
_WHITESPACE = re.compile(r"[ \t\n\v\f\r]+")  # tf.strings.split: ASCII whitespace
_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)  # tf.strings.lower
_STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
_SPLIT = ("whitespace", "character")
_MODES = ("int", "multi_hot", "count", "tf_idf")
MASK, OOV = "", "[UNK]"


def _check_choice(value, allowed, name, callables=True):
    if value is None or (callables and callable(value)) or value in allowed:
        return value
    raise ValueError(
        f"Unknown value for `{name}` argument of layer TextVectorization. Allowed values are: "
        f"{(None,) + allowed}{' or a callable' if callables else ''}. Received: {name}={value!r}"
    )


def _int_or_none(value, name, minimum):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)) or value < minimum:
        raise ValueError(
            f"`{name}` must be None or an integer >= {minimum} for TextVectorization. "
            f"Received: {name}={value!r}"
        )
    return int(value)


@register
class TextVectorization(Layer):
    """Maps strings to token indices or per-string token statistics (see the module doc).

    ``output_mode="int"``: ``(batch, length)`` int64 indices, 0-padded to the longest string of
    the batch or to ``output_sequence_length`` (longer ones are cut). Otherwise ``(batch,
    vocabulary_size())`` float32 (``max_tokens`` with ``pad_to_max_tokens=True``).
    """

    def __init__(
        self,
        max_tokens=None,
        standardize="lower_and_strip_punctuation",
        split="whitespace",
        ngrams=None,
        output_mode="int",
        output_sequence_length=None,
        pad_to_max_tokens=False,
        vocabulary=None,
        idf_weights=None,
        sparse=False,
        ragged=False,
        encoding="utf-8",
        name=None,
        **kwargs,
    ):
        has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        kwargs.pop("vocabulary_size", None)
        if sparse:
            raise ValueError("`sparse=True` can only be used with the TensorFlow backend.")
        if ragged:
            raise ValueError("`ragged=True` can only be used with the TensorFlow backend.")
        _check_choice(standardize, _STANDARDIZE, "standardize")
        _check_choice(split, _SPLIT, "split")
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode == "tf-idf":
            output_mode = "tf_idf"
        if output_mode not in _MODES:
            raise ValueError(
                "Unknown value for `output_mode` argument of layer TextVectorization. Allowed "
                f"values are: {_MODES}. Received: output_mode={output_mode!r}"
            )
        if isinstance(ngrams, bool) or not (
            ngrams is None
            or (isinstance(ngrams, int) and ngrams > 0)
            or (
                isinstance(ngrams, tuple)
                and ngrams
                and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in ngrams)
            )
        ):
            raise ValueError(
                "`ngrams` must be None, an integer, or a tuple of integers (positive). "
                f"Received: ngrams={ngrams!r}"
            )
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError(
                "`output_sequence_length` must not be set if `output_mode` is not 'int'. "
                f"Received output_sequence_length={output_sequence_length!r}."
            )
        max_tokens = _int_or_none(max_tokens, "max_tokens", 0)
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(
                f"If set, `max_tokens` must be greater than 1. Received: max_tokens={max_tokens}"
            )
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError(
                "If pad_to_max_tokens is True, must set `max_tokens`. Received: "
                f"max_tokens={max_tokens}"
            )
        if output_mode != "tf_idf" and idf_weights is not None:
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
        self._max_tokens = max_tokens
        self._standardize = standardize
        self._split = split
        self._ngrams_arg = ngrams
        self._ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self._output_mode = output_mode
        self._output_sequence_length = _int_or_none(
            output_sequence_length, "output_sequence_length", 0
        )
        self._pad_to_max_tokens = bool(pad_to_max_tokens)
        self._encoding = encoding
        self._has_input_vocabulary = bool(has_input_vocabulary)
        self._tokens = None  # the learned/set tokens, without the special ones
        self._index = {}
        self._idf = None  # float32 weights for every index (tf_idf)
        self.__dict__["_device"] = None
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # ---- vocabulary ----

    def _token_start(self):
        """Keras's index of the first real token: "" (int mode only) and "[UNK]" come first."""
        return 2 if self._output_mode == "int" else 1

    def _oov_index(self):
        return 1 if self._output_mode == "int" else 0

    def get_vocabulary(self, include_special_tokens=True):
        """The vocabulary, the index of each token in the output: ``["", "[UNK]", ...]`` in
        "int" mode, ``["[UNK]", ...]`` otherwise (``include_special_tokens=False``: the tokens
        alone)."""
        tokens = list(self._tokens or [])
        if not include_special_tokens:
            return tokens
        return ([MASK, OOV] if self._output_mode == "int" else [OOV]) + tokens

    def vocabulary_size(self):
        """The size of the vocabulary, the special tokens included."""
        return self._token_start() + len(self._tokens or [])

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the vocabulary (a list/tuple/array of unique strings, with or without Keras's
        leading special tokens) and, in "tf_idf" mode, its idf weights (one per entry)."""
        if self._output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        elif idf_weights is not None:
            raise ValueError(
                "`idf_weights` should only be set if output_mode is `'tf_idf'`. Received: "
                f"output_mode={self._output_mode} and idf_weights={idf_weights}"
            )
        if isinstance(vocabulary, (str, bytes)):
            raise ValueError(
                "TextVectorization.set_vocabulary: ember.keras takes the vocabulary as a list "
                f"of strings, not a file path. Received: vocabulary={vocabulary!r}"
            )
        try:
            vocab = [self._text(t) for t in list(_np.asarray(vocabulary, dtype=object).ravel())]
        except (TypeError, ValueError):
            raise ValueError(
                f"TextVectorization: vocabulary must be a list of strings. Received: "
                f"vocabulary={vocabulary!r}"
            ) from None
        if not vocab:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={vocab}")
        start = self._token_start()
        special = [MASK, OOV][2 - start :]
        found = vocab[:start] == special
        tokens = vocab[start:] if found else vocab
        repeated = [t for t, c in collections.Counter(tokens).items() if c > 1]
        if repeated:
            raise ValueError(
                "The passed vocabulary has at least one repeated term. Please uniquify your "
                f"dataset. The repeated terms are: {repeated}"
            )
        if MASK in tokens:
            raise ValueError(
                "Found reserved mask token at unexpected location in `vocabulary`. Note that "
                "passed `vocabulary` does not need to include the OOV and mask tokens. Either "
                "remove all mask and OOV tokens, or include them only at the start of the "
                f"vocabulary in precisely this order: {special}. Received: mask_token='' at "
                f"vocabulary index {vocab.index(MASK)}"
            )
        size = start + len(tokens)
        if self._max_tokens is not None and size > self._max_tokens:
            raise ValueError(
                "Attempted to set a vocabulary larger than the maximum vocab size. Received "
                f"vocabulary size is {size}; `max_tokens` is {self._max_tokens}."
            )
        idf = None
        if self._output_mode == "tf_idf":
            w = _np.asarray(idf_weights, dtype=_np.float64)
            if w.ndim != 1:
                raise ValueError(
                    f"TF-IDF data must be a 1-index array. Received: type(idf_weights)="
                    f"{type(idf_weights)}"
                )
            if len(w) != len(vocab):
                raise ValueError(
                    "`idf_weights` must be the same length as vocabulary. len(idf_weights) is "
                    f"{len(w)}; len(vocabulary) is {len(vocab)}"
                )
            if not found:  # the special tokens get the mean weight, as Keras gives them
                w = _np.concatenate([_np.full(start, w.mean()), w])
            idf = w.astype(_np.float32)
        self._set_tokens(tokens, idf)

    def _set_tokens(self, tokens, idf):
        d = self.__dict__
        d["_tokens"] = list(tokens)
        start = self._token_start()
        d["_index"] = {t: start + i for i, t in enumerate(tokens)}
        d["_idf"] = idf

    def adapt(self, data, batch_size=None, steps=None):
        """Learns the vocabulary (and document frequencies for "tf_idf") from `data`: strings
        (a list, a NumPy array ``(n,)`` or ``(n, 1)``) or an iterable of batches of them."""
        if self._has_input_vocabulary:
            raise ValueError(
                f"Cannot adapt layer '{self.name}' after setting a static vocabulary via "
                "`vocabulary` argument or `set_vocabulary()` method."
            )
        counts, docs, n_docs = collections.Counter(), collections.Counter(), 0
        text = host_strings(data)
        batches = [text] if text is not None else data
        if text is None and not hasattr(data, "__iter__"):
            raise TypeError(
                "TextVectorization.adapt: data must be strings (a list or NumPy array) or an "
                f"iterable of batches of them. Received: {type(data).__name__}"
            )
        for i, batch in enumerate(batches):
            if steps is not None and i >= steps:
                break
            rows = self._rows(batch)
            for row in rows:
                counts.update(row)
                if self._output_mode == "tf_idf":
                    docs.update(set(row))
            n_docs += len(rows)
        counts.pop(MASK, None)
        counts.pop(OOV, None)
        # Keras: descending count, ties by descending token (np.lexsort on the UTF-8 bytes)
        order = sorted(counts, key=lambda t: (counts[t], t.encode("utf-8")), reverse=True)
        if self._max_tokens is not None:
            order = order[: self._max_tokens - self._token_start()]
        idf = None
        if self._output_mode == "tf_idf":
            dfs = _np.asarray([docs[t] for t in order], dtype=_np.float64)
            w = _np.log(1.0 + n_docs / (1.0 + dfs)).astype(_np.float32)
            oov = w.mean(dtype=_np.float32) if len(w) else _np.float32(0.0)
            idf = _np.concatenate([_np.full(self._token_start(), oov, _np.float32), w])
        self._set_tokens(order, idf)

    # ---- strings -> tokens ----

    def _text(self, s):
        if isinstance(s, bytes):
            return s.decode(self._encoding)
        if isinstance(s, (str, _np.str_)):
            return str(s)
        raise TypeError(f"TextVectorization: expected strings, got {type(s).__name__} {s!r}")

    def _standardized(self, s):
        st = self._standardize
        if st in ("lower", "lower_and_strip_punctuation"):
            s = s.translate(_LOWER)
        if st in ("strip_punctuation", "lower_and_strip_punctuation"):
            s = _STRIP.sub("", s)
        if callable(st):
            s = st(s)
        return s

    def _split_text(self, s):
        sp = self._split
        if sp == "whitespace":
            return [t for t in _WHITESPACE.split(s) if t]
        if sp == "character":
            return list(s)
        tokens = sp(s)
        return [tokens] if isinstance(tokens, str) else list(tokens)

    def _with_ngrams(self, tokens):
        if self._ngrams is None:
            return tokens
        out = []
        for n in self._ngrams:  # all n-grams of each width, the widths in the given order
            out.extend(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
        return out

    def _rows(self, data):
        """The token lists of a batch of strings (one row per string)."""
        a = host_strings(data)
        if a is None and isinstance(data, (list, tuple)) and not data:
            a = _np.zeros((0,), dtype=str)
        if a is None:
            raise TypeError(
                "TextVectorization: the inputs must be strings (str, bytes, a list or a NumPy "
                f"array of them). Received: {type(data).__name__}"
            )
        if a.ndim == 0:
            a = a.reshape(1)
        if self._split is None:
            if a.ndim > 2:
                raise ValueError(
                    "TextVectorization with split=None takes (batch,) or (batch, tokens) "
                    f"inputs. Received: inputs.shape={a.shape}"
                )
            rows = a.reshape(-1, 1) if a.ndim == 1 else a
            return [self._with_ngrams([self._standardized(self._text(t)) for t in r]) for r in rows]
        if a.ndim > 1:
            if a.shape[-1] != 1 or a.ndim > 2:
                raise ValueError(
                    "When using `TextVectorization` to tokenize strings, the input rank must be "
                    f"1 or the last shape dimension must be 1. Received: inputs.shape={a.shape} "
                    f"with rank={a.ndim}"
                )
            a = a[:, 0]
        return [self._with_ngrams(self._split_text(self._standardized(self._text(s)))) for s in a]

    # ---- calling ----

    def __call__(self, inputs, *args, **kwargs):
        text = host_strings(inputs)
        return super().__call__(inputs if text is None else text, *args, **kwargs)

    def build(self, input_shape=None):
        # no weights: the outputs go where the weights of the layers around it are created
        self.__dict__["_device"] = _e.get_default_device()

    def _depth(self):
        if self._pad_to_max_tokens:
            return self._max_tokens
        if self._tokens is None:
            raise RuntimeError(
                f"When using `output_mode={self._output_mode}` and `pad_to_max_tokens=False`, "
                "you must set the layer's vocabulary before calling it. Either pass a "
                "`vocabulary` argument to the layer, or call `adapt` with some sample data."
            )
        return self.vocabulary_size()

    def call(self, inputs):
        rows = self._rows(inputs)
        scalar = _np.ndim(inputs) == 0
        index, oov = self._index, self._oov_index()
        device = self._device or _e.get_default_device()
        if self._output_mode == "int":
            ids = [[0 if t == MASK else index.get(t, oov) for t in r] for r in rows]
            # split=None on (batch,) strings: one index per string, as Keras gives (batch,)
            flat = self._split is None and _np.ndim(inputs) == 1
            n = self._output_sequence_length
            if n is None:
                n = max([len(r) for r in ids] + [1 if flat else 0])
            out = _np.zeros((len(ids), n), dtype=_np.int64)
            for i, r in enumerate(ids):
                r = r[:n]
                out[i, : len(r)] = r
            if flat and self._output_sequence_length is None:
                out = out[:, 0]
            return _e.asarray(out[0] if scalar else out, device=device)
        depth = self._depth()
        out = _np.zeros((len(rows), depth), dtype=_np.float32)
        for i, r in enumerate(rows):
            for t in r:
                if t == MASK:  # the mask token is dropped outside "int" mode
                    continue
                j = index.get(t, oov)
                if j < depth:
                    out[i, j] += 1.0
        if self._output_mode == "multi_hot":
            out = _np.minimum(out, 1.0)
        elif self._output_mode == "tf_idf":
            if self._idf is None:
                raise ValueError(
                    "When `output_mode` is `'tf_idf'`, `idf_weights` must be provided."
                )
            w = _np.zeros(depth, _np.float32)
            w[: min(depth, len(self._idf))] = self._idf[:depth]
            out = out * w
        return _e.asarray(out[0] if scalar else out, device=device)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        batch = input_shape[:1]
        if self._output_mode == "int":
            n = self._output_sequence_length
            if self._split is None and len(input_shape) == 1 and n is None:
                return input_shape
            return batch + (n,)
        depth = self._max_tokens if self._pad_to_max_tokens else self._frozen_depth()
        return batch + (depth,)

    def _frozen_depth(self):
        return None if self._tokens is None else self.vocabulary_size()

    def _output_dtype(self, inputs):
        return "int64" if self._output_mode == "int" else "float32"

    def get_config(self):
        """Keras's config; "vocabulary" (and "idf_weights") hold the current vocabulary, learned
        or set, so that ``from_config`` and ``load_model`` restore it (Keras keeps a learned one
        in the archive's assets, which ember's ``.keras`` files do not have)."""
        tokens = None if self._tokens is None else self.get_vocabulary()
        idf = None if self._idf is None else [float(v) for v in self._idf]
        return {
            **super().get_config(),
            "max_tokens": self._max_tokens,
            "standardize": self._standardize,
            "split": self._split,
            "ngrams": self._ngrams_arg,
            "output_mode": self._output_mode,
            "output_sequence_length": self._output_sequence_length,
            "pad_to_max_tokens": self._pad_to_max_tokens,
            "sparse": False,
            "ragged": False,
            "vocabulary": tokens,
            "idf_weights": idf,
            "encoding": self._encoding,
            "vocabulary_size": None if self._tokens is None else self.vocabulary_size(),
            "has_input_vocabulary": self._has_input_vocabulary,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("ngrams"), list):
            config["ngrams"] = tuple(config["ngrams"])
        return cls(**config)
