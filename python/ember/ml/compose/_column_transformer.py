"""``ColumnTransformer`` and ``make_column_transformer`` (scikit-learn's ``sklearn.compose``).

Each transformer is fitted on its own subset of the input's columns and the outputs are placed
side by side. Columns are chosen by int positions, slices, boolean masks or (for pandas and
``ember.frame`` DataFrames) names, or by a callable returning one of those. Column positions
and names are host bookkeeping; the data moves as the input's kind: an ember array is sliced on
its device and the outputs are concatenated there (ember out); an ``ember.frame`` DataFrame is
handed to the transformers as sub-frames and their outputs concatenated on its device; NumPy,
lists and pandas DataFrames give NumPy out, as every ``ember.ml`` estimator does. The output is
always dense (``sparse_threshold`` is accepted and has no effect: ember has no sparse arrays),
so ``sparse_output_`` is False.
"""

from __future__ import annotations

import numbers
import time
import warnings
from collections import Counter

import numpy as np

import ember

from ..base import BaseEstimator, TransformerMixin, clone
from ..utils._bunch import Bunch
from ..utils._param_validation import HasMethods, Interval, StrOptions
from ..utils.validation import _host, check_is_fitted, is_ember, is_ember_frame, to_device

__all__ = ["ColumnTransformer", "make_column_transformer"]

_ERR_1D = (
    "1D data passed to a transformer that expects 2D data. Try to specify the column selection "
    "as a list of one item instead of a scalar."
)


def _is_str(t, *names):
    return isinstance(t, str) and t in names


class _Table:
    """The input of ``fit``/``transform``: its kind, shape and column labels, and how to take a
    subset of its columns out of it (without changing its kind)."""

    def __init__(self, X):
        if hasattr(X, "nnz") and hasattr(X, "toarray"):
            raise TypeError(
                "ColumnTransformer: Sparse data was passed for X, but dense data is required. "
                "Use '.toarray()' to convert to a dense numpy array."
            )
        self.names = None
        if is_ember(X):
            self.kind, self.X = "ember", X
        elif is_ember_frame(X):
            self.kind, self.X = "eframe", X
            self.names = list(X.columns)
        elif hasattr(X, "columns") and hasattr(X, "iloc"):
            self.kind, self.X = "pandas", X
            self.names = list(X.columns)
        else:
            arr = np.asarray(X)
            if arr.dtype.kind in "US" and not isinstance(X, np.ndarray):
                arr = np.asarray(X, dtype=object)  # a list mixing strings and numbers
            self.kind, self.X = "numpy", arr
        ndim = len(self.X.shape)
        if ndim != 2:
            raise ValueError(
                f"ColumnTransformer: Expected 2D array, got {ndim}D array instead: X of shape "
                f"{tuple(self.X.shape)}. Reshape your data either using array.reshape(-1, 1) "
                "if your data has a single feature or array.reshape(1, -1) if it contains a "
                "single sample."
            )
        self.n_samples, self.n_features = (int(s) for s in self.X.shape)

    @property
    def device(self):
        """Where the output is assembled: the input's device, or None for host inputs."""
        return self.X.device if self.kind in ("ember", "eframe") else None

    def take(self, idx, scalar):
        """Columns ``idx`` (1-D when the user's selection was a scalar)."""
        X = self.X
        if self.kind == "eframe":
            if scalar:
                return X[self.names[idx[0]]]
            return X[[self.names[i] for i in idx]]
        if self.kind == "pandas":
            return X.iloc[:, idx[0]] if scalar else X.iloc[:, idx]
        if scalar:
            return X[:, idx[0]]
        if self.kind == "ember":
            a, b = idx[0], idx[-1] + 1
            if list(idx) == list(range(a, b)):
                return X[:, a:b]  # a contiguous run: a slice, no gather
            return ember.take(X, ember.asarray(idx, dtype=ember.int64, device=X.device), axis=1)
        return X[:, idx]


