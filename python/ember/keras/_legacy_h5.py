"""Keras 2's legacy HDF5 files, the layout Keras 3 still reads and writes
(``keras.src.legacy.saving.legacy_h5_format``): ``model.save("m.h5")``, ``load_model("m.h5")``,
``save_weights("w.h5")`` and ``load_weights("w.h5")``.

A full-model file holds root attributes ``model_config`` (JSON of the ``class_name``/``config``
tree), ``keras_version``, ``backend`` and, when compiled, ``training_config`` (the compile
arguments); group ``model_weights`` has a ``layer_names`` attribute and one group per layer (in
name order) with a ``weight_names`` attribute naming its datasets (``dense/kernel:0``), in
Keras's legacy order, trainable weights then non-trainable ones. A weights file is that group
at the root. Weights load by position: the i-th layer with weights in the file goes to the i-th
layer with weights in the model, as Keras does. Keras 2 config spellings (``batch_input_shape``,
list-form ``inbound_nodes``, ``dtype`` policy dicts, ``TensorShape``/``__tuple__`` encodings,
optimizer ``lr``) are mapped onto ember.keras's configs; configs never run code."""

from __future__ import annotations

import inspect
import json
import os
import warnings

import numpy as np

import ember as _e

from ._saving import _h5py, deserialize_layer, serialize_layer

KERAS_VERSION = "3.0.0"  # the Keras API ember.keras follows; readers only compare it with "1"
BACKEND = "ember"  # marks files whose optimizer_weights ember wrote (and can restore)
HEADER_LIMIT = 64512  # HDF5's object-header budget that Keras splits long attributes by
MODELS = ("Sequential", "Functional", "Model")
RNNS = ("LSTM", "GRU", "SimpleRNN", "Bidirectional")
# Keras 2 config keys ember's layers do not take: dropped when they hold the value that means
# "nothing special", else loading raises (the model would not compute the same thing)
_NOOP_KEYS = {
    "time_major": (False,),
    "renorm": (False,),
    "virtual_batch_size": (None,),
    "adjustment": (None,),
}
_IGNORED_KEYS = ("implementation", "zero_output_for_mask", "fused")


def is_legacy_path(path):
    """``.h5``/``.hdf5`` but not Keras 3's ``.weights.h5``."""
    return path.endswith((".h5", ".hdf5")) and not path.endswith(".weights.h5")


def _text(v):
    return v.decode("utf8") if isinstance(v, bytes) else str(v)


def _attr_list(group, name):
    """A list attribute, reassembled from Keras's ``name0``, ``name1`` ... chunks if split."""
    if name in group.attrs:
        return [_text(n) for n in np.atleast_1d(group.attrs[name])]
    out, i = [], 0
    while f"{name}{i}" in group.attrs:
        out.extend(_text(n) for n in np.atleast_1d(group.attrs[f"{name}{i}"]))
        i += 1
    return out


def _set_attr_list(group, name, items):
    data = np.asarray([s.encode("utf8") for s in items], dtype="S") if items else np.asarray([])
    chunks = 1
    parts = np.array_split(data, chunks)
    while any(p.nbytes > HEADER_LIMIT for p in parts):
        chunks += 1
        parts = np.array_split(data, chunks)
    if chunks == 1:
        group.attrs[name] = data
    else:
        for i, p in enumerate(parts):
            group.attrs[f"{name}{i}"] = p


def _json_attr(f, name):
    v = f.attrs.get(name)
    return None if v is None else _decode(json.loads(_text(v)))


def _decode(obj):
    """Keras's JSON encodings: ``__tuple__`` items become tuples, ``TensorShape`` a list."""
    if isinstance(obj, dict):
        if obj.get("class_name") == "__tuple__":
            return tuple(_decode(x) for x in obj.get("items", []))
        if obj.get("class_name") == "TensorShape":
            items = obj.get("items")
            return None if items is None else [_decode(x) for x in items]
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(x) for x in obj]
    return obj


# ---- configs: Keras 2 -> ember ------------------------------------------------------------------


def _dtype_name(d):
    if isinstance(d, dict):  # Keras 2's Policy / Keras 3's DTypePolicy
        return (d.get("config") or {}).get("name", "float32")
    return d


