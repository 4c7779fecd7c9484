"""ember.keras.callbacks: Keras's callback protocol and its stock callbacks.

Hooks run in Keras's order: on_train_begin, then per epoch on_epoch_begin, per batch
on_train_batch_begin/on_train_batch_end, the validation pass (on_test_begin, on_test_batch_*,
on_test_end), on_epoch_end; finally on_train_end. Batch-level ``logs`` hold the running metric
values as ember 0-d arrays (still on the device: ``float(logs["loss"])`` reads one back);
epoch-level logs hold Python floats.
"""

from __future__ import annotations

import csv
import math
import os
import sys

import numpy as _np

from ._backup import BackupAndRestore
from ._callback import _HOOKS, Callback
from ._progbar import Progbar
from ._tensorboard import TensorBoard

__all__ = [
    "BackupAndRestore",
    "Callback",
    "CallbackList",
    "CSVLogger",
    "EarlyStopping",
    "History",
    "LambdaCallback",
    "LearningRateScheduler",
    "ModelCheckpoint",
    "ProgbarLogger",
    "ReduceLROnPlateau",
    "TensorBoard",
    "TerminateOnNaN",
]


class CallbackList(Callback):
    """Calls each hook on every callback in order (History and ProgbarLogger added as Keras's
    fit adds them)."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        self.callbacks = list(callbacks or [])
        for c in self.callbacks:
            if not isinstance(c, Callback):
                raise TypeError(
                    f"callbacks must be keras.callbacks.Callback instances, got {type(c).__name__}"
                )
        if add_progbar and not any(isinstance(c, ProgbarLogger) for c in self.callbacks):
            self.callbacks.insert(0, ProgbarLogger())
        if add_history:
            self.history = next((c for c in self.callbacks if isinstance(c, History)), None)
            if self.history is None:
                self.history = History()
                self.callbacks.append(self.history)
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def append(self, callback):
        self.callbacks.append(callback)

    def set_model(self, model):
        self.model = model
        for c in self.callbacks:
            c.set_model(model)

    def set_params(self, params):
        self.params = params
        for c in self.callbacks:
            c.set_params(params)

    def __iter__(self):
        return iter(self.callbacks)


def _dispatch(name):
    def hook(self, *args, **kwargs):
        for c in self.callbacks:
            getattr(c, name)(*args, **kwargs)

    hook.__name__ = name
    return hook


for _name in _HOOKS:
    setattr(CallbackList, _name, _dispatch(_name))


class History(Callback):
    """``history.history[name]`` lists each epoch's value; ``history.epoch`` the epochs."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        self.model.history = self


class ProgbarLogger(Callback):
    """Prints ``Epoch i/n`` and the progress bar (verbose 1) or one line per epoch (verbose 2)."""

    def __init__(self, count_mode="steps", stream=None):
        super().__init__()
        self.stream = stream
        self.progbar = None
        self.epochs = 1
        self._train = False
        self.seen = 0

    def set_params(self, params):
        super().set_params(params)
        self.verbose = params.get("verbose", 1)
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    def _out(self):
        return self.stream if self.stream is not None else sys.stdout

    def _new_bar(self, target):
        self.seen = 0
        self.progbar = Progbar(target, verbose=self.verbose, stream=self._out())

    def on_train_begin(self, logs=None):
        self._train = True

    def on_train_end(self, logs=None):
        self._train = False

    def on_epoch_begin(self, epoch, logs=None):
        if self.verbose:
            self._out().write(f"Epoch {epoch + 1}/{self.epochs}\n")
        self._new_bar(self.target)

    def on_train_batch_end(self, batch, logs=None):
        self.seen = batch + 1
        if self.progbar is not None:
            self.progbar.update(self.seen, logs, finalize=False)

    def on_epoch_end(self, epoch, logs=None):
        if self.progbar is not None:
            self.progbar.target = self.seen if self.progbar.target is None else self.progbar.target
            self.progbar.update(self.seen, logs, finalize=True)

    def on_test_begin(self, logs=None):
        if not self._train:
            self._new_bar(self.params.get("steps"))

    def on_test_batch_end(self, batch, logs=None):
        if not self._train:
            self.seen = batch + 1
            self.progbar.update(self.seen, logs, finalize=False)

    def on_test_end(self, logs=None):
        if not self._train:
            self.progbar.target = self.seen if self.progbar.target is None else self.progbar.target
            self.progbar.update(self.seen, logs, finalize=True)

    def on_predict_begin(self, logs=None):
        self._new_bar(self.params.get("steps"))

    def on_predict_batch_end(self, batch, logs=None):
        self.seen = batch + 1
        self.progbar.update(self.seen, None, finalize=False)

    def on_predict_end(self, logs=None):
        self.progbar.target = self.seen if self.progbar.target is None else self.progbar.target
        self.progbar.update(self.seen, None, finalize=True)


