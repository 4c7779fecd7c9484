"""Saving and loading: ``model.save("m.keras")`` writes a zip archive holding ``config.json``
(the model's class and config, its build and compile configs), ``metadata.json`` and
``model.weights.safetensors`` (the weights under Keras's ``layers/<name>/vars/<i>`` paths);
``keras.models.load_model`` rebuilds the model from the JSON and loads the weights. Nothing is
pickled, so loading never runs code from the file. ``.h5``/``.hdf5`` paths go to Keras 2's
legacy HDF5 layout (ember/keras/_legacy_h5.py)."""

from __future__ import annotations

import datetime
import json
import os
import tempfile
import zipfile

import ember as _e

from .._serialization import load_safetensors, save_safetensors
from ._layer import Layer, registered, to_snake_case

CONFIG = "config.json"
METADATA = "metadata.json"
WEIGHTS = "model.weights.safetensors"
FORMAT_VERSION = "ember-keras-1"
OPTIMIZER = "optimizer/"


def serialize_layer(layer):
    conf = {
        "module": "ember.keras",
        "class_name": type(layer).__name__,
        "config": layer.get_config(),
    }
    build = layer.get_build_config() if hasattr(layer, "get_build_config") else None
    if build is not None:
        conf["build_config"] = build
    return conf


def deserialize_layer(conf, custom_objects=None):
    cls = registered(conf["class_name"], custom_objects)
    config = dict(conf["config"])
    if hasattr(cls, "from_config"):
        try:
            layer = cls.from_config(config, custom_objects)
        except TypeError:
            layer = cls.from_config(config)
    else:
        layer = cls(**config)
    build = conf.get("build_config")
    if build and isinstance(layer, Layer) and not layer.built:
        layer.build_from_config(build)
    return layer


def _weights_dict(model):
    """``layers/<name>/.../vars/<i>`` -> array, walking nested layers in order."""
    out = {}

    for path, v in _variables_by_path(model).items():
        out[path] = v.detach()
    return out


def _layers_by_path(layer, prefix=""):
    """(path prefix, layer) of `layer` and every nested layer, in order, with Keras 3's names:
    ``layers/<snake class name, numbered in order>/``, so a file loads into any model of the
    same structure whatever its layers are named."""
    yield prefix, layer
    used = {}
    for child in layer._sublayers():
        base = to_snake_case(type(child).__name__)
        n = used.get(base, 0)
        used[base] = n + 1
        yield from _layers_by_path(child, f"{prefix}layers/{base if n == 0 else f'{base}_{n}'}/")


def _variables_by_path(model):
    """Keras 3's weight paths: ``<layer path>vars/<i>``."""
    return {
        f"{prefix}vars/{i}": v
        for prefix, layer in _layers_by_path(model)
        for i, v in enumerate(layer._tracked)
    }


def _check_path(filepath, suffix, who, overwrite):
    path = os.fspath(filepath)
    if not path.endswith(suffix):
        raise ValueError(f"{who}: the filename must end in `{suffix}`. Received: filepath={path}")
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"{who}: {path} exists and overwrite=False")
    return path


WEIGHT_SUFFIXES = (".weights.h5", ".weights.safetensors")


def save_weights(model, filepath, overwrite=True):
    """Keras 3's ``.weights.h5`` (HDF5 through h5py, Keras's layout: a dataset per variable at
    ``layers/<name>/vars/<i>``, an empty ``vars`` group for every layer without weights) or
    ember's ``.weights.safetensors`` (the same paths, no h5py needed)."""
    who = "Model.save_weights"
    path = os.fspath(filepath)
    if _legacy().is_legacy_path(path):  # Keras 2's layout (``layer_names``, ``weight_names``)
        _legacy().save_weights(model, path, overwrite=overwrite)
        return
    if not path.endswith(WEIGHT_SUFFIXES):
        raise ValueError(
            f"{who}: the filename must end in `.weights.h5` (or `.weights.safetensors`, or "
            f"`.h5`/`.hdf5` for Keras 2's legacy layout). Received: filepath={path}"
        )
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"{who}: {path} exists and overwrite=False")
    if path.endswith(".weights.h5"):
        _save_h5(model, path, who)
    else:
        save_safetensors(_weights_dict(model), path, metadata={"format": FORMAT_VERSION})