def from_legacy(conf):
    """An ember ``{"class_name", "config"}`` tree from a Keras 2 (or Keras 3 legacy) one."""
    if not isinstance(conf, dict) or "class_name" not in conf:
        raise ValueError(f"load_model: model_config must be a class_name/config dict, got {conf!r}")
    cls = conf["class_name"]
    config = conf.get("config")
    out = {"class_name": cls}
    if cls == "Sequential":
        out["config"] = _sequential(config)
    elif cls in ("Functional", "Model") and isinstance(config, dict) and "layers" in config:
        out["class_name"] = "Functional"
        out["config"] = _functional(config)
    else:
        out["config"] = _layer_config(cls, config)
    if isinstance(conf.get("build_config"), dict):
        out["build_config"] = conf["build_config"]
    return out


def _layer_config(cls, config):
    config = dict(config or {})
    name = config.get("name", cls)
    if "dtype" in config:
        config["dtype"] = _dtype_name(config["dtype"])
    for key, ok in _NOOP_KEYS.items():
        if key in config:
            v = config.pop(key)
            if v not in ok:
                raise ValueError(
                    f"load_model: layer {name!r} ({cls}) has {key}={v!r}, which ember.keras "
                    "does not support"
                )
    for key in _IGNORED_KEYS:
        config.pop(key, None)
    if cls == "BatchNormalization" and isinstance(config.get("axis"), (list, tuple)):
        axis = list(config["axis"])
        if len(axis) != 1:
            raise ValueError(
                f"load_model: layer {name!r} normalizes over axis={axis}; ember.keras's "
                "BatchNormalization takes one axis"
            )
        config["axis"] = axis[0]
    for key in ("layer", "backward_layer"):  # Bidirectional, TimeDistributed
        if isinstance(config.get(key), dict):
            config[key] = from_legacy(config[key])
    if cls == "InputLayer" and "batch_input_shape" in config:
        config["batch_shape"] = config.pop("batch_input_shape")
    return config


def _sequential(config):
    layers = config if isinstance(config, list) else config.get("layers", [])  # 2.0/2.1: a list
    out = {"layers": [from_legacy(la) for la in layers]}
    if isinstance(config, dict):
        for key in ("name", "trainable"):
            if key in config:
                out[key] = config[key]
        if isinstance(config.get("build_input_shape"), (list, tuple)):
            out["build_input_shape"] = list(config["build_input_shape"])
    return out


def _is_ref(x):
    return (
        isinstance(x, (list, tuple))
        and len(x) == 3
        and isinstance(x[0], str)
        and all(isinstance(i, int) for i in x[1:])
    )


def _tensor(ref):
    return {"__keras_tensor__": [ref[0], int(ref[1]), int(ref[2])]}


def _refs_to_tensors(obj):
    """Keras 3's ``__keras_tensor__`` dicts and Keras 2's ``[layer, node, index]`` lists (in
    call kwargs) as ember's tensor references."""
    if isinstance(obj, dict):
        if obj.get("class_name") == "__keras_tensor__":
            return _tensor(obj["config"]["keras_history"])
        if "__keras_tensor__" in obj:
            return obj
        return {k: _refs_to_tensors(v) for k, v in obj.items()}
    if _is_ref(obj):
        return _tensor(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_refs_to_tensors(x) for x in obj)
    return obj


def _node(cls, node):
    if isinstance(node, dict):  # Keras 3 / ember: {"args": [...], "kwargs": {...}}
        return {
            "args": _refs_to_tensors(node.get("args", [])),
            "kwargs": _refs_to_tensors(node.get("kwargs", {})),
        }
    # Keras 2: [[layer, node_index, tensor_index, kwargs], ...], one entry per input tensor
    entries = [list(e) for e in node]
    tensors = [_tensor(e[:3]) for e in entries]
    kwargs = {}
    for e in entries:
        if len(e) > 3 and isinstance(e[3], dict):
            kwargs.update(_refs_to_tensors(_decode(e[3])))
    if len(tensors) == 1:
        args = [tensors[0]]
    elif cls in RNNS and "initial_state" not in kwargs:
        args = [tensors[0]]  # TF 2's RNN call: [sequences, *initial_state]
        kwargs["initial_state"] = tensors[1:]
    else:
        args = [tensors]
    return {"args": args, "kwargs": kwargs}


def _io(spec):
    """input_layers/output_layers: one ``[name, node, index]`` (a single tensor) or a list."""
    if _is_ref(spec):
        return _tensor(spec)
    refs = [_tensor(s) if _is_ref(s) else _refs_to_tensors(s) for s in spec]
    return refs[0] if len(refs) == 1 else refs


