"""ember.keras's second batch of layers (activations, transposed/depthwise/separable
convolutions, resizing, cropping, random augmentation, noise, normalization wrappers), focal
losses, pad_sequences / timeseries windows, ops on NumPy inputs, BackupAndRestore and mixed
precision, against NumPy formulas of Keras's definitions."""

from __future__ import annotations

import os

import ember
import numpy as np
import pytest
from ember import keras

L = keras.layers


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.clear_session()
    keras.utils.set_random_seed(0)
    yield
    keras.mixed_precision.set_global_policy("float32")


def _conv_tol(device):
    """float32 convolutions on the GPU run on TF32 tensor cores (cuDNN's default, as PyTorch's
    ``backends.cudnn.allow_tf32``): a 10-bit mantissa per product."""
    return {"rtol": 3e-3, "atol": 3e-3} if device == "cuda" else {"rtol": 1e-4, "atol": 1e-5}


def run(layer, x, device, **kw):
    return ember.asnumpy(layer(ember.asarray(x, device=device), **kw))


def tf_same(n, k, s, d=1):
    out = -(-n // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def np_conv2d(x, w, stride, padding, dilation=(1, 1)):
    """Keras's Conv2D: x (n, h, w, c), w (kh, kw, c, f)."""
    kh, kw = w.shape[:2]
    if padding == "same":
        ph = tf_same(x.shape[1], kh, stride[0], dilation[0])
        pw = tf_same(x.shape[2], kw, stride[1], dilation[1])
        x = np.pad(x, ((0, 0), ph, pw, (0, 0)))
    n, h, wd, _ = x.shape
    eh, ew = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    oh, ow = (h - eh) // stride[0] + 1, (wd - ew) // stride[1] + 1
    out = np.zeros((n, oh, ow, w.shape[-1]))
    for i in range(oh):
        for j in range(ow):
            patch = x[
                :,
                i * stride[0] : i * stride[0] + eh : dilation[0],
                j * stride[1] : j * stride[1] + ew : dilation[1],
            ]
            out[:, i, j] = np.einsum("nabc,abcf->nf", patch, w)
    return out


def np_depthwise(x, k, stride, padding):
    """TensorFlow's depthwise conv: k (kh, kw, c, m), output channel c * m + j."""
    c, m = k.shape[2:]
    outs = [
        np_conv2d(x[..., ci : ci + 1], k[:, :, ci : ci + 1, :], stride, padding) for ci in range(c)
    ]
    return np.concatenate(outs, axis=-1)


def np_conv2d_transpose(x, w, stride, padding, out_hw):
    """Scatter definition: y[i*s + a - before] += x[i] * w[a, :, :, in] (w (kh, kw, out, in))."""
    n, h, wd, _ = x.shape
    kh, kw, f, _ = w.shape
    befores = []
    for size, k, s, o in ((h, kh, stride[0], out_hw[0]), (wd, kw, stride[1], out_hw[1])):
        total = max((size - 1) * s + k - o, 0) if padding == "same" else 0
        befores.append(total // 2)
    y = np.zeros((n, out_hw[0] + kh + 8, out_hw[1] + kw + 8, f))
    off = 4
    for i in range(h):
        for j in range(wd):
            for a in range(kh):
                for b in range(kw):
                    r = i * stride[0] + a - befores[0] + off
                    c = j * stride[1] + b - befores[1] + off
                    y[:, r, c] += x[:, i, j] @ w[a, b].T
    return y[:, off : off + out_hw[0], off : off + out_hw[1]]


# ---- activations ---------------------------------------------------------------------------------


def test_activation_layers_match_formulas(device):
    x = np.linspace(-3, 8, 23).astype(np.float32).reshape(1, 23)
    np.testing.assert_allclose(run(L.ReLU(), x, device), np.maximum(x, 0))
    y = run(L.ReLU(max_value=6.0, negative_slope=0.1, threshold=1.0), x, device)
    ref = np.where(x > 1.0, np.minimum(x, 6.0), 0.1 * (x - 1.0))
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(run(L.LeakyReLU(), x, device), np.where(x >= 0, x, 0.3 * x), 1e-6)
    assert L.LeakyReLU().negative_slope == 0.3
    np.testing.assert_allclose(
        run(L.ELU(0.5), x, device), np.where(x > 0, x, 0.5 * np.expm1(x)), rtol=1e-5, atol=1e-6
    )
    p = L.PReLU(alpha_initializer=keras.initializers.Constant(0.25), shared_axes=None)
    np.testing.assert_allclose(run(p, x, device), np.where(x >= 0, x, 0.25 * x), 1e-6)
    assert p.get_weights()[0].shape == (23,)
    s = run(L.Softmax(), x, device)
    e = np.exp(x - x.max())
    np.testing.assert_allclose(s, e / e.sum(), rtol=1e-5, atol=1e-7)


def test_prelu_shared_axes_and_softmax_mask(device):
    layer = L.PReLU(shared_axes=[1, 2])
    layer(ember.zeros((2, 4, 5, 3), device=device))
    assert layer.alpha.shape == (1, 1, 3)
    x = np.array([[1.0, 2.0, 3.0]], np.float32)
    mask = ember.asarray(np.array([[True, False, True]]), device=device)
    y = ember.asnumpy(L.Softmax()(ember.asarray(x, device=device), mask=mask))
    ref = np.exp([1.0, 3.0]) / np.exp([1.0, 3.0]).sum()
    np.testing.assert_allclose(y[0, [0, 2]], ref, rtol=1e-5)
    assert y[0, 1] < 1e-6


# ---- convolutions --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "k,s,pad,op", [(3, 2, "same", None), (3, 2, "valid", None), (4, 2, "same", None),
                   ((3, 2), (2, 1), "valid", None), (3, 2, "same", 1), (3, 3, "valid", 2)],
)  # fmt: skip
def test_conv2d_transpose_matches_scatter(device, k, s, pad, op):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 5, 3)).astype(np.float32)
    layer = L.Conv2DTranspose(2, k, strides=s, padding=pad, output_padding=op, use_bias=True)
    run(layer, x, device)
    layer.bias.assign(np.array([0.5, -1.0], np.float32))
    y = run(layer, x, device)
    w, b = layer.get_weights()
    assert w.shape == layer.kernel_size + (2, 3)
    assert y.shape == layer.compute_output_shape((2, 4, 5, 3))
    ref = np_conv2d_transpose(x.astype(np.float64), w, layer.strides, pad, y.shape[1:3]) + b
    np.testing.assert_allclose(y, ref, **_conv_tol(device))
    if op is None:  # Keras's lengths: same -> n*s; valid -> n*s + max(k - s, 0)
        kh, kw = layer.kernel_size
        sh, sw = layer.strides
        exp = (
            (4 * sh, 5 * sw)
            if pad == "same"
            else (4 * sh + max(kh - sh, 0), 5 * sw + max(kw - sw, 0))
        )
        assert y.shape[1:3] == exp


