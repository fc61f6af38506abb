"""``python -m engine``: the same as the ``numbat`` command."""

import sys

from engine.cli import main

sys.exit(main())
