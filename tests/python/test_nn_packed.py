"""ember.nn.utils.rnn: packed sequences (PyTorch's layout) and the recurrent layers on them."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import nn
from ember.nn.utils import rnn


def _seqs(device, lengths, features=3, seed=0):
    rng = np.random.default_rng(seed)
    return [
        ember.asarray(rng.standard_normal((n, features)).astype(np.float32), device=device)
        for n in lengths
    ]


def test_pad_and_pack_layout(device):
    seqs = _seqs(device, [2, 4, 1])
    padded = rnn.pad_sequence(seqs)  # (L, N, F)
    assert padded.shape == (4, 3, 3)
    p = ember.asnumpy(padded)
    np.testing.assert_array_equal(p[:2, 0], ember.asnumpy(seqs[0]))
    assert (p[2:, 0] == 0).all() and (p[1:, 2] == 0).all()
    bf = rnn.pad_sequence(seqs, batch_first=True, padding_value=-1.0)
    assert bf.shape == (3, 4, 3) and (ember.asnumpy(bf)[2, 1:] == -1).all()
    left = rnn.pad_sequence(seqs, batch_first=True, padding_side="left")
    np.testing.assert_array_equal(ember.asnumpy(left)[0, 2:], ember.asnumpy(seqs[0]))

    packed = rnn.pack_padded_sequence(padded, [2, 4, 1], enforce_sorted=False)
    # PyTorch's layout: time-major, longest first, batch_sizes per step
    np.testing.assert_array_equal(ember.asnumpy(packed.batch_sizes), [3, 2, 1, 1])
    np.testing.assert_array_equal(ember.asnumpy(packed.sorted_indices), [1, 0, 2])
    np.testing.assert_array_equal(ember.asnumpy(packed.unsorted_indices), [1, 0, 2])
    want = np.concatenate([p[0, [1, 0, 2]], p[1, [1, 0]], p[2, [1]], p[3, [1]]])
    np.testing.assert_array_equal(ember.asnumpy(packed.data), want)
    back, lengths = rnn.pad_packed_sequence(packed, batch_first=True, total_length=5)
    assert back.shape == (3, 5, 3)
    np.testing.assert_array_equal(ember.asnumpy(lengths), [2, 4, 1])
    np.testing.assert_array_equal(ember.asnumpy(back)[:, :4], p.swapaxes(0, 1))
    again = rnn.unpack_sequence(rnn.pack_sequence(seqs, enforce_sorted=False))
    for a, b in zip(again, seqs, strict=True):
        np.testing.assert_array_equal(ember.asnumpy(a), ember.asnumpy(b))


def test_packing_errors():
    seqs = _seqs("cpu", [2, 4])
    with pytest.raises(RuntimeError, match="enforce_sorted"):
        rnn.pack_sequence(seqs)
    with pytest.raises(RuntimeError, match="positive"):
        rnn.pack_padded_sequence(rnn.pad_sequence(seqs), [0, 4], enforce_sorted=False)
    with pytest.raises(ValueError, match="lengths"):
        rnn.pack_padded_sequence(rnn.pad_sequence(seqs), [1, 2, 3])
    with pytest.raises(TypeError, match="PackedSequence"):
        rnn.pad_packed_sequence(rnn.pad_sequence(seqs))


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_recurrent_layers_on_packed_sequences_equal_each_sequence_alone(
    device, kind, bidirectional
):
    ember.random.seed(0)
    layer = getattr(nn, kind)(3, 5, num_layers=2, bidirectional=bidirectional).to(device)
    lengths = [3, 5, 1, 4]
    seqs = _seqs(device, lengths)
    packed = rnn.pack_sequence(seqs, enforce_sorted=False)
    out, state = layer(packed)
    assert isinstance(out, rnn.PackedSequence)
    padded, got_lengths = rnn.pad_packed_sequence(out)
    np.testing.assert_array_equal(ember.asnumpy(got_lengths), lengths)
    h_n = state[0] if kind == "LSTM" else state
    for i, s in enumerate(seqs):
        alone, alone_state = layer(s)  # unbatched: (L_i, D * H)
        np.testing.assert_allclose(
            ember.asnumpy(padded)[: lengths[i], i], ember.asnumpy(alone), rtol=1e-5, atol=1e-5
        )
        alone_h = alone_state[0] if kind == "LSTM" else alone_state
        np.testing.assert_allclose(
            ember.asnumpy(h_n)[:, i], ember.asnumpy(alone_h), rtol=1e-5, atol=1e-5
        )


def test_packed_lstm_gradients_and_batch_first(device):
    ember.random.seed(1)
    lstm = nn.LSTM(3, 4, batch_first=True).to(device)
    seqs = [s.requires_grad_() for s in _seqs(device, [4, 2])]
    padded = rnn.pad_sequence(seqs, batch_first=True)
    packed = rnn.pack_padded_sequence(padded, [4, 2], batch_first=True)
    out, (h, c) = lstm(packed)
    h.sum().backward()
    g = ember.asnumpy(seqs[1].grad)
    assert np.isfinite(g).all() and np.abs(g).sum() > 0
    # the second sequence's gradient equals the one it gets alone
    alone = seqs[1].detach().requires_grad_()
    _, (h1, _) = lstm(alone[None])
    h1.sum().backward()
    np.testing.assert_allclose(g, ember.asnumpy(alone.grad), rtol=1e-5, atol=1e-6)


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def test_lstm_with_projections_matches_a_numpy_replay(device):
    ember.random.seed(2)
    lstm = nn.LSTM(3, 6, proj_size=2).to(device)
    assert lstm.weight_hh_l0.shape == (24, 2) and lstm.weight_hr_l0.shape == (2, 6)
    x = _seqs(device, [5])[0][:, None, :]  # (L, 1, 3)
    out, (h, c) = lstm(x)
    assert out.shape == (5, 1, 2) and h.shape == (1, 1, 2) and c.shape == (1, 1, 6)
    w = {n: ember.asnumpy(p).astype(np.float64) for n, p in lstm.named_parameters()}
    xs = ember.asnumpy(x)[:, 0].astype(np.float64)
    hh, cc, outs = np.zeros(2), np.zeros(6), []
    for t in range(5):
        g = w["weight_ih_l0"] @ xs[t] + w["bias_ih_l0"] + w["weight_hh_l0"] @ hh + w["bias_hh_l0"]
        i, f, gg, o = np.split(g, 4)
        cc = _sigmoid(f) * cc + _sigmoid(i) * np.tanh(gg)
        hh = w["weight_hr_l0"] @ (_sigmoid(o) * np.tanh(cc))
        outs.append(hh)
    np.testing.assert_allclose(ember.asnumpy(out)[:, 0], np.array(outs), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ember.asnumpy(c)[0, 0], cc, rtol=1e-4, atol=1e-5)


def test_lstm_projections_deep_bidirectional_and_packed(device):
    ember.random.seed(3)
    lstm = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2).to(device)
    assert lstm.weight_ih_l1.shape == (20, 4)  # the next layer sees 2 directions x proj_size
    seqs = _seqs(device, [4, 2])
    out, (h, c) = lstm(rnn.pack_sequence(seqs))
    assert h.shape == (4, 2, 2) and c.shape == (4, 2, 5)
    padded, _ = rnn.pad_packed_sequence(out)
    assert padded.shape == (4, 2, 4)
    alone, _ = lstm(seqs[1])
    np.testing.assert_allclose(ember.asnumpy(padded)[:2, 1], ember.asnumpy(alone), atol=1e-5)
    with pytest.raises(ValueError, match="proj_size"):
        nn.LSTM(3, 5, proj_size=5)
    with pytest.raises(ValueError, match="hidden state"):
        lstm(seqs[0][:, None, :].swapaxes(0, 1), (ember.zeros((4, 1, 5)), ember.zeros((4, 1, 5))))
    assert "proj_size=2" in repr(lstm)