def test_conv1d_transpose(device):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 6, 3)).astype(np.float32)
    layer = L.Conv1DTranspose(4, 3, strides=2, padding="same")
    y = run(layer, x, device)
    w, b = layer.get_weights()
    assert w.shape == (3, 4, 3) and y.shape == (2, 12, 4)
    ref = np_conv2d_transpose(x[:, :, None].astype(np.float64), w[:, None], (2, 1), "same", (12, 1))
    np.testing.assert_allclose(y, ref[:, :, 0] + b, **_conv_tol(device))


@pytest.mark.parametrize("m,s,pad", [(1, 1, "valid"), (2, 2, "same"), (3, 1, "same")])
def test_depthwise_and_separable_match_numpy(device, m, s, pad):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    dw = L.DepthwiseConv2D(3, strides=s, padding=pad, depth_multiplier=m)
    y = run(dw, x, device)
    k, b = dw.get_weights()
    assert k.shape == (3, 3, 3, m) and b.shape == (3 * m,)
    ref = np_depthwise(x.astype(np.float64), k, (s, s), pad) + b
    np.testing.assert_allclose(y, ref, **_conv_tol(device))
    sep = L.SeparableConv2D(4, 3, strides=s, padding=pad, depth_multiplier=m)
    y = run(sep, x, device)
    dk, pk, b = sep.get_weights()
    assert dk.shape == (3, 3, 3, m) and pk.shape == (1, 1, 3 * m, 4) and b.shape == (4,)
    ref = np.einsum("nhwc,cf->nhwf", np_depthwise(x.astype(np.float64), dk, (s, s), pad), pk[0, 0])
    np.testing.assert_allclose(y, ref + b, **_conv_tol(device))
    assert y.shape == sep.compute_output_shape((2, 7, 6, 3))


# ---- resizing, upsampling, cropping --------------------------------------------------------------


