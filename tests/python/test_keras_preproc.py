"""ember.keras's preprocessing layers: StringLookup, IntegerLookup, CategoryEncoding,
Discretization and Hashing, against Keras 3's documented behaviour (its docstring and test
examples, with their published outputs) and hand-computed expectations."""

from __future__ import annotations

import collections
import json
import math
import os
import shutil
import subprocess
import sys
import textwrap

import ember
import numpy as np
import pytest
from ember import keras

L = keras.layers


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.clear_session()
    keras.utils.set_random_seed(0)


def host(a):
    return np.array(ember.asnumpy(a), copy=True)


VOCAB = ["a", "b", "c", "d"]
DATA = [["a", "c", "d", "d"], ["d", "z", "b", "z"]]


# ---- StringLookup -------------------------------------------------------------------------------


def test_string_lookup_keras_examples(device):
    with ember.device(device):
        out = L.StringLookup(vocabulary=VOCAB)([["a", "c", "d"], ["d", "z", "b"]])
        assert isinstance(out, ember.ndarray) and out.dtype == ember.int64
        assert str(out.device) == str(ember.device(device))
        np.testing.assert_array_equal(host(out), [[1, 3, 4], [4, 0, 2]])
        two = L.StringLookup(vocabulary=VOCAB, num_oov_indices=2)
        # "m" and "z" go to FarmHash64(token) % 2 (Keras's documented [[2, 4, 5], [0, 1, 3]])
        np.testing.assert_array_equal(
            host(two([["a", "c", "d"], ["m", "z", "b"]])), [[2, 4, 5], [0, 1, 3]]
        )
        one_hot = L.StringLookup(vocabulary=VOCAB, output_mode="one_hot")(["a", "b", "c", "d", "z"])
        np.testing.assert_array_equal(host(one_hot), np.eye(5)[[1, 2, 3, 4, 0]])
        multi = L.StringLookup(vocabulary=VOCAB, output_mode="multi_hot")(DATA)
        np.testing.assert_array_equal(host(multi), [[0, 1, 0, 1, 1], [1, 0, 1, 0, 1]])
        count = L.StringLookup(vocabulary=VOCAB, output_mode="count")(DATA)
        np.testing.assert_array_equal(host(count), [[0, 1, 0, 1, 2], [2, 0, 1, 0, 1]])
        tfidf = L.StringLookup(output_mode="tf_idf")
        tfidf.set_vocabulary(VOCAB, idf_weights=[0.25, 0.75, 0.6, 0.4])  # OOV: the mean, 0.5
        np.testing.assert_allclose(
            host(tfidf(DATA)), [[0, 0.25, 0, 0.6, 0.8], [1.0, 0, 0.75, 0, 0.4]], rtol=1e-6
        )
        tfidf.set_vocabulary(["[UNK]"] + VOCAB, idf_weights=[0.9, 0.25, 0.75, 0.6, 0.4])
        np.testing.assert_allclose(
            host(tfidf(DATA)), [[0, 0.25, 0, 0.6, 0.8], [1.8, 0, 0.75, 0, 0.4]], rtol=1e-6
        )
        inv = L.StringLookup(vocabulary=VOCAB, invert=True)(ember.asarray([[1, 3, 4], [4, 0, 2]]))
    assert isinstance(inv, np.ndarray)
    assert inv.tolist() == [["a", "c", "d"], ["d", "[UNK]", "b"]]


def test_string_lookup_mask_layout_and_invert_round_trip():
    layer = L.StringLookup(vocabulary=VOCAB, mask_token="", num_oov_indices=2, oov_token="?")
    assert layer.get_vocabulary() == ["", "?", "?", "a", "b", "c", "d"]
    assert layer.get_vocabulary(include_special_tokens=False) == VOCAB
    assert layer.vocabulary_size() == 7
    ids = host(layer(np.array([["a", "", "d"], ["b", "c", ""]])))
    np.testing.assert_array_equal(ids, [[3, 0, 6], [4, 5, 0]])
    inv = L.StringLookup(vocabulary=VOCAB, mask_token="", num_oov_indices=2, invert=True)
    assert inv(ids).tolist() == [["a", "", "d"], ["b", "c", ""]]
    assert inv(np.array([1, 2, 7, -1])).tolist() == ["[UNK]"] * 4  # OOV indices, out of range
    # outside "int" mode the mask token has no index and is dropped
    hot = L.StringLookup(vocabulary=VOCAB, mask_token="", output_mode="multi_hot")
    assert hot.get_vocabulary() == ["[UNK]"] + VOCAB
    np.testing.assert_array_equal(host(hot([["", "a", "q"]])), [[1, 1, 0, 0, 0]])
    # scalar, bytes and the vocabulary given with its special tokens
    layer = L.StringLookup(vocabulary=["[UNK]", "x", "y"])
    assert layer.get_vocabulary() == ["[UNK]", "x", "y"]
    assert int(host(layer("y"))) == 2
    np.testing.assert_array_equal(host(layer([b"x", b"w"])), [1, 0])
    none = L.StringLookup(vocabulary=VOCAB, num_oov_indices=0)
    np.testing.assert_array_equal(host(none(["d", "a"])), [3, 0])
    with pytest.raises(ValueError, match=r"num_oov_indices=0.*found OOV values \['zz'\]"):
        none(["a", "zz"])