def _h5py(who):
    try:
        import h5py
    except ImportError:
        raise ImportError(
            f"{who}: `.weights.h5` files need h5py (pip install h5py); `.weights.safetensors` "
            "files do not"
        ) from None
    return h5py


def _var_groups(model):
    """The ``vars`` group of every layer (Keras writes one even for a layer without weights)."""
    return [f"{prefix}vars" for prefix, _ in _layers_by_path(model)]


def _save_h5(model, path, who):
    import numpy as np

    h5py = _h5py(who)
    with h5py.File(path, "w") as f:
        for g in _var_groups(model):
            f.require_group(g)
        for key, v in _weights_dict(model).items():
            if str(v.dtype) == "bfloat16":  # HDF5 has no bfloat16: float32 holds it exactly
                v = v.astype(_e.float32)
            f.create_dataset(key, data=np.asarray(_e.asnumpy(v)))


def _load_h5(path, device, who):
    h5py = _h5py(who)
    out = {}
    with h5py.File(path, "r") as f:

        def take(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = _e.asarray(obj[()], device=device)

        f.visititems(take)
    return out


def _assign_all(model, loaded, where, skip_mismatch=False):
    mine = _weights_dict(model)
    loaded = {k: v for k, v in loaded.items() if not k.startswith(OPTIMIZER)}
    missing = [k for k in mine if k not in loaded]
    extra = [k for k in loaded if k not in mine]
    if (missing or extra) and not skip_mismatch:
        raise ValueError(
            f"{where}: the saved weights do not match the model: missing {missing[:5]}, "
            f"unexpected {extra[:5]}"
        )
    for k, v in _variables_by_path(model).items():
        if k not in loaded:
            continue
        w = loaded[k]
        if tuple(w.shape) != tuple(v.shape):
            if skip_mismatch:
                continue
            raise ValueError(
                f"{where}: weight {k!r} has shape {tuple(w.shape)} in the file but "
                f"{tuple(v.shape)} in the model"
            )
        v.assign(w)


def _legacy():
    from . import _legacy_h5

    return _legacy_h5


def load_weights(model, filepath, skip_mismatch=False, by_name=False):
    path = os.fspath(filepath)
    legacy = _legacy()
    if legacy.is_legacy_path(path) or (
        path.endswith(".weights.h5") and os.path.exists(path) and legacy.is_legacy_file(path)
    ):
        legacy.load_weights(model, path, skip_mismatch=skip_mismatch, by_name=by_name)
        return
    if by_name:
        raise ValueError(
            f"Model.load_weights: by_name=True is only for legacy `.h5` files. Received: "
            f"filepath={path}"
        )
    if path.endswith(".keras"):
        with zipfile.ZipFile(path) as z, tempfile.TemporaryDirectory() as tmp:
            z.extract(WEIGHTS, tmp)
            loaded = load_safetensors(os.path.join(tmp, WEIGHTS), device=_device_of(model))
    elif path.endswith(".weights.safetensors"):
        loaded = load_safetensors(path, device=_device_of(model))
    elif path.endswith(".weights.h5"):
        loaded = _load_h5(path, _device_of(model), "Model.load_weights")
    else:
        raise ValueError(
            "Model.load_weights: the filename must end in `.weights.h5`, "
            f"`.weights.safetensors`, `.keras`, `.h5` or `.hdf5`. Received: filepath={path}"
        )
    _assign_all(model, _flat(loaded), f"Model.load_weights({path!r})", skip_mismatch)


def _flat(tree, prefix=""):
    out = {}
    for k, v in tree.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}/"))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _device_of(model):
    ws = model.weights
    return ws[0].device if ws else _e.get_default_device()


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    path = os.fspath(filepath)
    if _legacy().is_legacy_path(path):  # Keras 2's full-model HDF5 file
        _legacy().save_model(model, path, overwrite=overwrite, include_optimizer=include_optimizer)
        return
    if path.endswith(".weights.h5"):
        raise ValueError(
            f"Model.save: a `.weights.h5` file holds weights only; use save_weights(). "
            f"Received: filepath={path}"
        )
    path = _check_path(filepath, ".keras", "Model.save", overwrite)
    config = serialize_layer(model)
    compile_config = getattr(model, "_compile_config", None)
    if getattr(model, "compiled", False) and compile_config is not None:
        config["compile_config"] = compile_config
    meta = {
        "keras_version": "3 (ember.keras)",
        "format": FORMAT_VERSION,
        "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
    }
    arrays = _weights_dict(model)
    opt = getattr(model, "optimizer", None)
    if getattr(model, "compiled", False) and opt is not None and opt._vars:
        # the optimizer's iteration count and slots, keyed by trainable-weight order, so that
        # a reloaded model resumes training where it stopped (as Keras's .keras files do)
        for key, a in opt.state_arrays(model.trainable_weights).items():
            arrays[f"{OPTIMIZER}{key}"] = a
    with tempfile.TemporaryDirectory() as tmp:
        wpath = os.path.join(tmp, WEIGHTS)
        save_safetensors(arrays, wpath, metadata={"format": FORMAT_VERSION})
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr(CONFIG, json.dumps(config, indent=1))
            z.writestr(METADATA, json.dumps(meta))
            z.write(wpath, WEIGHTS)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002
    """Rebuilds a model saved with ``model.save("....keras")``: its layers from the JSON config,
    its weights from the safetensors file (on the current default device), and, with
    ``compile=True``, its compile settings."""
    path = os.fspath(filepath)
    who = "ember.keras.models.load_model"
    if _legacy().is_legacy_path(path):  # Keras 2's (or Keras 3's legacy) HDF5 model
        return _legacy().load_model(path, custom_objects=custom_objects, compile=compile)
    if not path.endswith(".keras"):
        raise ValueError(
            f"{who}: file format not supported: filepath={path}. ember.keras loads `.keras` "
            "archives written by model.save() and Keras 2's legacy `.h5`/`.hdf5` files"
        )
    if not os.path.exists(path):
        raise FileNotFoundError(f"{who}: no file at {path!r}")
    try:
        z = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ValueError(f"{who}: {path!r} is not a .keras archive (not a zip file)") from None
    with z, tempfile.TemporaryDirectory() as tmp:
        names = set(z.namelist())
        if CONFIG not in names or WEIGHTS not in names:
            raise ValueError(
                f"{who}: {path!r} lacks {CONFIG} or {WEIGHTS}; it was not written by ember.keras"
            )
        config = json.loads(z.read(CONFIG).decode("utf-8"))
        z.extract(WEIGHTS, tmp)
        model = deserialize_layer(config, custom_objects)
        loaded = _flat(load_safetensors(os.path.join(tmp, WEIGHTS), device=_device_of(model)))
    _assign_all(model, loaded, f"{who}({path!r})")
    cc = config.get("compile_config")
    if compile and cc is not None:
        from . import losses, metrics, optimizers

        loss = cc.get("loss")
        loss = _deser_loss(loss, losses, custom_objects)
        model.compile(
            optimizer=optimizers.deserialize(cc["optimizer"], custom_objects),
            loss=loss,
            loss_weights=cc.get("loss_weights"),
            metrics=_deser_metrics(cc.get("metrics"), metrics, custom_objects),
        )
        state = {k[len(OPTIMIZER) :]: v for k, v in loaded.items() if k.startswith(OPTIMIZER)}
        if state:
            model.optimizer.load_state_arrays(model.trainable_weights, state)
    return model


def _deser_loss(loss, losses, custom_objects):
    if loss is None or isinstance(loss, str):
        if isinstance(loss, str) and custom_objects and loss in custom_objects:
            return custom_objects[loss]
        return loss
    if isinstance(loss, list):
        return [_deser_loss(x, losses, custom_objects) for x in loss]
    if isinstance(loss, dict) and "class_name" in loss:
        return losses.deserialize(loss, custom_objects)
    if isinstance(loss, dict):
        return {k: _deser_loss(v, losses, custom_objects) for k, v in loss.items()}
    return loss


def _deser_metrics(m, metrics, custom_objects):
    if m is None or isinstance(m, str):
        if isinstance(m, str) and custom_objects and m in custom_objects:
            return custom_objects[m]
        return m
    if isinstance(m, list):
        return [_deser_metrics(x, metrics, custom_objects) for x in m]
    if isinstance(m, dict) and "class_name" in m:
        return metrics.get(m)
    if isinstance(m, dict):
        return {k: _deser_metrics(v, metrics, custom_objects) for k, v in m.items()}
    return m