def _functional(config):
    layers = []
    for la in config["layers"]:
        conf = from_legacy(la)
        if "name" in la:
            conf["config"]["name"] = la["name"]
        conf["inbound_nodes"] = [_node(la["class_name"], n) for n in la.get("inbound_nodes", [])]
        layers.append(conf)
    return {
        "name": config.get("name"),
        "trainable": config.get("trainable", True),
        "layers": layers,
        "input_layers": _io(_refs_to_tensors(config["input_layers"])),
        "output_layers": _io(_refs_to_tensors(config["output_layers"])),
    }


# ---- configs: ember -> Keras 2 ------------------------------------------------------------------


def to_legacy(conf):
    """Keras 2's ``class_name``/``config`` tree of ember's ``serialize_layer`` output."""
    cls = conf["class_name"]
    config = dict(conf["config"])
    out = {"class_name": cls}
    if cls == "Sequential":
        config["layers"] = [to_legacy(la) for la in config["layers"]]
    elif cls == "Functional":
        config = _functional_to_legacy(config)
    else:
        for key in ("layer", "backward_layer"):
            if isinstance(config.get(key), dict):
                config[key] = to_legacy(config[key])
        if cls == "InputLayer":
            config["batch_input_shape"] = config.pop("batch_shape")
    out["config"] = config
    if "build_config" in conf:
        out["build_config"] = conf["build_config"]
    return out


def _ref_of(t):
    return list(t["__keras_tensor__"]) if isinstance(t, dict) and "__keras_tensor__" in t else None


