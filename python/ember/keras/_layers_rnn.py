"""ember.keras's recurrent layers: SimpleRNN, LSTM and GRU with Keras's weight layouts
(``kernel (in, k*units)``, ``recurrent_kernel (units, k*units)``; gates i, f, c, o for LSTM and
z, r, h for GRU, ``reset_after=True`` by default) and options (return_sequences, return_state,
go_backwards, initial_state, dropout, recurrent_dropout, stateful). The input projection of all
time steps is one matmul; the recurrence is a loop of ember ops, differentiable on every device.

``stateful=True`` (Keras 3's rule): the layer holds its final states in non-trainable
``Variable`` s (``layer.states``, one ``(batch, units)`` per state, on the layer's device, not
among its weights) and starts the next call from them; the batch size must be fixed
(``keras.Input(batch_size=)``, ``batch_input_shape=`` or the first call's data). The states are
assigned after each call, so gradients never flow from one batch into the previous one;
``reset_state()`` (Keras 2: ``reset_states(states=None)``) zeroes or sets them."""

from __future__ import annotations

import ember as _e

from . import activations, initializers, regularizers
from ._layer import Layer, register
from ._layers_core import _positive_int, _ser_init, _ser_reg


class _RNN(Layer):
    gates = 1

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        seed=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        who = type(self).__name__
        self.units = _positive_int(units, who, "units")
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        for name, v in (("dropout", dropout), ("recurrent_dropout", recurrent_dropout)):
            if not 0.0 <= v < 1.0:
                raise ValueError(f"{who}: {name} must be in [0, 1), got {v!r}")
        self.dropout, self.recurrent_dropout = float(dropout), float(recurrent_dropout)
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards = bool(go_backwards)
        if not isinstance(stateful, bool):
            raise TypeError(f"{who}: stateful must be a bool, got {stateful!r}")
        self.stateful, self.unroll = stateful, bool(unroll)
        self.__dict__["states"] = None  # the stateful layer's Variables (not tracked weights)

    def _bias_shape(self):
        return (self.gates * self.units,)

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(
                f"Input 0 of layer {self.name!r} is incompatible with the layer: expected "
                f"ndim=3 (batch, timesteps, features), found shape {tuple(input_shape)}"
            )
        n_in, k = input_shape[-1], self.gates * self.units
        self.kernel = self.add_weight(
            (n_in, k), self.kernel_initializer, name="kernel", regularizer=self.kernel_regularizer
        )
        self.recurrent_kernel = self.add_weight(
            (self.units, k),
            self.recurrent_initializer,
            name="recurrent_kernel",
            regularizer=self.recurrent_regularizer,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                self._bias_shape(),
                self._bias_init(),
                name="bias",
                regularizer=self.bias_regularizer,
            )
        if self.stateful:
            self._build_states(input_shape[0])

    def _build_states(self, batch):
        """Keras 3's RNN.build: the state Variables for a fixed batch size (zeroed again when
        they exist), on the current default device (the input's, in a first call)."""
        if self.states is not None:
            self.reset_state()
            return
        if batch is None:
            raise ValueError(
                f"{self.name}: when using `stateful=True` in a RNN, the batch size must be "
                "static. Found a dynamic batch size (None); pass `batch_size=` to keras.Input, "
                "`batch_input_shape=` to the first layer, or call the model on data first"
            )
        from ._layer import Variable

        self.__dict__["states"] = [
            Variable(
                _e.zeros((int(batch), self.units), dtype=self.dtype),
                trainable=False,
                name="rnn_state",
                path=f"{self.name}/rnn_state" + (f"_{i}" if i else ""),
            )
            for i in range(self._n_states())
        ]

    def reset_state(self):
        """Zeroes the states of a stateful layer (Keras 3); nothing to do otherwise."""
        if self.states is not None:
            for v in self.states:
                v.assign(_e.zeros(tuple(v.shape), dtype=v.dtype, device=v.device))

    def reset_states(self, states=None):
        """Keras 2's spelling: zeroes the states, or sets them to `states` (one array, or a list
        of ``(batch, units)`` arrays: ``[h]``, or ``[h, c]`` for LSTM)."""
        if states is None:
            self.reset_state()
            return
        if not self.stateful:
            raise ValueError(f"{self.name}: reset_states(states=...) needs stateful=True")
        if self.states is None:
            raise ValueError(
                f"{self.name}: reset_states(states=...) before the layer is built; its batch "
                "size is not known yet"
            )
        values = list(states) if isinstance(states, (list, tuple)) else [states]
        if len(values) != len(self.states):
            raise ValueError(
                f"{self.name}: reset_states expects {len(self.states)} array(s) in `states`, "
                f"got {len(values)}"
            )
        for v, a in zip(self.states, values, strict=True):
            shape = tuple(getattr(a, "shape", ()))
            if shape != tuple(v.shape):
                raise ValueError(
                    f"{self.name}: reset_states: `states` entry of shape {shape} does not match "
                    f"the state shape {tuple(v.shape)}"
                )
            v.assign(a)

    def _bias_init(self):
        return self.bias_initializer

    def _masks(self, x, training):
        from . import initializers as _init

        n = x.shape[0]
        mx = mh = None
        if training and self.dropout > 0:
            keep = _init.global_rng().random((n, x.shape[-1]), device=x.device) >= self.dropout
            mx = keep.astype(x.dtype) / (1.0 - self.dropout)
        if training and self.recurrent_dropout > 0:
            keep = _init.global_rng().random((n, self.units), device=x.device)
            keep = keep >= self.recurrent_dropout
            mh = keep.astype(x.dtype) / (1.0 - self.recurrent_dropout)
        return mx, mh

    def compute_mask(self, inputs, mask=None):
        if mask is None or not self.return_sequences:
            return None
        return _e.flip(mask, axis=1) if self.go_backwards else mask

    def call(self, inputs, initial_state=None, training=False, mask=None):
        x = inputs
        n, t = x.shape[0], x.shape[1]
        mx, mh = self._masks(x, training)
        if mx is not None:
            x = x * _e.expand_dims(mx, axis=1)
        proj = _e.matmul(x, self.kernel)  # (n, t, k*units): every time step at once
        if self.bias is not None:
            proj = proj + self._input_bias()
        states = self._initial(x, n, initial_state)
        outputs = []
        steps = range(t - 1, -1, -1) if self.go_backwards else range(t)
        for i in steps:
            new = self._step(proj[:, i], states, mh)
            if mask is not None:
                # a masked (padding) step keeps the state and emits zeros, as Keras's RNNs do
                m = _e.expand_dims(mask[:, i], axis=-1)
                new = [_e.where(m, a, b) for a, b in zip(new, states, strict=True)]
                if self.return_sequences:
                    outputs.append(_e.where(m, new[0], 0.0))
            elif self.return_sequences:
                outputs.append(new[0])
            states = new
        if self.stateful:  # Keras assigns the final states: no gradient into the next batch
            for v, a in zip(self.states, states, strict=True):
                v.assign(a.detach())
        out = _e.stack(outputs, axis=1) if self.return_sequences else states[0]
        if self.return_state:
            return [out] + list(states)
        return out

    def _input_bias(self):
        return self.bias

    def _initial(self, x, n, initial_state):
        k = self._n_states()
        if initial_state is None and self.stateful:
            if self.states is None:
                self._build_states(n)
            if int(self.states[0].shape[0]) != n:
                raise ValueError(
                    f"{self.name}: a stateful RNN was built for batch size "
                    f"{int(self.states[0].shape[0])} but got a batch of {n}; use that batch "
                    "size (`batch_size=` of fit/predict) and a sample count divisible by it"
                )
            # copies: the Variables are overwritten after the call, the graph keeps these
            return [v.detach().astype(x.dtype, copy=True) for v in self.states]
        if initial_state is None:
            z = _e.zeros((n, self.units), dtype=x.dtype, device=x.device)
            return [z] * k
        states = (
            list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
        )
        if len(states) != k:
            raise ValueError(f"{self.name}: expected {k} initial state(s), got {len(states)}")
        return states

    def _n_states(self):
        return 1

    def compute_output_shape(self, input_shape):
        n, t = input_shape[0], input_shape[1]
        out = (n, t, self.units) if self.return_sequences else (n, self.units)
        if self.return_state:
            return [out] + [(n, self.units)] * self._n_states()
        return out

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "use_bias": self.use_bias,
            "kernel_initializer": _ser_init(self.kernel_initializer),
            "recurrent_initializer": _ser_init(self.recurrent_initializer),
            "bias_initializer": _ser_init(self.bias_initializer),
            "kernel_regularizer": _ser_reg(self.kernel_regularizer),
            "recurrent_regularizer": _ser_reg(self.recurrent_regularizer),
            "bias_regularizer": _ser_reg(self.bias_regularizer),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "stateful": self.stateful,
            "unroll": self.unroll,
        }


