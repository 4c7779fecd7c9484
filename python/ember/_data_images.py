"""Images for ember.data: ``ImageFolder`` (torchvision's layout: ``root/<class>/<image>``, the
class is the folder name; Pillow decodes) and ``ToArray``, which turns a decoded image into a
(C, H, W) float32 array in [0, 1] (torchvision's ``ToTensor``). The batch transforms that run
on the device are in ``ember.data.transforms`` (``_data_transforms.py``).
"""

from __future__ import annotations

import os

import numpy as np

from ._array import asarray
from .data import Dataset

__all__ = ["IMG_EXTENSIONS", "ImageFolder", "ToArray", "pil_loader"]

IMG_EXTENSIONS = (
    ".jpg",
    ".jpeg",
    ".png",
    ".ppm",
    ".bmp",
    ".pgm",
    ".tif",
    ".tiff",
    ".webp",
)


def pil_loader(path):
    """The image at `path`, decoded by Pillow and converted to RGB."""
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - Pillow is a dependency of image loading
        raise ImportError(
            "ember.data.ImageFolder needs Pillow to decode images (pip install pillow)"
        ) from exc
    with open(path, "rb") as f:
        img = Image.open(f)
        return img.convert("RGB")


class ImageFolder(Dataset):
    """A labelled image dataset from ``root/<class name>/**/<file>``: classes sorted by name get
    indices 0, 1, ...; ``dataset[i]`` is ``(transform(image), target_transform(class index))``.
    Without a transform the image is Pillow's (as torchvision's); ``ToArray()`` makes it an
    ember array. Attributes: ``classes``, ``class_to_idx``, ``samples`` (path, index),
    ``targets``, ``imgs``."""

    def __init__(
        self,
        root,
        transform=None,
        target_transform=None,
        loader=None,
        is_valid_file=None,
        extensions=None,
        allow_empty=False,
    ):
        who = "ember.data.ImageFolder"
        root = os.fspath(root)
        if not os.path.isdir(root):
            raise FileNotFoundError(f"{who}: root {root!r} is not a directory")
        if is_valid_file is not None and extensions is not None:
            raise ValueError(f"{who}: pass extensions or is_valid_file, not both")
        if is_valid_file is None:
            exts = tuple(e.lower() for e in (extensions or IMG_EXTENSIONS))

            def is_valid_file(path):
                return path.lower().endswith(exts)

        classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
        if not classes:
            raise FileNotFoundError(f"{who}: no class folders found in {root!r}")
        self.root = root
        self.classes = classes
        self.class_to_idx = {c: i for i, c in enumerate(classes)}
        samples = []
        for c in classes:
            found = []
            for dirpath, _, files in sorted(os.walk(os.path.join(root, c), followlinks=True)):
                for name in sorted(files):
                    path = os.path.join(dirpath, name)
                    if is_valid_file(path):
                        found.append((path, self.class_to_idx[c]))
            if not found and not allow_empty:
                raise FileNotFoundError(
                    f"{who}: no valid image found in class folder {os.path.join(root, c)!r} "
                    "(pass allow_empty=True to accept empty classes)"
                )
            samples += found
        self.samples = samples
        self.imgs = samples
        self.targets = [t for _, t in samples]
        self.loader = loader or pil_loader
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        n = len(self.samples)
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
            raise TypeError(
                f"ember.data.ImageFolder: index must be an int, got {type(index).__name__}"
            )
        if not -n <= index < n:
            raise IndexError(f"ember.data.ImageFolder: index {index} is out of range for {n}")
        path, target = self.samples[index]
        image = self.loader(path)
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __repr__(self):
        return f"ImageFolder(root={self.root!r}, {len(self)} images, {len(self.classes)} classes)"


class ToArray:
    """A decoded image (Pillow image or (H, W[, C]) uint8 array) as a (C, H, W) float32 array
    in [0, 1] on the CPU (move whole batches to the GPU; transforms run there)."""

    def __init__(self, dtype=None):
        self.dtype = dtype

    def __call__(self, image):
        a = np.asarray(image)
        if a.ndim == 2:
            a = a[:, :, None]
        if a.ndim != 3:
            raise ValueError(
                f"ember.data.ToArray: expected an (H, W) or (H, W, C) image, got shape {a.shape}"
            )
        out = np.ascontiguousarray(a.transpose(2, 0, 1))
        if out.dtype == np.uint8:
            out = out.astype(np.float32) / 255.0
        arr = asarray(out.astype(np.float32, copy=False))
        return arr if self.dtype is None else arr.astype(self.dtype)

    def __repr__(self):
        return "ToArray()"
