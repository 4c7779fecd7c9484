"""ember.keras.Model: subclassed models (``call``) and functional ones (``Model(inputs,
outputs)``, a graph of layer calls on KerasTensors, run in topological order); both train with
the Trainer mixin and save as ``.keras`` archives (ember/keras/_saving.py)."""

from __future__ import annotations

import ember as _e

from ..nn._grad_mode import no_grad
from ._layer import (
    InputLayer,
    KerasTensor,
    Layer,
    _TrainingScope,
    flatten,
    map_structure,
    register,
    unique_name,
)
from ._trainer import Trainer


@register
class Model(Trainer, Layer):
    """Keras's Model. ``Model(inputs, outputs)`` builds a functional model; subclasses define
    layers in ``__init__`` and the forward pass in ``call``."""

    def __new__(cls, *args, **kwargs):
        functional = len(args) >= 2 or "inputs" in kwargs or "outputs" in kwargs
        if cls is Model and functional:
            return super().__new__(Functional)
        if functional and not issubclass(cls, Functional):
            # a subclass (its own train_step, say) built as Model(inputs, outputs): Keras
            # gives it Functional's graph under the subclass's methods
            return super().__new__(_with_functional(cls))
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        trainable = kwargs.pop("trainable", True)
        name = kwargs.pop("name", None)
        dtype = kwargs.pop("dtype", None)
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected arguments {args} {kwargs}")
        Layer.__init__(self, trainable=trainable, name=name, dtype=dtype)
        self.__dict__["_compute_dtype"] = None  # its layers autocast, the model does not
        self.__dict__["compiled"] = False
        self.__dict__["optimizer"] = None
        self.__dict__["stop_training"] = False
        self.__dict__["history"] = None

    @property
    def layers(self):
        return [la for la in self._sublayers() if not isinstance(la, InputLayer)]

    def _builds_by_calling(self):
        return type(self).build is Model.build

    def get_layer(self, name=None, index=None):
        if index is not None:
            if name is not None:
                raise ValueError("Provide only a layer name or a layer index, not both")
            if len(self.layers) <= index:
                raise ValueError(
                    f"Was asked to retrieve layer at index {index} but model only has "
                    f"{len(self.layers)} layers."
                )
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(
            f"No such layer: {name}. Existing layers are: {[la.name for la in self.layers]}."
        )

    def build(self, input_shape):
        """Builds a subclassed model by running ``call`` on zeros of `input_shape`."""
        if self.built:
            return

        def zeros(s):
            return _e.zeros(tuple(1 if d is None else d for d in s), dtype=_e.float32)

        args = _map_shapes(zeros, _shape_struct(input_shape))
        with no_grad(), _TrainingScope(False):
            self(args)
        self.__dict__["built"] = True
        self.__dict__["_build_shapes"] = input_shape

    def reset_state(self):
        """Zeroes the states of every stateful layer (RNNs built with ``stateful=True``)."""
        for layer in self._flatten_layers(include_self=False):
            if getattr(layer, "stateful", False) and getattr(layer, "states", None) is not None:
                layer.reset_state()

    def reset_states(self):
        """Keras 2's spelling of ``reset_state()``."""
        self.reset_state()

    def summary(
        self,
        line_length=None,
        positions=None,
        print_fn=None,
        expand_nested=False,
        show_trainable=False,
        layer_range=None,
    ):
        from ._summary import print_summary

        print_summary(self, line_length=line_length, print_fn=print_fn)

    def save(self, filepath, overwrite=True, zipped=None, include_optimizer=True, **kwargs):
        from ._saving import save_model

        save_model(self, filepath, overwrite=overwrite, include_optimizer=include_optimizer)

    def save_weights(self, filepath, overwrite=True):
        from ._saving import save_weights

        save_weights(self, filepath, overwrite=overwrite)

    def load_weights(self, filepath, skip_mismatch=False, by_name=False, **kwargs):
        from ._saving import load_weights

        load_weights(self, filepath, skip_mismatch=skip_mismatch, by_name=by_name)

    def get_config(self):
        base = Layer.get_config(self)
        return {"name": base["name"], "trainable": base["trainable"]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        if "layers" in config and "output_layers" in config:
            return Functional.from_config(config, custom_objects)
        return cls(**config)

    def to_json(self, **kwargs):
        import json

        from ._saving import serialize_layer

        return json.dumps(serialize_layer(self), **kwargs)


def _is_shape(s):
    return isinstance(s, tuple) and all(d is None or isinstance(d, int) for d in s)


def _map_shapes(fn, s):
    if _is_shape(s):
        return fn(s)
    if isinstance(s, (list, tuple)):
        return [_map_shapes(fn, x) for x in s]
    if isinstance(s, dict):
        return {k: _map_shapes(fn, v) for k, v in s.items()}
    raise TypeError(f"Model.build: expected a shape tuple or a list/dict of them, got {s!r}")


def _shape_struct(s):
    if isinstance(s, tuple) and all(d is None or isinstance(d, int) for d in s):
        return s
    if isinstance(s, list) and all(d is None or isinstance(d, int) for d in s):
        return tuple(s)
    if isinstance(s, (list, tuple)):
        return [_shape_struct(x) for x in s]
    if isinstance(s, dict):
        return {k: _shape_struct(v) for k, v in s.items()}
    return s


_FUNCTIONAL_OF: dict = {}


def _with_functional(cls):
    """``cls`` (a Model subclass) with Functional between it and Model, made once per class."""
    got = _FUNCTIONAL_OF.get(cls)
    if got is None:
        got = _FUNCTIONAL_OF[cls] = type(
            cls.__name__, (cls, Functional), {"__module__": cls.__module__}
        )
    return got


@register
class Functional(Model):
    """A model defined by ``inputs`` (``keras.Input`` tensors) and the ``outputs`` computed
    from them by calling layers; several inputs and outputs (lists or dicts) are allowed."""

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        if kwargs:
            raise TypeError(f"Functional: unexpected keyword arguments {kwargs}")
        Layer.__init__(self, trainable=trainable, name=name or unique_name("functional"))
        d = self.__dict__
        d["compiled"] = False
        d["optimizer"] = None
        d["stop_training"] = False
        d["history"] = None
        for t in flatten((inputs, outputs)):
            if not isinstance(t, KerasTensor):
                raise ValueError(
                    "Functional: inputs and outputs must be KerasTensors (from keras.Input and "
                    f"layer calls), got {type(t).__name__}"
                )
        d["_inputs_struct"] = inputs
        d["_outputs_struct"] = outputs
        d["inputs"] = flatten(inputs)
        d["outputs"] = flatten(outputs)
        d["_nodes"] = self._topological_nodes()
        layers = []
        for node in d["_nodes"]:
            if node.layer not in layers:
                layers.append(node.layer)
        d["_graph_layers"] = layers
        for i, la in enumerate(layers):
            self.add_module(f"layer_{i}_{la.name}", la)
        d["output_names"] = [t._keras_history[0].name for t in d["outputs"]]
        d["input_names"] = [t._keras_history[0].name for t in d["inputs"]]
        d["built"] = True

    def _topological_nodes(self):
        order, state = [], {}

        def visit(node):
            key = id(node)
            if state.get(key) == 2:
                return
            if state.get(key) == 1:
                raise ValueError("Functional: the layer graph has a cycle")
            state[key] = 1
            for parent in node.parent_nodes:
                visit(parent)
            state[key] = 2
            order.append(node)

        for t in self.outputs:
            layer, idx, _ = t._keras_history
            visit(layer._inbound_nodes[idx])
        input_ids = {id(t) for t in self.inputs}
        for node in order:
            if isinstance(node.layer, InputLayer):
                for t in node.output_tensors:
                    if id(t) not in input_ids:
                        raise ValueError(
                            f"Graph disconnected: cannot find the value of tensor {t} at layer "
                            f"{node.layer.name!r}; it is not among the model's inputs "
                            f"{[i.name for i in self.inputs]}"
                        )
        return order

    @property
    def layers(self):
        return list(self._graph_layers)

    @property
    def input(self):
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    @property
    def input_shape(self):
        """The inputs' shapes (one tuple for a single input), batch dimension None."""
        return _shape_struct(map_structure(lambda t: tuple(t.shape), self._inputs_struct))

    @property
    def output_shape(self):
        """The outputs' shapes (one tuple for a single output), batch dimension None."""
        return _shape_struct(map_structure(lambda t: tuple(t.shape), self._outputs_struct))

    def _flat_inputs(self, inputs):
        if isinstance(inputs, dict):
            missing = [n for n in self.input_names if n not in inputs]
            if missing:
                raise ValueError(
                    f"Model {self.name!r}: missing inputs {missing}; the inputs are "
                    f"{self.input_names}"
                )
            return [inputs[n] for n in self.input_names]
        flat = flatten(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(flat) != len(self.inputs):
            raise ValueError(
                f"Model {self.name!r} expects {len(self.inputs)} input(s), but it received "
                f"{len(flat)} input tensors"
            )
        return flat

    def call(self, inputs, training=None):
        values = {}
        for t, v in zip(self.inputs, self._flat_inputs(inputs), strict=True):
            v = self._convert_input(v)
            want = t.shape[1:]
            got = tuple(v.shape[1:])
            if len(want) != len(got) or any(
                w is not None and w != g for w, g in zip(want, got, strict=True)
            ):
                raise ValueError(
                    f"Input {t.name!r} of model {self.name!r} is incompatible: expected shape "
                    f"{t.shape}, found shape {tuple(v.shape)}"
                )
            values[id(t)] = v
        masks = {}  # id(tensor) -> mask of its value (Embedding(mask_zero=True) and after)
        for node in self._nodes:
            if isinstance(node.layer, InputLayer):
                continue
            args = map_structure(
                lambda a: values[id(a)] if isinstance(a, KerasTensor) else a, node.args
            )
            kwargs = map_structure(
                lambda a: values[id(a)] if isinstance(a, KerasTensor) else a, node.kwargs
            )
            first = node.args[0] if node.args else None
            mask = masks.get(id(first)) if isinstance(first, KerasTensor) else None
            if mask is not None and node.layer._call_takes_mask and "mask" not in kwargs:
                kwargs["mask"] = mask
            for name in node.layer._call_mask_args:  # query_mask= the mask of `query`, ...
                src = node.layer._call_argument(name[:-5], node.args, node.kwargs)
                if name not in kwargs and isinstance(src, KerasTensor) and id(src) in masks:
                    kwargs[name] = masks[id(src)]
            out = node.layer(*args, training=training, **kwargs)
            out_mask = node.layer.compute_mask(args[0] if args else None, mask)
            for t, v in zip(node.output_tensors, flatten(out), strict=True):
                values[id(t)] = v
                if out_mask is not None and isinstance(out_mask, _e.ndarray):
                    masks[id(t)] = out_mask
        return map_structure(lambda t: values[id(t)], self._outputs_struct)

    def compute_output_shape(self, input_shape):
        return map_structure(lambda t: t.shape, self._outputs_struct)

    def build(self, input_shape):
        self.__dict__["built"] = True

    def get_config(self):
        from ._saving import serialize_layer

        layers = []
        node_ids = {}
        for layer in self._graph_layers:
            for i, node in enumerate(layer._inbound_nodes):
                if node in self._nodes:
                    node_ids[id(node)] = i
        for layer in self._graph_layers:
            conf = serialize_layer(layer)
            inbound = []
            for node in layer._inbound_nodes:
                if node not in self._nodes or isinstance(layer, InputLayer):
                    continue
                inbound.append(
                    {
                        "args": _encode(node.args),
                        "kwargs": _encode(node.kwargs),
                    }
                )
            conf["inbound_nodes"] = inbound
            layers.append(conf)
        return {
            "name": self.name,
            "trainable": self.trainable,
            "layers": layers,
            "input_layers": _encode(self._inputs_struct),
            "output_layers": _encode(self._outputs_struct),
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ._saving import deserialize_layer

        created = {}  # layer name -> layer
        tensors = {}  # (layer name, node index, tensor index) -> KerasTensor
        pending = []
        for conf in config["layers"]:
            layer = deserialize_layer(conf, custom_objects)
            created[conf["config"]["name"]] = layer
            if isinstance(layer, InputLayer):
                tensors[(layer.name, 0, 0)] = layer._input_tensor
            for node in conf.get("inbound_nodes", []):
                pending.append((layer, node))
        progress = True
        while pending and progress:
            progress = False
            rest = []
            for layer, node in pending:
                try:
                    args = _decode(node["args"], tensors)
                    kwargs = _decode(node["kwargs"], tensors)
                except KeyError:
                    rest.append((layer, node))
                    continue
                out = layer(*args, **kwargs)
                idx = len(layer._inbound_nodes) - 1
                for i, t in enumerate(flatten(out)):
                    tensors[(layer.name, idx, i)] = t
                progress = True
            pending = rest
        if pending:
            raise ValueError("Functional.from_config: the layer graph could not be rebuilt")
        return cls(
            _decode(config["input_layers"], tensors),
            _decode(config["output_layers"], tensors),
            name=config.get("name"),
            trainable=config.get("trainable", True),
        )


def _encode(struct):
    def enc(a):
        if isinstance(a, KerasTensor):
            layer, node, idx = a._keras_history
            return {"__keras_tensor__": [layer.name, node, idx]}
        return a

    if isinstance(struct, tuple):
        return {"__tuple__": [_encode(s) for s in struct]}
    if isinstance(struct, list):
        return [_encode(s) for s in struct]
    if isinstance(struct, dict):
        return {k: _encode(v) for k, v in struct.items()}
    return enc(struct)


def _decode(struct, tensors):
    if isinstance(struct, dict) and "__keras_tensor__" in struct:
        return tensors[tuple(struct["__keras_tensor__"])]
    if isinstance(struct, dict) and "__tuple__" in struct:
        return tuple(_decode(s, tensors) for s in struct["__tuple__"])
    if isinstance(struct, list):
        return [_decode(s, tensors) for s in struct]
    if isinstance(struct, dict):
        return {k: _decode(v, tensors) for k, v in struct.items()}
    return struct