def _expected_order(tokens, key=lambda t: t.encode()):
    counts = collections.Counter(tokens)
    return sorted(counts, key=lambda t: (counts[t], key(t)), reverse=True)


def test_string_lookup_adapt_order_max_tokens_and_idf():
    rng = np.random.default_rng(3)
    words = ["ab", "abc", "b", "ba", "zz", "z", "é", "x", "[UNK]"]
    data = rng.choice(words, (30, 4))
    layer = L.StringLookup(max_tokens=6)
    layer.adapt(data)
    order = [t for t in _expected_order(data.ravel().tolist()) if t != "[UNK]"]
    assert layer.get_vocabulary() == ["[UNK]"] + order[:5]
    tie = L.StringLookup()
    tie.adapt(["a", "ab", "b", "b", "ab", "a"])  # equal counts: descending bytes
    assert tie.get_vocabulary(include_special_tokens=False) == ["b", "ab", "a"]
    # tf_idf: a 2-D array is a document per row, idf = log(1 + N / (1 + df)), OOV the mean
    docs = [["a", "b", "a"], ["b", "c", "c"], ["a", "a", "a"], ["d", "b", "b"]]
    idf = L.StringLookup(output_mode="tf_idf")
    idf.adapt(np.array(docs))
    assert idf.get_vocabulary() == ["[UNK]", "a", "b", "c", "d"]  # counts 5, 4, 2, 1
    df = np.array([2, 3, 1, 1])
    w = np.log(1 + 4 / (1 + df))
    np.testing.assert_allclose(idf.get_config()["idf_weights"], np.r_[w.mean(), w], rtol=1e-6)
    np.testing.assert_allclose(
        host(idf([["a", "c", "q", "q"]])), [[2 * w.mean(), w[0], 0, w[2], 0]], rtol=1e-6
    )
    # a 1-D array: one document per element; an iterable of batches: a 1-D batch is one document
    one = L.StringLookup(output_mode="tf_idf")
    one.adapt(["a", "a", "b"])
    np.testing.assert_allclose(
        one.get_config()["idf_weights"][1:], np.log(1 + 3 / (1 + np.array([2, 1]))), rtol=1e-6
    )
    batches = L.StringLookup(output_mode="tf_idf")
    batches.adapt(iter([np.array(["a", "a", "b"]), np.array(["b"])]))
    np.testing.assert_allclose(
        batches.get_config()["idf_weights"][1:], np.log(1 + 2 / (1 + np.array([2, 1]))), rtol=1e-6
    )
    padded = L.StringLookup(output_mode="count", max_tokens=8, pad_to_max_tokens=True)
    padded.adapt(["x", "y", "x"])
    assert host(padded([["x", "x", "w"]])).tolist() == [[1, 2, 0, 0, 0, 0, 0, 0]]
    assert padded.compute_output_shape((None, 3)) == (None, 8)


