"""ember.utils.data with worker processes (PyTorch's data-loading tutorial, in our words): a
map-style dataset with a Python transform loaded by 2 workers, batches in order and equal to the
single-process loader's; iterable datasets sharded with get_worker_info; samplers; errors in
workers; persistent workers; ConcatDataset."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from ember.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
    default_collate,
    get_worker_info,
)


class Faces(Dataset):
    """A generated landmarks dataset: an image-like array and 68 (x, y) points, transformed by
    a Python-level function, as the tutorial's face-landmarks dataset."""

    def __init__(self, n, transform=None):
        self.n, self.transform = n, transform

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        sample = {"image": rng.random((8, 8, 3)).astype(np.float32),
                  "landmarks": rng.random((68, 2)).astype(np.float32), "index": i}  # fmt: skip
        if self.transform:
            sample = self.transform(sample)
        return sample


def rescale(sample):
    return {
        "image": sample["image"] * 2,
        "landmarks": sample["landmarks"] * 8,
        "index": sample["index"],
    }


def seen_by_worker(sample):
    info = get_worker_info()
    sample["worker"] = -1 if info is None else info.id
    return sample


def test_workers_give_the_same_batches_in_order():
    ds = Faces(37, transform=rescale)
    one = list(DataLoader(ds, batch_size=4))
    two = list(DataLoader(ds, batch_size=4, num_workers=2))
    assert len(one) == len(two) == 10
    for a, b in zip(one, two, strict=True):
        assert a.keys() == b.keys()
        np.testing.assert_array_equal(ember.asnumpy(a["image"]), ember.asnumpy(b["image"]))
        np.testing.assert_array_equal(ember.asnumpy(a["landmarks"]), ember.asnumpy(b["landmarks"]))
        assert ember.asnumpy(a["index"]).tolist() == ember.asnumpy(b["index"]).tolist()
    assert b["image"].shape == (1, 8, 8, 3) and b["image"].dtype == ember.float32


def test_batches_come_from_several_workers_with_prefetch():
    ds = Faces(40, transform=seen_by_worker)
    loader = DataLoader(
        ds, batch_size=5, num_workers=2, prefetch_factor=3, shuffle=True, generator=0
    )
    workers, indices = set(), []
    for b in loader:
        workers.update(ember.asnumpy(b["worker"]).tolist())
        indices += ember.asnumpy(b["index"]).tolist()
    assert workers == {0, 1}
    assert sorted(indices) == list(range(40))


def test_persistent_workers_and_epochs():
    loader = DataLoader(Faces(10), batch_size=3, num_workers=2, persistent_workers=True)
    for _ in range(3):
        assert sum(b["image"].shape[0] for b in loader) == 10
    assert loader._pool is not None and all(p.is_alive() for p in loader._pool.procs)
    loader._pool.shutdown()


class Broken(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise KeyError(f"sample {i} is missing")
        return np.float32(i)


def test_a_worker_error_reaches_the_main_process():
    with pytest.raises(KeyError, match=r"Caught KeyError in DataLoader worker process \d"):
        list(DataLoader(Broken(), batch_size=2, num_workers=2))


class Range(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        per = math.ceil(self.n / info.num_workers)
        return iter(range(info.id * per, min(self.n, (info.id + 1) * per)))


def test_iterable_dataset_sharded_over_workers():
    single = [ember.asnumpy(b).tolist() for b in DataLoader(Range(10), batch_size=3)]
    assert single == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    got = sorted(
        x
        for b in DataLoader(Range(10), batch_size=3, num_workers=2)
        for x in ember.asnumpy(b).tolist()
    )
    assert got == list(range(10))


def test_samplers():
    ds = Faces(10)
    assert list(SequentialSampler(ds)) == list(range(10))
    r = list(RandomSampler(ds, generator=1))
    assert sorted(r) == list(range(10)) and r != list(range(10))
    assert len(list(RandomSampler(ds, replacement=True, num_samples=25, generator=1))) == 25
    assert sorted(SubsetRandomSampler([1, 4, 7], generator=2)) == [1, 4, 7]
    w = list(WeightedRandomSampler([0, 0, 1, 0], 6, generator=3))
    assert w == [2] * 6
    bs = list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=False))
    assert bs == [[0, 1, 2], [3, 4, 5], [6]]
    loader = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 4, True))
    assert [ember.asnumpy(b["index"]).tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    loader = DataLoader(ds, batch_size=3, sampler=SubsetRandomSampler([0, 2, 4, 6], generator=0))
    assert sorted(x for b in loader for x in ember.asnumpy(b["index"]).tolist()) == [0, 2, 4, 6]
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, sampler=SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(ds, num_workers=-1)


def test_concat_dataset_and_default_collate_nested():
    c = ConcatDataset([Faces(3), Faces(2)])
    assert len(c) == 5 and c[3]["index"] == 0 and c[-1]["index"] == 1
    batch = default_collate([{"a": (np.float32(1), [2, 3])}, {"a": (np.float32(4), [5, 6])}])
    assert ember.asnumpy(batch["a"][0]).tolist() == [1.0, 4.0]
    assert [ember.asnumpy(x).tolist() for x in batch["a"][1]] == [[2, 5], [3, 6]]
    loader = DataLoader(c, batch_size=None)
    assert [s["index"] for s in loader] == [0, 1, 2, 0, 1]


def test_pytorch_import_path():
    import ember.utils.data as d

    assert d.DataLoader is ember.data.DataLoader