def _key_type(key):
    """'int', 'str' or 'bool' for a column specification, None for an empty one; ValueError for
    anything else (scikit-learn's rule: all integers, all strings, or a boolean mask)."""
    bad = ValueError(
        "No valid specification of the columns. Only a scalar, list or slice of all integers "
        "or all strings, or boolean mask is allowed"
    )
    if isinstance(key, (bool, np.bool_)):
        return "bool"
    if isinstance(key, numbers.Integral):
        return "int"
    if isinstance(key, str):
        return "str"
    if isinstance(key, slice):
        kinds = {_key_type(v) for v in (key.start, key.stop) if v is not None}
        if len(kinds) > 1 or "bool" in kinds or key.step is not None and "str" in kinds:
            raise bad
        return kinds.pop() if kinds else "int"
    if is_ember(key):
        k = np.dtype(str(key.dtype)).kind
        if k == "b":
            return "bool"
        if k in "iu":
            return "int" if key.size else None
        raise bad
    if hasattr(key, "dtype") and hasattr(key, "__len__"):  # NumPy arrays, pandas Index/Series
        arr = np.asarray(key)
        if arr.size == 0:
            return None
        if arr.dtype.kind == "b":
            return "bool"
        if arr.dtype.kind in "iu":
            return "int"
        if arr.dtype.kind in "OU" and all(isinstance(v, str) for v in arr.ravel()):
            return "str"
        raise bad
    if isinstance(key, (list, tuple)):
        if not key:
            return None
        kinds = {_key_type(v) for v in key if not isinstance(v, (list, tuple, slice))}
        if len(kinds) == 1 and all(not isinstance(v, (list, tuple, slice)) for v in key):
            return kinds.pop()
        raise bad
    raise bad


def _column_indices(table, key):
    """Positions (host ints) of the columns ``key`` selects in ``table``."""
    kind = _key_type(key)
    n = table.n_features
    if kind is None:
        return []
    if kind == "bool":
        mask = ember.asnumpy(key) if is_ember(key) else np.asarray(key, dtype=bool)
        mask = np.atleast_1d(mask).reshape(-1)
        if mask.shape[0] != n:
            raise ValueError(
                f"ColumnTransformer: a boolean column mask must have one entry per feature: "
                f"got {mask.shape[0]} entries for X with {n} features"
            )
        return [int(i) for i in np.nonzero(mask)[0]]
    if kind == "int":
        if isinstance(key, slice):
            return list(range(n)[key])
        idx = ember.asnumpy(key) if is_ember(key) else np.asarray(key)
        idx = np.atleast_1d(idx).astype(np.int64)
        if idx.size and (idx.max() >= n or idx.min() < -n):
            raise ValueError(f"all features must be in [0, {n - 1}] or [-{n}, 0]")
        return [int(i) % n for i in idx]
    if table.names is None:
        raise ValueError("Specifying the columns using strings is only supported for dataframes.")
    names = table.names
    if isinstance(key, slice):
        for v in (key.start, key.stop):
            if v is not None and v not in names:
                raise ValueError(f"Some column names are not columns of the dataframe: {{{v!r}}}")
        start = 0 if key.start is None else names.index(key.start)
        stop = len(names) if key.stop is None else names.index(key.stop) + 1
        return list(range(start, stop))
    keys = [key] if isinstance(key, str) else [str(k) for k in np.asarray(key, dtype=object)]
    missing = {k for k in keys if k not in names}
    if missing:
        raise ValueError(f"Some column names are not columns of the dataframe: {missing}")
    return [names.index(k) for k in keys]


def _is_empty(columns):
    """An empty list or an all-False mask (scikit-learn's empty selection)."""
    if is_ember(columns):
        return columns.size == 0 or (columns.dtype == ember.bool and not bool(columns.any()))
    if hasattr(columns, "dtype") and hasattr(columns, "__len__"):
        arr = np.asarray(columns)
        return arr.size == 0 or (arr.dtype.kind == "b" and not arr.any())
    if isinstance(columns, (list, tuple)):
        return len(columns) == 0 or (
            all(isinstance(c, (bool, np.bool_)) for c in columns) and not any(columns)
        )
    return False


