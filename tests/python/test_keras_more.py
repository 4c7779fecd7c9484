"""ember.keras additions from a first-contact probe: TimeDistributed, Normalization (adapt,
given statistics, invert) and models.model_from_json, against NumPy on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import keras

L = keras.layers


def test_time_distributed_equals_the_layer_per_step(device):
    x = np.random.default_rng(0).standard_normal((3, 5, 4)).astype("float32")
    with ember.device(device):
        m = keras.Sequential([keras.Input((5, 4)), L.TimeDistributed(L.Dense(2))])
    assert m.output_shape == (None, 5, 2)
    got = m.predict(x, verbose=0)
    inner = m.layers[0].layer
    k, b = (ember.asnumpy(w).copy() for w in inner.weights)  # copies: CPU views share memory
    np.testing.assert_allclose(got, x @ k + b, rtol=1e-5, atol=1e-6)
    m.compile(optimizer="sgd", loss="mse")
    m.fit(x, np.zeros((3, 5, 2), "float32"), epochs=1, verbose=0)  # trains the inner weights
    assert not np.allclose(ember.asnumpy(inner.weights[0]), k)
    back = keras.models.model_from_json(m.to_json())
    assert type(back.layers[0]).__name__ == "TimeDistributed"
    assert type(back.layers[0].layer).__name__ == "Dense" and back.output_shape == (None, 5, 2)
    with pytest.raises(ValueError, match="at least 3"):
        L.TimeDistributed(L.Dense(2))(ember.ones((2, 3)))
    with pytest.raises(ValueError, match="keras.layers.Layer"):
        L.TimeDistributed("dense")


def test_normalization_adapt_given_and_invert(device):
    x = np.random.default_rng(1).standard_normal((50, 3)).astype("float32") * [1, 5, 0.1] + 7
    norm = L.Normalization()
    norm.adapt(ember.asarray(x, device=device))
    np.testing.assert_allclose(ember.asnumpy(norm.mean), x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(ember.asnumpy(norm.variance), x.var(0), rtol=1e-4)
    y = ember.asnumpy(norm(ember.asarray(x, device=device)))
    np.testing.assert_allclose(y, (x - x.mean(0)) / x.std(0), rtol=1e-3, atol=1e-4)
    given = L.Normalization(mean=2.0, variance=4.0)
    np.testing.assert_allclose(ember.asnumpy(given(ember.asarray(x))), (x - 2) / 2, rtol=1e-6)
    inv = L.Normalization(mean=2.0, variance=4.0, invert=True)
    np.testing.assert_allclose(ember.asnumpy(inv(ember.asarray(x))), x * 2 + 2, rtol=1e-6)
    per_axis = L.Normalization(axis=None)  # one mean and variance for everything
    per_axis.adapt(x)
    np.testing.assert_allclose(float(ember.asnumpy(per_axis.mean).ravel()[0]), x.mean(), rtol=1e-5)
    with pytest.raises(ValueError, match="both `mean` and `variance`"):
        L.Normalization(mean=1.0)


def test_model_from_json_round_trip():
    m = keras.Sequential([keras.Input((4,)), L.Dense(3, activation="relu"), L.Dense(1)])
    back = keras.models.model_from_json(m.to_json())
    assert [type(layer).__name__ for layer in back.layers] == ["Dense", "Dense"]
    assert back.count_params() == m.count_params()