def _unref(obj):
    """ember's tensor references as Keras 2's ``[layer, node, index]`` lists."""
    if _ref_of(obj) is not None:
        return _ref_of(obj)
    if isinstance(obj, dict):
        return {k: _unref(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_unref(x) for x in obj]
    return obj


def _args_of(node):
    args = node["args"]
    return list(args["__tuple__"]) if isinstance(args, dict) and "__tuple__" in args else args


def _functional_to_legacy(config):
    from ._layer import registered

    layers = []
    for la in config["layers"]:
        conf = to_legacy(la)
        conf["name"] = la["config"]["name"]
        nodes = []
        for node in la.get("inbound_nodes", []):
            args, kwargs = _args_of(node), dict(node.get("kwargs", {}))
            first = args[0] if args else None
            if len(args) > 1:  # extra positional arguments by name, as TF 2 records them
                params = list(inspect.signature(registered(la["class_name"]).call).parameters)
                for name, a in zip(params[2:], args[1:], strict=False):  # after self, inputs
                    kwargs[name] = a
            firsts = first if isinstance(first, list) else [first]
            refs = [_ref_of(t) for t in firsts]
            if any(r is None for r in refs):
                nodes.append(node)  # not expressible in Keras 2's form: ember's own
                continue
            kw = _unref(kwargs)
            nodes.append([r + [kw] for r in refs])
        conf["inbound_nodes"] = nodes
        layers.append(conf)
    return {
        "name": config["name"],
        "trainable": config.get("trainable", True),
        "layers": layers,
        "input_layers": _io_to_legacy(config["input_layers"]),
        "output_layers": _io_to_legacy(config["output_layers"]),
    }


def _io_to_legacy(spec):
    if _ref_of(spec) is not None:
        return [_ref_of(spec)]
    if isinstance(spec, dict) and "__tuple__" in spec:
        spec = spec["__tuple__"]
    if isinstance(spec, dict):
        spec = list(spec.values())
    return [_unref(s) for s in spec]


# ---- weights ------------------------------------------------------------------------------------


def _weighted_layers(model):
    return [la for la in model.layers if la.weights]


def save_weights_to_group(g, model):
    """Keras's ``save_weights_to_hdf5_group``: ``layer_names`` and a group per layer."""
    layers = model.layers
    names = [la.name for la in layers]
    if len(set(names)) != len(names):
        raise ValueError(f"{model.name}: layer names must be unique to save an .h5 file: {names}")
    _set_attr_list(g, "layer_names", names)
    g.attrs["backend"] = BACKEND.encode("utf8")
    g.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
    for layer in sorted(layers, key=lambda la: la.name):
        lg = g.create_group(layer.name)
        weights = layer.trainable_weights + layer.non_trainable_weights
        wnames, seen = [], set()
        for v in weights:
            base = f"{v.path}:0"
            name, k = base, 1
            while name in seen:
                name, k = f"{v.path}_{k}:0", k + 1
            seen.add(name)
            wnames.append(name)
        _set_attr_list(lg, "weight_names", wnames)
        for name, v in zip(wnames, weights, strict=True):
            a = v.detach()
            if str(a.dtype) == "bfloat16":  # HDF5 has no bfloat16: float32 holds it exactly
                a = a.astype(_e.float32)
            lg.create_dataset(name, data=np.asarray(_e.asnumpy(a)))


def _saved_layers(g):
    out = []
    for name in _attr_list(g, "layer_names"):
        lg = g[name]
        values = [np.asarray(lg[w]) for w in _attr_list(lg, "weight_names")]
        out.append((name, values))
    return out


def _assign(layer, values, where, skip_mismatch):
    mine = layer.trainable_weights + layer.non_trainable_weights
    if len(values) != len(mine):
        raise ValueError(
            f"{where}: layer {layer.name!r} expects {len(mine)} weight(s), the file holds "
            f"{len(values)}"
        )
    for v, a in zip(mine, values, strict=True):
        if tuple(a.shape) != tuple(v.shape):
            if skip_mismatch:
                warnings.warn(f"{where}: skipping {v.path} (shape {a.shape})", stacklevel=3)
                continue
            raise ValueError(
                f"{where}: weight {v.path} has shape {tuple(v.shape)} in the model but "
                f"{tuple(a.shape)} in the file"
            )
        v.assign(a)


def load_weights_from_group(g, model, where, skip_mismatch=False, by_name=False):
    """Keras's topological (or ``by_name``) weight loading."""
    saved = [(n, vals) for n, vals in _saved_layers(g) if vals]
    if by_name:
        index = {la.name: la for la in model.layers}
        for name, values in saved:
            if name in index:
                _assign(index[name], values, where, skip_mismatch)
        return
    layers = _weighted_layers(model)
    if len(saved) != len(layers):
        raise ValueError(
            f"{where}: layer count mismatch: the model has {len(layers)} layers with weights, "
            f"the file {len(saved)}"
        )
    for layer, (_, values) in zip(layers, saved, strict=True):
        _assign(layer, values, where, skip_mismatch)


# ---- files --------------------------------------------------------------------------------------


def _check_model(model, who):
    if not model.built:
        raise ValueError(f"{who}: the model must be built (call it or give it an Input) first")


def save_model(model, path, overwrite=True, include_optimizer=True):
    who = "Model.save"
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"{who}: {path} exists and overwrite=False")
    _check_model(model, who)
    h5py = _h5py(who)
    config = json.dumps(to_legacy(serialize_layer(model)))
    with h5py.File(path, "w") as f:
        f.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
        f.attrs["backend"] = BACKEND.encode("utf8")
        f.attrs["model_config"] = config.encode("utf8")
        cc = getattr(model, "_compile_config", None)
        if getattr(model, "compiled", False) and cc is not None:
            training = {
                "loss": cc.get("loss"),
                "metrics": cc.get("metrics"),
                "weighted_metrics": None,
                "loss_weights": cc.get("loss_weights"),
                "optimizer_config": cc["optimizer"],
            }
            f.attrs["training_config"] = json.dumps(training).encode("utf8")
        save_weights_to_group(f.create_group("model_weights"), model)
        opt = getattr(model, "optimizer", None)
        if include_optimizer and getattr(model, "compiled", False) and opt is not None:
            if getattr(opt, "_vars", None):
                state = opt.state_arrays(model.trainable_weights)
                og = f.create_group("optimizer_weights")
                _set_attr_list(og, "weight_names", list(state))
                for k, a in state.items():
                    og.create_dataset(k, data=np.asarray(_e.asnumpy(a)))


def save_weights(model, path, overwrite=True):
    who = "Model.save_weights"
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"{who}: {path} exists and overwrite=False")
    _check_model(model, who)
    h5py = _h5py(who)
    with h5py.File(path, "w") as f:
        save_weights_to_group(f, model)


def _open(path, who):
    h5py = _h5py(who)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{who}: no file at {path!r}")
    try:
        return h5py.File(path, "r")
    except OSError as err:
        raise ValueError(f"{who}: {path!r} is not an HDF5 file ({err})") from None


def is_legacy_file(path):
    """True for an HDF5 file in Keras 2's layout (``layer_names`` or ``model_weights``)."""
    h5py = _h5py("Model.load_weights")
    with h5py.File(path, "r") as f:
        return "layer_names" in f.attrs or "layer_names0" in f.attrs or "model_weights" in f


def load_weights(model, path, skip_mismatch=False, by_name=False):
    who = f"Model.load_weights({path!r})"
    with _open(path, "Model.load_weights") as f:
        g = f["model_weights"] if "model_weights" in f and "layer_names" not in f.attrs else f
        load_weights_from_group(g, model, who, skip_mismatch, by_name)


