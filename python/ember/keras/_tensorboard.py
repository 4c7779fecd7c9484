"""Keras's ``TensorBoard`` callback, writing TensorBoard event files with the ``tensorboard``
package's own event writer and summary protos (no TensorFlow): per-epoch scalars
``epoch_<metric>`` to ``log_dir/train`` (with ``epoch_learning_rate``) and, for the ``val_``
metrics, to ``log_dir/validation``; ``evaluation_<metric>_vs_iterations`` at each test end;
``batch_<metric>`` every ``update_freq`` batches; weight histograms every ``histogram_freq``
epochs; the model's JSON config as the "keras" graph summary (``write_graph``). Scalars and
histograms are TF2 summaries (tensors with the scalars/histograms plugin metadata), as Keras's
``tf.summary`` writes them."""

from __future__ import annotations

import os
import time

import numpy as _np

import ember as _e

from ._callback import Callback

__all__ = ["TensorBoard"]


def _tb():
    """The tensorboard modules used here (imported on first use)."""
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
        from tensorboard.plugins.histogram.summary_v2 import histogram_pb
        from tensorboard.plugins.scalar.summary_v2 import scalar_pb
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as e:
        raise ImportError(
            "keras.callbacks.TensorBoard writes its event files with the `tensorboard` package, "
            f"which could not be imported ({e}). Install it with `pip install tensorboard` "
            "(TensorFlow is not needed)."
        ) from None
    return {
        "Event": event_pb2.Event,
        "Summary": summary_pb2.Summary,
        "SummaryMetadata": summary_pb2.SummaryMetadata,
        "TensorProto": tensor_pb2.TensorProto,
        "DT_STRING": types_pb2.DT_STRING,
        "histogram_pb": histogram_pb,
        "scalar_pb": scalar_pb,
        "EventFileWriter": EventFileWriter,
    }


