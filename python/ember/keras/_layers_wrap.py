"""Keras's wrappers ``TimeDistributed`` (a layer applied to every time step, as one call over
the batch and time dimensions merged) and ``Bidirectional`` (a recurrent layer run forwards and,
as a copy with ``go_backwards=True``, backwards, the outputs merged), and the ``Normalization``
preprocessing layer (``adapt`` to data: per-feature mean and variance as non-trainable weights;
``invert=True`` undoes it)."""

from __future__ import annotations

import numpy as np

import ember as _e

from ._layer import Layer, register

__all__ = ["Bidirectional", "Normalization", "TimeDistributed"]

_EPSILON = 1e-7  # keras.config.epsilon()


@register
class TimeDistributed(Layer):
    """Applies `layer` to every slice ``inputs[:, t]`` (inputs of shape (batch, time, ...))."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(
                "Please initialize `TimeDistributed` layer with a `keras.layers.Layer` "
                f"instance. Received: {layer}"
            )
        super().__init__(**kwargs)
        self.layer = layer

    def _check(self, shape):
        if len(shape) < 3:
            raise ValueError(
                "`TimeDistributed` Layer should be passed an `input_shape` with at least 3 "
                f"dimensions, received: {tuple(shape)}"
            )

    def build(self, input_shape):
        self._check(input_shape)
        if not self.layer.built:
            self.layer._maybe_build((input_shape[0],) + tuple(input_shape[2:]))

    def call(self, inputs, training=None):
        self._check(inputs.shape)
        n, t = inputs.shape[0], inputs.shape[1]
        y = self.layer(inputs.reshape((n * t,) + tuple(inputs.shape[2:])), training=training)
        return y.reshape((n, t) + tuple(y.shape[1:]))

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        inner = self.layer.compute_output_shape((input_shape[0],) + tuple(input_shape[2:]))
        return (input_shape[0], input_shape[1]) + tuple(inner[1:])

    def get_config(self):
        from ._saving import serialize_layer

        return {**super().get_config(), "layer": serialize_layer(self.layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ._saving import deserialize_layer

        config = dict(config)
        layer = deserialize_layer(config.pop("layer"), custom_objects)
        return cls(layer, **config)


_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def _removeprefix(name, prefix):
    return name[len(prefix) :] if name.startswith(prefix) else name


@register
class Bidirectional(Layer):
    """Runs `layer` (an LSTM, GRU or SimpleRNN) over the sequence and a fresh copy of it with
    ``go_backwards=True`` (or `backward_layer`), and merges the two outputs (`merge_mode`
    ``"concat"``, ``"sum"``, ``"mul"``, ``"ave"``, or None for the list of both). With
    ``return_sequences`` the backward output is flipped back to the input's time order; with
    ``return_state`` the forward layer's states follow the output, then the backward layer's.
    Weights: the forward layer's, then the backward layer's (Keras's order)."""

    supports_masking = True

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        from ._saving import deserialize_layer, serialize_layer

        if not isinstance(layer, Layer):
            raise ValueError(
                "Please initialize `Bidirectional` layer with a `keras.layers.Layer` instance. "
                f"Received: {layer}"
            )
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(
                "`backward_layer` need to be a `keras.layers.Layer` instance. Received: "
                f"{backward_layer}"
            )
        if merge_mode not in _MERGE_MODES:
            raise ValueError(
                f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                '{"sum", "mul", "ave", "concat", None}'
            )
        for who, la in (("layer", layer), ("backward_layer", backward_layer)):
            if la is not None and not all(
                hasattr(la, a) for a in ("go_backwards", "return_sequences", "return_state")
            ):
                raise ValueError(
                    f"Bidirectional: `{who}` must be a recurrent layer (with `go_backwards`, "
                    "`return_sequences` and `return_state`, as LSTM, GRU and SimpleRNN have). "
                    f"Received: {who}={type(la).__name__}"
                )
        super().__init__(**kwargs)
        # fresh layers from the config, so that nothing of `layer`'s state is carried over
        conf = serialize_layer(layer)
        conf["config"]["name"] = "forward_" + _removeprefix(layer.name, "forward_")
        self.forward_layer = deserialize_layer(conf)
        if backward_layer is None:
            conf = serialize_layer(layer)
            conf["config"]["go_backwards"] = True
            conf["config"]["name"] = "backward_" + _removeprefix(layer.name, "backward_")
            backward_layer = deserialize_layer(conf)
        self.backward_layer = backward_layer
        self._verify_layer_config()
        self.merge_mode = merge_mode
        self.__dict__["_initial_weights"] = None if weights is None else list(weights)
        self.stateful = bool(getattr(layer, "stateful", False))
        self.return_sequences = bool(layer.return_sequences)
        self.return_state = bool(layer.return_state)

    @property
    def states(self):
        """The forward layer's state Variables, then the backward layer's (stateful only)."""
        fw, bw = self.forward_layer.states, self.backward_layer.states
        return None if fw is None else list(fw) + list(bw or [])

    def reset_state(self):
        for la in (self.forward_layer, self.backward_layer):
            la.reset_state()

    def reset_states(self, states=None):
        """Zeroes both layers' states, or sets them from `states` (forward's, then backward's)."""
        if states is None:
            self.reset_state()
            return
        values = list(states) if isinstance(states, (list, tuple)) else [states]
        if len(values) % 2:
            raise ValueError(
                f"{self.name}: reset_states expects the forward layer's `states` followed by "
                f"the backward layer's (an even count), got {len(values)}"
            )
        half = len(values) // 2
        self.forward_layer.reset_states(values[:half])
        self.backward_layer.reset_states(values[half:])

    def _verify_layer_config(self):
        fw, bw = self.forward_layer, self.backward_layer
        if fw.go_backwards == bw.go_backwards:
            raise ValueError(
                "Forward layer and backward layer should have different `go_backwards` value. "
                f"Received: forward_layer.go_backwards {fw.go_backwards}, "
                f"backward_layer.go_backwards={bw.go_backwards}"
            )
        for a in ("stateful", "return_sequences", "return_state"):
            f, b = getattr(fw, a, False), getattr(bw, a, False)
            if f != b:
                raise ValueError(
                    "Forward layer and backward layer are expected to have the same value for "
                    f'attribute "{a}", got "{f}" for forward layer and "{b}" for backward layer'
                )

    def build(self, sequences_shape, initial_state_shape=None):
        for la in (self.forward_layer, self.backward_layer):
            if not la.built:
                la._maybe_build(tuple(sequences_shape))
        w = self._initial_weights
        if w:
            half = len(w) // 2
            self.forward_layer.set_weights(w[:half])
            self.backward_layer.set_weights(w[half:])
            self.__dict__["_initial_weights"] = None

    def call(self, sequences, initial_state=None, mask=None, training=False):
        kw = {"training": training}
        if mask is not None:
            kw["mask"] = mask
        fs = bs = None
        if initial_state is not None:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else None
            if states is None or len(states) % 2:
                raise ValueError(
                    "Bidirectional: initial_state must be a list of the forward layer's states "
                    f"followed by the backward layer's; got {initial_state!r}"
                )
            half = len(states) // 2
            fs, bs = states[:half], states[half:]
        y = self.forward_layer(sequences, initial_state=fs, **kw)
        y_rev = self.backward_layer(sequences, initial_state=bs, **kw)
        states = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = _e.flip(y_rev, axis=1)  # the backward layer emits its steps last-to-first
        mode = self.merge_mode
        if mode == "concat":
            out = _e.concat([y, y_rev], axis=-1)
        elif mode == "sum":
            out = y + y_rev
        elif mode == "ave":
            out = (y + y_rev) / 2
        elif mode == "mul":
            out = y * y_rev
        else:
            out = [y, y_rev]
        if self.return_state:
            return (out if mode is None else [out]) + states
        return out

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        out = self.forward_layer.compute_output_shape(tuple(sequences_shape))
        states = []
        if self.return_state:
            out, states = tuple(out[0]), [tuple(s) for s in out[1:]]
        if self.merge_mode == "concat":
            out = out[:-1] + (None if out[-1] is None else 2 * out[-1],)
        outs = [out, out] if self.merge_mode is None else [out]
        if self.return_state:
            return outs + states + states
        return outs if self.merge_mode is None else out

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        return mask if self.return_sequences else None

    def get_config(self):
        from ._saving import serialize_layer

        return {
            **super().get_config(),
            "merge_mode": self.merge_mode,
            "layer": serialize_layer(self.forward_layer),
            "backward_layer": serialize_layer(self.backward_layer),
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ._saving import deserialize_layer

        config = dict(config)
        config["layer"] = deserialize_layer(config["layer"], custom_objects)
        backward = config.pop("backward_layer", None)
        if backward is not None:
            config["backward_layer"] = deserialize_layer(backward, custom_objects)
        return cls(**config)


@register
class Normalization(Layer):
    """``(x - mean) / max(sqrt(variance), epsilon)`` per feature along `axis` (default the last);
    `mean`/`variance` given, or learned by :meth:`adapt`."""

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if (mean is None) != (variance is None):
            raise ValueError(
                "When setting values directly, both `mean` and `variance` must be set. "
                f"Received: mean={mean} and variance={variance}"
            )
        self.axis = (axis,) if isinstance(axis, int) else tuple(axis or ())
        self.invert = bool(invert)
        self._init_mean, self._init_var = mean, variance

    def _stat_shape(self, shape):
        nd = len(shape)
        keep = {a % nd for a in self.axis}
        return tuple(shape[i] if i in keep else 1 for i in range(1, nd))

    def build(self, input_shape):
        shape = self._stat_shape(input_shape)
        self.mean = self.add_weight(shape, "zeros", trainable=False, name="mean")
        self.variance = self.add_weight(shape, "ones", trainable=False, name="variance")
        if self._init_mean is not None:
            for var, v in ((self.mean, self._init_mean), (self.variance, self._init_var)):
                a = _e.asarray(np.asarray(v, "float32"), device=var.device)
                var.assign(_e.broadcast_to(a, shape))

    def adapt(self, data, batch_size=None, steps=None):
        """Sets the mean and variance from `data` (an array; all axes but `axis` reduced)."""
        x = data if isinstance(data, _e.ndarray) else _e.asarray(np.asarray(data))
        x = x.astype(_e.float32) if x.dtype != _e.float32 else x
        if not self.built:
            self._maybe_build(tuple(x.shape))
        nd = x.ndim
        keep = {a % nd for a in self.axis}
        red = tuple(i for i in range(nd) if i not in keep)
        x = x.to(self.mean.device)
        self.mean.assign(_e.mean(x, axis=red, keepdims=True)[0])
        self.variance.assign(_e.var(x, axis=red, keepdims=True)[0])

    def call(self, inputs):
        x = inputs.astype(self.mean.dtype) if inputs.dtype != self.mean.dtype else inputs
        std = _e.maximum(_e.sqrt(self.variance), _EPSILON)
        return x * std + self.mean if self.invert else (x - self.mean) / std

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        conf = {**super().get_config(), "axis": list(self.axis), "invert": self.invert}
        conf["mean"] = None if self._init_mean is None else np.asarray(self._init_mean).tolist()
        conf["variance"] = None if self._init_var is None else np.asarray(self._init_var).tolist()
        return conf
