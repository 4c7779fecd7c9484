"""ember.nn's recurrent layers: RNN, LSTM, GRU and their cells (PyTorch's parameters, layouts,
gate orders and initialization): multi-layer, bidirectional, ``batch_first``, unbatched inputs,
dropout between layers. Each layer multiplies the whole input sequence by its input weights in
one matmul, then steps through time; all of it is differentiable ember ops on either device."""

from __future__ import annotations

import math

from .. import _core
from .._array import asarray
from .._joining import concatenate, stack
from ._functional_activation import sigmoid, tanh
from ._functional_layers import dropout
from ._lstm_fused import lstm_cell
from ._lstm_fused import steps as _steps
from ._module import Module
from ._parameter import Parameter

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _uniform(shape, bound, dtype, device):
    from .. import random

    return Parameter(random._global.uniform(-bound, bound, shape, dtype=dtype, device=device))


def _cell_step(mode, gx, h, c, w_hh, b_hh, w_hr=None):
    """One time step: gx is the input's contribution (x @ W_ih^T + b_ih) for this step; an
    LSTM with projections (w_hr) returns the projected hidden state."""
    gh = h @ w_hh.T
    if b_hh is not None:
        gh = gh + b_hh
    if mode == "LSTM":
        h, c = lstm_cell(gx, gh, c)  # one fused kernel (and one autograd node)
        return (h if w_hr is None else h @ w_hr.T), c
    if mode == "GRU":
        xr, xz, xn = _chunks(gx, 3)
        hr, hz, hn = _chunks(gh, 3)
        r = sigmoid(xr + hr)
        z = sigmoid(xz + hz)
        n = tanh(xn + r * hn)
        return (1 - z) * n + z * h, None
    s = gx + gh
    return (tanh(s) if mode == "RNN_TANH" else _core.maximum(s, 0.0)), None


def _chunks(x, k):
    n = x.shape[-1] // k
    return tuple(x[..., j * n : (j + 1) * n] for j in range(k))


