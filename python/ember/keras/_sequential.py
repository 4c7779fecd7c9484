"""ember.keras.Sequential: a plain stack of layers. It builds as soon as its input shape is
known (``keras.Input``, ``input_shape=``/``input_dim=`` on the first layer, ``build()``), or
else on the first data it sees, on that data's device."""

from __future__ import annotations

import ember as _e

from ._layer import InputLayer, KerasTensor, Layer, register, unique_name
from ._model import Model


@register
class Sequential(Model):
    """``Sequential([Dense(128, activation="relu"), Dense(10)])`` or ``.add()`` one by one."""

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name)
        self.__dict__["_layers"] = []
        self.__dict__["_input_layer"] = None
        self.__dict__["_shapes"] = None  # output shape of each layer once built
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._maybe_build_from_input()

    def add(self, layer, rebuild=True):
        if isinstance(layer, KerasTensor):
            layer = layer._keras_history[0]
        if isinstance(layer, InputLayer):
            if self._layers or self._input_layer is not None:
                raise ValueError(
                    "Sequential.add: an InputLayer can only be the first layer of the model"
                )
            self.__dict__["_input_layer"] = layer
            return
        if not isinstance(layer, Layer):
            raise ValueError(
                "Only instances of `keras.Layer` can be added to a Sequential model. Received: "
                f"{layer!r} (of type {type(layer).__name__})"
            )
        if any(la.name == layer.name for la in self._layers):
            raise ValueError(
                f"All layers added to a Sequential model should have unique names. Name "
                f"{layer.name!r} is already the name of a layer in this model. Update the "
                "`name` argument to pass a unique name."
            )
        self._layers.append(layer)
        self.add_module(f"layer_{len(self._layers) - 1}", layer)
        self.__dict__["built"] = False
        self.__dict__["_shapes"] = None
        if rebuild:
            self._maybe_build_from_input()

    def pop(self, rebuild=True):
        if not self._layers:
            raise TypeError("There are no layers in the model.")
        layer = self._layers.pop()
        del self._modules[f"layer_{len(self._layers)}"]
        self.__dict__["built"] = False
        if rebuild:
            self._maybe_build_from_input()
        return layer

    @property
    def layers(self):
        return list(self._layers)

    def _input_shape(self):
        if self._input_layer is not None:
            return self._input_layer.batch_shape
        if self._layers and self._layers[0]._batch_input_shape is not None:
            return self._layers[0]._batch_input_shape
        return None

    def _maybe_build_from_input(self):
        shape = self._input_shape()
        if shape is not None and self._layers:
            self.build(shape)

    def build(self, input_shape=None):
        """Builds every layer from `input_shape` (batch axis included, usually None)."""
        if input_shape is None:
            input_shape = self._input_shape()
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument.")
        if not self._layers:
            raise ValueError(
                f"Sequential model {self.name!r} has no layers. Add some with `.add()` before "
                "building or calling it."
            )
        shape = tuple(input_shape)
        il = self._input_layer
        if il is not None and tuple(il.batch_shape) == shape:
            inp = il._input_tensor
        else:
            inp = InputLayer(batch_shape=shape, name=unique_name("input_layer"))._input_tensor
        # calling the layers on the symbolic input builds them and records the graph, so that
        # `model.inputs`, `model.outputs` and each `layer.output` exist as in Keras 3
        t = inp
        shapes = []
        for layer in self._layers:
            t = layer(t)
            shapes.append(tuple(t.shape) if isinstance(t, KerasTensor) else None)
        d = self.__dict__
        d["inputs"] = [inp]
        d["outputs"] = [t]
        d["_shapes"] = shapes
        d["_build_shapes"] = tuple(input_shape)
        d["built"] = True

    def call(self, inputs, training=None, mask=None):
        if not self._layers:
            raise ValueError(
                f"Sequential model {self.name!r} has no layers. Add some with `.add()` before "
                "calling it."
            )
        want = self._input_shape()
        if want is not None and hasattr(inputs, "shape"):
            got = tuple(inputs.shape)
            if len(got) != len(want) or any(
                w is not None and w != g for w, g in zip(want[1:], got[1:], strict=False)
            ):
                raise ValueError(
                    f"Input 0 of layer {self._layers[0].name!r} is incompatible with the layer: "
                    f"expected shape={want}, found shape={got}"
                )
        x = inputs
        for layer in self._layers:
            if mask is not None and layer._call_takes_mask:
                out = layer(x, training=training, mask=mask)
            else:
                out = layer(x, training=training)
            mask = layer.compute_mask(x, mask)
            x = out
        return x

    def __call__(self, *args, **kwargs):
        x = args[0] if args else None
        if not self.built and x is not None and not isinstance(x, KerasTensor):
            shape = tuple(getattr(x, "shape", ()))
            if not any(getattr(la, "stateful", False) for la in self._flatten_layers()):
                shape = (None,) + shape[1:]  # a stateful RNN keeps the first call's batch size
            if isinstance(x, _e.ndarray):
                with x.device:
                    self.build(shape)
            else:
                self.build(shape)
        return super().__call__(*args, **kwargs)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        for layer in self._layers:
            shape = layer.compute_output_shape(shape)
        return shape

    @property
    def input_shape(self):
        return self._input_shape() or self._build_shapes

    @property
    def output_shape(self):
        if not self._shapes:
            raise AttributeError(f"Sequential model {self.name!r} has not been built yet")
        return self._shapes[-1]

    def get_config(self):
        from ._saving import serialize_layer

        layers = []
        if self._input_layer is not None:
            layers.append(serialize_layer(self._input_layer))
        layers.extend(serialize_layer(la) for la in self._layers)
        config = {"name": self.name, "trainable": self.trainable, "layers": layers}
        if self._build_shapes is not None:
            config["build_input_shape"] = list(self._build_shapes)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ._saving import deserialize_layer

        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for conf in config["layers"]:
            layer = deserialize_layer(conf, custom_objects)
            if isinstance(layer, InputLayer):
                model.add(layer._input_tensor, rebuild=False)
            else:
                model.add(layer, rebuild=False)
        shape = config.get("build_input_shape")
        if shape is not None:
            model.build(tuple(shape))
        else:
            model._maybe_build_from_input()
        return model
