"""GPU benchmark cases of the image stack (issue 27's targets, beside PyTorch and CuPy in the
same run): conv2d forward + backward over ResNet-50's layer shapes (float16, channels_last) at
>= 0.95x PyTorch each; a ResNet-50 training step (batch 256, AMP float16, channels_last,
synthetic data; the model of examples/resnet50.py built for both libraries) at >= 1.0x
PyTorch's images/s with a first step <= 2 s; gaussian_filter (sigma 4) and median_filter (5x5)
of an 8192 x 8192 float32 image at >= 1.0x cupyx.scipy.ndimage."""

from __future__ import annotations

import importlib.util
import pathlib
import time

from ._gpu_common import QUICK, Row, _verdict
from ._gpu_seq import _time_steps
from ._report import fmt_time
from ._runner import _error

CONV_RATIO = 0.95
RESNET_RATIO = 1.0
FIRST_STEP_S = 2.0
FILTER_RATIO = 1.0

# (C_in, C_out, kernel, stride, H=W of the input) of ResNet-50's distinct convolutions
RESNET_CONVS = [
    (3, 64, 7, 2, 224),
    (64, 64, 1, 1, 56),
    (64, 64, 3, 1, 56),
    (64, 256, 1, 1, 56),
    (256, 128, 1, 1, 56),
    (128, 128, 3, 2, 56),
    (128, 512, 1, 1, 28),
    (256, 256, 3, 1, 14),
    (512, 512, 3, 1, 7),
    (1024, 2048, 1, 2, 14),
]


