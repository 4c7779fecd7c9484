"""Model.compile / fit / evaluate / predict / train_on_batch / test_on_batch: Keras's training
loop on ember's autograd and optimizers. A step is the model's forward pass, the compiled loss,
``backward`` and the optimizer's (fused) update; metric states are updated with device ops and
read back only when the progress bar draws a line and at the end of an epoch (all of them in
one device-to-host copy)."""

from __future__ import annotations

from collections.abc import MutableMapping

import numpy as _np

import ember as _e

from .._array import asnumpy
from ..nn._grad_mode import no_grad
from . import callbacks as _callbacks
from . import losses as _losses
from . import metrics as _metrics
from . import optimizers as _optimizers
from ._data import ClassWeights, check_batch_size, make_data, split_validation
from ._layer import _TrainingScope, flatten


def read_scalars(values):
    """Python floats of a dict of numbers / 0-d ember arrays, in ONE device->host copy."""
    keys = list(values)
    arrs = [values[k] for k in keys]
    dev = [i for i, v in enumerate(arrs) if isinstance(v, _e.ndarray)]
    out = [float(v) if not isinstance(v, _e.ndarray) else None for v in arrs]
    by_device = {}
    for i in dev:
        by_device.setdefault(str(arrs[i].device), []).append(i)
    for idx in by_device.values():  # one copy per device (all on one device in practice)
        stacked = _e.stack([arrs[i].astype(_e.float32).reshape(()) for i in idx])
        host = asnumpy(stacked)
        for j, i in enumerate(idx):
            out[i] = float(host[j])
    return dict(zip(keys, out, strict=True))


class LazyValue:
    """A metric value still on the device; reads itself back when used as a number."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __float__(self):
        return float(self.array)

    def __format__(self, spec):
        return format(float(self), spec)

    def __repr__(self):
        return repr(float(self))

    def numpy(self):
        return _np.float32(float(self))

    def __lt__(self, o):
        return float(self) < float(o)

    def __le__(self, o):
        return float(self) <= float(o)

    def __gt__(self, o):
        return float(self) > float(o)

    def __ge__(self, o):
        return float(self) >= float(o)

    def __eq__(self, o):
        return float(self) == float(o)

    def __hash__(self):
        return hash(float(self))

    def __add__(self, o):
        return float(self) + float(o)

    __radd__ = __add__

    def __mul__(self, o):
        return float(self) * float(o)

    __rmul__ = __mul__

    def __sub__(self, o):
        return float(self) - float(o)

    def __rsub__(self, o):
        return float(o) - float(self)

    def __truediv__(self, o):
        return float(self) / float(o)


def _result_at(metric, state):
    """The metric's result for a saved state (states are replaced, never mutated, by updates;
    a custom Metric without ember's ``_state`` reports its current result)."""
    if "_state" not in metric.__dict__:
        return metric.result()
    saved = metric._state
    metric._state = state
    try:
        return metric.result()
    finally:
        metric._state = saved


