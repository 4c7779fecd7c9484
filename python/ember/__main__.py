"""``python -m ember``: small command-line tools (demo, bench)."""

import sys

USAGE = """\
usage: python -m ember <command> [args]

commands:
  demo     devices found, a NumPy-style computation on the default device checked
           against NumPy, and its timings (a few seconds)
  bench    the benchmark suite against NumPy, CuPy and PyTorch
           (same as python -m ember.bench; see --help)
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
    sys.stderr.write(f"python -m ember: unknown command {cmd!r}\n\n{USAGE}")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