def test_string_lookup_vocabulary_file_and_errors(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("earth\nwind\r\nand\nfire\n", encoding="utf-8")
    layer = L.StringLookup(vocabulary=str(path), mask_token="[M]")
    assert layer.get_vocabulary() == ["[M]", "[UNK]", "earth", "wind", "and", "fire"]
    np.testing.assert_array_equal(host(layer(["fire", "[M]", "x"])), [5, 0, 1])
    with pytest.raises(ValueError, match="Vocabulary file .*missing.txt does not exist"):
        L.StringLookup(vocabulary=str(tmp_path / "missing.txt"))
    with pytest.raises(ValueError, match="does not support loading a vocabulary from file"):
        L.StringLookup(output_mode="tf_idf").set_vocabulary(str(path), idf_weights=[1.0] * 4)
    lay = L.StringLookup(max_tokens=4, mask_token="")
    with pytest.raises(ValueError, match=r"repeated term.*\['c'\]"):
        lay.set_vocabulary(["c", "d", "c"])
    with pytest.raises(ValueError, match="mask token at unexpected location.*index 1"):
        lay.set_vocabulary(["c", "", "d"])
    with pytest.raises(ValueError, match="vocabulary size is 5; `max_tokens` is 4"):
        lay.set_vocabulary(["a", "b", "c"])
    with pytest.raises(ValueError, match="empty vocabulary"):
        lay.set_vocabulary([])
    with pytest.raises(ValueError, match="OOV token at unexpected location"):
        L.StringLookup(vocabulary=["a", "[UNK]"], invert=True)
    with pytest.raises(ValueError, match=r"len\(idf_weights\) is 1; len\(vocabulary\) is 2"):
        L.StringLookup(output_mode="tf_idf", vocabulary=["a", "b"], idf_weights=[1.0])
    with pytest.raises(ValueError, match="`idf_weights` argument must also be provided"):
        L.StringLookup(output_mode="tf_idf", vocabulary=["a", "b"])
    with pytest.raises(ValueError, match="Cannot adapt layer"):
        L.StringLookup(vocabulary=["a"]).adapt(["b"])
    with pytest.raises(RuntimeError, match="must set the layer's vocabulary"):
        L.StringLookup(output_mode="count")(["a"])
    for kw, pat in [
        ({"max_tokens": 1}, "max_tokens=1"),
        ({"num_oov_indices": -1}, "num_oov_indices=-1"),
        ({"output_mode": "bogus"}, "output_mode='bogus'"),
        ({"invert": True, "output_mode": "count"}, "output_mode=count"),
        ({"pad_to_max_tokens": True}, "max_tokens=None"),
        ({"idf_weights": [1.0]}, "idf_weights=.*output_mode=int"),
        ({"sparse": True}, "sparse=True"),
    ]:
        with pytest.raises(ValueError, match=pat):
            L.StringLookup(**kw)


# ---- IntegerLookup ------------------------------------------------------------------------------


def test_integer_lookup_keras_examples(device):
    data = np.array([[12, 1138, 42], [42, 1000, 36]])
    with ember.device(device):
        x = ember.asarray(data)
        out = L.IntegerLookup(vocabulary=[12, 36, 1138, 42])(x)
        assert out.dtype == ember.int64 and str(out.device) == str(x.device)
        np.testing.assert_array_equal(host(out), [[1, 3, 4], [4, 0, 2]])
        adapted = L.IntegerLookup()
        adapted.adapt(data)
        assert adapted.get_vocabulary() == [-1, 42, 1138, 1000, 36, 12]
        two = L.IntegerLookup(vocabulary=[12, 36, 1138, 42], num_oov_indices=2)
        np.testing.assert_array_equal(
            host(two(ember.asarray([[12, 1138, 42], [37, 1000, -3]]))), [[2, 4, 5], [1, 0, 1]]
        )  # OOV: floor modulo (-3 % 2 == 1)
        inv = L.IntegerLookup(vocabulary=[12, 36, 1138, 42], invert=True)
        back = inv(ember.asarray([[1, 3, 4], [4, 0, 2]]))
        assert back.dtype == ember.int64
        np.testing.assert_array_equal(host(back), [[12, 1138, 42], [42, -1, 36]])
        hot = L.IntegerLookup(vocabulary=[12, 36, 1138, 42], output_mode="multi_hot")
        np.testing.assert_array_equal(host(hot(x)), [[0, 1, 0, 1, 1], [1, 0, 1, 0, 1]])


def test_integer_lookup_mask_invert_idf_and_errors():
    layer = L.IntegerLookup(vocabulary=[7, 3, 9], mask_token=0, num_oov_indices=1)
    assert layer.get_vocabulary() == [0, -1, 7, 3, 9]
    ids = host(layer(np.array([[7, 0, 9, 5], [3, 3, 0, 8]])))
    np.testing.assert_array_equal(ids, [[2, 0, 4, 1], [3, 3, 0, 1]])
    inv = L.IntegerLookup(vocabulary=[7, 3, 9], mask_token=0, invert=True)
    np.testing.assert_array_equal(host(inv(ids)), [[7, 0, 9, -1], [3, 3, 0, -1]])
    count = L.IntegerLookup(vocabulary=[7, 3, 9], mask_token=0, output_mode="count")
    assert count.get_vocabulary() == [-1, 7, 3, 9]
    np.testing.assert_array_equal(host(count(np.array([[7, 0, 7, 5]]))), [[1, 2, 0, 0]])
    np.testing.assert_array_equal(host(layer(np.array([7.9, 3.0]))), [2, 3])  # floats truncate
    idf = L.IntegerLookup(output_mode="tf_idf")
    idf.adapt(np.array([[1, 1, 2], [2, 3, 3], [5, 5, 5]]))
    assert idf.get_vocabulary() == [-1, 5, 3, 2, 1]  # counts 3, 2, 2, 2: ties by value desc
    w = np.log(1 + 3 / (1 + np.array([1, 1, 2, 1])))
    np.testing.assert_allclose(idf.get_config()["idf_weights"], np.r_[w.mean(), w], rtol=1e-6)
    limited = L.IntegerLookup(max_tokens=3, oov_token=-7)
    limited.adapt(np.array([4, 4, 4, 6, 6, 8, -7, -7, -7, -7]))  # the OOV token is not learned
    assert limited.get_vocabulary() == [-7, 4, 6]
    none = L.IntegerLookup(vocabulary=[1, 2], num_oov_indices=0, mask_token=0)
    np.testing.assert_array_equal(host(none(np.array([0, 2, 1]))), [0, 2, 1])
    with pytest.raises(ValueError, match=r"found OOV values \[5\]"):
        none(np.array([1, 5]))
    with pytest.raises(ValueError, match="vocabulary_dtype=int32"):
        L.IntegerLookup(vocabulary_dtype="int32")
    with pytest.raises(ValueError, match="max_tokens=0"):
        L.IntegerLookup(max_tokens=0)
    with pytest.raises(ValueError, match="mask token at unexpected location"):
        L.IntegerLookup(vocabulary=[1, 0], mask_token=0)
    with pytest.raises(TypeError, match="integer inputs"):
        layer(np.array([True, False]))


# ---- CategoryEncoding ---------------------------------------------------------------------------


def test_category_encoding_keras_examples(device):
    with ember.device(device):
        one = L.CategoryEncoding(num_tokens=4, output_mode="one_hot")
        np.testing.assert_array_equal(
            host(one(ember.asarray([3, 2, 0, 1]))), np.eye(4)[[3, 2, 0, 1]]
        )
        np.testing.assert_array_equal(host(one(np.array([[3], [1]]))), np.eye(4)[[3, 1]])
        assert one.compute_output_shape((None, 1)) == (None, 4)
        assert one.compute_output_shape((5,)) == (5, 4)
        multi = L.CategoryEncoding(num_tokens=4, output_mode="multi_hot")
        out = multi(ember.asarray([[0, 1], [0, 0], [1, 2], [3, 1]]))
        assert out.dtype == ember.float32
        np.testing.assert_array_equal(
            host(out), [[1, 1, 0, 0], [1, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1]]
        )
        count = L.CategoryEncoding(num_tokens=4, output_mode="count")
        weights = np.array([[0.1, 0.2], [0.1, 0.1], [0.2, 0.3], [0.4, 0.2]])
        out = count(ember.asarray([[0, 1], [0, 0], [1, 2], [3, 1]]), count_weights=weights)
        np.testing.assert_allclose(
            host(out),
            [[0.1, 0.2, 0, 0], [0.2, 0, 0, 0], [0, 0.2, 0.3, 0], [0, 0.2, 0, 0.4]],
            rtol=1e-6,
        )
    # a rank-1 input is one sample in the reducing modes
    six = L.CategoryEncoding(num_tokens=6, output_mode="count")
    np.testing.assert_array_equal(host(six(np.array([1, 2, 3, 1]))), [0, 2, 1, 1, 0, 0])
    np.testing.assert_array_equal(
        host(six(np.array([[1, 2, 3, 1], [0, 3, 1, 0]]))), [[0, 2, 1, 1, 0, 0], [2, 1, 0, 1, 0, 0]]
    )
    hot6 = L.CategoryEncoding(num_tokens=6)
    np.testing.assert_array_equal(host(hot6(np.array([3, 2, 0, 1]))), [1, 1, 1, 1, 0, 0])
    for bad in ([0, 4], [-1, 2]):
        with pytest.raises(ValueError, match="0 <= values < num_tokens with num_tokens=4"):
            count(np.array(bad))
    with pytest.raises(ValueError, match="`count_weights` is not used"):
        multi(np.array([0, 1]), count_weights=np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="num_tokens must be set"):
        L.CategoryEncoding()
    with pytest.raises(ValueError, match="`num_tokens` must be >= 1. Received: num_tokens=0"):
        L.CategoryEncoding(num_tokens=0)
    with pytest.raises(ValueError, match="Unknown arg for output_mode: tf_idf"):
        L.CategoryEncoding(num_tokens=3, output_mode="tf_idf")


# ---- Discretization -----------------------------------------------------------------------------


def test_discretization_bins_and_modes(device):
    x = np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]])
    with ember.device(device):
        layer = L.Discretization(bin_boundaries=[0.0, 1.0, 2.0])
        out = layer(ember.asarray(x))
        assert out.dtype == ember.int64
        np.testing.assert_array_equal(host(out), [[0, 2, 3, 1], [1, 3, 2, 1]])  # Keras's doc
        rng = np.random.default_rng(0)
        r = rng.normal(size=(50, 3)).astype("float32")
        bounds = [-1.0, -0.25, 0.0, 0.5, 1.5]
        np.testing.assert_array_equal(
            host(L.Discretization(bin_boundaries=bounds)(r)), np.digitize(r, bounds)
        )
        hot = L.Discretization(bin_boundaries=[0.0, 1.0], output_mode="one_hot")
        np.testing.assert_array_equal(host(hot(np.array([[-1.0], [0.5], [7.0]]))), np.eye(3))
        multi = L.Discretization(bin_boundaries=[0.0, 1.0], output_mode="multi_hot")
        np.testing.assert_array_equal(
            host(multi(np.array([[-1.0, -2.0], [0.5, 7.0]]))), [[1, 0, 0], [0, 1, 1]]
        )
        count = L.Discretization(bin_boundaries=[0.0, 1.0], output_mode="count")
        np.testing.assert_array_equal(host(count(np.array([[-1.0, -2.0, 0.0]]))), [[2, 1, 0]])
        # adapt: Keras's documented example
        learned = L.Discretization(num_bins=4, epsilon=0.01)
        learned.adapt(x)
        np.testing.assert_allclose(learned.bin_boundaries, [0.0, 0.5, 1.3], rtol=1e-6)
        np.testing.assert_array_equal(host(learned(x)), [[0, 2, 3, 2], [1, 3, 3, 1]])


