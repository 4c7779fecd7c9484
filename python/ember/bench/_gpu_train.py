"""GPU benchmark case of the training stack, with its targets: one training step of the seed
MLP (784-128-10, ReLU, Softmax, cross-entropy, Adam) at batch 64 and 4096, in ember and in
PyTorch on identical inputs: time per step (<= 0.5x PyTorch's), peak GPU memory during a step
(<= PyTorch's), host (CPU) time per step, and ember's kernel launches and cuBLAS calls per step."""

from __future__ import annotations

import time

import numpy as np

from ._gpu_common import Row, _verdict
from ._report import fmt_time
from ._runner import _error

BATCHES = (64, 4096)
STEP_RATIO = 0.5
MiB = 2**20


def _ember_step(ember, x_host, y_host, device="cuda", capturable=False):
    nn = ember.nn
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10), nn.Softmax(dim=1)).to(
        device
    )
    opt = ember.optim.Adam(model.parameters(), capturable=capturable)
    crit = nn.CrossEntropyLoss()
    x = ember.asarray(x_host, device=device)
    y = ember.asarray(y_host, device=device)

    def step():
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()

    return step


def _torch_step(torch, x_host, y_host):
    nn = torch.nn
    model = nn.Sequential(
        nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10), nn.Softmax(dim=1)
    ).cuda()
    opt = torch.optim.Adam(model.parameters())
    crit = nn.CrossEntropyLoss()
    x = torch.from_numpy(x_host).cuda()
    y = torch.from_numpy(y_host).cuda()

    def step():
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()

    return step


def _time_steps(step, sync, rounds, n):
    """Best wall time per step over rounds of n steps, and the host (thread CPU) time per step."""
    for _ in range(10):
        step()
    sync()
    best, host = float("inf"), float("inf")
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(n):
            step()
        c1 = time.thread_time()
        sync()
        best = min(best, (time.perf_counter() - t0) / n)
        host = min(host, (c1 - c0) / n)
    return best, host


def _ember_peak(ember, step):
    """Peak bytes allocated during one step."""
    ember.cuda.synchronize()
    ember.cuda.reset_peak_memory_stats()
    step()
    ember.cuda.synchronize()
    return ember.cuda.max_memory_allocated()


def _torch_peak(torch, step):
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated()


def train_cases(libs, plan, log) -> list[Row]:
    names = {lib.name: lib for lib in libs}
    ember = names["ember"].xp
    torch = names["torch"].xp if "torch" in names else None
    rows: list[Row] = []
    rounds, n = min(plan.rounds, 5), 100
    for batch in BATCHES:
        case = f"train step MLP 784-128-10 Adam, batch {batch}"
        log(case)
        rng = np.random.default_rng(batch)
        x_host = rng.standard_normal((batch, 784), dtype=np.float32)
        y_host = rng.integers(0, 10, batch)
        results = {}
        for name, make, sync, peak in (
            ("ember", _ember_step, ember.cuda.synchronize, _ember_peak),
            ("torch", _torch_step, torch.cuda.synchronize if torch else None, _torch_peak),
        ):
            if name == "torch" and torch is None:
                continue
            xp = ember if name == "ember" else torch
            try:
                step = make(xp, x_host, y_host)
                t, host = _time_steps(step, sync, rounds, n)
                res = {"time_s": t, "host_s": host, "peak_bytes": peak(xp, step)}
                if name == "ember":
                    s0 = ember.cuda.kernel_cache_stats()
                    step()
                    s1 = ember.cuda.kernel_cache_stats()
                    res["launches"] = s1["launches"] - s0["launches"]
                    res["library_calls"] = s1["library_calls"] - s0["library_calls"]
                results[name] = res
            except Exception as e:  # reported on the row
                results[name] = _error(e)
        for name in ("ember", "torch"):
            if name not in results:
                continue
            r = results[name]
            row = Row(case, name)
            if name == "ember":
                row.target = f"<= {STEP_RATIO}x torch, peak <= torch's"
            if isinstance(r, str):
                row.detail = r[:60]
                row.status = "ERROR" if name == "ember" else ""
                rows.append(row)
                continue
            row.measured = fmt_time(r["time_s"])
            row.data.update(r)
            detail = f"host {fmt_time(r['host_s'])}, peak {r['peak_bytes'] / MiB:.2f} MiB"
            if name == "ember":
                detail += f", {r['launches']} kernels + {r['library_calls']} GEMMs"
                t = results.get("torch")
                if isinstance(t, dict):
                    ratio = r["time_s"] / t["time_s"]
                    detail = f"{ratio:.2f}x torch, " + detail
                    row.status = _verdict(
                        ratio <= STEP_RATIO and r["peak_bytes"] <= t["peak_bytes"]
                    )
            row.detail = detail
            rows.append(row)
    return rows
