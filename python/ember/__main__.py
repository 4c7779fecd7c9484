"""``python -m ember``: small command-line tools (demo, bench, cuda)."""

import sys

USAGE = """\
usage: python -m ember <command> [args]

commands:
  demo     devices found, a NumPy-style computation on the default device checked
           against NumPy, and its timings (a few seconds)
  bench    the benchmark suite against NumPy, CuPy and PyTorch
           (same as python -m ember.bench; see --help)
  cuda     `cuda info`: devices and the kernel cache; `cuda precompile [--arch N]`:
           compile the common kernels into the on-disk cache on all cores
"""


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd == "demo":
        from ._demo import main as demo

        return demo(rest)
    if cmd == "bench":
        from .bench import main as bench

        return bench(rest)
    if cmd == "cuda":
        from .cuda import _main as cuda

        return cuda(rest)
    sys.stderr.write(f"python -m ember: unknown command {cmd!r}\n\n{USAGE}")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
