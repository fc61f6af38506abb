"""Numbat: a UCI chess engine whose search core is compiled with numba.

Importing this package is cheap: numba and the compiled kernels load only when a
module that needs them (``engine.board``, ``engine.perft``, ...) is imported, so the
UCI front end can answer ``uci`` before any compilation or cache loading happens.
"""

__version__ = "1.0.0"  # the one place the version is declared (pyproject.toml reads it)
ENGINE_NAME = "Numbat"
ENGINE_AUTHOR = "the Numbat developers"
