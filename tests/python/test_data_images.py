"""ember.data's images: ImageFolder (Pillow decodes), ToArray, and the batch transforms."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.data import transforms as T

PIL = pytest.importorskip("PIL.Image")


def _tree(root, per_class=3, size=(6, 5)):
    rng = np.random.default_rng(0)
    images = {}
    for c in ("cat", "ant", "bee"):
        (root / c).mkdir()
        for i in range(per_class):
            a = rng.integers(0, 256, size=(size[0], size[1], 3), dtype=np.uint8)
            path = root / c / f"img{i}.png"
            PIL.fromarray(a).save(path)
            images[str(path)] = a
    (root / "bee" / "notes.txt").write_text("not an image")
    return images


def test_image_folder_reads_classes_and_images(tmp_path):
    images = _tree(tmp_path)
    ds = ember.data.ImageFolder(tmp_path, transform=ember.data.ToArray())
    assert ds.classes == ["ant", "bee", "cat"]
    assert ds.class_to_idx == {"ant": 0, "bee": 1, "cat": 2}
    assert len(ds) == 9 and ds.targets == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    x, y = ds[4]
    path = ds.samples[4][0]
    assert y == 1 and x.shape == (3, 6, 5) and x.dtype == ember.float32
    want = images[path].transpose(2, 0, 1).astype(np.float32) / 255
    np.testing.assert_allclose(ember.asnumpy(x), want, rtol=1e-5, atol=1e-6)
    # without a transform the image is Pillow's, as torchvision's
    img, _ = ember.data.ImageFolder(tmp_path)[0]
    assert img.size == (5, 6) and img.mode == "RGB"
    loader = ember.data.DataLoader(ds, batch_size=4, shuffle=True)
    xb, yb = next(iter(loader))
    assert xb.shape == (4, 3, 6, 5) and yb.shape == (4,)


def test_image_folder_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a directory"):
        ember.data.ImageFolder(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="no class folders"):
        ember.data.ImageFolder(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="allow_empty"):
        ember.data.ImageFolder(tmp_path)
    assert len(ember.data.ImageFolder(tmp_path, allow_empty=True)) == 0
    (tmp_path / "x").mkdir()
    _tree(tmp_path / "x")
    ds = ember.data.ImageFolder(tmp_path / "x")
    with pytest.raises(IndexError, match="out of range"):
        ds[100]
    with pytest.raises(ValueError, match="not both"):
        ember.data.ImageFolder(tmp_path / "x", extensions=(".png",), is_valid_file=lambda p: 1)


def _batch(device, n=5, c=3, h=7, w=6, seed=0):
    a = np.random.default_rng(seed).random((n, c, h, w)).astype(np.float32)
    return a, ember.asarray(a, device=device)


def test_normalize(device):
    a, x = _batch(device)
    mean, std = [0.1, 0.2, 0.3], [0.5, 0.25, 2.0]
    want = (a - np.array(mean).reshape(1, 3, 1, 1)) / np.array(std).reshape(1, 3, 1, 1)
    np.testing.assert_allclose(ember.asnumpy(T.normalize(x, mean, std)), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ember.asnumpy(T.Normalize(mean, std)(x)), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="std must not be zero"):
        T.normalize(x, mean, [1, 0, 1])
    with pytest.raises(ValueError, match="one per channel"):
        T.normalize(x, [0.1, 0.2], [1, 1])
    with pytest.raises(ValueError, match=r"\(N, C, H, W\)"):
        T.normalize(x[0], mean, std)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_random_crop_takes_a_window_of_each_padded_image(device, mode):
    a, x = _batch(device)
    out = ember.asnumpy(
        T.random_crop(
            x, (5, 4), padding=2, padding_mode=mode, generator=ember.random.default_rng(1)
        )
    )
    np_mode = {"edge": "edge", "reflect": "reflect", "constant": "constant"}[mode]
    padded = np.pad(a, ((0, 0), (0, 0), (2, 2), (2, 2)), mode=np_mode)
    tops = set()
    for i in range(a.shape[0]):
        hits = [
            (t, l)
            for t in range(padded.shape[2] - 5 + 1)
            for l in range(padded.shape[3] - 4 + 1)  # noqa: E741
            if np.array_equal(padded[i, :, t : t + 5, l : l + 4], out[i])
        ]
        assert hits, f"image {i}: the crop is no window of the padded image"
        tops.add(hits[0])
    assert len(tops) > 1  # each image draws its own window
    # reproducible with a seeded generator
    again = T.random_crop(
        x, (5, 4), padding=2, padding_mode=mode, generator=ember.random.default_rng(1)
    )
    np.testing.assert_array_equal(ember.asnumpy(again), out)


def test_center_crop_and_crop_errors(device):
    a, x = _batch(device)
    np.testing.assert_array_equal(ember.asnumpy(T.center_crop(x, (3, 2))), a[:, :, 2:5, 2:4])
    with pytest.raises(ValueError, match="larger than the image"):
        T.random_crop(x, 9)
    assert T.random_crop(x, 9, pad_if_needed=True).shape == (5, 3, 9, 9)
    with pytest.raises(ValueError, match="size"):
        T.random_crop(x, 0)


@pytest.mark.parametrize("vertical", [False, True])
def test_random_flips(device, vertical):
    a, x = _batch(device, n=16)
    fn = T.random_vertical_flip if vertical else T.random_horizontal_flip
    mirrored = a[:, :, ::-1, :] if vertical else a[:, :, :, ::-1]
    out = ember.asnumpy(fn(x, p=0.5, generator=ember.random.default_rng(3)))
    flipped = [np.array_equal(out[i], mirrored[i]) for i in range(16)]
    kept = [np.array_equal(out[i], a[i]) for i in range(16)]
    assert all(f or k for f, k in zip(flipped, kept, strict=True))
    assert 0 < sum(flipped) < 16
    np.testing.assert_array_equal(ember.asnumpy(fn(x, p=1.0)), mirrored)
    np.testing.assert_array_equal(ember.asnumpy(fn(x, p=0.0)), a)
    with pytest.raises(ValueError, match="p must be"):
        fn(x, p=1.5)


def test_resize_and_compose(device):
    a, x = _batch(device, h=8, w=12)
    assert T.resize(x, (4, 6)).shape == (5, 3, 4, 6)
    assert T.resize(x, 4).shape == (5, 3, 4, 6)  # the shorter side, keeping the aspect
    near = ember.asnumpy(T.resize(x, (4, 6), interpolation="nearest"))
    np.testing.assert_array_equal(near, a[:, :, ::2, ::2])
    # bilinear halving without antialiasing averages each 2x2 block (PyTorch's rule)
    bil = ember.asnumpy(T.resize(x, (4, 6)))
    want = a.reshape(5, 3, 4, 2, 6, 2).mean(axis=(3, 5))
    np.testing.assert_allclose(bil, want, rtol=1e-5, atol=1e-6)
    pipeline = T.Compose(
        [T.RandomCrop(6, padding=1), T.RandomHorizontalFlip(), T.Normalize([0.5] * 3, [0.5] * 3)]
    )
    assert pipeline(x).shape == (5, 3, 6, 6)
    assert "RandomCrop" in repr(pipeline)
    with pytest.raises(ValueError, match="interpolation"):
        T.resize(x, 4, interpolation="area")
