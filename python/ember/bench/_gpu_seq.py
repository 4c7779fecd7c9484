"""GPU benchmark cases of PyTorch-style models and loading (issue targets, beside PyTorch in the
same run): a 2-layer LSTM training step (hidden 512, seq 128, batch 64) and a 6-layer Transformer
encoder training step (d 512, 8 heads, seq 512, batch 32, bf16 autocast) at >= 1.0x PyTorch's
throughput; a DataLoader with 4 workers over 10^5 rows of 784 floats with a Python transform at
>= 0.9x PyTorch's items/s."""

from __future__ import annotations

import time

import numpy as np

from ._gpu_common import Row, _verdict
from ._report import fmt_time
from ._runner import _error

LSTM_RATIO = TRANSFORMER_RATIO = 1.0
LOADER_RATIO = 0.9


def _time_steps(step, sync, n):
    step()
    sync()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        sync()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def _lstm_step(lib, nn, optim, dev):
    m = nn.LSTM(512, 512, num_layers=2).to(dev)
    x = lib.randn(128, 64, 512, device=dev)
    opt = optim.SGD(m.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        out, _ = m(x)
        out.sum().backward()
        opt.step()

    return step


def _transformer_step(lib, nn, optim, dev):
    layer = nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0, batch_first=True)
    m = nn.TransformerEncoder(layer, 6).to(dev)
    x = lib.randn(32, 512, 512, device=dev)
    opt = optim.SGD(m.parameters(), lr=1e-3)

    def step():  # bf16 autocast, as the issue asks (both libraries)
        opt.zero_grad()
        with lib.autocast("cuda", dtype=lib.bfloat16):
            loss = m(x).float().sum()
        loss.backward()
        opt.step()

    return step


def model_cases(ember, libs, plan, log) -> list[Row]:
    import ember.nn as enn
    import ember.optim as eoptim

    torch = next((lib.xp for lib in libs if lib.name == "torch"), None)
    rows = []
    for case, make, target in (
        ("LSTM 2x512 train step, seq 128, batch 64", _lstm_step, LSTM_RATIO),
        ("Transformer 6x512 train step, seq 512, batch 32", _transformer_step, TRANSFORMER_RATIO),
    ):
        log(case)
        times = {}
        try:
            step = make(ember, enn, eoptim, "cuda")
            times["ember"] = _time_steps(step, ember.cuda.synchronize, 3)
        except Exception as e:
            times["ember"] = _error(e)
        if torch is not None:
            try:
                step = make(torch, torch.nn, torch.optim, "cuda")
                times["torch"] = _time_steps(step, torch.cuda.synchronize, 3)
            except Exception as e:
                times["torch"] = _error(e)
        for lib, t in times.items():
            row = Row(case, lib)
            if isinstance(t, str):
                row.detail, row.status = t[:60], "ERROR" if lib == "ember" else ""
            else:
                row.measured = f"{fmt_time(t)}/step"
                row.data["time_s"] = t
                if lib == "ember" and isinstance(times.get("torch"), float):
                    ratio = times["torch"] / t
                    row.detail = f"{ratio:.2f}x torch's throughput"
                    row.target = f">= {target:g}x torch"
                    row.status = _verdict(ratio >= target)
            rows.append(row)
    rows += loader_cases(ember, torch, log)
    return rows


class _Rows:
    """10^5 rows of 784 floats in memory, with a Python-level transform per item."""

    def __init__(self, data, lib):
        self.data, self.lib = data, lib

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        row = self.data[i]
        return (row - row.mean()) / (row.std() + 1e-6), i % 10


def loader_cases(ember, torch, log) -> list[Row]:
    log("DataLoader 4 workers")
    data = np.random.default_rng(0).random((100_000, 784), dtype=np.float32)
    rows, times = [], {}

    def run(DataLoader, lib):  # noqa: N803
        loader = DataLoader(_Rows(data, lib), batch_size=256, num_workers=4)
        t0 = time.perf_counter()
        n = sum(len(b[1]) for b in loader)
        return n / (time.perf_counter() - t0)

    try:
        from ember.utils.data import DataLoader

        times["ember"] = run(DataLoader, "ember")
    except Exception as e:
        times["ember"] = _error(e)
    if torch is not None:
        try:
            from torch.utils.data import DataLoader as TorchLoader

            times["torch"] = run(TorchLoader, "torch")
        except Exception as e:
            times["torch"] = _error(e)
    for lib, v in times.items():
        row = Row("DataLoader 4 workers, 1e5 x 784 f32, Python transform", lib)
        if isinstance(v, str):
            row.detail, row.status = v[:60], "ERROR" if lib == "ember" else ""
        else:
            row.measured = f"{v:,.0f} items/s"
            row.data["items_per_s"] = v
            if lib == "ember" and isinstance(times.get("torch"), float):
                ratio = v / times["torch"]
                row.detail = f"{ratio:.2f}x torch"
                row.target = f">= {LOADER_RATIO:g}x torch"
                row.status = _verdict(ratio >= LOADER_RATIO)
        rows.append(row)
    return rows