def load_model(path, custom_objects=None, compile=True):  # noqa: A002
    who = "ember.keras.models.load_model"
    with _open(path, who) as f:
        config = _json_attr(f, "model_config")
        if config is None:
            raise ValueError(f"{who}: no model config found in the file at {path!r}")
        model = deserialize_layer(from_legacy(config), custom_objects)
        if "model_weights" not in f:
            raise ValueError(f"{who}: {path!r} has no model_weights group")
        load_weights_from_group(f["model_weights"], model, f"{who}({path!r})")
        training = _json_attr(f, "training_config")
        if not compile or training is None:
            return model
        try:
            _compile(model, training, custom_objects)
        except (TypeError, ValueError, KeyError) as err:
            warnings.warn(
                f"{who}: the saved training configuration could not be used ({err}); the model "
                "was not compiled. Compile it manually.",
                stacklevel=2,
            )
            return model
        if "optimizer_weights" in f:
            og = f["optimizer_weights"]
            if _text(f.attrs.get("backend", b"")) == BACKEND:
                state = {
                    k: _e.asarray(np.asarray(og[k]), device=model.weights[0].device)
                    for k in _attr_list(og, "weight_names")
                }
                model.optimizer.load_state_arrays(model.trainable_weights, state)
            else:
                warnings.warn(
                    f"{who}: the optimizer weights of a file written by Keras are not restored; "
                    "training resumes with a fresh optimizer state",
                    stacklevel=2,
                )
    return model


# ---- training_config ----------------------------------------------------------------------------


def _optimizer(conf, custom_objects):
    from . import optimizers

    if isinstance(conf, str):
        return optimizers.get(conf)
    conf = {"class_name": conf["class_name"], "config": dict(conf.get("config") or {})}
    c = conf["config"]
    if "lr" in c:  # Keras 2.0-2.3's spelling
        c.setdefault("learning_rate", c.pop("lr"))
    decay = c.pop("decay", 0.0)
    if decay:
        raise ValueError(f"optimizer decay={decay} (Keras 2's per-step decay) is not supported")
    for key in ("is_legacy_optimizer", "jit_compile"):
        c.pop(key, None)
    name = conf["class_name"]
    cls = optimizers._BY_CLASS.get(name) or optimizers._BY_NAME.get(name.lower())
    if cls is not None:  # keys ember's optimizer does not take, at Keras's no-op values
        params = set()
        for k in type.mro(cls):
            if "__init__" in k.__dict__:
                params |= set(inspect.signature(k.__init__).parameters)
        for key in [k for k in c if k not in params]:
            if c[key] not in (None, False):
                raise ValueError(f"optimizer argument {key}={c[key]!r} is not supported")
            del c[key]
    return optimizers.deserialize(conf, custom_objects)


def _loss(loss):
    if isinstance(loss, dict) and "class_name" in loss:
        c = dict(loss.get("config") or {})
        if c.get("reduction") == "auto":  # Keras 2's default
            c["reduction"] = "sum_over_batch_size"
        return {"class_name": loss["class_name"], "config": c}
    if isinstance(loss, dict):
        return {k: _loss(v) for k, v in loss.items()}
    if isinstance(loss, list):
        return [_loss(x) for x in loss]
    return loss


def _metric(m):
    if isinstance(m, dict) and m.get("class_name") == "MeanMetricWrapper":
        c = m.get("config") or {}
        fn = c.get("fn")
        return fn if isinstance(fn, str) else c.get("name")
    if isinstance(m, list):
        return [_metric(x) for x in m]
    if isinstance(m, dict) and "class_name" not in m:
        return {k: _metric(v) for k, v in m.items()}
    return m


def _compile(model, training, custom_objects):
    from . import losses, metrics
    from ._saving import _deser_loss, _deser_metrics

    metric_spec = _metric(training.get("metrics"))
    n_out = len(getattr(model, "outputs", None) or [None])
    if isinstance(metric_spec, list) and n_out == 1 and len(metric_spec) == 1:
        if isinstance(metric_spec[0], list):  # TF 2's per-output nesting of one output
            metric_spec = metric_spec[0]
    model.compile(
        optimizer=_optimizer(training["optimizer_config"], custom_objects),
        loss=_deser_loss(_loss(training.get("loss")), losses, custom_objects),
        loss_weights=training.get("loss_weights"),
        metrics=_deser_metrics(metric_spec, metrics, custom_objects),
    )


__all__ = ["is_legacy_path", "load_model", "load_weights", "save_model", "save_weights"]
