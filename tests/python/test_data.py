"""ember.data: datasets, random_split, default_collate and DataLoader (batching, shuffling,
drop_last, the TensorDataset gather path, device=, bad input)."""

from __future__ import annotations

import collections

import ember
import numpy as np
import pytest
from _helpers import to_numpy
from ember.data import (
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)


def make_xy(n=10, device="cpu"):
    x = ember.asarray(np.arange(n * 3, dtype=np.float32).reshape(n, 3), device=device)
    y = ember.asarray(np.arange(n, dtype=np.int64) * 10, device=device)
    return x, y


class Squares(Dataset):
    """A plain map-style dataset: (array, int, float) samples."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return ember.asarray([i, i * i], dtype=ember.float32), i, float(i) / 2

    def __len__(self):
        return self.n


# ---------------------------------------------------------------------------------------------
# datasets
# ---------------------------------------------------------------------------------------------


def test_tensor_dataset_items():
    x, y = make_xy(5)
    ds = TensorDataset(x, y)
    assert len(ds) == 5
    a, b = ds[2]
    assert np.array_equal(to_numpy(a), [6, 7, 8]) and int(b) == 20
    a, b = ds[-1]
    assert int(b) == 40
    with pytest.raises(IndexError, match="TensorDataset.*5"):
        ds[5]
    with pytest.raises(TypeError, match="TensorDataset.*index"):
        ds[1.5]


def test_tensor_dataset_bad_input():
    with pytest.raises(ValueError, match="TensorDataset.*first dimensions differ.*\\(4, 3\\)"):
        TensorDataset(ember.ones((4, 2)), ember.ones(3))
    with pytest.raises(ValueError, match="TensorDataset.*0-d"):
        TensorDataset(ember.asarray(1.0))
    with pytest.raises(ValueError, match="TensorDataset.*at least one"):
        TensorDataset()
    ds = TensorDataset(np.arange(4), [1, 2, 3, 4])  # array-likes are converted
    assert isinstance(ds.arrays[0], ember.ndarray) and len(ds) == 4


def test_dataset_base_is_abstract():
    with pytest.raises(NotImplementedError):
        Dataset()[0]
    with pytest.raises(NotImplementedError):
        len(Dataset())


def test_subset():
    x, y = make_xy(6)
    sub = Subset(TensorDataset(x, y), [4, 0, -1])
    assert len(sub) == 3
    assert [int(sub[i][1]) for i in range(3)] == [40, 0, 50]
    assert [int(s[1]) for s in sub[[0, 2]]] == [40, 50]
    assert len(Subset(sub, np.array([2, 1]))) == 2
    with pytest.raises(IndexError, match="Subset.*6"):
        Subset(TensorDataset(x, y), [6])
    with pytest.raises(TypeError, match="Subset.*ints"):
        Subset(TensorDataset(x, y), [0.5])


def test_random_split_int_lengths():
    ds = TensorDataset(*make_xy(10))
    a, b = random_split(ds, [7, 3], generator=0)
    assert (len(a), len(b)) == (7, 3)
    idx = sorted(a.indices + b.indices)
    assert idx == list(range(10))
    a2, b2 = random_split(ds, [7, 3], generator=ember.random.default_rng(0))
    assert a2.indices == a.indices and b2.indices == b.indices
    c, _ = random_split(ds, [7, 3], generator=1)
    assert c.indices != a.indices


def test_random_split_fractions_like_pytorch():
    ds = TensorDataset(*make_xy(10))
    # floor(10 * f) = 3, 3, 3; the one left over goes to the first split
    assert [len(s) for s in random_split(ds, [1 / 3, 1 / 3, 1 / 3], generator=0)] == [4, 3, 3]
    assert [len(s) for s in random_split(ds, [0.5, 0.3, 0.2], generator=0)] == [5, 3, 2]
    ds7 = TensorDataset(*make_xy(7))
    assert [len(s) for s in random_split(ds7, [0.25, 0.25, 0.25, 0.25], generator=0)] == [
        2,
        2,
        2,
        1,
    ]
    with pytest.warns(UserWarning, match="split 1 is 0"):
        random_split(TensorDataset(*make_xy(2)), [0.9, 0.1], generator=0)


def test_random_split_bad_input():
    ds = TensorDataset(*make_xy(10))
    with pytest.raises(ValueError, match="random_split.*sum to 9.*10"):
        random_split(ds, [5, 4])
    with pytest.raises(ValueError, match="random_split.*fractional lengths must sum to 1"):
        random_split(ds, [0.5, 0.4])
    with pytest.raises(ValueError, match="random_split.*non-negative"):
        random_split(ds, [12, -2])
    with pytest.raises(TypeError, match="random_split.*'a'"):
        random_split(ds, ["a"])
    with pytest.raises(TypeError, match="random_split.*generator"):
        random_split(ds, [5, 5], generator="seed")


# ---------------------------------------------------------------------------------------------
# default_collate
# ---------------------------------------------------------------------------------------------


def test_default_collate_structures():
    Point = collections.namedtuple("Point", "x y")
    batch = [
        {
            "img": ember.ones((2, 2)) * i,
            "label": i,
            "w": 0.5 * i,
            "name": f"s{i}",
            "ok": i > 0,
            "pt": Point(ember.asarray(i), [i, -i]),
        }
        for i in range(3)
    ]
    out = default_collate(batch)
    assert out["img"].shape == (3, 2, 2)
    assert np.array_equal(to_numpy(out["img"])[:, 0, 0], [0, 1, 2])
    assert out["label"].dtype == ember.int64 and out["w"].dtype == ember.float64
    assert out["ok"].dtype == ember.bool
    assert out["name"] == ["s0", "s1", "s2"]
    assert isinstance(out["pt"], Point) and out["pt"].x.shape == (3,)
    assert isinstance(out["pt"].y, list) and np.array_equal(to_numpy(out["pt"].y[1]), [0, -1, -2])


def test_default_collate_numpy_and_scalars():
    out = default_collate([np.arange(3, dtype=np.int16), np.arange(3, dtype=np.int16) + 1])
    assert isinstance(out, ember.ndarray) and out.dtype == ember.int16 and out.shape == (2, 3)
    out = default_collate([np.float32(1.5), np.float32(2)])
    assert out.dtype == ember.float32
    out = default_collate([1 + 2j, 3j])
    assert out.dtype == ember.complex128
    out = default_collate([ember.asarray(1.0), ember.asarray(2.0)])  # 0-d samples
    assert out.shape == (2,)


def test_default_collate_bad_input():
    with pytest.raises(ValueError, match="default_collate.*equal shapes.*\\(2,\\).*\\(3,\\)"):
        default_collate([ember.ones(2), ember.ones(3)])
    with pytest.raises(ValueError, match="default_collate.*keys"):
        default_collate([{"a": 1}, {"b": 2}])
    with pytest.raises(ValueError, match="default_collate.*length 2"):
        default_collate([(1, 2), (1, 2, 3)])
    with pytest.raises(TypeError, match="default_collate.*object"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="default_collate.*mixes"):
        default_collate([ember.ones(2), np.ones(2)])
    with pytest.raises(ValueError, match="default_collate.*empty"):
        default_collate([])


# ---------------------------------------------------------------------------------------------
# DataLoader
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n,bs,drop_last",
    [
        (10, 3, False),
        (10, 3, True),
        (9, 3, True),
        (9, 3, False),
        (2, 5, False),
        (2, 5, True),
        (0, 4, False),
        (10, 1, False),
    ],
)
def test_loader_len_and_batches(n, bs, drop_last):
    x, y = make_xy(n)
    loader = DataLoader(TensorDataset(x, y), batch_size=bs, drop_last=drop_last)
    batches = list(loader)
    assert len(batches) == len(loader)
    expected = n // bs if drop_last else -(-n // bs)
    assert len(loader) == expected
    seen = []
    for xb, yb in batches:
        assert xb.shape[0] == yb.shape[0] <= bs
        if drop_last:
            assert xb.shape[0] == bs
        seen += to_numpy(yb).tolist()
        assert np.array_equal(to_numpy(xb)[:, 0], np.asarray(to_numpy(yb)) // 10 * 3)
    assert seen == [10 * i for i in range(len(seen))]


def test_loader_shuffles_each_epoch_reproducibly():
    x, y = make_xy(50)
    ds = TensorDataset(x, y)

    def epochs(loader, k):
        return [np.concatenate([to_numpy(b[1]) for b in loader]).tolist() for _ in range(k)]

    a = epochs(DataLoader(ds, batch_size=8, shuffle=True, generator=3), 3)
    b = epochs(DataLoader(ds, batch_size=8, shuffle=True, generator=3), 3)
    assert a == b  # same seed, same sequence of epochs
    assert a[0] != a[1] != a[2]  # a new order each epoch
    for e in a:
        assert sorted(e) == [10 * i for i in range(50)]
    c = epochs(DataLoader(ds, batch_size=8, shuffle=True, generator=4), 1)
    assert c[0] != a[0]
    g = ember.random.default_rng(3)
    d = epochs(DataLoader(ds, batch_size=8, shuffle=True, generator=g), 3)
    assert d == a  # a Generator and its seed give the same orders
    un = epochs(DataLoader(ds, batch_size=8, shuffle=True), 2)
    assert sorted(un[0]) == sorted(a[0])


def test_gather_path_matches_generic_path():
    x, y = make_xy(23)
    ds = TensorDataset(x, y)
    fast = DataLoader(ds, batch_size=5, shuffle=True, generator=7)
    slow = DataLoader(ds, batch_size=5, shuffle=True, generator=7, collate_fn=default_collate_copy)
    for (xf, yf), (xs, ys) in zip(fast, slow, strict=True):
        assert xf.dtype == xs.dtype and yf.dtype == ys.dtype
        assert np.array_equal(to_numpy(xf), to_numpy(xs))
        assert np.array_equal(to_numpy(yf), to_numpy(ys))


def default_collate_copy(batch):
    # the same collation, but a different function: forces the per-sample path
    return default_collate(batch)


def test_gather_path_uses_take(monkeypatch):
    x, y = make_xy(12)
    calls = []
    real = ember._core.take

    def counting(a, idx, axis=None):
        calls.append(idx.shape)
        return real(a, idx, axis=axis)

    monkeypatch.setattr(ember._core, "take", counting)
    batches = list(DataLoader(TensorDataset(x, y), batch_size=5))
    assert len(batches) == 3 and calls == [(5,), (5,), (5,), (5,), (2,), (2,)]


def test_gather_batches_are_copies():
    x, y = make_xy(4)
    (xb, _), *_ = DataLoader(TensorDataset(x, y), batch_size=2)
    xb[...] = -1
    assert float(to_numpy(x)[0, 0]) == 0.0


def test_loader_over_subsets_of_tensor_dataset():
    x, y = make_xy(20)
    train, test = random_split(TensorDataset(x, y), [15, 5], generator=0)
    got = np.concatenate([to_numpy(b[1]) for b in DataLoader(test, batch_size=2)])
    assert got.tolist() == [10 * i for i in test.indices]
    nested = Subset(train, [-1, 0, 3])
    got = np.concatenate([to_numpy(b[1]) for b in DataLoader(nested, batch_size=2)])
    assert got.tolist() == [10 * train.indices[i] for i in (-1, 0, 3)]


def test_loader_generic_dataset():
    loader = DataLoader(Squares(7), batch_size=3)
    batches = list(loader)
    assert len(batches) == len(loader) == 3
    arr, ints, floats = batches[-1]
    assert arr.shape == (1, 2) and ints.dtype == ember.int64 and floats.dtype == ember.float64
    assert np.array_equal(to_numpy(batches[0][0])[:, 1], [0, 1, 4])


def test_loader_custom_collate():
    loader = DataLoader(Squares(5), batch_size=2, collate_fn=lambda b: [s[1] for s in b])
    assert list(loader) == [[0, 1], [2, 3], [4]]


def test_loader_device(device):
    x, y = make_xy(9)  # on the CPU
    loader = DataLoader(
        TensorDataset(x, y), batch_size=4, device=device, shuffle=True, generator=0, pin_memory=True
    )
    for xb, yb in loader:
        assert xb.device == ember.Device(device) and yb.device == ember.Device(device)
        assert np.array_equal(to_numpy(xb)[:, 0], to_numpy(yb) // 10 * 3)
    # a dataset already on the device: the gather runs there
    xd, yd = make_xy(9, device)
    for xb, yb in DataLoader(TensorDataset(xd, yd), batch_size=4, shuffle=True, generator=0):
        assert xb.device == ember.Device(device) and yb.device == ember.Device(device)
    # generic path: nested structures are moved too
    for arr, ints, _ in DataLoader(Squares(3), batch_size=2, device=device):
        assert arr.device == ember.Device(device) and ints.device == ember.Device(device)


def test_loader_pin_memory(device):
    x, y = make_xy(9)  # on the CPU
    cuda = ember.cuda.is_available()
    # without a device: batches stay on the CPU, pinned when there is CUDA to pin for
    for xb, yb in DataLoader(TensorDataset(x, y), batch_size=4, pin_memory=True):
        assert xb.device == ember.Device("cpu")
        assert ember.cuda.is_pinned(xb) == cuda and ember.cuda.is_pinned(yb) == cuda
        assert np.array_equal(to_numpy(xb)[:, 0], to_numpy(yb) // 10 * 3)
    # to the device with non-blocking copies from pinned memory; the values arrive intact
    got = []
    for xb, yb in DataLoader(TensorDataset(x, y), batch_size=4, pin_memory=True, device=device):
        assert xb.device == ember.Device(device)
        got.append((xb, yb))
    if cuda:
        ember.cuda.synchronize()
    assert np.array_equal(np.concatenate([to_numpy(b) for b, _ in got]), to_numpy(x))
    assert np.array_equal(np.concatenate([to_numpy(b) for _, b in got]), to_numpy(y))


def test_loader_bad_input():
    ds = TensorDataset(*make_xy(4))
    with pytest.raises(ValueError, match="DataLoader.*batch_size.*0"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(TypeError, match="DataLoader.*batch_size.*2.5"):
        DataLoader(ds, batch_size=2.5)
    with pytest.raises(TypeError, match="DataLoader.*shuffle"):
        DataLoader(ds, shuffle="yes")
    with pytest.raises(TypeError, match="DataLoader.*collate_fn"):
        DataLoader(ds, collate_fn=3)
    with pytest.raises(TypeError, match="DataLoader.*generator"):
        DataLoader(ds, shuffle=True, generator=1.5)
    with pytest.raises(ValueError, match="DataLoader.*seed.*-1"):
        DataLoader(ds, shuffle=True, generator=-1)
    with pytest.raises(ValueError, match="bogus"):
        DataLoader(ds, device="bogus")
    with pytest.raises(TypeError, match="DataLoader.*dataset"):
        DataLoader(5)