def test_discretization_adapt_quantiles():
    # 0..999: the summary keeps values 10, 20, ..., 990 (weight 10 each); the quartiles
    # interpolate the cumulative weights at 1/4, 2/4, 3/4: 247.5, 495, 742.5 (exact quantiles
    # 249.75, 499.5, 749.25: within epsilon)
    data = np.arange(1000, dtype="float32")[:, None]
    layer = L.Discretization(num_bins=4)
    layer.adapt(np.random.default_rng(1).permutation(data))
    np.testing.assert_allclose(layer.bin_boundaries, [247.5, 495.0, 742.5])
    np.testing.assert_allclose(layer.bin_boundaries, np.quantile(data, [0.25, 0.5, 0.75]), atol=10)
    counts = np.bincount(host(layer(data)).ravel())
    assert counts.tolist() == [248, 247, 248, 257]
    batches = L.Discretization(num_bins=4, epsilon=0.001)
    batches.adapt(iter([data[:500], data[500:]]))
    np.testing.assert_allclose(batches.bin_boundaries, np.quantile(data, [0.25, 0.5, 0.75]), atol=2)
    cfg = layer.get_config()
    again = L.Discretization.from_config(cfg)
    assert again.bin_boundaries == layer.bin_boundaries
    with pytest.raises(ValueError, match="Cannot adapt a Discretization layer"):
        again.adapt(data)
    with pytest.raises(ValueError, match="num_bins=-1"):
        L.Discretization(num_bins=-1)
    with pytest.raises(ValueError, match=r"`num_bins=3` and `bin_boundaries=\[0.0\]`"):
        L.Discretization(bin_boundaries=[0.0], num_bins=3)
    with pytest.raises(ValueError, match="output_mode='tf_idf'"):
        L.Discretization(output_mode="tf_idf")
    with pytest.raises(ValueError, match="num_bins=None"):
        L.Discretization().adapt(data)


