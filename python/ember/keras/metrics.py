"""ember.keras.metrics: Keras's stateful metrics. Their state (totals, counts, confusion counts)
is ember arrays on the data's device, updated with array ops: nothing is read back to the host
until ``result()`` is converted (``float(m.result())``), which the progress bar does only when it
redraws."""

from __future__ import annotations

import ember as _e

from . import losses as _losses

__all__ = [
    "AUC",
    "Accuracy",
    "BinaryAccuracy",
    "BinaryCrossentropy",
    "CategoricalAccuracy",
    "CategoricalCrossentropy",
    "FalseNegatives",
    "FalsePositives",
    "KLDivergence",
    "Mean",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanMetricWrapper",
    "MeanSquaredError",
    "Metric",
    "Precision",
    "Recall",
    "RootMeanSquaredError",
    "SparseCategoricalAccuracy",
    "SparseCategoricalCrossentropy",
    "SparseTopKCategoricalAccuracy",
    "Sum",
    "TopKCategoricalAccuracy",
    "TrueNegatives",
    "TruePositives",
    "get",
]


def _arr(x, like=None, dtype=None):
    if isinstance(x, _e.ndarray):
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)
    from ._layer import to_array

    return to_array(x, dtype=dtype, device=None if like is None else like.device)


def _detached(x):
    return x.detach() if isinstance(x, _e.ndarray) and x.requires_grad else x


class Metric:
    """Base class: ``update_state(y_true, y_pred, sample_weight=None)``, ``result()``,
    ``reset_state()``; state arrays live on the device of the first update."""

    def __init__(self, name=None, dtype=None):
        from ._layer import to_snake_case

        self.name = name or to_snake_case(type(self).__name__)
        self.dtype = dtype or "float32"
        self._state = None

    def _zeros(self, like, shape=()):
        return _e.zeros(shape, dtype=_e.float32, device=like.device)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must implement update_state")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__} must implement result")

    def reset_state(self):
        self._state = None

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    @property
    def variables(self):
        return [] if self._state is None else list(self._state)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


class Mean(Metric):
    """The (weighted) mean of the values given to ``update_state(values, sample_weight)``."""

    def update_state(self, values, sample_weight=None):
        values = _detached(_arr(values))
        if values.dtype != _e.float32:
            values = values.astype(_e.float32)
        if self._state is None:
            # the count stays a host number while the weights are host numbers (no device op)
            self._state = [self._zeros(values), 0.0]
        total, count = self._state
        s = values if values.ndim == 0 else _e.sum(values)
        if sample_weight is None:
            total = total + s
            count = count + float(values.size)
        elif isinstance(sample_weight, (int, float)):
            w = float(sample_weight)
            total = total + (s * w if w != 1.0 else s)
            count = count + float(values.size) * w
        else:
            sw = _detached(_arr(sample_weight, values, _e.float32))
            while sw.ndim > values.ndim and sw.shape[-1] == 1:
                sw = _e.squeeze(sw, axis=-1)
            while sw.ndim < values.ndim:
                sw = _e.expand_dims(sw, axis=-1)
            sw = _e.broadcast_to(sw, values.shape)
            total = total + _e.sum(values * sw)
            count = count + _e.sum(sw)
        self._state = [total, count]

    def result(self):
        if self._state is None:
            return _e.zeros((), dtype=_e.float32)
        total, count = self._state
        if not isinstance(count, _e.ndarray):
            return total / count if count > 0 else _e.zeros_like(total)
        return _e.where(count > 0, total / _e.maximum(count, 1e-30), 0.0).astype(_e.float32)


class Sum(Metric):
    def update_state(self, values, sample_weight=None):
        values = _detached(_arr(values)).astype(_e.float32)
        if sample_weight is not None:
            values = values * _arr(sample_weight, values, _e.float32)
        if self._state is None:
            self._state = [self._zeros(values)]
        self._state = [self._state[0] + _e.sum(values)]

    def result(self):
        return _e.zeros((), dtype=_e.float32) if self._state is None else self._state[0]