class TensorBoard(Callback):
    """Logs training to TensorBoard event files under `log_dir` (see the module doc).

    ``update_freq``: "epoch", "batch" (= 1) or N: also write the batch logs every N training
    batches (reading the metrics back to the host then). ``histogram_freq``: every that many
    epochs, a histogram of every weight, tagged ``<weight path>/histogram``.
    """

    def __init__(
        self,
        log_dir="logs",
        histogram_freq=0,
        write_graph=True,
        write_images=False,
        write_steps_per_second=False,
        update_freq="epoch",
        profile_batch=0,
        embeddings_freq=0,
        embeddings_metadata=None,
    ):
        super().__init__()
        self._tb = _tb()
        if isinstance(histogram_freq, bool) or not isinstance(histogram_freq, int):
            raise ValueError(
                "TensorBoard: histogram_freq must be a non-negative int (epochs). Received: "
                f"histogram_freq={histogram_freq!r}"
            )
        if histogram_freq < 0:
            raise ValueError(
                f"TensorBoard: histogram_freq must be >= 0. Received: histogram_freq="
                f"{histogram_freq}"
            )
        freq = 1 if update_freq == "batch" else update_freq
        if freq != "epoch" and (isinstance(freq, bool) or not isinstance(freq, int) or freq < 1):
            raise ValueError(
                "TensorBoard: update_freq must be 'epoch', 'batch' or a positive int. Received: "
                f"update_freq={update_freq!r}"
            )
        if write_images:
            raise ValueError(
                "TensorBoard: write_images=True is not supported by ember.keras (weights are "
                "logged as histograms with histogram_freq). Received: write_images=True"
            )
        if profile_batch:
            raise ValueError(
                "Profiling is not yet available with the ember backend. Received: "
                f"profile_batch={profile_batch} (must be 0)"
            )
        if embeddings_freq:
            raise ValueError(
                "TensorBoard: embeddings_freq is not supported by ember.keras. Received: "
                f"embeddings_freq={embeddings_freq} (must be 0)"
            )
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = bool(write_graph)
        self.write_images = False
        self.write_steps_per_second = bool(write_steps_per_second)
        self.update_freq = freq
        self.embeddings_freq = 0
        self.embeddings_metadata = embeddings_metadata
        self._train_dir = os.path.join(self.log_dir, "train")
        self._val_dir = os.path.join(self.log_dir, "validation")
        self._writers = {}
        self._global_train_batch = 0
        self._epoch_start = None
        self._epoch_iterations = 0
        self._batch_start = None

    # ---- writers ----

    def _writer(self, which):
        w = self._writers.get(which)
        if w is None:
            path = self._train_dir if which == "train" else self._val_dir
            os.makedirs(path, exist_ok=True)
            w = self._tb["EventFileWriter"](path, filename_suffix=".v2")
            self._writers[which] = w
        return w

    def _write(self, which, summary, step):
        event = self._tb["Event"](wall_time=time.time(), step=int(step), summary=summary)
        self._writer(which).add_event(event)

    def _scalar(self, which, tag, value, step):
        self._write(which, self._tb["scalar_pb"](tag, _np.float32(float(value))), step)

    def _flush(self):
        for w in self._writers.values():
            w.flush()

    def _close_writers(self):
        for w in self._writers.values():
            w.close()
        self._writers = {}

    # ---- the model graph (its Keras config) ----

    def set_model(self, model):
        super().set_model(model)
        self._close_writers()
        if self.write_graph:
            self._write_keras_model_summary()

    def _write_keras_model_summary(self):
        """Keras's "keras" summary: the model's JSON config for TensorBoard's graph plugin
        (conceptual graph), written for functional and Sequential models."""
        if type(self.model).__name__ not in ("Functional", "Sequential"):
            return
        try:
            text = self.model.to_json()
        except Exception as exc:  # noqa: BLE001 (Keras: a model that fails to serialize is skipped)
            import warnings

            warnings.warn(f"Model failed to serialize as JSON. Ignoring... {exc}", stacklevel=2)
            return
        tb = self._tb
        meta = tb["SummaryMetadata"]()
        meta.plugin_data.plugin_name = "graph_keras_model"
        meta.plugin_data.content = b"1"
        tensor = tb["TensorProto"](dtype=tb["DT_STRING"], string_val=[text.encode("utf-8")])
        summary = tb["Summary"]()
        summary.value.add(tag="keras", metadata=meta, tensor=tensor)
        self._write("train", summary, 0)
        self._flush()

    # ---- hooks ----

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0

    def on_train_end(self, logs=None):
        self._close_writers()

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = time.time()
        self._epoch_iterations = self._iterations()

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        if self.write_steps_per_second:
            self._batch_start = time.time()

    def on_train_batch_end(self, batch, logs=None):
        if self.update_freq == "epoch" or self._global_train_batch % self.update_freq:
            return
        step = self._global_train_batch
        if self.write_steps_per_second and self._batch_start is not None:
            dt = max(time.time() - self._batch_start, 1e-12)
            self._scalar("train", "batch_steps_per_second", 1.0 / dt, step)
        for name, value in _host_logs(logs).items():
            self._scalar("train", "batch_" + name, value, step)

    def on_test_end(self, logs=None):
        opt = getattr(self.model, "optimizer", None)
        if opt is None or not hasattr(opt, "iterations") or not logs:
            return
        step = int(opt.iterations)
        for name, value in _host_logs(logs).items():
            self._scalar("validation", f"evaluation_{name}_vs_iterations", value, step)
        self._flush()

    def on_epoch_end(self, epoch, logs=None):
        self._log_epoch_metrics(epoch, logs)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)
        self._flush()

    def _iterations(self):
        opt = getattr(self.model, "optimizer", None)
        return int(getattr(opt, "iterations", 0) or 0)

    def _log_epoch_metrics(self, epoch, logs):
        if not logs:
            return
        logs = _host_logs(logs)
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        opt = getattr(self.model, "optimizer", None)
        if opt is not None and hasattr(opt, "learning_rate"):
            train["learning_rate"] = float(opt.learning_rate)
        if self.write_steps_per_second and self._epoch_start is not None:
            dt = max(time.time() - self._epoch_start, 1e-12)
            train["steps_per_second"] = (self._iterations() - self._epoch_iterations) / dt
        for name, value in train.items():
            self._scalar("train", "epoch_" + name, value, epoch)
        for name, value in val.items():
            self._scalar("validation", "epoch_" + name, value, epoch)

    def _log_weights(self, epoch):
        """A histogram of every weight of every layer (Keras's 30 buckets), tagged with the
        weight's path (``dense/kernel/histogram``) so that the layers' weights stay apart."""
        layers = getattr(self.model, "layers", None) or [self.model]
        seen = set()
        for layer in layers:
            for w in layer.weights:
                if id(w) in seen:
                    continue
                seen.add(id(w))
                data = _np.asarray(_e.asnumpy(w.detach()), dtype=_np.float64)
                tag = f"{getattr(w, 'path', w.name).replace(':', '_')}/histogram"
                self._write("train", self._tb["histogram_pb"](tag, data), epoch)


def _host_logs(logs):
    """Python floats of a logs dict (batch logs hold values still on the device)."""
    out = {}
    for k, v in (logs or {}).items():
        try:
            out[k] = float(v)
        except (TypeError, ValueError):
            continue  # not a number (a callback's note): nothing to plot
    return out