# ---- Hashing ------------------------------------------------------------------------------------


def test_hashing_matches_keras_published_outputs(device):
    five = [["A"], ["B"], ["C"], ["D"], ["E"]]
    names = np.array([["omar"], ["stringer"], ["marlo"], ["wire"], ["skywalker"]])
    with ember.device(device):
        out = L.Hashing(num_bins=3)(five)
        assert out.dtype == ember.int64 and str(out.device) == str(ember.device(device))
        assert host(out).tolist() == [[1], [0], [1], [1], [2]]
        assert host(
            L.Hashing(3, mask_value="")([["A"], ["B"], [""], ["C"], ["D"]])
        ).ravel().tolist() == [1, 1, 0, 2, 2]
        assert host(L.Hashing(3, salt=[133, 137])(five)).ravel().tolist() == [1, 2, 1, 0, 2]
        assert host(L.Hashing(3, salt=133)(five)).ravel().tolist() == [0, 0, 2, 1, 0]
        assert host(L.Hashing(2)(names)).ravel().tolist() == [0, 0, 1, 0, 0]
        assert host(L.Hashing(3, mask_value="omar")(names)).ravel().tolist() == [0, 1, 2, 1, 1]
        assert host(L.Hashing(2, salt=[133, 137])(names)).ravel().tolist() == [0, 1, 0, 1, 0]
        assert host(L.Hashing(2, salt=[211, 137])(names)).ravel().tolist() == [1, 0, 1, 0, 1]
        ints = ember.asarray([[0], [1], [2], [3], [4]])
        out = L.Hashing(3)(ints)
        assert str(out.device) == str(ints.device)
        assert host(out).ravel().tolist() == [1, 0, 1, 0, 2]
        assert host(L.Hashing(3, salt=[133, 137])(ints)).ravel().tolist() == [1, 1, 2, 0, 1]
        assert host(L.Hashing(1)(five)).ravel().tolist() == [0] * 5
        assert host(L.Hashing(3)(np.array([0.5, 1.9, 2.0]))).tolist() == [1, 0, 1]  # floats -> int
        count = L.Hashing(3, output_mode="count")
        np.testing.assert_array_equal(host(count(np.array([0, 1, 2, 3, 4]))), [2, 2, 1])
        np.testing.assert_array_equal(host(count(np.array([[0, 1, 2, 3, 4]]))), [[2, 2, 1]])
        hot = L.Hashing(3, output_mode="one_hot")
        np.testing.assert_array_equal(host(hot(np.array([[0], [1], [4]]))), np.eye(3)[[1, 0, 2]])
        assert hot.compute_output_shape((None, 1)) == (None, 3)
        assert host(
            L.Hashing(3, output_mode="multi_hot")(np.array([[0, 1, 2, 3, 4]]))
        ).tolist() == [[1, 1, 1]]
    for kw, pat in [
        ({"num_bins": None}, "cannot be `None` or non-positive"),
        ({"num_bins": 0}, "num_bins=0"),
        ({"num_bins": 2, "salt": "string"}, "can only be a tuple of size 2"),
        ({"num_bins": 2, "salt": [1]}, r"salt=\[1\]"),
        ({"num_bins": 3, "output_mode": "tf_idf"}, "output_mode=tf_idf"),
        ({"num_bins": 3, "dtype": "float32"}, "dtype=float32"),
        ({"num_bins": 3, "output_mode": "one_hot", "sparse": True}, "sparse=True"),
    ]:
        with pytest.raises(ValueError, match=pat):
            L.Hashing(**kw)


