"""Launcher for ember's benchmark suite: the same as ``python -m ember.bench``."""

import sys

try:
    from ember.bench import main
except ImportError as e:
    sys.exit(
        f"bench/run.py: cannot import ember ({e}).\n"
        "Build and install it first: pip install --no-build-isolation ."
    )

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