class _RNNBase(Module):
    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        who = f"ember.nn.{type(self).__name__}"
        for name, v in (
            ("input_size", input_size),
            ("hidden_size", hidden_size),
            ("num_layers", num_layers),
        ):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{who}: {name} must be a positive int, got {v!r}")
        if not 0 <= dropout <= 1:
            raise ValueError(f"{who}: dropout must be in [0, 1], got {dropout}")
        if isinstance(proj_size, bool) or not isinstance(proj_size, int) or proj_size < 0:
            raise ValueError(f"{who}: proj_size must be a non-negative int, got {proj_size!r}")
        if proj_size >= hidden_size:
            raise ValueError(
                f"{who}: proj_size has to be smaller than hidden_size, got {proj_size} >= "
                f"{hidden_size}"
            )
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        out_size = proj_size or hidden_size  # the size of h
        dtype = dtype or "float32"
        gate = _GATES[mode] * hidden_size
        bound = 1.0 / math.sqrt(hidden_size)
        self._flat_names = []
        for layer in range(num_layers):
            for d in range(2 if bidirectional else 1):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                in_size = input_size if layer == 0 else out_size * (2 if bidirectional else 1)
                setattr(self, "weight_ih" + sfx, _uniform((gate, in_size), bound, dtype, device))
                setattr(self, "weight_hh" + sfx, _uniform((gate, out_size), bound, dtype, device))
                names = ["weight_ih" + sfx, "weight_hh" + sfx]
                if bias:
                    setattr(self, "bias_ih" + sfx, _uniform((gate,), bound, dtype, device))
                    setattr(self, "bias_hh" + sfx, _uniform((gate,), bound, dtype, device))
                    names += ["bias_ih" + sfx, "bias_hh" + sfx]
                if proj_size:
                    w_hr = _uniform((proj_size, hidden_size), bound, dtype, device)
                    setattr(self, "weight_hr" + sfx, w_hr)
                    names.append("weight_hr" + sfx)
                self._flat_names.append(names)

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._flat_names]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        return s

    def forward(self, input, hx=None):
        from .utils.rnn import PackedSequence

        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        return self._forward(input, hx, None)

    def _forward_packed(self, packed, hx):
        """A PackedSequence: the padded batch (original order) runs with each sequence's state
        frozen past its end (backward direction: before its end), then is packed again; h_n
        (and c_n) are each sequence's states at its own ends, in the original order."""
        from .utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

        padded, lengths = pad_packed_sequence(packed)
        lens = asarray(lengths, device=padded.device)
        steps = _core.arange(padded.shape[0], dtype="int64", device=padded.device)
        mask = (steps.reshape((-1, 1)) < lens.reshape((1, -1)))[..., None]  # (L, N, 1)
        batch_first, self.batch_first = self.batch_first, False
        try:
            out, state = self._forward(padded, hx, mask)
        finally:
            self.batch_first = batch_first
        repacked = pack_padded_sequence(out, lengths, enforce_sorted=packed.sorted_indices is None)
        data = PackedSequence(
            repacked.data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices
        )
        return data, state

    def _forward(self, input, hx, mask):
        who = f"ember.nn.{type(self).__name__}"
        if not isinstance(input, _core.ndarray):
            raise TypeError(f"{who}: input must be an array, got {type(input).__name__}")
        unbatched = input.ndim == 2
        if input.ndim not in (2, 3):
            raise ValueError(f"{who}: input must be 2-d (unbatched) or 3-d, got {input.ndim}-d")
        x = (
            input[:, None, :]
            if unbatched
            else (input.swapaxes(0, 1) if self.batch_first else input)
        )
        if x.shape[-1] != self.input_size:
            raise ValueError(f"{who}: input has {x.shape[-1]} features, expected {self.input_size}")
        L, N = x.shape[0], x.shape[1]  # noqa: N806
        D = 2 if self.bidirectional else 1  # noqa: N806
        lstm = self.mode == "LSTM"
        h0, c0 = (hx if lstm else (hx, None)) if hx is not None else (None, None)
        if h0 is not None and unbatched:
            h0 = h0[:, None, :]
            c0 = c0[:, None, :] if c0 is not None else None
        out_size = self.proj_size or self.hidden_size
        h_shape = (self.num_layers * D, N, out_size)
        c_shape = (self.num_layers * D, N, self.hidden_size)
        if h0 is None:
            h0 = _core.zeros(h_shape, dtype=x.dtype, device=x.device)
        if lstm and c0 is None:
            c0 = _core.zeros(c_shape, dtype=x.dtype, device=x.device)
        if h0.shape != h_shape:
            raise ValueError(f"{who}: hidden state has shape {h0.shape}, expected {h_shape}")
        if lstm and c0.shape != c_shape:
            raise ValueError(f"{who}: cell state has shape {c0.shape}, expected {c_shape}")
        hn, cn = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(D):
                names = self._flat_names[layer * D + d]
                w_ih, w_hh = getattr(self, names[0]), getattr(self, names[1])
                b_ih = getattr(self, names[2]) if self.bias else None
                b_hh = getattr(self, names[3]) if self.bias else None
                w_hr = getattr(self, names[-1]) if self.proj_size else None
                gx = x @ w_ih.T  # the whole sequence at once: (L, N, gate)
                if b_ih is not None:
                    gx = gx + b_ih
                if lstm and b_hh is not None:  # both biases added once, not at every step
                    gx = gx + b_hh
                    b_hh = None
                gxs = _steps(gx)
                h = h0[layer * D + d]
                c = c0[layer * D + d] if lstm else None
                steps = range(L - 1, -1, -1) if d else range(L)
                seq = [None] * L
                for t in steps:
                    h_t, c_t = _cell_step(self.mode, gxs[t], h, c, w_hh, b_hh, w_hr)
                    if mask is not None:  # packed input: states stay put outside a sequence
                        h_t = _core.where(mask[t], h_t, h)
                        c_t = _core.where(mask[t], c_t, c) if lstm else None
                    h, c = h_t, c_t
                    seq[t] = h
                outs.append(
                    stack(seq)
                    if L
                    else _core.zeros((0, N, out_size), dtype=x.dtype, device=x.device)
                )
                hn.append(h)
                if lstm:
                    cn.append(c)
            x = outs[0] if D == 1 else concatenate(outs, axis=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = dropout(x, self.dropout, True)
        out = x
        h_n = stack(hn)
        c_n = stack(cn) if lstm else None
        if unbatched:
            out, h_n = out[:, 0, :], h_n[:, 0, :]
            c_n = c_n[:, 0, :] if lstm else None
        elif self.batch_first:
            out = out.swapaxes(0, 1)
        return out, ((h_n, c_n) if lstm else h_n)


class RNN(_RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu)."""

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        nonlinearity="tanh",
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
    ):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"ember.nn.RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}"
            )
        self.nonlinearity = nonlinearity
        super().__init__(
            "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            device=device,
            dtype=dtype,
        )


class LSTM(_RNNBase):
    """Long short-term memory (gates i, f, g, o, in PyTorch's order)."""

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__(
            "LSTM",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            proj_size,
            device,
            dtype,
        )


class GRU(_RNNBase):
    """Gated recurrent unit (gates r, z, n, in PyTorch's order)."""

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
    ):
        super().__init__(
            "GRU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            device=device,
            dtype=dtype,
        )


class _CellBase(Module):
    def __init__(self, mode, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__()
        self.mode, self.input_size, self.hidden_size, self.bias = (
            mode,
            input_size,
            hidden_size,
            bias,
        )
        gate = _GATES[mode] * hidden_size
        bound = 1.0 / math.sqrt(hidden_size)
        dtype = dtype or "float32"
        self.weight_ih = _uniform((gate, input_size), bound, dtype, device)
        self.weight_hh = _uniform((gate, hidden_size), bound, dtype, device)
        self.bias_ih = _uniform((gate,), bound, dtype, device) if bias else None
        self.bias_hh = _uniform((gate,), bound, dtype, device) if bias else None

    def _step(self, input, h, c):
        unbatched = input.ndim == 1
        x = input[None] if unbatched else input
        if h is None:
            h = _core.zeros((x.shape[0], self.hidden_size), dtype=x.dtype, device=x.device)
        elif unbatched:
            h = h[None]
        if self.mode == "LSTM":
            c = (
                _core.zeros(h.shape, dtype=h.dtype, device=h.device)
                if c is None
                else (c[None] if unbatched else c)
            )
        gx = x @ self.weight_ih.T
        if self.bias_ih is not None:
            gx = gx + self.bias_ih
        h, c = _cell_step(self.mode, gx, h, c, self.weight_hh, self.bias_hh)
        if unbatched:
            h = h[0]
            c = c[0] if c is not None else None
        return h, c

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_CellBase):
    """One step of an Elman RNN."""

    def __init__(
        self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None
    ):
        super().__init__(
            "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU",
            input_size,
            hidden_size,
            bias,
            device,
            dtype,
        )
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        return self._step(input, hx, None)[0]


class LSTMCell(_CellBase):
    """One LSTM step: returns (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        h, c = (None, None) if hx is None else hx
        return self._step(input, h, c)


class GRUCell(_CellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        return self._step(input, hx, None)[0]