class MeanMetricWrapper(Mean):
    """The mean of a per-sample function ``fn(y_true, y_pred, **kwargs)``."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", "metric"), dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = _detached(_arr(y_pred))
        y_true = _detached(_arr(y_true, y_pred))
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


# ---- accuracy functions (one value per sample) --------------------------------------------------


def _squeeze_labels(y_true, y_pred):
    if y_true.ndim == y_pred.ndim and y_true.ndim > 0 and y_true.shape[-1] == 1:
        return _e.squeeze(y_true, axis=-1)
    return y_true


def accuracy(y_true, y_pred):
    y_pred = _arr(y_pred)
    y_true = _arr(y_true, y_pred)
    if y_true.ndim == y_pred.ndim - 1:
        y_pred = _e.squeeze(y_pred, axis=-1) if y_pred.shape[-1] == 1 else y_pred
    return (y_true == y_pred.astype(y_true.dtype)).astype(_e.float32)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_pred = _arr(y_pred)
    y_true = _losses._same_shape(_arr(y_true, y_pred), y_pred, "binary_accuracy")
    hit = (y_pred > threshold).astype(_e.float32) == y_true.astype(_e.float32)
    return _e.mean(hit.astype(_e.float32), axis=-1)


def categorical_accuracy(y_true, y_pred):
    y_pred = _arr(y_pred)
    y_true = _arr(y_true, y_pred)
    return (_e.argmax(y_true, axis=-1) == _e.argmax(y_pred, axis=-1)).astype(_e.float32)


def sparse_categorical_accuracy(y_true, y_pred):
    y_pred = _arr(y_pred)
    y_true = _squeeze_labels(_arr(y_true, y_pred), y_pred)
    if tuple(y_true.shape) != tuple(y_pred.shape[:-1]):
        raise ValueError(
            "sparse_categorical_accuracy: the labels must have the predictions' shape without "
            f"its last axis: y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
        )
    pred = _e.argmax(y_pred, axis=-1)
    if y_true.dtype != pred.dtype:
        y_true = y_true.astype(pred.dtype)
    return (pred == y_true).astype(_e.float32)


def _in_top_k(scores, target, k):
    """Whether each target class is among the k highest scores (fewer than k scores above it)."""
    hot = _e.expand_dims(target, axis=-1) == _losses.class_ids(scores.shape[-1], scores.device)
    picked = _e.sum(_e.where(hot, scores, 0.0), axis=-1, keepdims=True)
    above = _e.sum((scores > picked).astype(_e.int32), axis=-1)
    return (above < k).astype(_e.float32)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_pred = _arr(y_pred)
    return _in_top_k(y_pred, _e.argmax(_arr(y_true, y_pred), axis=-1), k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_pred = _arr(y_pred)
    y_true = _squeeze_labels(_arr(y_true, y_pred), y_pred).astype(_e.int64)
    return _in_top_k(y_pred, y_true, k)


def _wrapper(name, fn, default_name, params=()):
    params = dict(params)

    def __init__(self, name=default_name, dtype=None, **kwargs):
        kw = dict(params)
        for k, v in kwargs.items():
            if k not in kw:
                raise TypeError(f"{type(self).__name__}: unexpected keyword argument {k!r}")
            kw[k] = v
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **kw)

    cls = type(name, (MeanMetricWrapper,), {"__init__": __init__, "__module__": __name__})
    cls.__doc__ = f"Keras's {name}: the running mean of ``{fn.__name__}``."
    return cls


Accuracy = _wrapper("Accuracy", accuracy, "accuracy")
BinaryAccuracy = _wrapper("BinaryAccuracy", binary_accuracy, "binary_accuracy", {"threshold": 0.5})
CategoricalAccuracy = _wrapper("CategoricalAccuracy", categorical_accuracy, "categorical_accuracy")
SparseCategoricalAccuracy = _wrapper(
    "SparseCategoricalAccuracy", sparse_categorical_accuracy, "sparse_categorical_accuracy"
)
TopKCategoricalAccuracy = _wrapper(
    "TopKCategoricalAccuracy", top_k_categorical_accuracy, "top_k_categorical_accuracy", {"k": 5}
)
SparseTopKCategoricalAccuracy = _wrapper(
    "SparseTopKCategoricalAccuracy",
    sparse_top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy",
    {"k": 5},
)
MeanSquaredError = _wrapper("MeanSquaredError", _losses.mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapper(
    "MeanAbsoluteError", _losses.mean_absolute_error, "mean_absolute_error"
)
MeanAbsolutePercentageError = _wrapper(
    "MeanAbsolutePercentageError",
    _losses.mean_absolute_percentage_error,
    "mean_absolute_percentage_error",
)
KLDivergence = _wrapper("KLDivergence", _losses.kl_divergence, "kl_divergence")
BinaryCrossentropy = _wrapper(
    "BinaryCrossentropy",
    _losses.binary_crossentropy,
    "binary_crossentropy",
    {"from_logits": False, "label_smoothing": 0.0},
)
CategoricalCrossentropy = _wrapper(
    "CategoricalCrossentropy",
    _losses.categorical_crossentropy,
    "categorical_crossentropy",
    {"from_logits": False, "label_smoothing": 0.0},
)
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy",
    _losses.sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy",
    {"from_logits": False},
)


class RootMeanSquaredError(Mean):
    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = _detached(_arr(y_pred))
        y_true = _losses._same_shape(_arr(y_true, y_pred, y_pred.dtype), y_pred, self.name)
        d = y_pred - y_true
        super().update_state(d * d, sample_weight)

    def result(self):
        return _e.sqrt(super().result())


# ---- confusion-matrix metrics -------------------------------------------------------------------


class _Confusion(Metric):
    """Counts of true/false positives/negatives at one or more thresholds (``y_pred > t``)."""

    def __init__(self, thresholds=None, name=None, dtype=None, default=0.5):
        super().__init__(name=name, dtype=dtype)
        self._scalar = thresholds is None or isinstance(thresholds, (int, float))
        if thresholds is None:
            thresholds = [default]
        elif isinstance(thresholds, (int, float)):
            thresholds = [thresholds]
        thresholds = [float(t) for t in thresholds]
        if any(not 0.0 <= t <= 1.0 for t in thresholds):
            raise ValueError(
                f"{type(self).__name__}: threshold values must be in [0, 1]. Received: {thresholds}"
            )
        self.thresholds = thresholds

    def _counts(self, y_true, y_pred, sample_weight):
        y_pred = _detached(_arr(y_pred)).astype(_e.float32)
        y_true = _arr(y_true, y_pred).astype(_e.float32)
        y_true = _losses._same_shape(y_true, y_pred, self.name).reshape(-1)
        w = 1.0
        if sample_weight is not None:
            sw = _arr(sample_weight, y_pred, _e.float32)
            sw = sw.reshape(tuple(sw.shape) + (1,) * (y_pred.ndim - sw.ndim))
            w = _e.broadcast_to(sw, y_pred.shape).reshape(-1)[:, None]
        y_pred = y_pred.reshape(-1)
        th = self.__dict__.get("_th")
        if th is None or th.device != y_pred.device:
            th = _e.asarray(self.thresholds, dtype=_e.float32, device=y_pred.device)
            self.__dict__["_th"] = th  # copied to the device once, not per batch
        above = (y_pred[:, None] > th[None, :]).astype(_e.float32)  # (n, T)
        pos = y_true[:, None]
        tp = _e.sum(above * pos * w, axis=0)
        fp = _e.sum(above * (1.0 - pos) * w, axis=0)
        fn = _e.sum((1.0 - above) * pos * w, axis=0)
        tn = _e.sum((1.0 - above) * (1.0 - pos) * w, axis=0)
        return tp, fp, tn, fn

    def update_state(self, y_true, y_pred, sample_weight=None):
        counts = self._counts(y_true, y_pred, sample_weight)
        if self._state is None:
            self._state = list(counts)
        else:
            self._state = [a + b for a, b in zip(self._state, counts, strict=True)]

    def _zeros_state(self):
        z = _e.zeros((len(self.thresholds),), dtype=_e.float32)
        return [z, z, z, z]

    def _out(self, v):
        return v[0] if self._scalar else v

    def get_config(self):
        return {**super().get_config(), "thresholds": self.thresholds}


def _div_no_nan(a, b):
    return _e.where(b > 0, a / _e.where(b > 0, b, 1.0), 0.0)


class Precision(_Confusion):
    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, name=name, dtype=dtype)
        self.top_k, self.class_id = top_k, class_id

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _select(y_true, y_pred, self.top_k, self.class_id)
        super().update_state(y_true, y_pred, sample_weight)

    def result(self):
        tp, fp, _, _ = self._state or self._zeros_state()
        return self._out(_div_no_nan(tp, tp + fp))


class Recall(_Confusion):
    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, name=name, dtype=dtype)
        self.top_k, self.class_id = top_k, class_id

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _select(y_true, y_pred, self.top_k, self.class_id)
        super().update_state(y_true, y_pred, sample_weight)

    def result(self):
        tp, _, _, fn = self._state or self._zeros_state()
        return self._out(_div_no_nan(tp, tp + fn))


def _select(y_true, y_pred, top_k, class_id):
    """Keras's top_k (only the k highest predictions count as positive) and class_id."""
    y_pred = _detached(_arr(y_pred)).astype(_e.float32)
    y_true = _arr(y_true, y_pred).astype(_e.float32)
    if top_k is not None:
        kth = _e.sort(y_pred, axis=-1)[..., -top_k][..., None]
        y_pred = _e.where(y_pred >= kth, y_pred, -1e30)
    if class_id is not None:
        y_true, y_pred = y_true[..., class_id], y_pred[..., class_id]
    return y_true, y_pred