@register
class SimpleRNN(_RNN):
    """``h = activation(x @ kernel + h @ recurrent_kernel + bias)``."""

    gates = 1

    def __init__(self, units, activation="tanh", **kwargs):
        kwargs.pop("recurrent_activation", None)
        super().__init__(units, activation=activation, **kwargs)

    def _step(self, xp, states, mh):
        h = states[0] if mh is None else states[0] * mh
        return [self.activation(xp + _e.matmul(h, self.recurrent_kernel))]

    def get_config(self):
        c = super().get_config()
        c.pop("recurrent_activation")
        return c


@register
class LSTM(_RNN):
    """Keras's LSTM (gates i, f, c, o; ``unit_forget_bias`` sets the forget gate's bias to 1)."""

    gates = 4

    def __init__(self, units, unit_forget_bias=True, **kwargs):
        super().__init__(units, **kwargs)
        self.unit_forget_bias = bool(unit_forget_bias)

    def _bias_init(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        base, u = self.bias_initializer, self.units

        def init(shape, dtype=None):
            b = base((u,), dtype=dtype)
            return _e.concat([b, _e.ones((u,), dtype=b.dtype), base((2 * u,), dtype=dtype)])

        return init

    def _n_states(self):
        return 2

    def _step(self, xp, states, mh):
        h, c = states
        if mh is not None:
            h = h * mh
        z = xp + _e.matmul(h, self.recurrent_kernel)
        u = self.units
        i = self.recurrent_activation(z[:, :u])
        f = self.recurrent_activation(z[:, u : 2 * u])
        g = self.activation(z[:, 2 * u : 3 * u])
        o = self.recurrent_activation(z[:, 3 * u :])
        c = f * c + i * g
        return [o * self.activation(c), c]

    def get_config(self):
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias}


