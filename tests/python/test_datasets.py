"""ember.datasets: the shipped digits, and IDX / MNIST files written here (valid, gzip, and
malformed in every way the reader checks)."""

from __future__ import annotations

import gzip
import os
import struct
import time

import ember
import numpy as np
import pytest
from _helpers import to_numpy
from ember.datasets import load_digits, mnist, read_idx

# ---------------------------------------------------------------------------------------------
# load_digits
# ---------------------------------------------------------------------------------------------


def test_load_digits():
    x, y = load_digits()
    assert x.shape == (1797, 64) and x.dtype == ember.float32 and x.device == ember.Device("cpu")
    assert y.shape == (1797,) and y.dtype == ember.int64
    xn, yn = to_numpy(x), to_numpy(y)
    assert xn.min() == 0 and xn.max() == 16 and np.all(xn == np.round(xn))
    assert np.bincount(yn).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    # the first sample is a zero
    assert yn[0] == 0 and xn[0, :8].tolist() == [0, 0, 5, 13, 9, 1, 0, 0]


def test_load_digits_copies_and_options(device):
    x, _ = load_digits()
    x[...] = -1
    assert float(to_numpy(load_digits()[0]).min()) == 0  # each call gets fresh arrays
    x3, y3 = load_digits(n_class=3, device=device)
    assert x3.device == ember.Device(device)
    assert sorted(set(to_numpy(y3).tolist())) == [0, 1, 2] and x3.shape == (178 + 182 + 177, 64)
    with pytest.raises(ValueError, match="load_digits.*n_class.*11"):
        load_digits(n_class=11)
    with pytest.raises(TypeError, match="load_digits.*n_class"):
        load_digits(n_class="all")


def test_digits_data_and_license_are_installed():
    folder = os.path.join(os.path.dirname(ember.datasets.__file__), "data")
    assert os.path.isfile(os.path.join(folder, "digits.csv.gz"))
    text = open(os.path.join(folder, "README.md"), encoding="utf-8").read()
    assert "CC BY 4.0" in text and "Alpaydin" in text and "Kaynak" in text


# ---------------------------------------------------------------------------------------------
# IDX files
# ---------------------------------------------------------------------------------------------

CODES = {
    np.uint8: 0x08,
    np.int8: 0x09,
    np.int16: 0x0B,
    np.int32: 0x0C,
    np.float32: 0x0D,
    np.float64: 0x0E,
}


def idx_bytes(a, code=None):
    a = np.asarray(a)
    code = CODES[a.dtype.type] if code is None else code
    head = bytes([0, 0, code, a.ndim]) + b"".join(struct.pack(">I", d) for d in a.shape)
    return head + a.astype(a.dtype.newbyteorder(">")).tobytes()


def write(path, data, gz=False):
    if gz:
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)
    return path


@pytest.mark.parametrize("dtype", list(CODES))
@pytest.mark.parametrize("gz", [False, True])
def test_read_idx_every_dtype(tmp_path, dtype, gz):
    a = (np.arange(24).reshape(2, 3, 4) * 7 - 50).astype(dtype)
    got = read_idx(write(tmp_path / "a.idx", idx_bytes(a), gz))
    assert got.shape == a.shape and to_numpy(got).dtype == a.dtype
    assert np.array_equal(to_numpy(got), a)


def test_read_idx_empty_and_1d(tmp_path):
    assert read_idx(write(tmp_path / "e", idx_bytes(np.zeros((0, 5), np.uint8)))).shape == (0, 5)
    got = read_idx(write(tmp_path / "v", idx_bytes(np.arange(5, dtype=np.int32))))
    assert to_numpy(got).tolist() == [0, 1, 2, 3, 4]


def good():
    return idx_bytes(np.arange(12, dtype=np.uint8).reshape(3, 4))


MALFORMED = {
    "empty file": (b"", "magic number needs 4 bytes"),
    "short magic": (b"\0\0", "magic number needs 4 bytes"),
    "bad magic": (b"\x01\x00" + good()[2:], "magic number"),
    "unknown dtype code": (b"\0\0\x0a" + good()[3:], "dtype code 0x0a"),
    "zero dimensions": (b"\0\0\x08\x00", "0 dimensions"),
    "truncated sizes": (b"\0\0\x08\x03" + struct.pack(">I", 3), "sizes of 3 dimensions"),
    "truncated data": (good()[:-1], "truncated"),
    "oversized": (good() + b"\0", "longer than"),
    "huge header": (
        b"\0\0\x0e\x03" + struct.pack(">III", 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF),
        "truncated",
    ),
}


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("case", list(MALFORMED))
def test_read_idx_malformed(tmp_path, case, gz):
    data, what = MALFORMED[case]
    p = write(tmp_path / "bad-idx", data, gz)
    t = time.perf_counter()
    with pytest.raises(ValueError, match="read_idx: .*bad-idx") as info:
        read_idx(p)
    assert time.perf_counter() - t < 5  # nothing is allocated from a header's claims
    assert what in str(info.value)