def _block(out, name, weight):
    """A transformer's output as a 2-D array (ember or NumPy), weighted."""
    if hasattr(out, "nnz") and hasattr(out, "toarray"):
        out = out.toarray()  # SciPy sparse output (host): its dense copy
    elif is_ember_frame(out) or (hasattr(out, "to_numpy") and not isinstance(out, np.ndarray)):
        out = _host(out)
    elif not is_ember(out):
        out = np.asarray(out)
    if len(out.shape) != 2:
        raise ValueError(
            f"The output of the '{name}' transformer should be 2D (numpy array, scipy sparse "
            "array, dataframe)."
        )
    if weight is not None:
        out = out * weight
    return out


def _elapsed(name, i, total, seconds):
    start = "[ColumnTransformer] "
    end = f" ({i} of {total}) Processing {name}, total={seconds:5.1f}s"
    return start + "." * max(70 - len(start) - len(end), 0) + end


class ColumnTransformer(TransformerMixin, BaseEstimator):
    """Applies transformers to column subsets of X and concatenates their outputs."""

    _parameter_constraints = {
        "transformers": [list],
        "remainder": [
            StrOptions({"drop", "passthrough"}),
            HasMethods(["fit", "transform"]),
            HasMethods(["fit_transform", "transform"]),
        ],
        "sparse_threshold": [Interval(numbers.Real, 0, 1, closed="both")],
        "n_jobs": [numbers.Integral, None],
        "transformer_weights": [dict, None],
        "verbose": ["boolean", Interval(numbers.Integral, 0, None, closed="left")],
        "verbose_feature_names_out": ["boolean", str, callable],
    }

    def __init__(
        self,
        transformers,
        *,
        remainder="drop",
        sparse_threshold=0.3,
        n_jobs=None,
        transformer_weights=None,
        verbose=False,
        verbose_feature_names_out=True,
    ):
        self.transformers = transformers
        self.remainder = remainder
        self.sparse_threshold = sparse_threshold
        self.n_jobs = n_jobs
        self.transformer_weights = transformer_weights
        self.verbose = verbose
        self.verbose_feature_names_out = verbose_feature_names_out

    # ---- parameters: transformers are reachable as ``name`` and ``name__param`` -------------
    def _named(self):
        try:
            return [(name, trans) for name, trans, _ in self.transformers]
        except (TypeError, ValueError):
            return []

    def get_params(self, deep=True):
        out = super().get_params(deep=deep)
        if not deep:
            return out
        for name, trans in self._named():
            out[name] = trans
            if hasattr(trans, "get_params") and not isinstance(trans, type):
                for k, v in trans.get_params(deep=True).items():
                    out[f"{name}__{k}"] = v
        return out

    def set_params(self, **params):
        if "transformers" in params:
            self.transformers = params.pop("transformers")
        names = [name for name, _ in self._named()]
        for key in [k for k in params if k in names]:
            value = params.pop(key)
            self.transformers = [(n, value if n == key else t, c) for n, t, c in self.transformers]
        return super().set_params(**params)

    # ---- validation ---------------------------------------------------------------------------
    def _check_transformers(self):
        for entry in self.transformers:
            if not isinstance(entry, (tuple, list)) or len(entry) != 3:
                raise ValueError(
                    "ColumnTransformer: each entry of transformers must be a (name, "
                    f"transformer, columns) tuple, got {entry!r}"
                )
        names = [name for name, _, _ in self.transformers]
        if len(set(names)) != len(names):
            raise ValueError(f"Names provided are not unique: {names!r}")
        clash = sorted(set(names) & set(self._get_param_names()))
        if clash:
            raise ValueError(f"Estimator names conflict with constructor arguments: {clash!r}")
        dunder = [n for n in names if "__" in n]
        if dunder:
            raise ValueError(f"Estimator names must not contain __: got {dunder!r}")
        for _, t, _ in self.transformers:
            if _is_str(t, "drop", "passthrough"):
                continue
            if not (hasattr(t, "fit") or hasattr(t, "fit_transform")) or not hasattr(
                t, "transform"
            ):
                raise TypeError(
                    "All estimators should implement fit and transform, or can be 'drop' or "
                    f"'passthrough' specifiers. '{t}' (type {type(t)}) doesn't."
                )

    def _remainder_columns(self, rest):
        """The remainder's columns, given as the other selections are (names, mask or ints)."""
        try:
            kinds = {
                _key_type(c) if not callable(c) else "callable" for _, _, c in self.transformers
            }
        except ValueError:
            kinds = set()
        kind = kinds.pop() if len(kinds) == 1 else "int"
        if kind == "str":
            return [str(self.feature_names_in_[i]) for i in rest]
        if kind == "bool":
            return [i in rest for i in range(self.n_features_in_)]
        return list(rest)

    # ---- fitting and transforming -------------------------------------------------------------
    def fit(self, X, y=None, **params):
        """Fit every transformer on its columns; returns self."""
        self.fit_transform(X, y, **params)
        return self

    def set_output(self, *, transform=None):
        """Sets the output container of the transformer and of every sub-transformer (also the
        remainder when it is an estimator), as scikit-learn's ``ColumnTransformer``."""
        super().set_output(transform=transform)
        subs = [t for _, t, _ in self.transformers] + [self.remainder]
        subs += [t for _, t, _ in getattr(self, "transformers_", [])]
        for t in subs:
            if hasattr(t, "set_output") and not isinstance(t, str):
                t.set_output(transform=transform)
        return self

    def fit_transform(self, X, y=None, **params):
        """Fit every transformer on its columns and concatenate their outputs."""
        self._no_params(params, "fit_transform")
        self._validate_params()
        self._check_transformers()
        table = _Table(X)
        self.n_features_in_ = table.n_features
        names = table.names
        if names is not None and all(isinstance(c, str) for c in names):
            self.feature_names_in_ = np.asarray(names, dtype=object)
        else:
            self.__dict__.pop("feature_names_in_", None)
        columns, indices = [], {}
        for name, _, spec in self.transformers:
            spec = spec(X) if callable(spec) else spec
            columns.append(spec)
            indices[name] = _column_indices(table, spec)
        used = {i for idx in indices.values() for i in idx}
        rest = [i for i in range(table.n_features) if i not in used]
        indices["remainder"] = rest
        self._columns = columns
        self._transformer_to_input_indices = indices
        entries = [
            (name, trans, spec)
            for (name, trans, _), spec in zip(self.transformers, columns, strict=True)
        ]
        if rest:
            entries.append(("remainder", self.remainder, self._remainder_columns(rest)))
        weights = self.transformer_weights or {}
        todo = [e for e in entries if not _is_str(e[1], "drop") and not _is_empty(indices[e[0]])]
        fitted, outputs, step = [], [], 0
        for name, trans, spec in entries:
            if _is_str(trans, "drop"):
                fitted.append((name, "drop", spec))
                continue
            if _is_empty(indices[name]):
                fitted.append((name, trans, spec))  # nothing to fit: kept unfitted
                continue
            step += 1
            t0 = time.perf_counter()
            sub = table.take(indices[name], np.isscalar(spec))
            if _is_str(trans, "passthrough"):
                est, out = "passthrough", sub
            else:
                est = clone(trans)
                out = self._call(name, lambda e=est, s=sub: _fit_transform_one(e, s, y))
            outputs.append((name, _block(out, name, weights.get(name))))
            fitted.append((name, est, spec))
            if self.verbose:
                print(_elapsed(name, step, len(todo), time.perf_counter() - t0))
        self.transformers_ = fitted
        self.sparse_output_ = False
        self.output_indices_ = {}
        pos = 0
        for name, out in outputs:
            self.output_indices_[name] = slice(pos, pos + int(out.shape[1]))
            pos += int(out.shape[1])
        for name in [t[0] for t in self.transformers] + ["remainder"]:
            self.output_indices_.setdefault(name, slice(0, 0))
        return _hstack([o for _, o in outputs], table)

    def transform(self, X, **params):
        """Transform X with every fitted transformer and concatenate the outputs."""
        self._no_params(params, "transform")
        check_is_fitted(self, "transformers_")
        table = _Table(X)
        fitted_names = getattr(self, "feature_names_in_", None)
        by_name = fitted_names is not None and table.names is not None
        indices = self._transformer_to_input_indices
        if by_name:
            needed = {
                str(fitted_names[i])
                for name, trans, _ in self.transformers_
                if not _is_str(trans, "drop")
                for i in indices[name]
            }
            missing = needed - {str(c) for c in table.names}
            if missing:
                raise ValueError(f"columns are missing: {missing}")
            where = {str(c): i for i, c in reversed(list(enumerate(table.names)))}
            indices = {
                name: [where[str(fitted_names[i])] for i in idx] for name, idx in indices.items()
            }
        else:
            if fitted_names is not None:
                warnings.warn(
                    "X does not have valid feature names, but ColumnTransformer was fitted "
                    "with feature names",
                    UserWarning,
                    stacklevel=2,
                )
            elif table.names is not None and all(isinstance(c, str) for c in table.names):
                warnings.warn(
                    "X has feature names, but ColumnTransformer was fitted without feature names",
                    UserWarning,
                    stacklevel=2,
                )
            if table.n_features != self.n_features_in_:
                raise ValueError(
                    f"X has {table.n_features} features, but ColumnTransformer is expecting "
                    f"{self.n_features_in_} features as input."
                )
        weights = self.transformer_weights or {}
        blocks = []
        for name, trans, spec in self.transformers_:
            if _is_str(trans, "drop") or _is_empty(indices[name]):
                continue
            sub = table.take(indices[name], np.isscalar(spec))
            if _is_str(trans, "passthrough"):
                out = sub
            else:
                out = self._call(name, lambda t=trans, s=sub: t.transform(s))
            blocks.append(_block(out, name, weights.get(name)))
        return _hstack(blocks, table)

    @staticmethod
    def _call(name, fn):
        try:
            return fn()
        except ValueError as exc:
            if "Expected 2D array, got 1D array instead" in str(exc):
                raise ValueError(_ERR_1D) from exc
            raise

    @staticmethod
    def _no_params(params, method):
        if params:
            raise ValueError(
                f"ColumnTransformer.{method} got unexpected keyword arguments "
                f"{sorted(params)!r}: ember.ml has no metadata routing, so extra fit "
                "parameters cannot be passed to the transformers."
            )

    # ---- fitted views ------------------------------------------------------------------------
    @property
    def named_transformers_(self):
        """The fitted transformers by name (a Bunch: ``ct.named_transformers_.scaler``)."""
        return Bunch(**{name: trans for name, trans, _ in self.transformers_})

    def __getitem__(self, key):
        try:
            return self.named_transformers_[key]
        except AttributeError as exc:
            raise TypeError("ColumnTransformer is subscriptable after it is fitted") from exc
        except KeyError as exc:
            raise KeyError(f"'{key}' is not a valid transformer name") from exc

    def _input_names(self, input_features):
        n = self.n_features_in_
        fitted = getattr(self, "feature_names_in_", None)
        if input_features is None:
            if fitted is not None:
                return fitted
            return np.asarray([f"x{i}" for i in range(n)], dtype=object)
        arr = np.asarray(input_features, dtype=object)
        if fitted is not None and (len(arr) != len(fitted) or np.any(arr != fitted)):
            raise ValueError("input_features is not equal to feature_names_in_")
        if len(arr) != n:
            raise ValueError(
                f"input_features should have length equal to number of features ({n}), got "
                f"{len(arr)}"
            )
        return arr

    def get_feature_names_out(self, input_features=None):
        """Output column names, prefixed ``'name__'`` when ``verbose_feature_names_out``."""
        check_is_fitted(self, "transformers_")
        names_in = self._input_names(input_features)
        pairs = []
        for name, trans, _ in self.transformers_:
            idx = self._transformer_to_input_indices[name]
            if _is_str(trans, "drop") or _is_empty(idx):
                continue
            sel = names_in[idx]
            if _is_str(trans, "passthrough"):
                out = sel
            elif hasattr(trans, "get_feature_names_out"):
                out = trans.get_feature_names_out(sel)
            else:
                raise AttributeError(
                    f"Transformer {name} (type {type(trans).__name__}) does not provide "
                    "get_feature_names_out."
                )
            pairs.append((name, [str(v) for v in out]))
        if not pairs:
            return np.asarray([], dtype=object)
        v = self.verbose_feature_names_out
        if callable(v) or isinstance(v, str) or v is True:
            if callable(v):
                fmt = v
            else:
                pattern = v if isinstance(v, str) else "{transformer_name}__{feature_name}"

                def fmt(t, f, pattern=pattern):
                    return pattern.format(transformer_name=t, feature_name=f)

            return np.asarray([fmt(t, f) for t, feats in pairs for f in feats], dtype=object)
        counts = Counter(f for _, feats in pairs for f in feats)
        dup = sorted(name for name, c in counts.most_common(6) if c > 1)
        if dup:
            shown = str(dup[:5])[:-1] + ", ...]" if len(dup) == 6 else str(dup)
            raise ValueError(
                f"Output feature names: {shown} are not unique. Please set "
                "verbose_feature_names_out=True to add prefixes to feature names"
            )
        return np.asarray([f for _, feats in pairs for f in feats], dtype=object)


