"""What the long-running tools (match, suite, spsa, selfplay, perft_suite) share: one tqdm bar on
stderr, and SIGTERM handled as Ctrl-C."""

from __future__ import annotations

import signal
import sys
from typing import Any

from tqdm import tqdm


class ProgressBar:
    """A tqdm bar on stderr counting ``unit`` items, with the latest status as its postfix.

    ``enabled=False`` (the tools' ``--no-progress``) makes every call a no-op, so the
    caller needs no branches of its own.  ``done`` items are counted already (a resumed run).
    """

    def __init__(self, total: int, unit: str, enabled: bool, done: int = 0) -> None:
        self.done = done
        self.bar = (tqdm(total=total, initial=done, unit=unit, dynamic_ncols=True, file=sys.stderr)
                    if enabled else None)

    def update(self, text: str) -> None:
        """Count one item and show ``text`` beside the bar."""
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        """Finish the bar."""
        if self.bar is not None:
            self.bar.close()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def stop_on_sigterm() -> None:
    """Make SIGTERM raise KeyboardInterrupt in the main thread, as Ctrl-C does.

    A job started in the background ignores Ctrl-C (SIGINT); with this, ``kill PID`` stops
    it as cleanly: the work under way is dropped, engines quit, checkpoints and reports
    are written.
    """
    signal.signal(signal.SIGTERM, _interrupt)
