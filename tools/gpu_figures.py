"""The GPU figures of this round's issues in one process, each group printed as soon as it is
measured (a device call that runs out of time still returns what was done): conv2d f+b over
ResNet-50's shapes, the ResNet-50 AMP step, gaussian/median filters vs cupyx, fusion (2^28
expression, 4-op per call, MLP step under ember.compile). The same code as
``python -m ember.bench --gpu --filter images|fusion``, at the issues' sizes, in the issues'
order of importance.  Usage: python3 tools/gpu_figures.py [group ...]"""

from __future__ import annotations

import sys
import time

import ember
from ember.bench import _gpu_fusion, _gpu_images
from ember.bench._gpu_common import FULL, QUICK, discover, release_all, table


def _resnet_profile(log, batch):
    """Where ember's ResNet-50 AMP step spends GPU time: two warm steps, then one step under
    ember.profiler (CUDA events per op), its ops by self CUDA time. Prints; returns no rows."""
    from ember.bench._gpu_images import _example, _resnet_step

    log(f"ResNet-50 b{batch} AMP f16 channels_last: one profiled step")
    step = _resnet_step(ember, _example("resnet50").build, batch)
    for _ in range(2):
        step()
    ember.cuda.synchronize()
    with ember.profiler.profile() as prof:
        step()
        ember.cuda.synchronize()
    print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=45), flush=True)
    return []


def main(argv):
    libs, notes = discover(ember)
    for n in notes:
        print(n)
    torch = next((lib.xp for lib in libs if lib.name == "torch"), None)
    cupy = next((lib.xp for lib in libs if lib.name == "cupy"), None)
    log = lambda m: print("  ..", m, flush=True)  # noqa: E731
    print("cuDNN:", ember.backends.cudnn.version(), ember.nn._cudnn.load_error() or "")
    groups = {
        "conv": lambda: _gpu_images.conv_cases(ember, torch, log, batch=128),
        "resnet": lambda: _gpu_images.resnet_cases(ember, torch, log, batch=256),
        "filters": lambda: _gpu_images.filter_cases(ember, cupy, log, n=8192),
        "fuse": lambda: _gpu_fusion.big_cases(ember, libs, FULL, log),
        "small": lambda: _gpu_fusion.small_cases(ember, libs, QUICK, log),
        "mlp": lambda: _gpu_fusion.mlp_cases(ember, libs, QUICK, log),
        "resnet-profile": lambda: _resnet_profile(log, batch=128),
    }
    for name in argv or list(groups):
        t0 = time.perf_counter()
        try:
            rows = groups[name]()
        except Exception as e:  # the next group still runs
            print(f"{name}: {type(e).__name__}: {e}")
            continue
        print(table(rows))
        print(f"[{name}: {time.perf_counter() - t0:.0f} s]", flush=True)
        release_all(libs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