class TruePositives(_Confusion):
    def result(self):
        return self._out((self._state or self._zeros_state())[0])


class FalsePositives(_Confusion):
    def result(self):
        return self._out((self._state or self._zeros_state())[1])


class TrueNegatives(_Confusion):
    def result(self):
        return self._out((self._state or self._zeros_state())[2])


class FalseNegatives(_Confusion):
    def result(self):
        return self._out((self._state or self._zeros_state())[3])


class AUC(_Confusion):
    """Area under the ROC or PR curve from confusion counts at `num_thresholds` thresholds
    (Keras's: 0 - 1e-7, evenly spaced interior ones, 1 + 1e-7), summed by the trapezoid rule
    ('interpolation' for ROC; Davis & Goadrich's interpolation for PR)."""

    def __init__(
        self,
        num_thresholds=200,
        curve="ROC",
        summation_method="interpolation",
        name=None,
        dtype=None,
        thresholds=None,
        multi_label=False,
        num_labels=None,
        label_weights=None,
        from_logits=False,
    ):
        if num_thresholds <= 1:
            raise ValueError(
                f"Argument `num_thresholds` must be an integer > 1. Received: "
                f"num_thresholds={num_thresholds}"
            )
        curve = curve.upper()
        if curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are ROC or PR')
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f"AUC: invalid summation_method {summation_method!r}")
        if thresholds is None:
            step = 1.0 / (num_thresholds - 1)
            inner = [(i + 1) * step for i in range(num_thresholds - 2)]
            thresholds = [0.0 - 1e-7] + inner + [1.0 + 1e-7]
        else:
            thresholds = [0.0 - 1e-7] + sorted(float(t) for t in thresholds) + [1.0 + 1e-7]
        Metric.__init__(self, name=name or "auc", dtype=dtype)
        self._scalar = False
        self.thresholds = thresholds
        self.num_thresholds = len(thresholds)
        self.curve, self.summation_method = curve, summation_method
        self.from_logits = from_logits

    def update_state(self, y_true, y_pred, sample_weight=None):
        if self.from_logits:
            from ..nn import functional as F

            y_pred = F.sigmoid(_arr(y_pred))
        super().update_state(y_true, y_pred, sample_weight)

    def result(self):
        tp, fp, tn, fn = self._state or self._zeros_state()
        if self.curve == "PR" and self.summation_method == "interpolation":
            dtp = tp[:-1] - tp[1:]
            p = tp + fp
            dp = p[:-1] - p[1:]
            slope = _div_no_nan(dtp, _e.maximum(dp, 0.0))
            intercept = tp[1:] - slope * p[1:]
            both = (p[:-1] > 0) & (p[1:] > 0)
            ratio = _e.where(both, _div_no_nan(p[:-1], _e.maximum(p[1:], 0.0)), 1.0)
            inc = _div_no_nan(
                slope * (dtp + intercept * _e.log(ratio)), _e.maximum(tp[1:] + fn[1:], 0.0)
            )
            return _e.sum(inc)
        if self.curve == "ROC":
            x = _div_no_nan(fp, fp + tn)
            y = _div_no_nan(tp, tp + fn)
        else:
            x = _div_no_nan(tp, tp + fn)
            y = _div_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:-1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = _e.minimum(y[:-1], y[1:])
        else:
            heights = _e.maximum(y[:-1], y[1:])
        return _e.sum((x[:-1] - x[1:]) * heights)

    def get_config(self):
        return {
            "name": self.name,
            "num_thresholds": self.num_thresholds,
            "curve": self.curve,
            "summation_method": self.summation_method,
        }


