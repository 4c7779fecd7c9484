"""More splitters (scikit-learn's group, time-series, stratified-shuffle and repeated ones).

Split indices are host NumPy integers (small bookkeeping that every input kind can be indexed
by). Shuffled splitters draw from a NumPy RandomState seeded as scikit-learn's
``check_random_state`` (``_split._np_rng``), so for the same ``random_state`` the splits equal
scikit-learn's.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np

import ember

from ..utils.validation import is_ember
from ._split import KFold, ShuffleSplit, StratifiedKFold, _np_rng, _num_samples, _split_sizes

__all__ = [
    "GroupKFold",
    "LeaveOneOut",
    "RepeatedKFold",
    "RepeatedStratifiedKFold",
    "StratifiedGroupKFold",
    "StratifiedShuffleSplit",
    "TimeSeriesSplit",
]


def _host_1d(v, name):
    h = ember.asnumpy(v) if is_ember(v) else v
    if hasattr(h, "to_numpy"):
        h = h.to_numpy()
    h = np.asarray(h)
    if h.ndim == 2 and h.shape[1] == 1:
        h = h[:, 0]
    if h.ndim != 1:
        raise ValueError(f"{name} should be a 1d array, got an array of shape {h.shape} instead.")
    return h


def _complement(n, test):
    mask = np.ones(n, dtype=bool)
    mask[test] = False
    return np.nonzero(mask)[0]


def _check_groups(groups, n):
    if groups is None:
        raise ValueError("The 'groups' parameter should not be None.")
    g = _host_1d(groups, "groups")
    if g.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {g.shape[0]}]"
        )
    return g


class GroupKFold(KFold):
    """K folds with non-overlapping groups (largest groups first into the lightest fold)."""

    def __init__(self, n_splits=5, *, shuffle=False, random_state=None):
        super().__init__(n_splits, shuffle=shuffle, random_state=random_state)

    def _test_folds(self, X, y, groups):
        n = _num_samples(X)
        g = _check_groups(groups, n)
        uniq, gi = np.unique(g, return_inverse=True)
        gi = gi.reshape(-1)
        if self.n_splits > len(uniq):
            raise ValueError(
                f"Cannot have number of splits n_splits={self.n_splits} greater than the "
                f"number of groups: {len(uniq)}."
            )
        if self.shuffle:
            order = _np_rng(self.random_state).permutation(len(uniq))
            for chunk in np.array_split(order, self.n_splits):
                yield np.nonzero(np.isin(gi, chunk))[0]
            return
        sizes = np.bincount(gi)
        order = np.argsort(sizes, kind="stable")[::-1]
        load = np.zeros(self.n_splits)
        fold_of = np.zeros(len(uniq), dtype=np.int64)
        for gidx in order:
            f = int(np.argmin(load))
            load[f] += sizes[gidx]
            fold_of[gidx] = f
        per = fold_of[gi]
        for f in range(self.n_splits):
            yield np.nonzero(per == f)[0]

    def split(self, X, y=None, groups=None):
        """Yield (train, test) index arrays."""
        n = _num_samples(X)
        for test in self._test_folds(X, y, groups):
            yield _complement(n, test), test


class StratifiedGroupKFold(KFold):
    """K folds with non-overlapping groups, each fold's class distribution kept close to y's
    (groups placed greedily, most uneven class distribution first)."""

    def __init__(self, n_splits=5, shuffle=False, random_state=None):
        super().__init__(n_splits, shuffle=shuffle, random_state=random_state)

    def _test_folds(self, X, y, groups):
        from ..utils.multiclass import type_of_target

        rng = _np_rng(self.random_state) if self.shuffle else None
        if y is None:
            raise ValueError("StratifiedGroupKFold.split requires y")
        yh = _host_1d(y, "y")
        kind = type_of_target(yh)
        if kind not in ("binary", "multiclass"):
            raise ValueError(
                f"Supported target types are: ('binary', 'multiclass'). Got {kind!r} instead."
            )
        _, y_inv, y_cnt = np.unique(yh, return_inverse=True, return_counts=True)
        y_inv = y_inv.reshape(-1)
        if np.all(self.n_splits > y_cnt):
            raise ValueError(
                f"n_splits={self.n_splits} cannot be greater than the number of members in "
                "each class."
            )
        if self.n_splits > y_cnt.min():
            warnings.warn(
                f"The least populated class in y has only {y_cnt.min()} members, which is "
                f"less than n_splits={self.n_splits}.",
                UserWarning,
                stacklevel=3,
            )
        g = _check_groups(groups, len(yh))
        _, g_inv, g_cnt = np.unique(g, return_inverse=True, return_counts=True)
        g_inv = g_inv.reshape(-1)
        G, K = len(g_cnt), len(y_cnt)
        if self.n_splits > G:
            raise ValueError(
                f"Cannot have number of splits n_splits={self.n_splits} greater than the "
                f"number of groups: {G}."
            )
        per_group = np.zeros((G, K))
        np.add.at(per_group, (g_inv, y_inv), 1)
        if rng is not None:
            perm = np.arange(G)
            rng.shuffle(perm)
            per_group = per_group[perm]
            inv = np.empty_like(perm)
            inv[perm] = np.arange(G)
            g_inv = inv[g_inv]
        per_fold = np.zeros((self.n_splits, K))
        fold_of = np.full(G, -1, dtype=np.int64)
        for gidx in np.argsort(-np.std(per_group, axis=1), kind="stable"):
            counts = per_group[gidx]
            best, best_eval, best_size = None, np.inf, np.inf
            for f in range(self.n_splits):
                per_fold[f] += counts
                ev = np.mean(np.std(per_fold / y_cnt.reshape(1, -1), axis=0))
                per_fold[f] -= counts
                size = np.sum(per_fold[f])
                if ev < best_eval or (np.isclose(ev, best_eval) and size < best_size):
                    best, best_eval, best_size = f, ev, size
            per_fold[best] += counts
            fold_of[gidx] = best
        per = fold_of[g_inv]
        for f in range(self.n_splits):
            yield np.nonzero(per == f)[0]

    def split(self, X, y, groups=None):
        """Yield (train, test) index arrays."""
        n = _num_samples(X)
        for test in self._test_folds(X, y, groups):
            yield _complement(n, test), test


class TimeSeriesSplit:
    """Expanding-window splits of ordered samples: each test block follows its training
    window (``gap`` samples left out between them, the window capped by ``max_train_size``)."""

    def __init__(self, n_splits=5, *, max_train_size=None, test_size=None, gap=0):
        if isinstance(n_splits, bool) or not isinstance(n_splits, Integral) or n_splits < 2:
            raise ValueError(
                "k-fold cross-validation requires at least one train/test split by setting "
                f"n_splits=2 or more, got n_splits={n_splits}."
            )
        self.n_splits = n_splits
        self.max_train_size = max_train_size
        self.test_size = test_size
        self.gap = gap

    def get_n_splits(self, X=None, y=None, groups=None):
        return self.n_splits

    def split(self, X, y=None, groups=None):
        """Yield (train, test) index arrays."""
        if groups is not None:
            warnings.warn(
                f"The groups parameter is ignored by {type(self).__name__}",
                UserWarning,
                stacklevel=2,
            )
        n = _num_samples(X)
        k = self.n_splits
        test_size = self.test_size if self.test_size is not None else n // (k + 1)
        if k + 1 > n:
            raise ValueError(
                f"Cannot have number of folds={k + 1} greater than the number of samples={n}."
            )
        if n - self.gap - test_size * k <= 0:
            raise ValueError(
                f"Too many splits={k} for number of samples={n} with test_size={test_size} "
                f"and gap={self.gap}."
            )
        idx = np.arange(n)
        for start in range(n - k * test_size, n, test_size):
            end = start - self.gap
            lo = (
                end - self.max_train_size
                if self.max_train_size and self.max_train_size < end
                else 0
            )
            yield idx[lo:end], idx[start : start + test_size]

    def __repr__(self):
        return (
            f"TimeSeriesSplit(gap={self.gap}, max_train_size={self.max_train_size}, "
            f"n_splits={self.n_splits}, test_size={self.test_size})"
        )


class LeaveOneOut:
    """Each sample once as a one-sample test set."""

    def get_n_splits(self, X=None, y=None, groups=None):
        if X is None:
            raise ValueError("The 'X' parameter should not be None.")
        return _num_samples(X)

    def split(self, X, y=None, groups=None):
        """Yield (train, test) index arrays."""
        n = _num_samples(X)
        if n <= 1:
            raise ValueError(f"Cannot perform LeaveOneOut with n_samples={n}.")
        for i in range(n):
            yield _complement(n, [i]), np.asarray([i])

    def __repr__(self):
        return "LeaveOneOut()"


def _approximate_mode(counts, n_draws, rng):
    """Per-class draw counts closest to ``counts * n_draws / total``: floors, then one more
    for the largest remainders (ties broken at random, as scikit-learn)."""
    exact = counts / counts.sum() * n_draws
    out = np.floor(exact)
    need = int(n_draws - out.sum())
    if need > 0:
        rem = exact - out
        for value in np.sort(np.unique(rem))[::-1]:
            (where,) = np.nonzero(rem == value)
            take = min(len(where), need)
            out[rng.choice(where, size=take, replace=False)] += 1
            need -= take
            if need == 0:
                break
    return out.astype(np.int64)


class StratifiedShuffleSplit(ShuffleSplit):
    """Random train/test splits preserving the class proportions of y."""

    def split(self, X, y, groups=None):
        """Yield (train, test) index arrays."""
        n = _num_samples(X)
        yh = ember.asnumpy(y) if is_ember(y) else y
        yh = yh.to_numpy() if hasattr(yh, "to_numpy") else np.asarray(yh)
        if yh.ndim == 2:
            yh = np.asarray([" ".join(row.astype(str)) for row in yh])
        n_train, n_test = _split_sizes(n, self.test_size, self.train_size, default_test=0.1)
        classes, yi = np.unique(yh, return_inverse=True)
        yi = yi.reshape(-1)
        counts = np.bincount(yi)
        if counts.min() < 2:
            raise ValueError(
                "The least populated class in y has only 1 member, which is too few. The "
                "minimum number of groups for any class cannot be less than 2."
            )
        K = len(classes)
        if n_train < K:
            raise ValueError(
                f"The train_size = {n_train} should be greater or equal to the number of "
                f"classes = {K}"
            )
        if n_test < K:
            raise ValueError(
                f"The test_size = {n_test} should be greater or equal to the number of "
                f"classes = {K}"
            )
        members = np.split(np.argsort(yi, kind="mergesort"), np.cumsum(counts)[:-1])
        rng = _np_rng(self.random_state)
        for _ in range(self.n_splits):
            n_i = _approximate_mode(counts, n_train, rng)
            t_i = _approximate_mode(counts - n_i, n_test, rng)
            train, test = [], []
            for k in range(K):
                idx = members[k].take(rng.permutation(counts[k]), mode="clip")
                train.extend(idx[: n_i[k]])
                test.extend(idx[n_i[k] : n_i[k] + t_i[k]])
            yield rng.permutation(train), rng.permutation(test)


class _Repeated:
    _cv = KFold

    def __init__(self, *, n_splits=5, n_repeats=10, random_state=None):
        if isinstance(n_repeats, bool) or not isinstance(n_repeats, Integral):
            raise ValueError("Number of repetitions must be of Integral type.")
        if n_repeats <= 0:
            raise ValueError("Number of repetitions must be greater than 0.")
        self.n_splits = n_splits
        self.n_repeats = n_repeats
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None):
        return self.n_splits * self.n_repeats

    def split(self, X, y=None, groups=None):
        """Yield (train, test) index arrays: ``n_repeats`` shuffled K-fold rounds."""
        rng = _np_rng(self.random_state)
        for _ in range(self.n_repeats):
            cv = self._cv(self.n_splits, shuffle=True, random_state=rng)
            yield from cv.split(X, y, groups)

    def __repr__(self):
        return (
            f"{type(self).__name__}(n_repeats={self.n_repeats}, n_splits={self.n_splits}, "
            f"random_state={self.random_state!r})"
        )


class RepeatedKFold(_Repeated):
    """K-fold repeated ``n_repeats`` times with a different shuffle each time."""

    _cv = KFold


class RepeatedStratifiedKFold(_Repeated):
    """Stratified K-fold repeated ``n_repeats`` times with a different shuffle each time."""

    _cv = StratifiedKFold

    def split(self, X, y, groups=None):
        """Yield (train, test) index arrays."""
        return super().split(X, y, groups)