def np_resize_axis(a, n_out, axis, method):
    """TensorFlow's half-pixel resize of one axis (independent loop formulation)."""
    n_in = a.shape[axis]
    a = np.moveaxis(a, axis, 0)
    out = []
    for o in range(n_out):
        src = (o + 0.5) * n_in / n_out - 0.5
        if method == "nearest":
            out.append(a[min(int(np.floor((o + 0.5) * n_in / n_out)), n_in - 1)])
        elif method == "bilinear":
            f = np.floor(src)
            lo, hi = max(int(f), 0), min(int(np.ceil(src)), n_in - 1)
            out.append(a[lo] * (1 - (src - f)) + a[hi] * (src - f))
        else:
            f = int(np.floor(src))
            acc, tot = 0.0, 0.0
            for j in range(f - 1, f + 3):
                t = abs(src - j)
                w = (1.5 * t - 2.5) * t * t + 1 if t <= 1 else ((-0.5 * t + 2.5) * t - 4) * t + 2
                if 0 <= j < n_in:
                    acc, tot = acc + w * a[j], tot + w
            out.append(acc / tot)
    return np.moveaxis(np.stack(out), 0, axis)


@pytest.mark.parametrize("method", ["nearest", "bilinear", "bicubic"])
@pytest.mark.parametrize("size", [(8, 12), (3, 4), (5, 7)])
def test_resizing_matches_tf_rule(device, method, size):
    x = np.random.default_rng(4).uniform(0, 255, (2, 6, 9, 3)).astype(np.float32)
    y = run(L.Resizing(*size, interpolation=method), x, device)
    ref = np_resize_axis(
        np_resize_axis(x.astype(np.float64), size[0], 1, method), size[1], 2, method
    )
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-3)


def test_resizing_crop_and_pad_to_aspect_ratio_and_center_crop(device):
    x = np.random.default_rng(5).standard_normal((1, 6, 10, 2)).astype(np.float32)
    y = run(L.Resizing(3, 3, crop_to_aspect_ratio=True), x, device)
    ref = np_resize_axis(
        np_resize_axis(x[:, :, 2:8].astype(np.float64), 3, 1, "bilinear"), 3, 2, "bilinear"
    )
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)
    y = run(L.Resizing(10, 10, pad_to_aspect_ratio=True, fill_value=7.0), x, device)
    assert y.shape == (1, 10, 10, 2)
    np.testing.assert_allclose(y[:, :2], 7.0)
    np.testing.assert_allclose(y[:, 2:8], x, rtol=1e-6)
    np.testing.assert_allclose(run(L.CenterCrop(4, 5), x, device), x[:, 1:5, 2:7])
    assert run(L.CenterCrop(8, 8), x, device).shape == (1, 8, 8, 2)


def test_upsampling_and_cropping(device):
    x = np.random.default_rng(6).standard_normal((2, 3, 4, 2)).astype(np.float32)
    np.testing.assert_allclose(
        run(L.UpSampling2D((2, 3)), x, device), x.repeat(2, axis=1).repeat(3, axis=2)
    )
    y = run(L.UpSampling2D(2, interpolation="bilinear"), x, device)
    ref = np_resize_axis(np_resize_axis(x.astype(np.float64), 6, 1, "bilinear"), 8, 2, "bilinear")
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    s = x[:, :, :, 0]
    np.testing.assert_allclose(run(L.UpSampling1D(3), s, device), s.repeat(3, axis=1))
    np.testing.assert_allclose(run(L.Cropping2D(((1, 0), (1, 2))), x, device), x[:, 1:, 1:2])
    np.testing.assert_allclose(run(L.Cropping1D((1, 1)), s, device), s[:, 1:2])
    np.testing.assert_allclose(
        run(L.Cropping2D(1), np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))), device), x
    )
    with pytest.raises(ValueError, match="cropping"):
        run(L.Cropping2D(2), x, device)


# ---- random layers -------------------------------------------------------------------------------

AUGMENT = [
    lambda: L.RandomFlip(),
    lambda: L.RandomRotation(0.2),
    lambda: L.RandomZoom(0.3),
    lambda: L.RandomTranslation(0.2, 0.2),
    lambda: L.RandomContrast(0.5),
    lambda: L.RandomBrightness(0.3),
]


