"""Keras's ``BackupAndRestore`` callback: after each epoch (or every `save_freq` batches) the
model's weights and its optimizer's state (iterations and slots, as ``.keras`` files keep them)
go to ``<backup_dir>/model.weights.safetensors`` and the epoch to resume from to
``training_metadata.json``; the next ``fit`` of the model restores both and starts at that
epoch; a ``fit`` that ends normally deletes the backup (``delete_checkpoint=True``)."""

from __future__ import annotations

import json
import os
import shutil

from .._serialization import load_safetensors, save_safetensors
from ._callback import Callback

__all__ = ["BackupAndRestore"]

_WEIGHTS = "model.weights.safetensors"
_META = "training_metadata.json"
_PREV = "previous"


class BackupAndRestore(Callback):
    """Backs training up to `backup_dir` so that an interrupted ``fit`` resumes where it
    stopped (weights, optimizer state, epoch)."""

    def __init__(
        self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True
    ):
        super().__init__()
        if not backup_dir:
            raise ValueError("BackupAndRestore: empty `backup_dir` argument passed")
        if save_freq != "epoch" and (
            isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq <= 0
        ):
            raise ValueError(
                "BackupAndRestore: invalid value for argument `save_freq`; expected 'epoch' or "
                f"a positive int. Received: save_freq={save_freq!r}"
            )
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.double_checkpoint = bool(double_checkpoint)
        self.delete_checkpoint = bool(delete_checkpoint)
        self._current_epoch = 0
        self._batches_seen = 0

    def _paths(self, folder):
        return os.path.join(folder, _WEIGHTS), os.path.join(folder, _META)

    def _restore_from(self, folder):
        from ._saving import OPTIMIZER, _assign_all, _device_of, _flat

        wpath, mpath = self._paths(folder)
        if not (os.path.exists(wpath) and os.path.exists(mpath)):
            return False
        with open(mpath, encoding="utf-8") as f:
            meta = json.load(f)
        model = self.model
        loaded = _flat(load_safetensors(wpath, device=_device_of(model)))
        _assign_all(model, loaded, f"BackupAndRestore({self.backup_dir!r})")
        state = {k[len(OPTIMIZER) :]: v for k, v in loaded.items() if k.startswith(OPTIMIZER)}
        opt = getattr(model, "optimizer", None)
        if state and opt is not None:
            opt.load_state_arrays(model.trainable_weights, state)
        model.__dict__["_initial_epoch"] = int(meta["epoch"])
        self._current_epoch = int(meta["epoch"])
        return True

    def on_train_begin(self, logs=None):
        if not self.model.built:
            raise ValueError(
                "To use the BackupAndRestore callback, your model must be built before you "
                "call `fit()`."
            )
        if not self._restore_from(self.backup_dir) and self.double_checkpoint:
            self._restore_from(os.path.join(self.backup_dir, _PREV))

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq != "epoch":
            self._batches_seen += 1
            if self._batches_seen % self.save_freq == 0:
                self._save(self._current_epoch)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch + 1)

    def _save(self, next_epoch):
        from ._saving import OPTIMIZER, _weights_dict

        model = self.model
        os.makedirs(self.backup_dir, exist_ok=True)
        wpath, mpath = self._paths(self.backup_dir)
        if self.double_checkpoint and os.path.exists(wpath) and os.path.exists(mpath):
            prev = os.path.join(self.backup_dir, _PREV)
            os.makedirs(prev, exist_ok=True)
            for src, dst in zip(self._paths(self.backup_dir), self._paths(prev), strict=True):
                shutil.copyfile(src, dst)
        arrays = _weights_dict(model)
        opt = getattr(model, "optimizer", None)
        if opt is not None and getattr(opt, "_vars", None):
            for key, a in opt.state_arrays(model.trainable_weights).items():
                arrays[f"{OPTIMIZER}{key}"] = a
        # written beside, then renamed: an interruption never leaves half a backup
        save_safetensors(arrays, wpath + ".tmp")
        with open(mpath + ".tmp", "w", encoding="utf-8") as f:
            json.dump({"epoch": int(next_epoch), "batch": self._batches_seen}, f)
        os.replace(wpath + ".tmp", wpath)
        os.replace(mpath + ".tmp", mpath)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.isdir(self.backup_dir):
            shutil.rmtree(self.backup_dir, ignore_errors=True)