# ---- monitoring helpers -------------------------------------------------------------------------


def _mode(mode, monitor, who):
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"{who}: mode must be 'auto', 'min' or 'max', got {mode!r}")
    if mode != "auto":
        return mode
    m = monitor.lower()
    if m.endswith("loss") or "error" in m:
        return "min"
    if "acc" in m or m.endswith("auc") or "precision" in m or "recall" in m or "fmeasure" in m:
        return "max"
    return "min"


def _warn(msg):
    import warnings

    warnings.warn(msg, stacklevel=3)


class EarlyStopping(Callback):
    """Stops training when `monitor` has not improved by `min_delta` for `patience` epochs;
    ``restore_best_weights`` puts back the best epoch's weights at the end (Keras 3)."""

    def __init__(
        self,
        monitor="val_loss",
        min_delta=0,
        patience=0,
        verbose=0,
        mode="auto",
        baseline=None,
        restore_best_weights=False,
        start_from_epoch=0,
    ):
        super().__init__()
        self.monitor = monitor
        self.patience = int(patience)
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.mode = _mode(mode, monitor, "EarlyStopping")
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None
        self.best_epoch = 0

    def _better(self, current, reference):
        if reference is None:
            return True
        if self.mode == "min":
            return current + self.min_delta < reference
        return current - self.min_delta > reference

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None:
            _warn(
                f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                f"Available metrics are: {','.join((logs or {}).keys())}"
            )
            return
        if epoch < self.start_from_epoch:
            return
        current = float(current)
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._better(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._better(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(
                    "Restoring model weights from the end of the best epoch: "
                    f"{self.best_epoch + 1}."
                )
            self.model.set_weights(self.best_weights)


class ModelCheckpoint(Callback):
    """Saves the model (``.keras``) or its weights (``.weights.h5``, or ``.weights.safetensors``)
    after each epoch (or every `save_freq` batches); `filepath` may hold ``{epoch:02d}`` and
    ``{val_loss:.2f}`` fields."""

    def __init__(
        self,
        filepath,
        monitor="val_loss",
        verbose=0,
        save_best_only=False,
        save_weights_only=False,
        mode="auto",
        save_freq="epoch",
        initial_value_threshold=None,
    ):
        super().__init__()
        self.filepath = os.fspath(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.mode = _mode(mode, monitor, "ModelCheckpoint")
        if save_freq != "epoch" and not (isinstance(save_freq, int) and save_freq > 0):
            raise ValueError(
                f"Unrecognized save_freq: {save_freq!r}. Expected save_freq are 'epoch' or int"
            )
        self.save_freq = save_freq
        self.best = initial_value_threshold
        if save_weights_only and not self.filepath.endswith(
            (".weights.h5", ".weights.safetensors")
        ):
            raise ValueError(
                "When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided "
                "must end in `.weights.h5` (or `.weights.safetensors`). "
                f"Received: filepath={self.filepath}"
            )
        if not save_weights_only and not self.filepath.endswith((".keras", ".h5", ".hdf5")):
            raise ValueError(
                "The filepath provided must end in `.keras` (Keras model format) or `.h5` "
                f"(Keras 2's legacy format). Received: filepath={self.filepath}"
            )
        self._batches = 0
        self._epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq != "epoch":
            self._batches += 1
            if self._batches % self.save_freq == 0:
                self._save(self._epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, None, logs)

    def _path(self, epoch, batch, logs):
        fields = {k: float(v) for k, v in (logs or {}).items()}
        try:
            if batch is None:
                return self.filepath.format(epoch=epoch + 1, **fields)
            return self.filepath.format(epoch=epoch + 1, batch=batch + 1, **fields)
        except KeyError as e:
            raise KeyError(
                f"Failed to format this callback filepath: {self.filepath!r}. Reason: {e}"
            ) from e

    def _save(self, epoch, batch, logs):
        path = self._path(epoch, batch, logs)
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        if self.save_best_only:
            current = (logs or {}).get(self.monitor)
            if current is None:
                _warn(
                    f"Can save best model only with {self.monitor} available, skipping. "
                    f"Available: {','.join((logs or {}).keys())}"
                )
                return
            current = float(current)
            better = self.best is None or (
                current < self.best if self.mode == "min" else current > self.best
            )
            if not better:
                if self.verbose > 0:
                    print(
                        f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {self.best:.5f}"
                    )
                return
            if self.verbose > 0:
                prev = "inf" if self.best is None else f"{self.best:.5f}"
                print(
                    f"\nEpoch {epoch + 1}: {self.monitor} improved from {prev} to "
                    f"{current:.5f}, saving model to {path}"
                )
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        if self.save_weights_only:
            self.model.save_weights(path, overwrite=True)
        else:
            self.model.save(path, overwrite=True)


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate to ``schedule(epoch, lr)`` at each epoch's start."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        opt = self.model.optimizer
        try:
            lr = self.schedule(epoch, float(opt.learning_rate))
        except TypeError:
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, int, _np.floating, _np.integer)):
            raise ValueError(
                f'The output of the "schedule" function should be a float. Got: {lr!r}'
            )
        opt.learning_rate = float(lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model.optimizer.learning_rate)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` when `monitor` stalls for `patience` epochs."""

    def __init__(
        self,
        monitor="val_loss",
        factor=0.1,
        patience=10,
        verbose=0,
        mode="auto",
        min_delta=1e-4,
        cooldown=0,
        min_lr=0.0,
        **kwargs,
    ):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(
                f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}"
            )
        self.monitor, self.factor, self.patience = monitor, float(factor), int(patience)
        self.verbose, self.min_delta = verbose, min_delta
        self.cooldown, self.min_lr = cooldown, min_lr
        self.mode = _mode(mode, monitor, "ReduceLROnPlateau")
        self._reset()

    def _reset(self):
        self.best = math.inf if self.mode == "min" else -math.inf
        self.wait = 0
        self.cooldown_counter = 0

    def _better(self, a, b):
        return a < b - self.min_delta if self.mode == "min" else a > b + self.min_delta

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        opt = self.model.optimizer
        logs["learning_rate"] = float(opt.learning_rate)
        current = logs.get(self.monitor)
        if current is None:
            _warn(
                f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not "
                f"available. Available metrics are: {','.join(logs.keys())}."
            )
            return
        current = float(current)
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._better(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(opt.learning_rate)
                if old > self.min_lr:
                    new = max(old * self.factor, self.min_lr)
                    opt.learning_rate = new
                    if self.verbose > 0:
                        print(
                            f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to "
                            f"{new}."
                        )
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class CSVLogger(Callback):
    """Writes ``epoch`` and each epoch's logs (sorted by name) as CSV rows."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename = os.fspath(filename)
        self.sep = separator
        self.append = append
        self.keys = None
        self._file = None
        self._writer = None

    def on_train_begin(self, logs=None):
        exists = self.append and os.path.exists(self.filename)
        self._append_header = not (exists and os.path.getsize(self.filename) > 0)
        self._file = open(self.filename, "a" if self.append else "w", newline="")  # noqa: SIM115
        self.keys = None
        self._writer = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            self._writer = csv.DictWriter(
                self._file, fieldnames=["epoch"] + self.keys, delimiter=self.sep
            )
            if self._append_header:
                self._writer.writeheader()
        row = {"epoch": epoch}
        row.update({k: logs.get(k, "NA") for k in self.keys})
        self._writer.writerow(row)
        self._file.flush()

    def on_train_end(self, logs=None):
        if self._file is not None:
            self._file.close()
            self._file = None


class TerminateOnNaN(Callback):
    """Stops training when a batch's loss is NaN or infinite (reads the loss back every batch)."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None:
            v = float(loss)
            if math.isnan(v) or math.isinf(v):
                print(f"Batch {batch}: Invalid loss, terminating training")
                self.model.stop_training = True


class LambdaCallback(Callback):
    """A callback from functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``."""

    def __init__(self, **hooks):
        super().__init__()
        aliases = {"on_batch_begin": "on_train_batch_begin", "on_batch_end": "on_train_batch_end"}
        for name, fn in hooks.items():
            target = aliases.get(name, name)
            if target not in _HOOKS:
                raise TypeError(f"LambdaCallback: unknown hook {name!r}")
            setattr(self, target, fn)