@pytest.mark.parametrize("make", AUGMENT)
def test_random_layers_identity_at_inference_and_seeded_in_training(device, make):
    x = np.random.default_rng(7).uniform(0, 255, (6, 9, 8, 3)).astype(np.float32)
    layer = make()
    np.testing.assert_array_equal(run(layer, x, device), x)
    np.testing.assert_array_equal(run(layer, x, device, training=False), x)
    keras.utils.set_random_seed(3)
    a = run(layer, x, device, training=True)
    keras.utils.set_random_seed(3)
    b = run(layer, x, device, training=True)
    np.testing.assert_array_equal(a, b)
    assert a.shape == x.shape and not np.allclose(a, x)
    model = keras.Sequential([L.Input((9, 8, 3)), make()])
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)


def test_random_flip_rotation_zoom_translation_geometry(device):
    x = np.arange(2 * 5 * 5, dtype=np.float32).reshape(2, 5, 5, 1)
    y = run(L.RandomFlip("horizontal", seed=1), x, device, training=True)
    for i in range(2):
        assert np.array_equal(y[i], x[i]) or np.array_equal(y[i], x[i, :, ::-1])
    # a quarter turn (factor 0.25 both ends) maps the grid onto itself exactly; positive
    # angles turn counter-clockwise (Keras)
    y = run(L.RandomRotation((0.25, 0.25), interpolation="nearest"), x, device, training=True)
    np.testing.assert_allclose(y[..., 0], np.rot90(x[..., 0], k=1, axes=(1, 2)), atol=1e-4)
    # whole-pixel translations: constant fill vs shifted image
    y = run(
        L.RandomTranslation((0.2, 0.2), (0.0, 0.0), fill_mode="constant", fill_value=-1.0),
        x,
        device,
        training=True,
    )
    np.testing.assert_allclose(y[:, 1:], x[:, :-1], atol=1e-4)
    np.testing.assert_allclose(y[:, 0], -1.0)
    y = run(
        L.RandomTranslation((0.2, 0.2), (0.0, 0.0), fill_mode="nearest"), x, device, training=True
    )
    np.testing.assert_allclose(y[:, 0], x[:, 0], atol=1e-4)
    y = run(
        L.RandomTranslation((0.4, 0.4), (0.0, 0.0), fill_mode="reflect"), x, device, training=True
    )
    np.testing.assert_allclose(y[:, :2], x[:, 1::-1], atol=1e-4)  # b a | a b c ...
    y = run(L.RandomTranslation((0.4, 0.4), (0.0, 0.0), fill_mode="wrap"), x, device, training=True)
    np.testing.assert_allclose(y, np.roll(x, 2, axis=1), atol=1e-4)
    # zoom 1 + (-0.6) = 0.4 about the centre: output row r samples input row 0.4 r + 1.2
    y = run(L.RandomZoom((-0.6, -0.6), interpolation="bilinear"), x, device, training=True)
    src = 0.4 * np.arange(5) + 1.2
    lo = np.floor(src).astype(int)
    t = (src - lo)[:, None]
    rows = x[:, lo] * (1 - t[None, :, :, None]) + x[:, np.minimum(lo + 1, 4)] * t[None, :, :, None]
    ref = (
        rows[:, :, lo] * (1 - t.T[None, :, :, None])
        + rows[:, :, np.minimum(lo + 1, 4)] * t.T[None, :, :, None]
    )
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-3)


def test_contrast_brightness_crop_statistics(device):
    x = np.random.default_rng(8).uniform(50, 200, (16, 8, 8, 3)).astype(np.float32)
    y = run(L.RandomContrast((0.5, 0.5)), x, device, training=True)
    mean = x.mean(axis=(1, 2), keepdims=True)
    f = (y - mean) / (x - mean)  # one factor per image, in [0.5, 1.5]
    per = f.reshape(16, -1)
    assert np.allclose(per, per[:, :1], rtol=1e-3, atol=1e-3)
    assert per.min() >= 0.5 - 1e-3 and per.max() <= 1.5 + 1e-3 and per.std() > 0.05
    y = run(L.RandomBrightness(0.2, value_range=(0, 255)), x, device, training=True)
    d = (y - x).reshape(16, -1)
    assert np.allclose(d, d[:, :1], atol=1e-3) and np.abs(d).max() <= 0.2 * 255 + 1e-3
    crop = L.RandomCrop(4, 5)
    y = run(crop, x, device, training=True)
    assert y.shape == (16, 4, 5, 3)
    hits = [
        (i, j) for i in range(5) for j in range(4) if np.array_equal(y, x[:, i : i + 4, j : j + 5])
    ]
    assert len(hits) == 1
    z = run(crop, x, device)
    assert z.shape == (16, 4, 5, 3)  # inference: centre window of the aspect ratio, resized


