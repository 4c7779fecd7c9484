"""SplineTransformer (scikit-learn's ``sklearn.preprocessing.SplineTransformer``) over ember ops.

Every feature gets a B-spline basis on its own knot vector (the base knots, extended by
``degree`` equally spaced knots on each side, or wrapped for 'periodic'). The basis values are
evaluated for all samples and features at once on X's device by the Cox-de Boor recursion:
the knot interval of each value is found by a broadcast comparison, the ``degree + 1``
non-zero basis functions of that interval are built up degree by degree from gathered knots,
then scattered into the output columns by one-hot masks. Extrapolation ('constant', 'linear',
'continue', 'periodic', 'error') follows scikit-learn.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

import ember

from ..base import BaseEstimator, TransformerMixin
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    _host,
    check_array,
    check_is_fitted,
    check_n_features,
    check_sample_weight,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["SplineTransformer"]


def _gather(t, idx):
    """t[idx[s, f], f] for a knot table t (T, F) and interval indices idx (N, F)."""
    return ember.take_along_axis(t, idx, axis=0)


def _basis(t, k, x, l):
    """The k+1 non-zero B-splines of degree k at x on interval l (list of (N, F) arrays)."""
    h = [ember.ones(x.shape, dtype=x.dtype, device=x.device)]
    for j in range(1, k + 1):
        prev = h
        h = [ember.zeros(x.shape, dtype=x.dtype, device=x.device)] * (j + 1)
        for n in range(1, j + 1):
            xb = _gather(t, l + n)
            xa = _gather(t, l + n - j)
            span = xb - xa
            ok = span != 0
            w = ember.where(ok, prev[n - 1] / ember.where(ok, span, 1.0), 0.0)
            h[n - 1] = h[n - 1] + w * (xb - x)
            h[n] = w * (x - xa)
    return h


def _derivative(t, k, x, l):
    """First derivatives of the k+1 non-zero B-splines of degree k at x on interval l."""
    if k == 0:
        return [ember.zeros(x.shape, dtype=x.dtype, device=x.device)]
    low = _basis(t, k - 1, x, l)  # B_{l-k+1..l, k-1}
    out = []
    for m in range(k + 1):
        i = l - k + m  # B_{i,k}' = k (B_{i,k-1} / (t[i+k]-t[i]) - B_{i+1,k-1} / (...))
        a = low[m - 1] if m >= 1 else None
        b = low[m] if m < k else None
        val = ember.zeros(x.shape, dtype=x.dtype, device=x.device)
        if a is not None:
            d = _gather(t, i + k) - _gather(t, i)
            val = val + ember.where(d != 0, a / ember.where(d != 0, d, 1.0), 0.0)
        if b is not None:
            d = _gather(t, i + k + 1) - _gather(t, i + 1)
            val = val - ember.where(d != 0, b / ember.where(d != 0, d, 1.0), 0.0)
        out.append(k * val)
    return out


def _scatter(vals, l, k, n_splines, n_coef):
    """(N, F, n_splines) design tensor from the per-interval values (columns l-k..l, wrapped
    past ``n_splines`` for periodic splines)."""
    N, F = l.shape
    cols = ember.arange(n_splines, device=l.device)
    out = ember.zeros((N, F, n_splines), dtype=vals[0].dtype, device=l.device)
    for m, v in enumerate(vals):
        j = l - k + m
        if n_coef > n_splines:
            j = ember.where(j >= n_splines, j - n_splines, j)
        out = out + ember.where(cols[None, None, :] == j[:, :, None], v[:, :, None], 0.0)
    return out


class SplineTransformer(TransformerMixin, BaseEstimator):
    """Generate univariate B-spline bases for features."""

    _parameter_constraints = {
        "n_knots": [Interval(Integral, 2, None, closed="left")],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "knots": [StrOptions({"uniform", "quantile"}), "array-like"],
        "extrapolation": [StrOptions({"error", "constant", "linear", "continue", "periodic"})],
        "include_bias": ["boolean"],
        "order": [StrOptions({"C", "F"})],
        "handle_missing": [StrOptions({"error", "zeros"})],
        "sparse_output": ["boolean"],
    }

    def __init__(
        self,
        n_knots=5,
        degree=3,
        *,
        knots="uniform",
        extrapolation="constant",
        include_bias=True,
        order="C",
        handle_missing="error",
        sparse_output=False,
    ):
        self.n_knots = n_knots
        self.degree = degree
        self.knots = knots
        self.extrapolation = extrapolation
        self.include_bias = include_bias
        self.order = order
        self.handle_missing = handle_missing
        self.sparse_output = sparse_output

    def _check_X(self, X, reset):
        try:
            return check_array(
                X,
                estimator=self,
                ensure_min_samples=2 if reset else 1,
                ensure_all_finite="allow-nan" if self.handle_missing == "zeros" else True,
            )
        except ValueError as e:
            if "contains NaN" in str(e) and self.handle_missing == "error":
                raise ValueError(
                    "SplineTransformer: Input X contains NaN values and `SplineTransformer` "
                    "is configured to error in this case (handle_missing='error'). To avoid "
                    "this error, set handle_missing='zeros' to encode missing values as "
                    "splines with value 0 or ensure no missing values in X."
                ) from e
            raise

    def _base_knots(self, X, w):
        n_knots = self.n_knots
        dev = X.device
        if self.knots == "quantile":
            ranks = 100 * np.linspace(0, 1, n_knots)
            if w is None:
                return ember.stack([ember.nanpercentile(X, float(r), axis=0) for r in ranks])
            # Weighted inverted-CDF percentiles (scikit-learn's _weighted_percentile).
            order = ember.argsort(X, axis=0)
            Xs = ember.take_along_axis(X, order, axis=0)
            ws = ember.take(w, order.reshape(-1)).reshape(order.shape)
            ws = ember.where(ember.isnan(Xs), 0.0, ws)
            cdf = ember.cumsum(ws, axis=0)
            rows = []
            for r in ranks:
                target = (r / 100) * cdf[-1]
                target = ember.where(target == 0, 5e-324, target)
                idx = (cdf < target[None, :]).sum(axis=0)
                idx = ember.clip(idx, 0, X.shape[0] - 1)
                rows.append(ember.take_along_axis(Xs, idx[None, :], axis=0)[0])
            return ember.stack(rows)
        Xm = X if w is None else X[w > 0]
        lo = ember.nan_to_num(ember.nanmin(Xm, axis=0), nan=0.0)
        hi = ember.nan_to_num(ember.nanmax(Xm, axis=0), nan=0.0)
        steps = ember.asarray(np.linspace(0, 1, n_knots), device=dev).astype(X.dtype)
        knots = lo[None, :] + steps[:, None] * (hi - lo)[None, :]
        knots[-1] = hi  # linspace's end point is exact
        return knots

    def fit(self, X, y=None, sample_weight=None):
        """Compute the knot vectors; sets ``bsplines_`` (knots, degree) and
        ``n_features_out_``."""
        self._validate_params()
        Xa = self._check_X(X, True)
        check_n_features(self, Xa, reset=True)
        dev = Xa.device
        Xa = Xa.astype(ember.float64)
        n_features = Xa.shape[1]
        w = None
        if sample_weight is not None:
            w = check_sample_weight(sample_weight, Xa, estimator=self)
        if isinstance(self.knots, str):
            base = self._base_knots(Xa, w)
        else:
            base = to_device(_host(self.knots), dev).astype(ember.float64)
            if base.ndim != 2:
                raise ValueError(
                    f"SplineTransformer: knots must be a 2d array, got shape {tuple(base.shape)}"
                )
            if base.shape[0] < 2:
                raise ValueError("Number of knots, knots.shape[0], must be >= 2.")
            if base.shape[1] != n_features:
                raise ValueError("knots.shape[1] == n_features is violated.")
            if not bool((ember.diff(base, axis=0) > 0).all()):
                raise ValueError("knots must be sorted without duplicates.")
        n_knots = base.shape[0]
        k = int(self.degree)
        if self.extrapolation == "periodic" and n_knots <= k:
            raise ValueError(
                f"Periodic splines require degree < n_knots. Got n_knots={n_knots} and degree={k}."
            )
        if self.extrapolation == "periodic":
            n_splines = n_knots - 1
            period = base[-1] - base[0]
            t = ember.concatenate(
                [base[n_knots - k - 1 : -1] - period, base, base[1 : k + 1] + period]
            )
        else:
            n_splines = n_knots + k - 1
            dmin, dmax = base[1] - base[0], base[-1] - base[-2]
            # linspace(b0 - k dmin, b0 - dmin, k) and linspace(bN + dmax, bN + k dmax, k)
            pos = ember.asarray(np.arange(k, 0, -1, dtype=np.float64), device=dev)
            lo = base[0][None, :] - pos[:, None] * dmin[None, :]
            hi = base[-1][None, :] + ember.flip(pos, axis=0)[:, None] * dmax[None, :]
            t = ember.concatenate([lo, base, hi]) if k else base
        self._t = t  # (n_knots + 2 k, n_features) knot table
        self._n_splines = n_splines
        self._n_coef = t.shape[0] - k - 1
        self.bsplines_ = self._make_bsplines()
        self.n_features_out_ = n_features * n_splines - n_features * (1 - self.include_bias)
        return self

    def _make_bsplines(self):
        """scipy ``BSpline`` objects describing each feature's basis (host metadata, as
        scikit-learn exposes them); the transform does not use them."""
        try:
            from scipy.interpolate import BSpline
        except ImportError:  # pragma: no cover - scipy is optional
            return None
        th = ember.asnumpy(self._t)
        coef = np.eye(self._n_splines)
        if self.extrapolation == "periodic":
            coef = np.concatenate((coef, coef[: self.degree]))
        ext = self.extrapolation in ("periodic", "continue")
        return [
            BSpline.construct_fast(th[:, i].copy(), coef, self.degree, extrapolate=ext)
            for i in range(th.shape[1])
        ]

    def _eval(self, x, t, extrapolate):
        """Design tensor (N, F, S) of the basis at x; NaN where x is outside the base interval
        and ``extrapolate`` is False."""
        k = int(self.degree)
        n = self._n_coef
        lo, hi = t[k], t[n]
        l = (t[None, :, :] <= x[:, None, :]).sum(axis=1) - 1
        l = ember.clip(l, k, n - 1).astype(ember.int64)
        out = _scatter(_basis(t, k, x, l), l, k, self._n_splines, n)
        if not extrapolate:
            outside = (x < lo[None, :]) | (x > hi[None, :])
            out = ember.where(outside[:, :, None], float("nan"), out)
        return out

    def _eval_at(self, v, t, deriv):
        """(F, S) basis values (or first derivatives) at one point per feature."""
        k = int(self.degree)
        n = self._n_coef
        x = v[None, :]
        l = (t[None, :, :] <= x[:, None, :]).sum(axis=1) - 1
        l = ember.clip(l, k, n - 1).astype(ember.int64)
        vals = (_derivative if deriv else _basis)(t, k, x, l)
        return _scatter(vals, l, k, self._n_splines, n)[0]

    def transform(self, X):
        """The B-spline design matrix (n_samples, n_features_out_)."""
        check_is_fitted(self, "_t")
        Xa = self._check_X(X, False)
        check_n_features(self, Xa, reset=False)
        dtype = Xa.dtype
        t = to_device(self._t, Xa.device)
        x = Xa.astype(ember.float64)
        k = int(self.degree)
        n = self._n_coef
        S = self._n_splines
        lo, hi = t[k], t[n]
        nan = ember.isnan(x)
        ext = self.extrapolation
        if ext == "periodic":
            per = hi - lo
            xp = ember.where(
                per[None, :] > 0,
                lo[None, :]
                + ember.remainder(x - lo[None, :], ember.where(per > 0, per, 1.0)[None, :]),
                0.0,
            )
            out = self._eval(xp, t, True)
        elif ext in ("continue", "error"):
            out = self._eval(x, t, ext == "continue")
            if ext == "error":
                bad = ember.isnan(out).any(axis=2) & ~nan
                if bool(bad.any()):
                    raise ValueError(
                        "SplineTransformer: `X` contains values beyond the limits of the knots."
                    )
        else:
            F = x.shape[1]
            if ext == "linear":
                # scikit-learn raises its running ``degree`` to 2 when it is <= 1 while
                # extrapolating a feature, and the raised value carries over to the next
                # features (their interval ends t[degree], t[-degree - 1] included).
                starts, loops, d = [], [], k
                for _ in range(F):
                    starts.append(d)
                    d = d + 1 if d <= 1 else d
                    loops.append(d)
                ds = ember.asarray(np.asarray(starts), device=x.device)
                lo = ember.take_along_axis(t, ds[None, :], axis=0)[0]
                hi = ember.take_along_axis(t, (t.shape[0] - 1 - ds)[None, :], axis=0)[0]
            inside = (x >= lo[None, :]) & (x <= hi[None, :])
            out = self._eval(ember.where(inside, x, lo[None, :]), t, True)
            out = ember.where(inside[:, :, None], out, 0.0)
            f_min, f_max = self._eval_at(lo, t, False), self._eval_at(hi, t, False)
            below = (x < lo[None, :])[:, :, None]
            above = (x > hi[None, :])[:, :, None]
            cols = ember.arange(S, device=x.device)[None, None, :]
            if ext == "constant":
                out = ember.where(below & (cols < k), f_min[None], out)
                out = ember.where(above & (cols >= S - k), f_max[None], out)
            else:
                fp_min, fp_max = self._eval_at(lo, t, True), self._eval_at(hi, t, True)
                dcol = ember.asarray(np.asarray(loops), device=x.device)[None, :, None]
                lin_lo = f_min[None] + (x - lo[None, :])[:, :, None] * fp_min[None]
                lin_hi = f_max[None] + (x - hi[None, :])[:, :, None] * fp_max[None]
                # Column by column in scikit-learn's order (with a reversed interval, as its
                # raised degree can give, a value is both below and above: the last write wins).
                for j in range(max(loops)):
                    on = dcol > j
                    out = ember.where(below & on & (cols == j), lin_lo, out)
                    out = ember.where(above & on & (cols == S - 1 - j), lin_hi, out)
        out = ember.where(nan[:, :, None], 0.0, out)
        if not self.include_bias:
            out = out[:, :, : S - 1]
        out = out.reshape(out.shape[0], -1).astype(dtype)
        return to_output(out, input_kind(X))

    def get_feature_names_out(self, input_features=None):
        """Output names '<feature>_sp_<j>'."""
        check_is_fitted(self, "n_features_in_")
        n = self.n_features_in_
        if input_features is None:
            names = getattr(self, "feature_names_in_", None)
            input_features = names if names is not None else [f"x{i}" for i in range(n)]
        if len(input_features) != n:
            raise ValueError(
                f"input_features should have length equal to number of features ({n}), got "
                f"{len(input_features)}"
            )
        per = self._n_splines - 1 + self.include_bias
        return np.asarray([f"{f}_sp_{j}" for f in input_features for j in range(per)], dtype=object)