# ---- lookup -------------------------------------------------------------------------------------

_BY_NAME = {
    "accuracy": Accuracy,
    "acc": Accuracy,
    "binary_accuracy": BinaryAccuracy,
    "categorical_accuracy": CategoricalAccuracy,
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
    "mean_squared_error": MeanSquaredError,
    "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError,
    "mape": MeanAbsolutePercentageError,
    "root_mean_squared_error": RootMeanSquaredError,
    "kl_divergence": KLDivergence,
    "binary_crossentropy": BinaryCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "auc": AUC,
    "precision": Precision,
    "recall": Recall,
}
_CLASSES = [
    AUC,
    Accuracy,
    BinaryAccuracy,
    BinaryCrossentropy,
    CategoricalAccuracy,
    CategoricalCrossentropy,
    FalseNegatives,
    FalsePositives,
    KLDivergence,
    Mean,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    Precision,
    Recall,
    RootMeanSquaredError,
    SparseCategoricalAccuracy,
    SparseCategoricalCrossentropy,
    SparseTopKCategoricalAccuracy,
    Sum,
    TopKCategoricalAccuracy,
    TrueNegatives,
    TruePositives,
]
_BY_CLASS = {c.__name__: c for c in _CLASSES}


def get(identifier):
    """A Metric from a name, a class name, a ``Metric`` or a function ``(y_true, y_pred)``."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier) or _BY_NAME.get(identifier.lower())
        cls = cls or _BY_CLASS.get(identifier)
        if cls is None:
            raise ValueError(
                f"Could not interpret metric identifier: {identifier!r}; known metrics: "
                f"{', '.join(sorted(_BY_NAME))}"
            )
        return cls()
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, dict):
        cls = _BY_CLASS.get(identifier["class_name"])
        if cls is None:
            from ._layer import registered

            cls = registered(identifier["class_name"], None, "metrics.get")
        return cls.from_config(identifier.get("config", {}))
    if callable(identifier):
        return MeanMetricWrapper(identifier, name=getattr(identifier, "__name__", "metric"))
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")