def test_noise_layers(device):
    x = np.ones((200, 50), np.float32)
    np.testing.assert_array_equal(run(L.GaussianNoise(0.5), x, device), x)
    y = run(L.GaussianNoise(0.5), x, device, training=True)
    assert abs(y.mean() - 1) < 0.02 and abs(y.std() - 0.5) < 0.02
    y = run(L.GaussianDropout(0.2), x, device, training=True)
    assert abs(y.mean() - 1) < 0.02 and abs(y.std() - np.sqrt(0.25)) < 0.02
    np.testing.assert_array_equal(run(L.GaussianDropout(0.2), x, device), x)


def test_unit_normalization_activity_regularization_spectral(device):
    x = np.random.default_rng(9).standard_normal((4, 6)).astype(np.float32)
    y = run(L.UnitNormalization(), x, device)
    np.testing.assert_allclose(y, x / np.linalg.norm(x, axis=-1, keepdims=True), rtol=1e-5)
    layer = L.ActivityRegularization(l1=0.1, l2=0.01)
    np.testing.assert_array_equal(run(layer, x, device), x)
    (loss,) = layer.losses
    ref = (0.1 * np.abs(x).sum() + 0.01 * (x**2).sum()) / 4
    np.testing.assert_allclose(float(loss), ref, rtol=1e-5)
    sn = L.SpectralNormalization(L.Dense(5), power_iterations=30)
    y0 = run(sn, x, device)
    np.testing.assert_allclose(y0, x @ sn.layer.kernel.numpy() + sn.layer.bias.numpy(), rtol=1e-5)
    assert [w.shape for w in sn.get_weights()] == [(6, 5), (5,), (1, 5)]
    run(sn, x, device, training=True)
    assert abs(np.linalg.svd(sn.layer.kernel.numpy(), compute_uv=False)[0] - 1) < 1e-3


# ---- training, saving, arguments -----------------------------------------------------------------

TRAINABLE = [
    ("prelu", (6,), lambda: [L.Dense(6), L.PReLU()]),
    ("convT", (4, 4, 2), lambda: [L.Conv2DTranspose(3, 3, strides=2, padding="same")]),
    ("convT1", (5, 2), lambda: [L.Conv1DTranspose(3, 2, strides=2)]),
    ("depthwise", (5, 5, 2), lambda: [L.DepthwiseConv2D(3, depth_multiplier=2, padding="same")]),
    ("separable", (5, 5, 2), lambda: [L.SeparableConv2D(3, 3)]),
    ("spectral", (6,), lambda: [L.SpectralNormalization(L.Dense(4))]),
]


