"""The seed's training loop (examples/train_mlp.py) and `python -m ember demo` run end to end and
reach their accuracy targets on the shipped digits."""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load_example():
    spec = importlib.util.spec_from_file_location("train_mlp", ROOT / "examples" / "train_mlp.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_seed_training_loop_learns_the_digits(capsys):
    accuracy = _load_example().main(["--epochs", "20"])
    out = capsys.readouterr().out
    assert "epoch 20: loss" in out and "test accuracy" in out
    assert accuracy >= 0.95


def test_demo_trains_to_95_percent_within_30_seconds():
    r = subprocess.run(
        [sys.executable, "-m", "ember", "demo"], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout + r.stderr
    last = [ln for ln in r.stdout.splitlines() if "test accuracy in" in ln]
    assert last, r.stdout
    words = last[-1].split()
    accuracy, seconds = float(words[0].rstrip("%")), float(words[4])
    assert accuracy >= 95.0 and "OK" in last[-1]
    if seconds > 30:
        pytest.fail(f"the demo's training took {seconds:.1f} s (target 30 s)")


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_cnn_example_reaches_98_percent_on_the_digits(capsys):
    accuracy = _load("cnn_digits").main(["--epochs", "8"])
    assert "test accuracy" in capsys.readouterr().out
    assert accuracy >= 0.98


def test_the_cnn_example_with_amp_and_channels_last():
    assert _load("cnn_digits").main(["--epochs", "4", "--amp", "--channels-last"]) >= 0.9


def test_resnet50_example_has_torchvisions_parameters_and_trains():
    mod = _load("resnet50")
    import ember

    assert sum(p.size for p in mod.resnet50().parameters()) == 25_557_032
    model = mod.resnet50(num_classes=10)
    first, images_per_s = mod.train_steps(model, 2, 32, 1, "cpu", amp=True, channels_last=True)
    assert images_per_s > 0
    assert all(bool(ember.isfinite(p).all()) for p in model.parameters())
    x = ember.zeros((3, 4, 5))
    assert ember.flatten(x, 1).shape == (3, 20) and ember.flatten(x).shape == (60,)