def _fit_transform_one(est, X, y):
    if hasattr(est, "fit_transform"):
        return est.fit_transform(X) if y is None else est.fit_transform(X, y)
    fitted = est.fit(X) if y is None else est.fit(X, y)
    return fitted.transform(X)


def _hstack(blocks, table):
    """The outputs side by side: on the input's device for ember inputs, NumPy otherwise."""
    n = table.n_samples
    device = table.device
    if device is not None:
        if not blocks:
            return ember.zeros((n, 0), device=device)
        if all(is_ember(b) or b.dtype.kind in "biuf" for b in blocks):
            arrs = [to_device(b, device) for b in blocks]
            dt = ember.result_type(*arrs)
            return ember.concatenate([a if a.dtype == dt else a.astype(dt) for a in arrs], axis=1)
        # A non-numeric block (strings passed through) cannot live on a device: NumPy out.
    if not blocks:
        return np.zeros((n, 0))
    return np.hstack([ember.asnumpy(b) if is_ember(b) else b for b in blocks])


def make_column_transformer(
    *transformers,
    remainder="drop",
    sparse_threshold=0.3,
    n_jobs=None,
    verbose=False,
    verbose_feature_names_out=True,
):
    """A ColumnTransformer from ``(transformer, columns)`` pairs, each named after its
    lower-cased class name ('-1', '-2', ... appended to repeated names)."""
    for t in transformers:
        if not isinstance(t, tuple) or len(t) != 2:
            raise ValueError(
                f"make_column_transformer: expected (transformer, columns) tuples, got {t!r}"
            )
    names = [t if isinstance(t, str) else type(t).__name__.lower() for t, _ in transformers]
    counts = Counter(names)
    seen = Counter()
    named = []
    for name, (trans, cols) in zip(names, transformers, strict=True):
        if counts[name] > 1:
            seen[name] += 1
            name = f"{name}-{seen[name]}"
        named.append((name, trans, cols))
    return ColumnTransformer(
        named,
        remainder=remainder,
        sparse_threshold=sparse_threshold,
        n_jobs=n_jobs,
        verbose=verbose,
        verbose_feature_names_out=verbose_feature_names_out,
    )