@pytest.mark.parametrize("name,shape,make", TRAINABLE, ids=[t[0] for t in TRAINABLE])
def test_fit_reduces_loss_and_saves(device, tmp_path, name, shape, make):
    rng = np.random.default_rng(10)
    x = rng.standard_normal((64,) + shape).astype(np.float32)
    y = rng.standard_normal((64, 1)).astype(np.float32) + x.reshape(64, -1)[:, :1]
    with ember.device(device):
        model = keras.Sequential([L.Input(shape), *make(), L.Flatten(), L.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    h = model.fit(x, y, epochs=15, batch_size=16, verbose=0).history["loss"]
    assert h[-1] < h[0] * 0.8
    path = os.path.join(tmp_path, "m.keras")
    model.save(path)
    again = keras.models.load_model(path)
    np.testing.assert_allclose(
        again.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-5, atol=1e-5
    )
    for a, b in zip(again.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


CONFIGURED = [
    L.ReLU(max_value=2.0, negative_slope=0.1, threshold=0.5), L.LeakyReLU(0.2), L.ELU(0.7),
    L.Softmax(axis=1), L.PReLU(shared_axes=[1]), L.GaussianNoise(0.1, seed=2),
    L.GaussianDropout(0.3), L.ActivityRegularization(0.1, 0.2), L.UnitNormalization(axis=1),
    L.Conv2DTranspose(3, 2, strides=2, output_padding=1), L.Conv1DTranspose(2, 3),
    L.DepthwiseConv2D(3, depth_multiplier=2), L.SeparableConv2D(2, 3, depth_multiplier=2),
    L.SeparableConv1D(2, 3), L.DepthwiseConv1D(2), L.UpSampling2D(3, interpolation="bilinear"),
    L.UpSampling1D(4), L.Cropping2D(((1, 2), (0, 1))), L.Cropping1D((2, 0)),
    L.Resizing(4, 5, "bicubic", crop_to_aspect_ratio=True), L.CenterCrop(2, 3),
    L.RandomFlip("vertical", seed=3), L.RandomRotation(0.1, fill_mode="wrap"),
    L.RandomZoom(0.2, (-0.1, 0.3), fill_mode="constant"), L.RandomTranslation(0.1, (-0.2, 0.1)),
    L.RandomContrast((0.1, 0.3)), L.RandomBrightness((-0.1, 0.2), value_range=(0, 1)),
    L.RandomCrop(3, 4), L.SpectralNormalization(L.Dense(3), power_iterations=2),
]  # fmt: skip


@pytest.mark.parametrize("layer", CONFIGURED, ids=lambda la: type(la).__name__)
def test_config_round_trip(layer):
    config = layer.get_config()
    again = type(layer).from_config(config)
    assert again.get_config() == {**config, "name": again.name} or again.get_config() == config


BAD = [
    (lambda: L.ReLU(max_value=-1), "max_value"), (lambda: L.LeakyReLU(-0.1), "negative_slope"),
    (lambda: L.Conv2DTranspose(2, 3, strides=1, output_padding=1), "output padding"),
    (lambda: L.Conv2DTranspose(0, 3), "filters"),
    (lambda: L.DepthwiseConv2D(3, depth_multiplier=0), "depth_multiplier"),
    (lambda: L.SeparableConv2D(2, 3, padding="causal"), "padding"),
    (lambda: L.UpSampling2D(interpolation="lanczos3"), "interpolation"),
    (lambda: L.Resizing(4, 4, interpolation="area"), "interpolation"),
    (lambda: L.Resizing(4, 4, antialias=True), "antialias"),
    (lambda: L.RandomRotation(0.1, fill_mode="mirror"), "fill_mode"),
    (lambda: L.RandomZoom(0.1, interpolation="bicubic"), "interpolation"),
    (lambda: L.RandomZoom(1.5), "height_factor"), (lambda: L.RandomFlip("diagonal"), "mode"),
    (lambda: L.RandomContrast(-0.2), "factor"), (lambda: L.RandomBrightness(2.0), "factor"),
    (lambda: L.RandomCrop(0, 3), "height"), (lambda: L.GaussianNoise(-1.0), "stddev"),
    (lambda: L.GaussianDropout(1.5), "rate"),
    (lambda: L.SpectralNormalization(L.Dense(2), 0), "power_iterations"),
    (lambda: L.Cropping2D("x"), "cropping"),
    (lambda: keras.utils.pad_sequences([[1]], padding="mid"), "padding"),
    (lambda: keras.utils.pad_sequences([[1]], truncating="x"), "truncating"),
    (lambda: keras.utils.timeseries_dataset_from_array(np.arange(9), None, 0), "sequence_length"),
    (lambda: keras.losses.BinaryFocalCrossentropy(gamma=-1.0), "gamma"),
    (lambda: keras.losses.CategoricalFocalCrossentropy(label_smoothing=2.0), "label_smoothing"),
    (lambda: keras.mixed_precision.set_global_policy("mixed_float8"), "name"),
    (lambda: keras.callbacks.BackupAndRestore("/tmp/x", save_freq=0), "save_freq"),
]  # fmt: skip


@pytest.mark.parametrize("make,word", BAD, ids=[w for _, w in BAD])
def test_bad_arguments_raise_value_error(make, word):
    with pytest.raises(ValueError, match=word):
        make()


# ---- utils, losses, ops --------------------------------------------------------------------------


def test_pad_sequences():
    seqs = [[1, 2, 3, 4], [5], [], [6, 7]]
    np.testing.assert_array_equal(
        keras.utils.pad_sequences(seqs), [[1, 2, 3, 4], [0, 0, 0, 5], [0, 0, 0, 0], [0, 0, 6, 7]]
    )
    out = keras.utils.pad_sequences(seqs, maxlen=3, padding="post", truncating="post", value=-1)
    np.testing.assert_array_equal(out, [[1, 2, 3], [5, -1, -1], [-1, -1, -1], [6, 7, -1]])
    out = keras.utils.pad_sequences(seqs, maxlen=2)
    np.testing.assert_array_equal(out, [[3, 4], [0, 5], [0, 0], [6, 7]])
    assert out.dtype == np.int32
    out = keras.utils.pad_sequences([[0.5], [1.5, 2.5]], dtype="float32", value=9.0)
    np.testing.assert_array_equal(out, np.array([[9.0, 0.5], [1.5, 2.5]], np.float32))


def test_timeseries_dataset_and_fit():
    data = np.arange(40, dtype=np.float32).reshape(20, 2)
    targets = np.arange(20) * 10
    ds = keras.utils.timeseries_dataset_from_array(
        data, targets, sequence_length=4, sequence_stride=2, sampling_rate=2, batch_size=3,
        start_index=1, end_index=18,
    )  # fmt: skip
    starts = list(range(1, 18 - 6, 2))  # 1, 3, ..., 11
    batches = list(ds)
    assert len(ds) == len(batches) == 2
    xs = np.concatenate([ember.asnumpy(b[0]) for b in batches])
    ys = np.concatenate([ember.asnumpy(b[1]) for b in batches])
    np.testing.assert_array_equal(xs, np.stack([data[s : s + 8 : 2] for s in starts]))
    np.testing.assert_array_equal(ys, targets[starts])
    shuffled = keras.utils.timeseries_dataset_from_array(
        data, targets, 3, batch_size=4, shuffle=True, seed=1
    )
    got = np.concatenate([ember.asnumpy(b[1]) for b in shuffled])
    assert sorted(got.tolist()) == (np.arange(18) * 10).tolist() and got.tolist() != sorted(
        got.tolist()
    )
    only = list(keras.utils.timeseries_dataset_from_array(data, None, 5, batch_size=None))
    assert len(only) == 16 and ember.asnumpy(only[3]).shape == (5, 2)
    model = keras.Sequential([L.Input((4, 2)), L.Flatten(), L.Dense(1)])
    model.compile("adam", "mse")
    model.fit(ds, epochs=1, verbose=0)


def test_focal_losses_match_formulas(device):
    rng = np.random.default_rng(11)
    p = rng.uniform(0.05, 0.95, (5, 3)).astype(np.float32)
    t = (rng.uniform(size=(5, 3)) > 0.5).astype(np.float32)
    ts = t * 0.9 + 0.05
    bce = -(ts * np.log(p) + (1 - ts) * np.log(1 - p))
    pt = ts * p + (1 - ts) * (1 - p)
    w = ts * 0.4 + (1 - ts) * 0.6
    ref = (w * (1 - pt) ** 1.5 * bce).mean(-1).mean()
    loss = keras.losses.BinaryFocalCrossentropy(True, 0.4, 1.5, label_smoothing=0.1)
    got = loss(ember.asarray(t, device=device), ember.asarray(p, device=device))
    np.testing.assert_allclose(float(got), ref, rtol=1e-5)
    logits = np.log(p / (1 - p))
    got = keras.losses.BinaryFocalCrossentropy(from_logits=True)(
        t, ember.asarray(logits, device=device)
    )
    bce = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    pt = t * p + (1 - t) * (1 - p)
    np.testing.assert_allclose(float(got), ((1 - pt) ** 2 * bce).mean(), rtol=1e-4)
    onehot = np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]]
    q = p / p.sum(-1, keepdims=True)
    ref = (0.25 * (1 - q) ** 2 * -onehot * np.log(q)).sum(-1).mean()
    got = keras.losses.CategoricalFocalCrossentropy()(onehot, ember.asarray(p, device=device))
    np.testing.assert_allclose(float(got), ref, rtol=1e-5)
    z = rng.standard_normal((5, 3)).astype(np.float32)
    sm = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    ref = (0.5 * (1 - sm) ** 3 * -onehot * np.log(sm)).sum(-1).mean()
    loss = keras.losses.get(
        {
            "class_name": "CategoricalFocalCrossentropy",
            "config": {"alpha": 0.5, "gamma": 3.0, "from_logits": True},
        }
    )
    np.testing.assert_allclose(float(loss(onehot, ember.asarray(z, device=device))), ref, rtol=1e-5)


def test_ops_numpy_inputs_and_new_ops(device):
    o = keras.ops
    np.testing.assert_allclose(
        ember.asnumpy(o.softmax(np.array([0.0, np.log(3.0)]))), [0.25, 0.75], 1e-6
    )
    np.testing.assert_allclose(ember.asnumpy(o.relu([-1.0, 2.0])), [0.0, 2.0])
    v, i = o.top_k(ember.asarray([3.0, 9.0, 1.0, 7.0], device=device), 2)
    np.testing.assert_array_equal(ember.asnumpy(v), [9.0, 7.0])
    np.testing.assert_array_equal(ember.asnumpy(i), [1, 3])
    pred = np.array([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4], [0.9, 0.05, 0.05]], np.float32)
    got = o.in_top_k(np.array([2, 0, 1]), ember.asarray(pred, device=device), 1)
    np.testing.assert_array_equal(ember.asnumpy(got), [False, False, False])
    got = o.in_top_k(np.array([2, 0, 1]), ember.asarray(pred, device=device), 2)
    np.testing.assert_array_equal(ember.asnumpy(got), [True, True, True])
    data = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    ids = np.array([0, 2, 0, 1, 2, 2])
    np.testing.assert_array_equal(
        ember.asnumpy(o.segment_sum(data, ids)), [[4, 6], [6, 7], [20, 23]]
    )
    np.testing.assert_array_equal(
        ember.asnumpy(o.segment_max(data, ids, num_segments=4))[:3], [[4, 5], [6, 7], [10, 11]]
    )
    assert np.all(np.isneginf(ember.asnumpy(o.segment_max(data, ids, num_segments=4))[3]))


