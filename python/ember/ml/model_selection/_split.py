"""Data splitting (scikit-learn's ``sklearn.model_selection`` splitters).

Index permutations come from ``ember.random`` on the host side as NumPy integers (split
indices are small bookkeeping, and every input kind can be indexed by them); rows of ember
arrays are gathered on their device with ``take``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

import ember

from ..utils.validation import check_random_state, is_ember

__all__ = ["KFold", "ShuffleSplit", "StratifiedKFold", "train_test_split"]


def _num_samples(x):
    if hasattr(x, "shape") and len(x.shape) > 0:
        return int(x.shape[0])
    if hasattr(x, "__len__"):
        return len(x)
    raise TypeError(f"Expected sequence or array-like, got {type(x).__name__}")


def _np_rng(random_state):
    """A NumPy RandomState seeded as scikit-learn's ``check_random_state`` seeds it, so the
    shuffled splits equal scikit-learn's (split indices are host bookkeeping)."""
    if random_state is None:
        return np.random.mtrand._rand
    if isinstance(random_state, np.random.RandomState):
        return random_state
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        return np.random.RandomState(int(random_state))
    # An ember or NumPy Generator: one draw from it seeds the host permutations.
    rng = check_random_state(random_state)
    return np.random.RandomState(int(ember.asnumpy(rng.integers(0, 2**31 - 1, size=1))[0]))


def _permutation(random_state, n):
    return _np_rng(random_state).permutation(n).astype(np.int64)


def _safe_index(x, idx):
    if is_ember(x):
        return ember.take(x, ember.asarray(idx, device=x.device), axis=0)
    if hasattr(x, "iloc"):
        return x.iloc[idx]
    if isinstance(x, np.ndarray):
        return x[idx]
    if hasattr(x, "tocsr"):
        return x.tocsr()[idx]
    return [x[i] for i in idx]


def _split_sizes(n, test_size, train_size, default_test=0.25):
    if test_size is None and train_size is None:
        test_size = default_test

    def bad(name, v):
        return ValueError(
            f"{name}={v!r} should be either positive and smaller than the number of samples "
            f"{n} or a float in the (0, 1) range"
        )

    for name, v in (("test_size", test_size), ("train_size", train_size)):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (Integral, Real)):
            raise ValueError(f"Invalid value for {name}: {v!r}")
        if isinstance(v, Real) and not isinstance(v, Integral) and not 0 < v < 1:
            raise bad(name, v)
        if isinstance(v, Integral) and not 0 < v < n:
            raise bad(name, v)
    n_test = math.ceil(test_size * n) if isinstance(test_size, float) else test_size
    n_train = math.floor(train_size * n) if isinstance(train_size, float) else train_size
    if n_train is None:
        n_train = n - n_test
    elif n_test is None:
        n_test = n - n_train
    if n_train + n_test > n:
        raise ValueError(
            f"The sum of train_size and test_size = {n_train + n_test}, should be smaller "
            f"than the number of samples {n}. Reduce test_size and/or train_size."
        )
    if n_train == 0:
        raise ValueError(
            f"With n_samples={n}, test_size={test_size} and train_size={train_size}, the "
            "resulting train set will be empty. Adjust any of the aforementioned parameters."
        )
    return int(n_train), int(n_test)


def train_test_split(
    *arrays, test_size=None, train_size=None, random_state=None, shuffle=True, stratify=None
):
    """Split arrays into random train and test subsets (each input keeps its kind/device)."""
    if not arrays:
        raise ValueError("At least one array required as input")
    lengths = [_num_samples(a) for a in arrays]
    if len(set(lengths)) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {lengths!r}")
    n = lengths[0]
    n_train, n_test = _split_sizes(n, test_size, train_size)
    if not shuffle:
        if stratify is not None:
            raise ValueError("Stratified train/test split is not implemented for shuffle=False")
        train = np.arange(n_train)
        test = np.arange(n_train, n_train + n_test)
    elif stratify is not None:
        train, test = _stratified_split(stratify, n_train, n_test, random_state)
    else:
        perm = _permutation(random_state, n)
        test = perm[:n_test]
        train = perm[n_test : n_test + n_train]
    out = []
    for a in arrays:
        out.extend([_safe_index(a, train), _safe_index(a, test)])
    return out