def test_farmhash_and_siphash_reference_values():
    from ember.keras._preproc_hash import fingerprint64, siphash24

    # FarmHash Fingerprint64 (values of Google's C++ farmhash, via pyfarmhash 0.5.1): every
    # length branch (0-16, 17-32, 33-64, the >64-byte loop)
    ref = {
        "": 11160318154034397263,
        "a": 12917804110809363939,
        "abc": 2640714258260161385,
        "hello": 13009744463427800296,
        "ember-keras": 2353426165503047523,
        "twenty characters!!!": 9736834275011142169,
        "x" * 40: 17003596230054984852,
        "The quick brown fox jumps over the lazy dog " * 3: 14828036449214832833,
        "é" * 80: 7147867711551390899,
    }
    for s, v in ref.items():
        assert fingerprint64(s) == v, s
    # SipHash-2-4's published vectors (key 00..0f; messages b"" and 00..0e)
    k0, k1 = 0x0706050403020100, 0x0F0E0D0C0B0A0908
    assert siphash24(k0, k1, b"") == 0x726FDB47DD0E0E31
    assert siphash24(k0, k1, bytes(range(15))) == 0xA129CA6149BE45E5


def test_hashing_integers_on_device_match_the_string_hashes(device):
    from ember.keras._preproc_hash import fingerprint64, siphash24

    rng = np.random.default_rng(2)
    vals = [0, 1, -1, 9, -10, 2**63 - 1, -(2**63), 10**18, -(10**17)]
    vals += [int(v) for k in range(1, 19) for v in rng.integers(-(10**k), 10**k, 6)]
    x = np.array(vals, dtype=np.int64).reshape(-1, 1)  # every text length 1..20
    with ember.device(device):
        xs = ember.asarray(x)
        plain = host(L.Hashing(num_bins=1000003)(xs))
        salted = host(L.Hashing(num_bins=97, salt=[5, 2**40 + 3])(xs))
        masked = host(L.Hashing(num_bins=11, mask_value=9)(xs))
    np.testing.assert_array_equal(plain[:, 0], [fingerprint64(str(v)) % 1000003 for v in vals])
    np.testing.assert_array_equal(
        salted[:, 0], [siphash24(5, 2**40 + 3, str(v)) % 97 for v in vals]
    )
    np.testing.assert_array_equal(
        masked[:, 0], [0 if v == 9 else 1 + fingerprint64(str(v)) % 10 for v in vals]
    )
    # the same numbers given as text hash the same
    text = L.Hashing(num_bins=1000003)(np.array([str(v) for v in vals]))
    np.testing.assert_array_equal(host(text), plain[:, 0])