@register
class GRU(_RNN):
    """Keras's GRU (gates z, r, h). With ``reset_after=True`` (the default) the bias is
    ``(2, 3*units)``: input and recurrent biases, and the reset gate multiplies the recurrent
    candidate after its matmul."""

    gates = 3

    def __init__(self, units, reset_after=True, **kwargs):
        super().__init__(units, **kwargs)
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _input_bias(self):
        return self.bias[0] if self.reset_after else self.bias

    def _step(self, xp, states, mh):
        h = states[0]
        hr = h if mh is None else h * mh
        u = self.units
        if self.reset_after:
            inner = _e.matmul(hr, self.recurrent_kernel)
            if self.bias is not None:
                inner = inner + self.bias[1]
            z = self.recurrent_activation(xp[:, :u] + inner[:, :u])
            r = self.recurrent_activation(xp[:, u : 2 * u] + inner[:, u : 2 * u])
            hh = self.activation(xp[:, 2 * u :] + r * inner[:, 2 * u :])
        else:
            inner = _e.matmul(hr, self.recurrent_kernel[:, : 2 * u])
            z = self.recurrent_activation(xp[:, :u] + inner[:, :u])
            r = self.recurrent_activation(xp[:, u : 2 * u] + inner[:, u:])
            hh = self.activation(
                xp[:, 2 * u :] + _e.matmul(r * hr, self.recurrent_kernel[:, 2 * u :])
            )
        return [z * h + (1.0 - z) * hh]

    def get_config(self):
        return {**super().get_config(), "reset_after": self.reset_after}