def _stratified_split(y, n_train, n_test, random_state):
    from ._split_more import StratifiedShuffleSplit

    cv = StratifiedShuffleSplit(test_size=n_test, train_size=n_train, random_state=random_state)
    return next(cv.split(np.zeros(_num_samples(y)), y))


class KFold:
    """K consecutive folds (shuffled first when ``shuffle``)."""

    def __init__(self, n_splits=5, *, shuffle=False, random_state=None):
        if isinstance(n_splits, bool) or not isinstance(n_splits, Integral) or n_splits < 2:
            raise ValueError(
                "k-fold cross-validation requires at least one train/test split by setting "
                f"n_splits=2 or more, got n_splits={n_splits}."
            )
        if not isinstance(shuffle, bool):
            raise TypeError(f"shuffle must be True or False; got {shuffle}")
        if not shuffle and random_state is not None:
            raise ValueError(
                "Setting a random_state has no effect since shuffle is False. You should "
                "leave random_state to its default (None), or set shuffle=True."
            )
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None):
        return self.n_splits

    def _test_folds(self, X, y):
        n = _num_samples(X)
        if self.n_splits > n:
            raise ValueError(
                f"Cannot have number of splits n_splits={self.n_splits} greater than the "
                f"number of samples: n_samples={n}."
            )
        idx = np.arange(n)
        if self.shuffle:
            _np_rng(self.random_state).shuffle(idx)
        sizes = np.full(self.n_splits, n // self.n_splits, dtype=int)
        sizes[: n % self.n_splits] += 1
        cur = 0
        for s in sizes:
            yield idx[cur : cur + s]
            cur += s

    def split(self, X, y=None, groups=None):
        """Yield (train, test) index arrays."""
        n = _num_samples(X)
        for test in self._test_folds(X, y):
            mask = np.ones(n, dtype=bool)
            mask[test] = False
            yield np.nonzero(mask)[0], np.sort(test) if self.shuffle else test

    def __repr__(self):
        return (
            f"{type(self).__name__}(n_splits={self.n_splits}, random_state="
            f"{self.random_state!r}, shuffle={self.shuffle})"
        )


class StratifiedKFold(KFold):
    """K folds preserving the class proportions of y."""

    def _test_folds(self, X, y):
        if y is None:
            raise ValueError("StratifiedKFold.split requires y")
        yh = ember.asnumpy(y) if is_ember(y) else np.asarray(y)
        n = len(yh)
        # Classes numbered in order of first appearance.
        _, first, inv = np.unique(yh, return_index=True, return_inverse=True)
        _, perm_cls = np.unique(first, return_inverse=True)
        yi = perm_cls[inv.reshape(-1)]
        K = int(yi.max()) + 1
        counts = np.bincount(yi, minlength=K)
        if self.n_splits > counts.max():
            raise ValueError(
                f"n_splits={self.n_splits} cannot be greater than the number of members in "
                "each class."
            )
        # Per fold and class: how many of the class's samples go to the fold (the sorted
        # labels dealt round-robin); each class's samples fill its folds in order.
        y_order = np.sort(yi)
        alloc = np.asarray(
            [np.bincount(y_order[i :: self.n_splits], minlength=K) for i in range(self.n_splits)]
        )
        fold = np.empty(n, dtype=int)
        g = _np_rng(self.random_state) if self.shuffle else None
        for k in range(K):
            f = np.arange(self.n_splits).repeat(alloc[:, k])
            if g is not None:
                g.shuffle(f)
            fold[yi == k] = f
        for k in range(self.n_splits):
            yield np.nonzero(fold == k)[0]

    def split(self, X, y, groups=None):
        """Yield (train, test) index arrays."""
        n = _num_samples(X)
        for test in self._test_folds(X, y):
            mask = np.ones(n, dtype=bool)
            mask[test] = False
            yield np.nonzero(mask)[0], test


class ShuffleSplit:
    """Independent random train/test splits."""

    def __init__(self, n_splits=10, *, test_size=None, train_size=None, random_state=None):
        self.n_splits = n_splits
        self.test_size = test_size
        self.train_size = train_size
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None):
        return self.n_splits

    def split(self, X, y=None, groups=None):
        n = _num_samples(X)
        n_train, n_test = _split_sizes(n, self.test_size, self.train_size, default_test=0.1)
        rng = _np_rng(self.random_state)
        for _ in range(self.n_splits):
            perm = rng.permutation(n).astype(np.int64)
            yield perm[n_test : n_test + n_train], perm[:n_test]
