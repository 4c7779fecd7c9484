"""Memory ranges and the build and runtime reports (python/ember/_misc.py)."""

from __future__ import annotations

import ember
import pytest


def test_memory_queries(device):
    x = ember.zeros((6, 8), device=device)
    other = ember.zeros(3, device=device)
    assert ember.shares_memory(x, x[1:3, 2:4]) and ember.may_share_memory(x, x[1:3])
    assert not ember.may_share_memory(x, other) and not ember.shares_memory(x, other)
    assert not ember.shares_memory(x[:3], x[3:])
    assert not ember.may_share_memory(x[:3], x[3:])
    # interleaved: the byte ranges overlap, the elements do not
    assert ember.may_share_memory(x[:, ::2], x[:, 1::2])
    assert not ember.shares_memory(x[:, ::2], x[:, 1::2])
    assert ember.shares_memory(x[:, 1::2], x[:, ::-2][:, ::-1][:, :1])
    assert not ember.shares_memory(x, x[:0])
    with pytest.raises(ValueError, match="max_work"):
        ember.shares_memory(x, x[1:], max_work=10)


def test_show_config_and_runtime(capsys):
    d = ember.show_config(mode="dicts")
    assert d["ember"]["version"] == ember.__version__
    assert d["CPU"]["threads"] >= 1
    assert d["CPU"]["blas"] != "none" and d["CPU"]["lapack"]
    assert d["CUDA"]["available"] == ember.cuda.is_available()
    if not ember.cuda.is_available():
        assert d["CUDA"]["unavailable_reason"]
    assert ember.show_config() is None
    out = capsys.readouterr().out
    assert "CPU:" in out and f"  blas: {d['CPU']['blas']}" in out and "CUDA:" in out
    conv = d["CUDA"]["convolution"]  # cuDNN's version, or the notice of the fallback
    assert conv.startswith("cuDNN 9.") or "cuDNN not found" in conv
    ember.show_runtime()
    out = capsys.readouterr().out
    assert f"  threads: {d['CPU']['threads']}" in out
    if ember.cuda.is_available():
        assert "cuda:0" in out and ember.cuda.get_device_name(0) in out
    else:
        assert "unavailable:" in out
    with pytest.raises(ValueError, match="ember.show_config: mode must be"):
        ember.show_config(mode="json")