# ---- models: fit, save, load --------------------------------------------------------------------


def test_preprocessing_in_models_fit_and_save(device, tmp_path):
    rng = np.random.default_rng(5)
    colors = np.array(["red", "green", "blue", "teal", "gray"])
    col = rng.choice(colors, (96, 1))
    y = np.isin(col[:, 0], ["red", "teal"]).astype("float32")[:, None]
    with ember.device(device):
        lookup = L.StringLookup(output_mode="one_hot")
        lookup.adapt(col)
        inp = keras.Input((1,), dtype="string")
        hot = lookup(inp)
        assert hot.shape == (None, 6) and hot.dtype == "float32"
        hashed = L.Hashing(num_bins=8, output_mode="one_hot")(inp)
        both = L.Concatenate()([hot, hashed])
        model = keras.Model(inp, L.Dense(1, activation="sigmoid")(both))
        num = keras.Input((1,))
        disc = L.Discretization(num_bins=4)
        xs = rng.normal(size=(96, 1)).astype("float32")
        disc.adapt(xs)
        bins = L.CategoryEncoding(num_tokens=4, output_mode="one_hot")(disc(num))
        ids = L.IntegerLookup(vocabulary=[0, 1, 2, 3])(disc(num))
        emb = L.Flatten()(L.Embedding(5, 2)(ids))
        nmodel = keras.Model(num, L.Dense(1)(L.Concatenate()([bins, emb])))
    model.compile(optimizer=keras.optimizers.Adam(0.1), loss="binary_crossentropy")
    hist = model.fit(col, y, epochs=8, batch_size=16, verbose=0)
    assert hist.history["loss"][-1] < 0.6 * hist.history["loss"][0]
    pred = model.predict(col, verbose=0)
    model.save(tmp_path / "lookup.keras")
    back = keras.models.load_model(tmp_path / "lookup.keras")
    assert back.layers[1].get_vocabulary() == lookup.get_vocabulary()
    np.testing.assert_allclose(back.predict(col, verbose=0), pred, rtol=1e-5, atol=1e-6)
    yn = (xs > 0.3).astype("float32")
    nmodel.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    h2 = nmodel.fit(xs, yn, epochs=5, batch_size=16, verbose=0)
    assert h2.history["loss"][-1] < h2.history["loss"][0]
    npred = nmodel.predict(xs, verbose=0)
    nmodel.save(tmp_path / "num.keras")
    nback = keras.models.load_model(tmp_path / "num.keras")
    np.testing.assert_allclose(nback.predict(xs, verbose=0), npred, rtol=1e-5, atol=1e-6)
    restored = [lay for lay in nback.layers if isinstance(lay, L.Discretization)][0]
    assert restored.bin_boundaries == disc.bin_boundaries