def _example(name):
    """examples/<name>.py of the source tree (the bench runs from the repository root)."""
    here = pathlib.Path(__file__).resolve()
    for root in (pathlib.Path.cwd(), *here.parents):
        path = root / "examples" / f"{name}.py"
        if path.is_file():
            spec = importlib.util.spec_from_file_location(f"_bench_{name}", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            return mod
    raise FileNotFoundError(f"examples/{name}.py not found from {pathlib.Path.cwd()}")


def _ratio_rows(case, times, target, unit_per=None, higher_is_better=False, extra=None):
    rows = []
    for lib, t in times.items():
        row = Row(case, lib)
        if isinstance(t, str):
            row.detail, row.status = t[:60], "ERROR" if lib == "ember" else ""
            rows.append(row)
            continue
        row.measured = f"{fmt_time(t)}" + (f"/{unit_per}" if unit_per else "")
        row.data["time_s"] = t
        peers = [v for k, v in times.items() if k != "ember" and isinstance(v, float)]
        if lib == "ember" and peers:
            ratio = min(peers) / t
            peer = next(k for k, v in times.items() if k != "ember" and v == min(peers))
            row.detail = f"{ratio:.2f}x {peer}'s throughput"
            row.target = f">= {target:g}x {peer}"
            row.status = _verdict(ratio >= target)
            if extra:
                row.detail += extra
        rows.append(row)
    return rows


def _conv_step(lib, dev, shape, batch):
    c_in, c_out, k, s, hw = shape
    fmt = lib.channels_last
    x = lib.randn(batch, c_in, hw, hw, device=dev, dtype=lib.float16)
    x = x.contiguous(memory_format=fmt).requires_grad_()
    w = lib.randn(c_out, c_in, k, k, device=dev, dtype=lib.float16)
    w = w.contiguous(memory_format=fmt).requires_grad_()
    conv = lib.nn.functional.conv2d

    def step():
        y = conv(x, w, stride=s, padding=k // 2)
        y.backward(lib.ones_like(y))

    return step


def conv_cases(ember, torch, log, batch=128):
    rows = []
    for shape in RESNET_CONVS:
        c_in, c_out, k, s, hw = shape
        case = f"conv2d f+b {c_in}->{c_out} {k}x{k}/{s} @{hw} b{batch} f16 NHWC"
        log(case)
        times = {}
        for name, lib in (("ember", ember), ("torch", torch)):
            if lib is None:
                continue
            try:
                step = _conv_step(lib, "cuda", shape, batch)
                times[name] = _time_steps(step, lib.cuda.synchronize, 5)
            except Exception as e:
                times[name] = _error(e)
        rows += _ratio_rows(case, times, CONV_RATIO)
    return rows


def _resnet_step(lib, build, batch):
    fmt = lib.channels_last
    model = build(lib.nn, lib.flatten)().to("cuda").to(memory_format=fmt)
    x = lib.randn(batch, 3, 224, 224, device="cuda").contiguous(memory_format=fmt)
    y = lib.randint(0, 1000, (batch,), device="cuda")
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    scaler = lib.amp.GradScaler("cuda")
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        with lib.autocast("cuda", dtype=lib.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    return step


def resnet_cases(ember, torch, log, batch=256):
    case = f"ResNet-50 train step b{batch} AMP f16 channels_last"
    log(case)
    try:
        build = _example("resnet50").build
    except Exception as e:
        row = Row(case, "ember")
        row.detail, row.status = _error(e)[:60], "n/a"
        return [row]
    times, first = {}, {}
    for name, lib in (("ember", ember), ("torch", torch)):
        if lib is None:
            continue
        try:
            step = _resnet_step(lib, build, batch)
            t0 = time.perf_counter()
            step()
            lib.cuda.synchronize()
            first[name] = time.perf_counter() - t0
            times[name] = _time_steps(step, lib.cuda.synchronize, 5)
        except Exception as e:
            times[name] = _error(e)
    rows = _ratio_rows(case, times, RESNET_RATIO, unit_per="step")
    for row in rows:
        t = times.get(row.lib)
        if isinstance(t, float):
            row.measured += f" ({batch / t:,.0f} img/s)"
    if "ember" in first:
        row = Row("ResNet-50 first step (build + compile + run)", "ember")
        row.measured = fmt_time(first["ember"])
        row.target = f"<= {FIRST_STEP_S:g} s"
        row.status = _verdict(first["ember"] <= FIRST_STEP_S)
        if "torch" in first:
            row.detail = f"torch {fmt_time(first['torch'])}"
        rows.append(row)
    return rows


def filter_cases(ember, cupy, log, n=8192):
    rows = []
    try:
        from cupyx.scipy import ndimage as cnd
    except Exception:
        cnd = None
    import ember.ndimage as end

    for case, fe in (
        (f"gaussian_filter sigma 4, {n}x{n} f32", lambda m, a: m.gaussian_filter(a, 4.0)),
        (f"median_filter 5x5, {n}x{n} f32", lambda m, a: m.median_filter(a, size=5)),
    ):
        log(case)
        times = {}
        try:
            a = ember.random.default_rng(0).random(size=(n, n), dtype="float32", device="cuda")
            times["ember"] = _time_steps(lambda a=a, fe=fe: fe(end, a), ember.cuda.synchronize, 3)
        except Exception as e:
            times["ember"] = _error(e)
        if cnd is not None:
            try:
                c = cupy.random.default_rng(0).random((n, n), dtype="float32")
                times["cupy"] = _time_steps(
                    lambda c=c, fe=fe: fe(cnd, c), cupy.cuda.runtime.deviceSynchronize, 3
                )
            except Exception as e:
                times["cupy"] = _error(e)
        rows += _ratio_rows(case, times, FILTER_RATIO)
    return rows


def image_cases(ember, libs, plan, log) -> list[Row]:
    torch = next((lib.xp for lib in libs if lib.name == "torch"), None)
    cupy = next((lib.xp for lib in libs if lib.name == "cupy"), None)
    quick = plan is QUICK
    rows = conv_cases(ember, torch, log, batch=32 if quick else 128)
    rows += resnet_cases(ember, torch, log, batch=64 if quick else 256)
    rows += filter_cases(ember, cupy, log, n=2048 if quick else 8192)
    return rows
