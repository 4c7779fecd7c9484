"""TargetEncoder (scikit-learn's ``sklearn.preprocessing.TargetEncoder``).

Each category is replaced by a shrunk mean of the target over the samples of that category:
with ``smooth='auto'`` the empirical-Bayes weight of Micci-Barreca (eq. 5-6) from the
category's count and within-category variance, with a number ``m`` the blend
``(sum + m * mean) / (count + m)``. The per-category counts, sums and squared deviations are
``bincount`` reductions of the ordinal codes on the device (one pass per feature and class).
``fit_transform`` cross-fits: each validation fold is encoded with statistics learnt on the
other folds, as scikit-learn does. Category discovery (``categories_``) is host metadata:
NumPy's sorted unique values per column (strings and objects included); numeric columns are
coded on the device by ``searchsorted``.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from ..utils._param_validation import HasMethods, Interval, StrOptions
from ..utils.multiclass import type_of_target
from ..utils.validation import (
    _host,
    check_is_fitted,
    device_of,
    input_kind,
    is_ember,
    to_device,
    to_output,
)

__all__ = ["TargetEncoder"]


def _is_nan(v):
    try:
        return v != v
    except Exception:
        return False


def _column_categories(col):
    """Sorted unique values of a host column, NaN/None last (as scikit-learn's _unique)."""
    if col.dtype.kind == "f":
        u = np.unique(col[~np.isnan(col)])
        return np.concatenate([u, [np.nan]]) if np.isnan(col).any() else u
    if col.dtype.kind in "iub":
        return np.unique(col)
    vals = [v for v in col.tolist() if v is not None and not _is_nan(v)]
    for v in vals:
        if not isinstance(v, (str, bytes, int, float, np.generic)):
            raise TypeError(
                "TargetEncoder: Encoders require their input argument must be uniformly "
                f"strings or numbers. Got {type(v).__name__}"
            )
    missing = [v for v in col.tolist() if v is None or _is_nan(v)]
    u = np.array(sorted(set(vals)), dtype=object)
    if missing:
        u = np.concatenate([u, np.array([missing[0]], dtype=object)])
    return u


class TargetEncoder(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Target encoder for regression and classification targets."""

    _parameter_constraints = {
        "categories": [StrOptions({"auto"}), list],
        "target_type": [StrOptions({"auto", "continuous", "binary", "multiclass"})],
        "smooth": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "cv": [Interval(Integral, 2, None, closed="left"), HasMethods(["split"]), "array-like"],
        "shuffle": ["boolean", StrOptions({"deprecated"})],
        "random_state": ["random_state", StrOptions({"deprecated"})],
    }

    def __init__(
        self,
        categories="auto",
        target_type="auto",
        smooth="auto",
        cv=5,
        shuffle="deprecated",
        random_state="deprecated",
    ):
        self.categories = categories
        self.target_type = target_type
        self.smooth = smooth
        self.cv = cv
        self.shuffle = shuffle
        self.random_state = random_state

    # ------------------------------------------------------------------ ordinal codes

    def _host_X(self, X):
        if hasattr(X, "nnz") and hasattr(X, "toarray"):
            raise TypeError(
                "TargetEncoder: Sparse data was passed for X, but dense data is required. Use "
                "'.toarray()' to convert to a dense numpy array."
            )
        h = _host(X)
        if is_ember(h):
            return h, True
        h = np.asarray(h)
        if h.ndim != 2:
            raise ValueError(
                f"TargetEncoder: Expected 2D array, got {h.ndim}D array instead: X of shape "
                f"{h.shape}. Reshape your data either using array.reshape(-1, 1) if your "
                "data has a single feature or array.reshape(1, -1) if it contains a single "
                "sample."
            )
        return h, h.dtype.kind in "fiub"

    def _codes(self, X, dev):
        """(codes (N, F) int64 on dev, known mask (N, F) on dev)."""
        h, numeric = self._host_X(X)
        n, F = h.shape
        if F != self.n_features_in_:
            raise ValueError(
                f"X has {F} features, but TargetEncoder is expecting {self.n_features_in_} "
                "features as input."
            )
        codes, known = [], []
        for f, cats in enumerate(self.categories_):
            if numeric and cats.dtype.kind in "fiub":
                col = to_device(h[:, f], dev).astype(ember.float64)
                has_nan = cats.dtype.kind == "f" and cats.size and np.isnan(cats[-1])
                finite = cats[:-1] if has_nan else cats
                C = to_device(finite.astype(np.float64), dev)
                if C.shape[0]:
                    pos = ember.searchsorted(C, col)
                    idx = ember.clip(pos, 0, C.shape[0] - 1)
                    hit = ember.take(C, idx) == col
                else:
                    idx = ember.zeros((n,), dtype=ember.int64, device=dev)
                    hit = ember.zeros((n,), dtype=ember.bool, device=dev)
                isn = ember.isnan(col)
                if has_nan:
                    idx = ember.where(isn, len(cats) - 1, idx)
                    hit = hit | isn
                codes.append(ember.where(hit, idx, 0).astype(ember.int64))
                known.append(hit)
            else:
                col = ember.asnumpy(h[:, f]) if is_ember(h) else h[:, f]
                lookup = {}
                nan_pos = None
                for i, c in enumerate(cats.tolist()):
                    if c is None or _is_nan(c):
                        nan_pos = i
                    else:
                        lookup[c] = i
                cc = np.zeros(n, dtype=np.int64)
                kk = np.zeros(n, dtype=bool)
                for r, v in enumerate(col.tolist()):
                    if v is None or _is_nan(v):
                        if nan_pos is not None:
                            cc[r], kk[r] = nan_pos, True
                    elif v in lookup:
                        cc[r], kk[r] = lookup[v], True
                codes.append(to_device(cc, dev))
                known.append(to_device(kk, dev))
        return ember.stack(codes, axis=1), ember.stack(known, axis=1)

    # -------------------------------------------------------------------- encodings

    def _encode_one(self, codes, y, n_cat, y_mean):
        """Encoding of one feature from its codes and a 1-D target (device arrays)."""
        cnt = ember.bincount(codes, minlength=n_cat).astype(ember.float64)
        sums = ember.bincount(codes, weights=y, minlength=n_cat)
        if self.smooth == "auto":
            var = float(((y - y.mean()) ** 2).mean()) if y.shape[0] else float("nan")
            means = sums / cnt
            dev2 = (y - ember.take(means, codes)) ** 2
            ssd = ember.bincount(codes, weights=dev2, minlength=n_cat)
            lam = var * cnt / (var * cnt + ssd / cnt)
            return ember.where(ember.isnan(lam), y_mean, lam * means + (1 - lam) * y_mean)
        m = float(self.smooth)
        den = cnt + m
        return ember.where(den == 0, y_mean, (sums + m * y_mean) / ember.where(den == 0, 1, den))

    def _encodings(self, codes, Y, means):
        """List of encodings: per feature (and per class, class-minor, for multiclass)."""
        out = []
        for f, cats in enumerate(self.categories_):
            col = codes[:, f]
            if self.target_type_ == "multiclass":
                for c in range(Y.shape[1]):
                    out.append(self._encode_one(col, Y[:, c], len(cats), float(means[c])))
            else:
                out.append(self._encode_one(col, Y, len(cats), float(means)))
        return out

    def _apply(self, X_out, codes, unknown, rows, encodings, means):
        k = len(self.classes_) if self.target_type_ == "multiclass" else 1
        for e, enc in enumerate(encodings):
            f, c = divmod(e, k)
            mean = float(means[c]) if k > 1 else float(means)
            vals = ember.take(enc, codes[:, f])
            col = X_out[:, e]
            col = ember.where(rows, vals, col)
            X_out[:, e] = ember.where(unknown[:, f], mean, col)
        return X_out

    def _fit_all(self, X, y):
        self._validate_params()
        h, numeric = self._host_X(X)
        n, F = h.shape
        if n == 0 or F == 0:
            raise ValueError(
                f"TargetEncoder: Found array with {n} sample(s) and {F} feature(s) (shape="
                f"{tuple(h.shape)}) while a minimum of 1 is required."
            )
        if not is_ember(h) and h.dtype.kind == "c":
            raise ValueError("TargetEncoder: Complex data not supported in X")
        if y is None:
            raise ValueError("TargetEncoder requires y to be passed, but the target y is None")
        yh = _host(y)
        if (yh.shape[0] if hasattr(yh, "shape") else len(yh)) != n:
            raise ValueError(
                f"Found input variables with inconsistent numbers of samples: [{n}, {yh.shape[0]}]"
            )
        dev = device_of(X)
        self.n_features_in_ = F
        cols = getattr(X, "columns", None)
        if cols is not None and all(isinstance(c, str) for c in cols):
            self.feature_names_in_ = np.asarray(list(cols), dtype=object)
        else:
            self.__dict__.pop("feature_names_in_", None)
        hh = ember.asnumpy(h) if is_ember(h) else h
        if self.categories == "auto":
            self.categories_ = [_column_categories(hh[:, f]) for f in range(F)]
        else:
            if len(self.categories) != F:
                raise ValueError(
                    f"TargetEncoder: Shape mismatch: if categories is an array, it has to be "
                    f"of shape (n_features,) = ({F},), got {len(self.categories)}."
                )
            cats = []
            for c in self.categories:
                c = np.asarray(c)
                if c.dtype.kind in "fiu" and np.any(np.diff(c[~np.isnan(c.astype(float))]) < 0):
                    raise ValueError(
                        "TargetEncoder: Unsorted categories are not supported for numerical "
                        "categories"
                    )
                cats.append(c)
            self.categories_ = cats
        yn = ember.asnumpy(yh) if is_ember(yh) else np.asarray(yh)
        if self.target_type == "auto":
            t = type_of_target(yn, input_name="y")
            if t not in ("binary", "multiclass", "continuous"):
                raise ValueError(
                    f"TargetEncoder: Unknown label type: Target type was inferred to be {t!r}. "
                    "Only ('binary', 'multiclass', 'continuous') are supported."
                )
            self.target_type_ = t
        else:
            self.target_type_ = self.target_type
        self.classes_ = None
        if self.target_type_ == "continuous":
            Y = to_device(yn.astype(np.float64).ravel(), dev)
            if not bool(ember.isfinite(Y).all()):
                raise ValueError("TargetEncoder: Input y contains NaN or infinity.")
        else:
            classes, inv = np.unique(yn.ravel(), return_inverse=True)
            self.classes_ = classes
            if self.target_type_ == "binary":
                if len(classes) > 2:
                    raise ValueError(
                        f"TargetEncoder: target_type='binary' but y has {len(classes)} classes"
                    )
                Y = to_device(inv.astype(np.float64), dev)
            else:
                Y = to_device(np.eye(len(classes))[inv], dev)
        means = Y.mean(axis=0)
        self.target_mean_ = (
            ember.asnumpy(means) if self.target_type_ == "multiclass" else float(means)
        )
        codes, known = self._codes(X, dev)
        enc = self._encodings(codes, Y, self.target_mean_)
        kind = input_kind(X)
        self._enc = enc
        self.encodings_ = [to_output(e, kind) for e in enc]
        return codes, known, Y, dev

    def fit(self, X, y):
        """Learn the categories and their encodings from all of X."""
        self._fit_all(X, y)
        return self

    def _n_out(self):
        k = len(self.classes_) if self.target_type_ == "multiclass" else 1
        return self.n_features_in_ * k

    def fit_transform(self, X, y):
        """Fit on all of X, and encode X by cross fitting (each fold with the statistics of
        the other folds)."""
        from ..model_selection import KFold, StratifiedKFold

        codes, known, Y, dev = self._fit_all(X, y)
        if self.shuffle != "deprecated" or self.random_state != "deprecated":
            warnings.warn(
                "`TargetEncoder.shuffle` and `TargetEncoder.random_state` are deprecated in "
                "version 1.9 and will be removed in version 1.11. Pass a cross-validation "
                "generator as `cv` argument to specify the shuffling behaviour instead.",
                FutureWarning,
                stacklevel=2,
            )
        shuffle = True if self.shuffle == "deprecated" else self.shuffle
        rs = None if self.random_state == "deprecated" else self.random_state
        n = codes.shape[0]
        cv = self.cv
        if isinstance(cv, Integral):
            strat = self.target_type_ != "continuous"
            cv = (StratifiedKFold if strat else KFold)(cv, shuffle=shuffle, random_state=rs)
        yh = _host(y)
        yn = ember.asnumpy(yh) if is_ember(yh) else np.asarray(yh)
        hX = np.zeros((n, 1))
        folds = list(cv.split(hX, yn) if hasattr(cv, "split") else cv)
        seen = np.zeros(n)
        for _, test in folds:
            seen[np.asarray(ember.asnumpy(test) if is_ember(test) else test)] += 1
        if not np.all(seen == 1):
            raise ValueError(
                "TargetEncoder: Validation indices from `cv` must cover each sample index "
                "exactly once with no overlap. Pass a splitter with non-overlapping "
                "validation folds as `cv` or refer to the docs for other options."
            )
        X_out = ember.zeros((n, self._n_out()), dtype=ember.float64, device=dev)
        unknown = ~known
        for train, test in folds:
            tr = to_device(np.asarray(ember.asnumpy(train) if is_ember(train) else train), dev)
            te = to_device(np.asarray(ember.asnumpy(test) if is_ember(test) else test), dev)
            Yt = ember.take(Y, tr, axis=0)
            m = Yt.mean(axis=0)
            m = ember.asnumpy(m) if self.target_type_ == "multiclass" else float(m)
            enc = self._encodings(ember.take(codes, tr, axis=0), Yt, m)
            rows = ember.zeros((n,), dtype=ember.bool, device=dev)
            rows[te] = True
            X_out = self._apply(X_out, codes, unknown, rows, enc, m)
        return to_output(X_out, input_kind(X))

    def transform(self, X):
        """Encode X with the encodings learnt on all of the training data (unknown
        categories get the target mean)."""
        check_is_fitted(self, "encodings_")
        dev = device_of(X)
        codes, known = self._codes(X, dev)
        n = codes.shape[0]
        X_out = ember.zeros((n, self._n_out()), dtype=ember.float64, device=dev)
        rows = ember.ones((n,), dtype=ember.bool, device=dev)
        enc = [to_device(e, dev) for e in self._enc]
        X_out = self._apply(X_out, codes, ~known, rows, enc, self.target_mean_)
        return to_output(X_out, input_kind(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.allow_nan = True
        tags.target_tags.required = True
        return tags

    def get_feature_names_out(self, input_features=None):
        """Input names; '<feature>_<class>' for multiclass targets."""
        names = super().get_feature_names_out(input_features)
        if self.target_type_ == "multiclass":
            return np.asarray([f"{f}_{c}" for f in names for c in self.classes_], dtype=object)
        return names
