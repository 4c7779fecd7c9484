"""Entry point of ``python -m ember.bench``."""

import sys

from ._cli import main

sys.exit(main())