class LazyLogs(MutableMapping):
    """Batch logs: the metric states as they are at this batch (references, no copies); each
    value is computed on access (on the device) and wrapped as a LazyValue, so nothing is
    computed or copied unless a callback looks."""

    def __init__(self, model, prefix=""):
        self._snap = [(m, m.__dict__.get("_state")) for m in model.metrics]
        self._extra = {}

    def _names(self):
        return [m.name for m, _ in self._snap]

    def __getitem__(self, key):
        if key in self._extra:
            return self._extra[key]
        for m, state in self._snap:
            if m.name == key:
                return LazyValue(_result_at(m, state))
        raise KeyError(key)

    def __setitem__(self, key, value):
        self._extra[key] = value

    def __delitem__(self, key):
        del self._extra[key]

    def __iter__(self):
        names = self._names()
        yield from names
        yield from (k for k in self._extra if k not in names)

    def __len__(self):
        return len(list(iter(self)))

    def arrays(self):
        out = {m.name: _result_at(m, state) for m, state in self._snap}
        out.update(self._extra)
        return out


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """Keras's packing of one batch as ``train_step``/``test_step`` receive it: ``x`` (or
    ``(x,)`` when x is a tuple or list), ``(x, y)``, or ``(x, y, sample_weight)``."""
    if y is None and sample_weight is None:
        return (x,) if isinstance(x, (tuple, list)) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def unpack_x_y_sample_weight(data):
    """``(x, y, sample_weight)`` of a batch packed as Keras packs it (missing parts None)."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return (data, None, None)
    if len(data) == 1:
        return (data[0], None, None)
    if len(data) == 2:
        return (data[0], data[1], None)
    if len(data) == 3:
        return data
    raise ValueError(
        "Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
        f"found: {data!r}"
    )


class Trainer:
    """Mixed into Model: everything about compile/fit/evaluate/predict."""

    # ---- compile ----

    def compile(
        self,
        optimizer="rmsprop",
        loss=None,
        loss_weights=None,
        metrics=None,
        weighted_metrics=None,
        run_eagerly=False,
        steps_per_execution=1,
        jit_compile="auto",
        auto_scale_loss=True,
    ):
        """Configures training: optimizer, loss(es), loss_weights and metrics (names or
        objects). ``run_eagerly`` and ``jit_compile`` are accepted; ember always runs eagerly."""
        self.optimizer = _optimizers.get(optimizer)
        if self.dtype_policy.name == "mixed_float16" and not hasattr(self.optimizer, "scale_loss"):
            from .mixed_precision import LossScaleOptimizer  # Keras 3's rule

            self.optimizer = LossScaleOptimizer(self.optimizer)
        self._loss_spec = loss
        self._loss_weights = loss_weights
        self._metric_spec = metrics
        self._weighted_metric_spec = weighted_metrics
        self.run_eagerly = run_eagerly
        self.jit_compile = jit_compile
        self.compiled = True
        self._loss_tracker = _metrics.Mean(name="loss")
        self._compiled = None  # resolved on the first batch, when output shapes are known
        self._compile_config = {
            "optimizer": _optimizers.serialize(self.optimizer),
            "loss": _ser_loss(loss),
            "loss_weights": loss_weights,
            "metrics": _ser_metrics(metrics),
        }

    def _assert_compiled(self, who):
        if not getattr(self, "compiled", False):
            raise ValueError(
                f"You must call `compile()` before using the model ({who}). Call "
                "`model.compile(optimizer, loss)`."
            )

    @property
    def metrics(self):
        out = []
        if getattr(self, "_loss_tracker", None) is not None:
            out.append(self._loss_tracker)
        if getattr(self, "_compiled", None) is not None:
            out.extend(self._compiled["loss_trackers"])
            out.extend(m for m, _, _ in self._compiled["metrics"])
        return out

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    def _output_names(self, y_pred):
        names = getattr(self, "output_names", None)
        n = len(flatten(y_pred))
        if names and len(names) == n:
            return list(names)
        return [f"output_{i}" for i in range(n)] if n > 1 else ["output_0"]

    def _resolve(self, y, y_pred):
        """Losses and metrics per output, from the compile arguments (Keras's rules)."""
        outs = flatten(y_pred)
        names = self._output_names(y_pred)
        spec = self._loss_spec
        if spec is None:
            per_out = [None] * len(outs)
        elif isinstance(spec, dict):
            unknown = set(spec) - set(names)
            if unknown:
                raise ValueError(
                    f"compile: the loss dict has keys {sorted(unknown)} that are not output "
                    f"names; the model's outputs are {names}"
                )
            per_out = [spec.get(n) for n in names]
        elif isinstance(spec, (list, tuple)):
            if len(spec) != len(outs):
                raise ValueError(
                    f"compile: the model has {len(outs)} outputs but {len(spec)} losses were given"
                )
            per_out = list(spec)
        else:
            per_out = [spec] * len(outs)
        losses = [None if s is None else _losses.get(s) for s in per_out]
        lw = self._loss_weights
        if lw is None:
            weights = [1.0] * len(outs)
        elif isinstance(lw, dict):
            weights = [float(lw.get(n, 1.0)) for n in names]
        else:
            weights = [float(w) for w in (lw if isinstance(lw, (list, tuple)) else [lw])]
            if len(weights) != len(outs):
                raise ValueError(
                    f"compile: loss_weights has {len(weights)} entries for {len(outs)} outputs"
                )
        ys = flatten(y) if y is not None else [None] * len(outs)
        metrics = []  # (metric, output index, weighted)
        for spec, weighted in ((self._metric_spec, False), (self._weighted_metric_spec, True)):
            for i, (o, yt) in enumerate(zip(outs, ys, strict=False)):
                for item in _items_for_output(spec, i, names, len(outs)):
                    m = _metric_for(item, losses[i], yt, o)
                    if len(outs) > 1:
                        m.name = f"{names[i]}_{m.name}"
                    if weighted and any(m.name == k.name for k, _, _ in metrics):
                        m.name = f"weighted_{m.name}"
                    metrics.append((m, i, weighted))
        trackers = []
        if len(outs) > 1:
            trackers = [_metrics.Mean(name=f"{n}_loss") for n in names]
        self._compiled = {
            "losses": losses,
            "weights": weights,
            "metrics": metrics,
            "loss_trackers": trackers,
            "n_out": len(outs),
        }

    # ---- one step ----

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The weighted sum of the compiled losses plus the layers' regularization losses."""
        c = self._compiled
        outs = flatten(y_pred)
        ys = flatten(y) if y is not None else [None] * len(outs)
        if y is not None and len(ys) != len(outs):
            raise ValueError(f"The model has {len(outs)} outputs but {len(ys)} targets were given")
        total = None
        per = []
        for i, (loss, w) in enumerate(zip(c["losses"], c["weights"], strict=True)):
            if loss is None:
                per.append(None)
                continue
            if ys[i] is None:
                raise ValueError(
                    "compile: a loss was given but the data has no targets (y is None)"
                )
            value = loss(ys[i], outs[i], sample_weight)
            per.append(value)
            weighted = value if w == 1.0 else value * w
            total = weighted if total is None else total + weighted
        for r in self._regularization_losses():
            total = r if total is None else total + r
        if total is None:
            raise ValueError(
                "No loss to compute. Provide a `loss` argument in `compile()` or add losses "
                "with add_loss()"
            )
        return total, per

    def _step_cache(self):
        """The trainable weights and the layers, found once per fit/evaluate call (as Keras's
        compiled train function captures them) instead of walking the layer tree every step."""
        cache = self.__dict__.get("_cached_step")
        if cache is None:
            cache = (self.trainable_weights, self._flatten_layers())
            self.__dict__["_cached_step"] = cache
        return cache

    def _regularization_losses(self):
        out = []
        for layer in self._step_cache()[1]:
            out.extend(layer._losses)
            for v, reg in layer._reg_items:
                out.append(reg(v))
        return out

    def _update_metrics(self, total, per, y, y_pred, sample_weight, n):
        with no_grad():
            self._loss_tracker.update_state(total.detach(), sample_weight=float(n))
            for tr, v in zip(self._compiled["loss_trackers"], per, strict=False):
                if v is not None:
                    tr.update_state(v.detach(), sample_weight=float(n))
            if y is not None and self._compiled["metrics"]:
                ys, outs = flatten(y), flatten(y_pred)
                # Keras: `metrics` ignore sample weights, `weighted_metrics` use them
                for m, i, weighted in self._compiled["metrics"]:
                    m.update_state(ys[i], outs[i].detach(), sample_weight if weighted else None)

    def train_step(self, data):
        x, y, sw = unpack_x_y_sample_weight(data)
        y_pred = self(x, training=True)
        if self._compiled is None:
            self._resolve(y, y_pred)
        total, per = self.compute_loss(x, y, y_pred, sw)
        tv = self._step_cache()[0]
        for v in tv:
            v.grad = None
        scale = getattr(self.optimizer, "scale_loss", None)  # LossScaleOptimizer
        (total if scale is None else scale(total)).backward()
        self.optimizer.step(tv)
        self._update_metrics(total, per, y, y_pred, sw, flatten(x)[0].shape[0])

    def test_step(self, data):
        x, y, sw = unpack_x_y_sample_weight(data)
        with no_grad():
            y_pred = self(x, training=False)
            if self._compiled is None:
                self._resolve(y, y_pred)
            total, per = self.compute_loss(x, y, y_pred, sw, training=False)
            self._update_metrics(total, per, y, y_pred, sw, flatten(x)[0].shape[0])

    def _model_device(self):
        """The device of the weights; None before they exist (the first batch decides)."""
        ws = self.weights if self.built else []
        return ws[0].device if ws else None

    # ---- fit ----

    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        class_weight=None,
        sample_weight=None,
        initial_epoch=0,
        steps_per_epoch=None,
        validation_steps=None,
        validation_batch_size=None,
        validation_freq=1,
    ):
        """Trains for `epochs` epochs; returns the ``History`` callback (``.history`` holds
        each epoch's loss, metrics and ``val_`` values)."""
        who = "Model.fit"
        self.__dict__["_cached_step"] = None
        self._assert_compiled(who)
        verbose = 1 if verbose == "auto" else int(verbose)
        if verbose not in (0, 1, 2):
            raise ValueError(f"{who}: verbose must be 'auto', 0, 1 or 2, got {verbose!r}")
        batch_size = check_batch_size(batch_size, who)
        if validation_split and validation_data is None:
            (x, y, sample_weight), validation_data = split_validation(
                x, y, sample_weight, validation_split, who
            )
        if x is not None and not self.built and _is_arrays(x):
            self._build_from_data(x)
        device = self._model_device()
        data = make_data(x, y, sample_weight, batch_size, device, shuffle, who, steps_per_epoch)
        val = None
        if validation_data is not None:
            val = self._val_data(
                validation_data, validation_batch_size or batch_size, device, validation_steps
            )
        cw = None if class_weight is None else ClassWeights(class_weight, device, who)
        cbs = _callbacks.CallbackList(
            callbacks,
            add_history=True,
            add_progbar=verbose != 0,
            model=self,
            verbose=verbose,
            epochs=epochs,
            steps=len(data),
        )
        self.stop_training = False
        cbs.on_train_begin()
        logs = {}
        # a callback (BackupAndRestore) may set the epoch to resume from, as Keras 3's does
        resume = self.__dict__.pop("_initial_epoch", None)
        if resume is not None:
            initial_epoch = resume
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            cbs.on_epoch_begin(epoch)
            step = -1
            for step, (xb, yb, swb) in enumerate(data.batches()):
                cbs.on_train_batch_begin(step)
                if cw is not None:
                    swb = cw(yb, swb)
                with _TrainingScope(True):
                    self.train_step(pack_x_y_sample_weight(xb, yb, swb))
                batch_logs = LazyLogs(self)
                cbs.on_train_batch_end(step, batch_logs)
                if self.stop_training:
                    break
            if step < 0:
                raise ValueError(f"{who}: the training data produced no batches")
            logs = read_scalars(batch_logs.arrays())
            if val is not None and _should_validate(epoch, validation_freq):
                val_logs = self._evaluate_data(val, cbs, in_fit=True)
                logs.update({f"val_{k}": v for k, v in val_logs.items()})
            cbs.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        cbs.on_train_end(logs)
        return cbs.history

    def _val_data(self, validation_data, batch_size, device, steps):
        if (
            isinstance(validation_data, tuple)
            and len(validation_data) in (2, 3)
            and _is_arrays(validation_data[0])
        ):
            vx, vy = validation_data[0], validation_data[1]
            vsw = validation_data[2] if len(validation_data) == 3 else None
            return make_data(vx, vy, vsw, batch_size, device, False, "Model.fit", steps)
        return make_data(validation_data, None, None, batch_size, device, False, "Model.fit", steps)

    def _build_from_data(self, x):
        def shape(a):
            return (None,) + tuple(_np.shape(a) if not isinstance(a, _e.ndarray) else a.shape)[1:]

        if isinstance(x, (list, tuple)):
            spec = [shape(a) for a in x]
        elif isinstance(x, dict):
            spec = {k: shape(a) for k, a in x.items()}
        else:
            spec = shape(x)
        # the weights go where the data already is (ember arrays), else to the default device
        first = next((a for a in flatten(x) if isinstance(a, _e.ndarray)), None)
        if first is not None:
            with first.device:
                self.build(spec)
        else:
            self.build(spec)

    # ---- evaluate ----

    def _evaluate_data(self, data, cbs, in_fit=False):
        self.reset_metrics()
        cbs.on_test_begin()
        logs = LazyLogs(self)
        for step, batch in enumerate(data.batches()):
            cbs.on_test_batch_begin(step)
            with _TrainingScope(False):
                self.test_step(pack_x_y_sample_weight(*batch))
            logs = LazyLogs(self)
            cbs.on_test_batch_end(step, logs)
        values = read_scalars(logs.arrays())
        cbs.on_test_end(values)
        return values

    def evaluate(
        self,
        x=None,
        y=None,
        batch_size=None,
        verbose="auto",
        sample_weight=None,
        steps=None,
        callbacks=None,
        return_dict=False,
        **kwargs,
    ):
        """The loss and metrics over the data: a float when there are no metrics, else
        ``[loss, *metrics]`` (or a dict with ``return_dict=True``)."""
        who = "Model.evaluate"
        self.__dict__["_cached_step"] = None
        self._assert_compiled(who)
        verbose = 1 if verbose == "auto" else int(verbose)
        batch_size = check_batch_size(batch_size, who)
        if x is not None and not self.built and _is_arrays(x):
            self._build_from_data(x)
        data = make_data(x, y, sample_weight, batch_size, self._model_device(), False, who, steps)
        cbs = _callbacks.CallbackList(
            callbacks,
            add_progbar=verbose != 0,
            model=self,
            verbose=verbose,
            epochs=1,
            steps=len(data),
        )
        logs = self._evaluate_data(data, cbs)
        return self._format_results(logs, return_dict)

    def _format_results(self, logs, return_dict):
        if return_dict:
            return dict(logs)
        values = [logs[m.name] for m in self.metrics if m.name in logs]
        return values[0] if len(values) == 1 else values

    # ---- predict ----

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The outputs for `x`, batched and concatenated, as NumPy arrays (Keras returns NumPy:
        the result is copied to the host once, at the end)."""
        who = "Model.predict"
        verbose = 1 if verbose == "auto" else int(verbose)
        batch_size = check_batch_size(batch_size, who)
        if not self.built and _is_arrays(x):
            self._build_from_data(x)
        data = make_data(x, None, None, batch_size, self._model_device(), False, who, steps)
        cbs = _callbacks.CallbackList(
            callbacks,
            add_progbar=verbose != 0,
            model=self,
            verbose=verbose,
            epochs=1,
            steps=len(data),
        )
        cbs.on_predict_begin()
        chunks = []
        for step, (xb, _, _) in enumerate(data.batches()):
            cbs.on_predict_batch_begin(step)
            with no_grad(), _TrainingScope(False):
                out = self(xb, training=False)
            chunks.append(out)
            cbs.on_predict_batch_end(step, {"outputs": out})
        cbs.on_predict_end()
        if not chunks:
            raise ValueError(f"{who}: the data produced no batches")
        return _concat_outputs(chunks)

    def predict_on_batch(self, x):
        with no_grad(), _TrainingScope(False):
            out = self(x, training=False)
        return _concat_outputs([out])

    # ---- single batches ----

    def _batch(self, x, y, sample_weight, who):
        if not self.built and _is_arrays(x):
            self._build_from_data(x)
        data = make_data(x, y, sample_weight, 1 << 62, self._model_device(), False, who)
        return next(iter(data.batches()))

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """One optimizer step on this batch; returns the running loss/metrics (not reset)."""
        self._assert_compiled("Model.train_on_batch")
        self.__dict__["_cached_step"] = None
        xb, yb, swb = self._batch(x, y, sample_weight, "Model.train_on_batch")
        if class_weight is not None:
            swb = ClassWeights(class_weight, self._model_device(), "train_on_batch")(yb, swb)
        with _TrainingScope(True):
            self.train_step(pack_x_y_sample_weight(xb, yb, swb))
        return self._format_results(read_scalars(LazyLogs(self).arrays()), return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self._assert_compiled("Model.test_on_batch")
        self.__dict__["_cached_step"] = None
        batch = self._batch(x, y, sample_weight, "Model.test_on_batch")
        with _TrainingScope(False):
            self.test_step(pack_x_y_sample_weight(*batch))
        return self._format_results(read_scalars(LazyLogs(self).arrays()), return_dict)


def _items_for_output(spec, i, names, n_out):
    if spec is None:
        return []
    if isinstance(spec, dict):
        items = spec.get(names[i], [])
    elif n_out > 1 and spec and isinstance(spec[0], (list, tuple)):
        items = spec[i]
    else:
        items = spec
    return list(items) if isinstance(items, (list, tuple)) else [items]


def _is_arrays(x):
    from ._data import _is_array_struct

    return _is_array_struct(x)


def _should_validate(epoch, freq):
    if isinstance(freq, int):
        return (epoch + 1) % freq == 0
    return epoch + 1 in freq


def _concat_outputs(chunks):
    first = chunks[0]
    if isinstance(first, _e.ndarray):
        return asnumpy(_e.concat(chunks, axis=0) if len(chunks) > 1 else first)
    if isinstance(first, (list, tuple)):
        return [asnumpy(_e.concat([c[i] for c in chunks], axis=0)) for i in range(len(first))]
    if isinstance(first, dict):
        return {k: asnumpy(_e.concat([c[k] for c in chunks], axis=0)) for k in first}
    raise TypeError(f"Model.predict: unsupported output type {type(first).__name__}")


def _metric_for(item, loss, y_true, y_pred):
    """Keras's resolution of 'accuracy'/'acc' (and 'crossentropy') from the loss and shapes."""
    if isinstance(item, str) and item.lower() in ("accuracy", "acc", "crossentropy", "ce"):
        is_binary = (y_pred.ndim and y_pred.shape[-1] == 1) or isinstance(
            loss, _losses.BinaryCrossentropy
        )
        yt_rank = None if y_true is None else len(_np.shape(y_true))
        sparse = isinstance(loss, _losses.SparseCategoricalCrossentropy) or (
            yt_rank is not None
            and (yt_rank < y_pred.ndim or (_np.shape(y_true)[-1:] == (1,) and y_pred.shape[-1] > 1))
        )
        if item.lower() in ("accuracy", "acc"):
            cls = (
                _metrics.BinaryAccuracy
                if is_binary
                else _metrics.SparseCategoricalAccuracy
                if sparse
                else _metrics.CategoricalAccuracy
            )
        else:
            cls = (
                _metrics.BinaryCrossentropy
                if is_binary
                else _metrics.SparseCategoricalCrossentropy
                if sparse
                else _metrics.CategoricalCrossentropy
            )
        m = cls()
        m.name = item
        return m
    m = _metrics.get(item)
    if isinstance(item, str):
        m.name = item
    return m


def _ser_loss(loss):
    if loss is None or isinstance(loss, str):
        return loss
    if isinstance(loss, (list, tuple)):
        return [_ser_loss(x) for x in loss]
    if isinstance(loss, dict):
        return {k: _ser_loss(v) for k, v in loss.items()}
    if isinstance(loss, _losses.Loss):
        return _losses.serialize(loss)
    return getattr(loss, "__name__", None)


def _ser_metrics(metrics):
    if metrics is None:
        return None
    if isinstance(metrics, dict):
        return {k: _ser_metrics(v) for k, v in metrics.items()}
    if isinstance(metrics, (list, tuple)):
        return [_ser_metrics(m) for m in metrics]
    if isinstance(metrics, str):
        return metrics
    if isinstance(metrics, _metrics.Metric):
        return {"class_name": type(metrics).__name__, "config": metrics.get_config()}
    return getattr(metrics, "__name__", None)
