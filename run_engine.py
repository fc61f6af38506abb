#!/usr/bin/env python3
"""Start Numbat: UCI on stdin/stdout, or a sub-command (``perft``, ``bench``, ...).

GUIs launch this file as a single path from any working directory, so it puts its
own folder on ``sys.path`` before importing the package.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from engine.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
