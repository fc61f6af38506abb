"""Command-line tools built on the engine (benchmarks, suites); not imported by the engine itself."""
