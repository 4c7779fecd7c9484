"""ember.keras.losses: Keras's losses as functions (one value per sample) and classes (reduced,
with ``sample_weight``), with Keras's clipping of probabilities (epsilon 1e-7) and
``from_logits``; composed of ember ops, so they run and differentiate on every device."""

from __future__ import annotations

import math

import ember as _e

from ..nn import functional as F
from .activations import softmax_logits

__all__ = [
    "BinaryCrossentropy",
    "BinaryFocalCrossentropy",
    "CategoricalFocalCrossentropy",
    "binary_focal_crossentropy",
    "categorical_focal_crossentropy",
    "CategoricalCrossentropy",
    "CategoricalHinge",
    "CosineSimilarity",
    "Hinge",
    "Huber",
    "KLDivergence",
    "LogCosh",
    "Loss",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanSquaredError",
    "MeanSquaredLogarithmicError",
    "Poisson",
    "SparseCategoricalCrossentropy",
    "SquaredHinge",
    "binary_crossentropy",
    "categorical_crossentropy",
    "get",
    "huber",
    "kl_divergence",
    "mean_absolute_error",
    "mean_squared_error",
    "sparse_categorical_crossentropy",
]

EPSILON = 1e-7
_NO_CLASS = -(2**62)  # an ignore_index no label has


def _shape(x):
    return tuple(x.shape)


def _as_float(x, like):
    if not isinstance(x, _e.ndarray):
        from ._layer import to_array

        x = to_array(x, device=like.device)
    if x.dtype != like.dtype:
        x = x.astype(like.dtype)
    return x


def _same_shape(y_true, y_pred, who):
    """Keras's broadcasting of labels: ``(n,)`` against ``(n, 1)`` squeezes/expands."""
    st, sp = _shape(y_true), _shape(y_pred)
    if st == sp:
        return y_true
    if len(st) == len(sp) - 1 and sp[-1] == 1 and st == sp[:-1]:
        return _e.expand_dims(y_true, axis=-1)
    if len(st) == len(sp) + 1 and st[-1] == 1 and st[:-1] == sp:
        return _e.squeeze(y_true, axis=-1)
    raise ValueError(
        f"{who}: Arguments `target` and `output` must have the same shape. Received: "
        f"target.shape={st}, output.shape={sp}"
    )


def _prepare(y_true, y_pred, who):
    y_pred = _as_float(y_pred, y_pred) if isinstance(y_pred, _e.ndarray) else y_pred
    if not isinstance(y_pred, _e.ndarray):
        from ._layer import to_array

        y_pred = to_array(y_pred)
    y_true = _as_float(y_true, y_pred)
    return _same_shape(y_true, y_pred, who), y_pred