# ---- callbacks, mixed precision ------------------------------------------------------------------


def test_backup_and_restore_resumes(tmp_path):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)
    backup = os.path.join(tmp_path, "bk")

    class Interrupt(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 2:
                raise RuntimeError("interrupted")

    def make():
        keras.utils.set_random_seed(0)
        m = keras.Sequential([L.Input((4,)), L.Dense(1)])
        m.compile(keras.optimizers.Adam(0.05), "mse")
        return m

    model = make()
    with pytest.raises(RuntimeError):
        model.fit(
            x,
            y,
            epochs=6,
            shuffle=False,
            verbose=0,
            callbacks=[keras.callbacks.BackupAndRestore(backup), Interrupt()],
        )
    assert os.path.exists(os.path.join(backup, "training_metadata.json"))
    saved = model.get_weights()
    fresh = make()
    seen = []
    log = keras.callbacks.LambdaCallback(on_epoch_begin=lambda e, logs=None: seen.append(e))
    fresh.fit(
        x,
        y,
        epochs=6,
        shuffle=False,
        verbose=0,
        callbacks=[keras.callbacks.BackupAndRestore(backup), log],
    )
    assert seen == [3, 4, 5] and not os.path.exists(backup)
    ref = make()
    ref.fit(x, y, epochs=6, shuffle=False, verbose=0)
    for a, b in zip(fresh.get_weights(), ref.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert not all(np.array_equal(a, b) for a, b in zip(saved, ref.get_weights(), strict=True))


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision_policy(device, policy):
    keras.mixed_precision.set_global_policy(policy)
    assert keras.mixed_precision.global_policy().name == policy
    low = policy.split("_")[1]
    with ember.device(device):
        dense = L.Dense(4)
        out = L.Dense(1, dtype="float32")
        model = keras.Sequential([L.Input((8,)), dense, L.ReLU(), out])
    assert dense.compute_dtype == low and dense.variable_dtype == "float32"
    x = np.random.default_rng(13).standard_normal((64, 8)).astype(np.float32)
    y = x[:, :1] * 2.0
    hidden = dense(ember.asarray(x, device=device))
    assert str(hidden.dtype) == low and str(dense.kernel.dtype) == "float32"
    model.compile(keras.optimizers.Adam(0.01), "mse")
    if policy == "mixed_float16":
        assert isinstance(model.optimizer, keras.mixed_precision.LossScaleOptimizer)
    h = model.fit(x, y, epochs=10, batch_size=16, verbose=0).history["loss"]
    assert h[-1] < h[0] and str(dense.kernel.dtype) == "float32"
    assert str(model.predict(x[:2], verbose=0).dtype) == "float32"
    assert dense.get_config()["dtype"] == policy
    keras.mixed_precision.set_global_policy("float32")
    assert L.Dense(2).compute_dtype == "float32"


def test_loss_scale_optimizer_skips_non_finite_steps():
    v = keras.Variable(np.ones(2, np.float32))
    opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=8.0)
    opt.apply([ember.asarray(np.array([np.inf, 1.0], np.float32))], [v])
    np.testing.assert_array_equal(v.numpy(), [1.0, 1.0])
    assert opt.scale == 4.0
    opt.apply([ember.asarray(np.array([4.0, 8.0], np.float32))], [v])
    np.testing.assert_allclose(v.numpy(), [0.9, 0.8], rtol=1e-6)