def test_read_idx_damaged_gzip(tmp_path):
    full = gzip.compress(good())
    p = tmp_path / "cut.gz"
    p.write_bytes(full[: len(full) - 6])  # the stream ends early
    with pytest.raises(ValueError, match="read_idx: .*cut.gz"):
        read_idx(p)
    p.write_bytes(full[:10] + bytes(b ^ 0xFF for b in full[10:20]) + full[20:])
    with pytest.raises(ValueError, match="read_idx: .*cut.gz"):
        read_idx(p)


def test_read_idx_directory_and_missing(tmp_path):
    with pytest.raises(ValueError, match="directory"):
        read_idx(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_idx(tmp_path / "nope")


# ---------------------------------------------------------------------------------------------
# mnist
# ---------------------------------------------------------------------------------------------


def mnist_files(folder, prefix, n=5, gz=False, sep="-", rows=4, cols=3):
    images = (np.arange(n * rows * cols) % 256).astype(np.uint8).reshape(n, rows, cols)
    labels = (np.arange(n) % 10).astype(np.uint8)
    suffix = ".gz" if gz else ""
    write(folder / f"{prefix}-images{sep}idx3-ubyte{suffix}", idx_bytes(images), gz)
    write(folder / f"{prefix}-labels{sep}idx1-ubyte{suffix}", idx_bytes(labels), gz)
    return images, labels


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_train_and_test(tmp_path, gz):
    im, lb = mnist_files(tmp_path, "train", 6, gz)
    im2, lb2 = mnist_files(tmp_path, "t10k", 2, gz, sep=".")
    x, y = mnist(tmp_path)
    assert x.dtype == ember.uint8 and x.shape == (6, 4, 3) and y.dtype == ember.int64
    assert np.array_equal(to_numpy(x), im) and to_numpy(y).tolist() == lb.tolist()
    for kind in ("test", "t10k"):
        x, y = mnist(str(tmp_path), kind=kind)
        assert np.array_equal(to_numpy(x), im2) and to_numpy(y).tolist() == lb2.tolist()


def test_mnist_device(tmp_path, device):
    mnist_files(tmp_path, "train")
    x, y = mnist(tmp_path, device=device)
    assert x.device == ember.Device(device) and y.device == ember.Device(device)


def test_mnist_checks(tmp_path):
    with pytest.raises(ValueError, match="mnist.*kind.*'val'"):
        mnist(tmp_path, kind="val")
    with pytest.raises(FileNotFoundError, match="mnist.*train-images-idx3-ubyte"):
        mnist(tmp_path)
    with pytest.raises(FileNotFoundError, match="not a folder"):
        mnist(tmp_path / "nothing")
    mnist_files(tmp_path, "train", 5)
    write(tmp_path / "train-labels-idx1-ubyte", idx_bytes(np.zeros(4, np.uint8)))
    with pytest.raises(ValueError, match="5 images but .*train-labels-idx1-ubyte.* 4 labels"):
        mnist(tmp_path)
    write(tmp_path / "train-labels-idx1-ubyte", idx_bytes(np.zeros((5, 1), np.uint8)))
    with pytest.raises(ValueError, match="train-labels.*1-d unsigned bytes"):
        mnist(tmp_path)
    write(tmp_path / "train-labels-idx1-ubyte", idx_bytes(np.zeros(5, np.int32)))
    with pytest.raises(ValueError, match="train-labels.*1-d unsigned bytes.*int32"):
        mnist(tmp_path)
    write(tmp_path / "train-images-idx3-ubyte", idx_bytes(np.zeros((5, 9), np.uint8)))
    with pytest.raises(ValueError, match="train-images.*3-d"):
        mnist(tmp_path)
    write(tmp_path / "train-images-idx3-ubyte", good()[:-3])
    with pytest.raises(ValueError, match="mnist: .*train-images-idx3-ubyte.*truncated"):
        mnist(tmp_path)