def test_lookup_configs_round_trip():
    s = L.StringLookup(output_mode="tf_idf", mask_token="", num_oov_indices=2)
    s.adapt(np.array([["x", "y", "x"], ["z", "x", ""]]))
    again = L.StringLookup.from_config(s.get_config())
    assert (
        again.get_vocabulary() == s.get_vocabulary() == ["[UNK]", "[UNK]", "x", "z", "y"]
    )  # ties: descending
    q = np.array([["x", "z", "q", ""]])
    np.testing.assert_allclose(host(again(q)), host(s(q)), rtol=1e-6)
    again.adapt(["w"])  # learned (not given) vocabularies stay adaptable after a reload, as Keras
    assert again.get_vocabulary(include_special_tokens=False) == ["w"]
    i = L.IntegerLookup(vocabulary=[5, 6], invert=True, mask_token=0)
    j = L.IntegerLookup.from_config(i.get_config())
    np.testing.assert_array_equal(host(j(np.array([0, 1, 2, 3, 9]))), [0, -1, 5, 6, -1])
    h = L.Hashing.from_config(L.Hashing(7, salt=3, mask_value="m").get_config())
    assert (h.num_bins, h.salt, h.mask_value) == (7, [3, 3], "m")
    c = L.CategoryEncoding.from_config(L.CategoryEncoding(3, "count").get_config())
    assert (c.num_tokens, c.output_mode) == (3, "count")
    assert math.isclose(L.Discretization(epsilon=0.05).get_config()["epsilon"], 0.05)


# ---- placement and synchronizations on the fake CUDA driver -------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FAKE_CHILD = """
import json, numpy as np, ember
from ember import keras
L = keras.layers
rng = np.random.default_rng(0)
x = ember.asarray(rng.integers(0, 20, (32, 3)), device="cuda")
f = ember.asarray(rng.normal(size=(32, 3)).astype("float32"), device="cuda")
v = list(range(0, 20, 2))
layers = [
    (L.IntegerLookup(vocabulary=v), x),
    (L.IntegerLookup(vocabulary=v, output_mode="count", num_oov_indices=2, mask_token=1), x),
    (L.IntegerLookup(vocabulary=v, invert=True), x),
    (L.Discretization(bin_boundaries=[-1.0, 0.0, 1.0], output_mode="multi_hot"), f),
    (L.Hashing(num_bins=7, mask_value=3, output_mode="one_hot"), x),
    (L.Hashing(num_bins=7, salt=9, output_mode="count"), x),
    (L.CategoryEncoding(20, "count"), x),
]
out = {}
for lay, arg in layers:
    lay(arg)  # the first call builds and caches
    with ember.debug.ledger() as led:
        y = lay(arg)
    s = led.summary()
    out[lay.name] = [str(y.device), s["sync"]["count"], s["transfer"]["count"]]
print(json.dumps(out))
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_numeric_preprocessing_stays_on_the_device_without_reads(tmp_path):
    src = os.path.join(ROOT, "tools", "fake_cuda")
    lib = tmp_path / "lib"
    lib.mkdir()
    cmd = ["g++", "-std=c++20", "-O1", "-shared", "-fPIC", f"-I{ROOT}/src", f"-I{ROOT}/include",
           f"{src}/driver.cpp", f"{src}/defaults.cpp", "-o", str(lib / "libcuda.so.1")]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"the fake driver does not build here: {r.stderr[-400:]}")
    os.symlink("libcuda.so.1", lib / "libnvrtc.so.13")
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(FAKE_CHILD))
    env = dict(os.environ)
    env.update(
        LD_LIBRARY_PATH=str(lib),
        EMBER_CUDA_PATHFINDER="0",
        EMBER_SHIPPED_KERNELS="0",
        EMBER_CACHE_DIR=str(tmp_path / "cache"),
        EMBER_DEVICE="cuda",
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                       timeout=300, cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert {v[0] for v in out.values()} == {"cuda:0"}
    # lookups, bucketing, hashing of integers and the encodings: no read back at all;
    # CategoryEncoding reads one flag (its out-of-range check, Keras's error)
    assert {k: v[1:] for k, v in out.items()} == {
        "integer_lookup": [0, 0],
        "integer_lookup_1": [0, 0],
        "integer_lookup_2": [0, 0],
        "discretization": [0, 0],
        "hashing": [0, 0],
        "hashing_1": [0, 0],
        "category_encoding": [1, 1],
    }