def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _prepare(y_true, y_pred, "mean_squared_error")
    d = y_pred - y_true
    return _e.mean(d * d, axis=-1)


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _prepare(y_true, y_pred, "mean_absolute_error")
    return _e.mean(_e.abs(y_pred - y_true), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _prepare(y_true, y_pred, "mean_absolute_percentage_error")
    diff = _e.abs((y_true - y_pred) / _e.maximum(_e.abs(y_true), EPSILON))
    return 100.0 * _e.mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _prepare(y_true, y_pred, "mean_squared_logarithmic_error")
    a = _e.log(_e.maximum(y_pred, EPSILON) + 1.0)
    b = _e.log(_e.maximum(y_true, EPSILON) + 1.0)
    return _e.mean((a - b) * (a - b), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    y_true, y_pred = _prepare(y_true, y_pred, "huber")
    err = _e.abs(y_pred - y_true)
    quad = 0.5 * err * err
    lin = delta * err - 0.5 * delta * delta
    return _e.mean(_e.where(err <= delta, quad, lin), axis=-1)


def log_cosh(y_true, y_pred):
    y_true, y_pred = _prepare(y_true, y_pred, "log_cosh")
    x = y_pred - y_true
    return _e.mean(x + F.softplus(-2.0 * x) - math.log(2.0), axis=-1)


def poisson(y_true, y_pred):
    y_true, y_pred = _prepare(y_true, y_pred, "poisson")
    return _e.mean(y_pred - y_true * _e.log(y_pred + EPSILON), axis=-1)


def hinge(y_true, y_pred):
    y_true, y_pred = _prepare(y_true, y_pred, "hinge")
    y_true = _convert_binary_labels(y_true)
    return _e.mean(_e.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _prepare(y_true, y_pred, "squared_hinge")
    y_true = _convert_binary_labels(y_true)
    h = _e.maximum(1.0 - y_true * y_pred, 0.0)
    return _e.mean(h * h, axis=-1)


def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _prepare(y_true, y_pred, "categorical_hinge")
    pos = _e.sum(y_true * y_pred, axis=-1)
    neg = _e.max((1.0 - y_true) * y_pred, axis=-1)
    return _e.maximum(neg - pos + 1.0, 0.0)


def _convert_binary_labels(y):
    # Keras maps {0, 1} labels to {-1, 1}; labels already in {-1, 1} stay
    return _e.where(y == 0.0, -1.0, y).astype(y.dtype)


def _l2_normalize(x, axis=-1):
    return x / _e.sqrt(_e.maximum(_e.sum(x * x, axis=axis, keepdims=True), 1e-12))


def cosine_similarity(y_true, y_pred, axis=-1):
    y_true, y_pred = _prepare(y_true, y_pred, "cosine_similarity")
    return -_e.sum(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis), axis=axis)


def kl_divergence(y_true, y_pred):
    y_true, y_pred = _prepare(y_true, y_pred, "kl_divergence")
    t = _e.clip(y_true, EPSILON, 1.0)
    p = _e.clip(y_pred, EPSILON, 1.0)
    return _e.sum(t * _e.log(t / p), axis=-1)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _prepare(y_true, y_pred, "binary_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        # max(x, 0) - x*z + log(1 + exp(-|x|)), the stable form
        bce = F.relu(y_pred) - y_pred * y_true + F.softplus(-_e.abs(y_pred))
    else:
        p = _e.clip(y_pred, EPSILON, 1.0 - EPSILON)
        bce = -(y_true * _e.log(p) + (1.0 - y_true) * _e.log(1.0 - p))
    return _e.mean(bce, axis=axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _prepare(y_true, y_pred, "categorical_crossentropy")
    if label_smoothing:
        n = y_pred.shape[axis]
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / n
    logits = None if from_logits else softmax_logits(y_pred)
    if logits is not None:  # the softmax's own logits (see sparse_categorical_crossentropy)
        y_pred, from_logits = logits, True
    return -_e.sum(y_true * _log_probs(y_pred, from_logits, axis), axis=axis)


def _focal_args(who, gamma, label_smoothing):
    if not gamma >= 0:
        raise ValueError(f"{who}: `gamma` must be >= 0. Received: gamma={gamma!r}")
    if not 0 <= label_smoothing <= 1:
        raise ValueError(
            f"{who}: `label_smoothing` must be in [0, 1]. Received: "
            f"label_smoothing={label_smoothing!r}"
        )


def binary_focal_crossentropy(
    y_true,
    y_pred,
    apply_class_balancing=False,
    alpha=0.25,
    gamma=2.0,
    from_logits=False,
    label_smoothing=0.0,
    axis=-1,
):
    """Keras's binary focal loss: ``mean((1 - p_t)^gamma * bce)`` with ``p_t`` the probability
    of the true class, times ``alpha`` / ``1 - alpha`` for positives / negatives when
    ``apply_class_balancing``."""
    _focal_args("binary_focal_crossentropy", gamma, label_smoothing)
    y_true, y_pred = _prepare(y_true, y_pred, "binary_focal_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        bce = F.relu(y_pred) - y_pred * y_true + F.softplus(-_e.abs(y_pred))
        y_pred = F.sigmoid(y_pred)
    else:
        p = _e.clip(y_pred, EPSILON, 1.0 - EPSILON)
        bce = -(y_true * _e.log(p) + (1.0 - y_true) * _e.log(1.0 - p))
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = _e.power(_e.maximum(1.0 - p_t, 0.0), gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return _e.mean(focal, axis=axis)


def categorical_focal_crossentropy(
    y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1
):
    """Keras's categorical focal loss: ``sum(-alpha * (1 - p)^gamma * y * log p)`` over the
    classes, p the (renormalized, clipped) predicted probabilities."""
    _focal_args("categorical_focal_crossentropy", gamma, label_smoothing)
    y_true, y_pred = _prepare(y_true, y_pred, "categorical_focal_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_pred.shape[axis]
    if from_logits:
        y_pred = F.softmax(y_pred, dim=axis)
    p = y_pred / _e.sum(y_pred, axis=axis, keepdims=True)
    p = _e.clip(p, EPSILON, 1.0 - EPSILON)
    cce = -y_true * _e.log(p)
    return _e.sum(alpha * _e.power(1.0 - p, gamma) * cce, axis=axis)


_CLASS_IDS = {}


def class_ids(n, device):
    """``arange(n)`` on `device`, made once (compared with labels to select classes)."""
    key = (n, str(device))
    ids = _CLASS_IDS.get(key)
    if ids is None:
        ids = _CLASS_IDS[key] = _e.arange(n, device=device)
    return ids


def _log_probs(y_pred, from_logits, axis):
    if from_logits:
        return F.log_softmax(y_pred, dim=axis)
    p = y_pred / _e.sum(y_pred, axis=axis, keepdims=True)
    return _e.log(_e.clip(p, EPSILON, 1.0 - EPSILON))


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    who = "sparse_categorical_crossentropy"
    if not isinstance(y_pred, _e.ndarray):
        from ._layer import to_array

        y_pred = to_array(y_pred)
    if not isinstance(y_true, _e.ndarray):
        from ._layer import to_array

        y_true = to_array(y_true, device=y_pred.device)
    st, sp = _shape(y_true), _shape(y_pred)
    if len(st) == len(sp) and st and st[-1] == 1:
        y_true = _e.squeeze(y_true, axis=-1)
        st = st[:-1]
    if len(sp) < 1 or st != sp[:-1]:
        raise ValueError(
            f"{who}: Arguments `target` and `output` must have the same shape up until the last "
            f"dimension: target.shape={_shape(y_true)}, output.shape={sp}"
        )
    if "int" not in str(y_true.dtype):
        y_true = y_true.astype(_e.int64)
    logits = None if from_logits else softmax_logits(y_pred)
    if from_logits and y_pred.ndim == 2 and (axis in (-1, 1)):
        logits = y_pred
    if logits is not None and logits.ndim == 2 and ignore_class is None:
        # ember's fused log-softmax + pick per row (a bad label raises on the CPU and gives NaN
        # on a GPU, as TensorFlow does); no label reaches the host
        return F.cross_entropy(logits, y_true, ignore_index=_NO_CLASS, reduction="none")
    logp = _log_probs(y_pred, from_logits, axis)
    if ignore_class is not None:
        keep = y_true != ignore_class
        y_true = _e.where(keep, y_true, 0)
    # one-hot selection (Keras's own formulation): no data-dependent indexing, so no bounds
    # check reads the labels back; a label outside [0, classes) gives NaN, as TF does on GPUs
    hot = _e.expand_dims(y_true, axis=-1) == class_ids(y_pred.shape[-1], y_pred.device)
    loss = _e.where(_e.any(hot, axis=-1), -_e.sum(_e.where(hot, logp, 0.0), axis=-1), math.nan)
    if ignore_class is not None:
        loss = loss * keep.astype(loss.dtype)
    return loss


# ---- classes ------------------------------------------------------------------------------------

_REDUCTIONS = ("sum_over_batch_size", "sum", "none", "mean", "mean_with_sample_weight", None)


class Loss:
    """Base class: ``loss(y_true, y_pred, sample_weight=None)`` -> a reduced value.

    ``reduction="sum_over_batch_size"`` (Keras's default) divides the weighted sum by the number
    of values; ``"sum"`` sums; ``"none"`` returns the per-sample values.
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in _REDUCTIONS:
            raise ValueError(
                f"Invalid value for argument `reduction`. Expected one of {_REDUCTIONS[:-1]}. "
                f"Received: reduction={reduction!r}"
            )
        self.name = name or _snake(type(self).__name__)
        self.reduction = reduction
        self.dtype = dtype

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__} must implement call")

    def __call__(self, y_true, y_pred, sample_weight=None):
        if isinstance(y_pred, _e.ndarray) and y_pred.dtype in (_e.float16, _e.bfloat16):
            y_pred = y_pred.astype(_e.float32)  # losses in float32 (mixed precision), as Keras
        if sample_weight is None and self.reduction == "sum_over_batch_size":
            fused = self._fused_mean(y_true, y_pred)
            if fused is not None:
                return fused
        values = self.call(y_true, y_pred)
        return reduce_values(values, sample_weight, self.reduction)

    def _fused_mean(self, y_true, y_pred):
        """The unweighted mean in one fused kernel where there is one (else None)."""
        return None

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _snake(name):
    from ._layer import to_snake_case

    return to_snake_case(name)


def reduce_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    if sample_weight is not None:
        if not isinstance(sample_weight, _e.ndarray):
            from ._layer import to_array

            sample_weight = to_array(sample_weight, device=values.device)
        sw = sample_weight.astype(values.dtype)
        while sw.ndim > values.ndim and sw.shape[-1] == 1:
            sw = _e.squeeze(sw, axis=-1)
        while sw.ndim < values.ndim:
            sw = _e.expand_dims(sw, axis=-1)
        values = values * sw
    if reduction in ("none", None):
        return values
    if reduction in ("sum_over_batch_size", "mean") or (
        reduction == "mean_with_sample_weight" and sample_weight is None
    ):
        return _e.mean(values) if values.size else _e.sum(values)
    total = _e.sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        return total / _e.maximum(_e.sum(_e.broadcast_to(sw, values.shape)), EPSILON)
    return total / max(1, math.prod(values.shape))


class LossFunctionWrapper(Loss):
    def __init__(self, fn, reduction="sum_over_batch_size", name=None, **kwargs):
        super().__init__(name=name or fn.__name__, reduction=reduction)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


def _wrapper_class(fn, default_name, params=()):
    def __init__(self, *args, reduction="sum_over_batch_size", name=default_name, **kwargs):
        names = list(params)
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes at most {len(names)} positional args")
        kw = dict(params)
        kw.update(dict(zip(names, args, strict=False)))
        for k, v in kwargs.items():
            if k not in kw:
                raise TypeError(f"{type(self).__name__}: unexpected keyword argument {k!r}")
            kw[k] = v
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, **kw)

    return __init__


def _make(cls_name, fn, default_name, params=()):
    params = dict(params)
    cls = type(
        cls_name, (LossFunctionWrapper,), {"__init__": _wrapper_class(fn, default_name, params)}
    )
    cls.__doc__ = f"Keras's {cls_name}: the mean over the batch of ``{fn.__name__}``."
    cls.__module__ = __name__
    return cls


MeanSquaredError = _make("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _make("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _make(
    "MeanAbsolutePercentageError", mean_absolute_percentage_error, "mean_absolute_percentage_error"
)
MeanSquaredLogarithmicError = _make(
    "MeanSquaredLogarithmicError", mean_squared_logarithmic_error, "mean_squared_logarithmic_error"
)
Huber = _make("Huber", huber, "huber_loss", {"delta": 1.0})
LogCosh = _make("LogCosh", log_cosh, "log_cosh")
Poisson = _make("Poisson", poisson, "poisson")
Hinge = _make("Hinge", hinge, "hinge")
SquaredHinge = _make("SquaredHinge", squared_hinge, "squared_hinge")
CategoricalHinge = _make("CategoricalHinge", categorical_hinge, "categorical_hinge")
CosineSimilarity = _make("CosineSimilarity", cosine_similarity, "cosine_similarity", {"axis": -1})
KLDivergence = _make("KLDivergence", kl_divergence, "kl_divergence")
BinaryCrossentropy = _make(
    "BinaryCrossentropy",
    binary_crossentropy,
    "binary_crossentropy",
    {"from_logits": False, "label_smoothing": 0.0, "axis": -1},
)
CategoricalCrossentropy = _make(
    "CategoricalCrossentropy",
    categorical_crossentropy,
    "categorical_crossentropy",
    {"from_logits": False, "label_smoothing": 0.0, "axis": -1},
)
SparseCategoricalCrossentropy = _make(
    "SparseCategoricalCrossentropy",
    sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy",
    {"from_logits": False, "ignore_class": None, "axis": -1},
)
BinaryFocalCrossentropy = _make(
    "BinaryFocalCrossentropy",
    binary_focal_crossentropy,
    "binary_focal_crossentropy",
    {
        "apply_class_balancing": False,
        "alpha": 0.25,
        "gamma": 2.0,
        "from_logits": False,
        "label_smoothing": 0.0,
        "axis": -1,
    },
)
CategoricalFocalCrossentropy = _make(
    "CategoricalFocalCrossentropy",
    categorical_focal_crossentropy,
    "categorical_focal_crossentropy",
    {"alpha": 0.25, "gamma": 2.0, "from_logits": False, "label_smoothing": 0.0, "axis": -1},
)


def _checked_focal_init(cls):
    init = cls.__init__

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        kw = self._fn_kwargs
        _focal_args(type(self).__name__, kw["gamma"], kw["label_smoothing"])

    cls.__init__ = __init__


_checked_focal_init(BinaryFocalCrossentropy)
_checked_focal_init(CategoricalFocalCrossentropy)


def _scce_fused_mean(self, y_true, y_pred):
    kw = self._fn_kwargs
    if kw["ignore_class"] is not None or kw["axis"] not in (-1, 1):
        return None
    if not isinstance(y_pred, _e.ndarray) or not isinstance(y_true, _e.ndarray):
        return None
    logits = y_pred if kw["from_logits"] else softmax_logits(y_pred, peek=True)
    if logits is None or logits.ndim != 2 or "int" not in str(y_true.dtype):
        return None
    if y_true.ndim == 2 and y_true.shape[1] == 1:
        y_true = _e.squeeze(y_true, axis=-1)
    if tuple(y_true.shape) != tuple(logits.shape[:1]):
        return None  # the general path reports the shapes
    if not kw["from_logits"]:
        softmax_logits(y_pred)  # consumed
    return F.cross_entropy(logits, y_true, ignore_index=_NO_CLASS, reduction="mean")


SparseCategoricalCrossentropy._fused_mean = _scce_fused_mean

mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence

_BY_NAME = {
    "mean_squared_error": MeanSquaredError,
    "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError,
    "mape": MeanAbsolutePercentageError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
    "msle": MeanSquaredLogarithmicError,
    "huber": Huber,
    "huber_loss": Huber,
    "log_cosh": LogCosh,
    "logcosh": LogCosh,
    "poisson": Poisson,
    "hinge": Hinge,
    "squared_hinge": SquaredHinge,
    "categorical_hinge": CategoricalHinge,
    "cosine_similarity": CosineSimilarity,
    "kl_divergence": KLDivergence,
    "kld": KLDivergence,
    "kullback_leibler_divergence": KLDivergence,
    "binary_crossentropy": BinaryCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "binary_focal_crossentropy": BinaryFocalCrossentropy,
    "categorical_focal_crossentropy": CategoricalFocalCrossentropy,
}
_BY_CLASS = {c.__name__: c for c in set(_BY_NAME.values())}
_FUNCTIONS = {
    mean_squared_error: MeanSquaredError,
    mean_absolute_error: MeanAbsoluteError,
    mean_absolute_percentage_error: MeanAbsolutePercentageError,
    mean_squared_logarithmic_error: MeanSquaredLogarithmicError,
    huber: Huber,
    log_cosh: LogCosh,
    poisson: Poisson,
    hinge: Hinge,
    squared_hinge: SquaredHinge,
    categorical_hinge: CategoricalHinge,
    cosine_similarity: CosineSimilarity,
    kl_divergence: KLDivergence,
    binary_crossentropy: BinaryCrossentropy,
    categorical_crossentropy: CategoricalCrossentropy,
    sparse_categorical_crossentropy: SparseCategoricalCrossentropy,
    binary_focal_crossentropy: BinaryFocalCrossentropy,
    categorical_focal_crossentropy: CategoricalFocalCrossentropy,
}


def get(identifier):
    """A loss object from a name (``"sparse_categorical_crossentropy"``), a ``Loss``, a config
    dict or a callable ``(y_true, y_pred) -> per-sample values``."""
    if identifier is None:
        return None
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier) or _BY_CLASS.get(identifier)
        if cls is None:
            raise ValueError(
                f"Could not interpret loss identifier: {identifier!r}; known losses: "
                f"{', '.join(sorted(_BY_NAME))}"
            )
        return cls()
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if identifier in _FUNCTIONS:
        return _FUNCTIONS[identifier]()
    if callable(identifier):
        return LossFunctionWrapper(identifier)
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}")


def serialize(loss):
    return {"class_name": type(loss).__name__, "config": loss.get_config()}


def deserialize(config, custom_objects=None):
    if isinstance(config, str):
        return get(config)
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _BY_CLASS.get(name)
    if cls is None:
        from ._layer import registered

        cls = registered(name, custom_objects, "losses.deserialize")
    return cls.from_config(config.get("config", {}))
