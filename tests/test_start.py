"""First contact: the version, a start that never compiles on a game's clock, a cold start that
says what it does, and the wheel that plays at once.

The tests marked ``slow`` compile every kernel or install the wheel into a fresh virtual
environment (a minute or more each): the default ``python -m pytest -q`` deselects them,
and ``.ci/run`` runs them with ``-m slow``.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from engine import ENGINE_NAME, __version__

REPO = Path(__file__).resolve().parents[1]
ENGINE = [sys.executable, str(REPO / "run_engine.py")]


def test_the_version_is_one_declaration_shown_everywhere() -> None:
    """``numbat --version``, ``id name`` and the CHANGELOG's newest release all say 1.0.0 or later's version."""
    out = subprocess.run([*ENGINE, "--version"], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == f"{ENGINE_NAME} {__version__}"
    session = subprocess.run(ENGINE, input="uci\nquit\n", capture_output=True, text=True, timeout=60, check=True)
    assert f"id name {ENGINE_NAME} {__version__}" in session.stdout.splitlines()
    changelog = (REPO / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", changelog, flags=re.MULTILINE)
    assert releases and releases[0][0] == __version__, releases[:3]
    assert "## [Unreleased]" in changelog


def test_every_release_in_the_changelog_states_its_bench() -> None:
    from engine.bench import BENCH_SIGNATURE

    changelog = (REPO / "CHANGELOG.md").read_text()
    sections = re.split(r"^## ", changelog, flags=re.MULTILINE)[1:]
    releases = [section for section in sections if re.match(r"\[\d+\.\d+\.\d+\]", section)]
    assert releases
    for section in releases:
        assert re.search(r"Bench: \d+", section), section.splitlines()[0]
    newest_bench = int(re.search(r"Bench: (\d+)", releases[0]).group(1))  # type: ignore[union-attr]
    unreleased = sections[0] if sections[0].startswith("[Unreleased]") else ""
    if "Bench:" not in unreleased:  # nothing changed play since the release
        assert newest_bench == BENCH_SIGNATURE


class Lines(io.TextIOBase):
    """A stdout for an in-process UCI session: the lines written, and an event per ``bestmove``."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.bestmove = threading.Event()

    def write(self, text: str) -> int:
        for line in text.splitlines():
            self.lines.append(line)
            if line.startswith("bestmove"):
                self.bestmove.set()
        return len(text)


def test_no_search_compiles_once_the_engine_is_ready() -> None:
    """After ``isready`` has been answered, no ``go`` compiles a kernel, whatever the options:
    MultiPV, threads, strength levels, tablebases, ponder, node, depth, mate limits."""
    from numba.core import event

    from engine.uci import Output, UciEngine

    out = Lines()
    engine = UciEngine(Output(out))
    engine.handle("uci")
    engine.handle("isready")
    compiled: list[str] = []

    class Listener(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev: event.Event) -> None:
            pass

    syzygy = REPO / "tests" / "data" / "syzygy" / "regular"
    sessions = [
        ([], "position startpos moves e2e4 e7e5", "go wtime 2000 btime 2000 winc 20 binc 20"),
        (["OwnBook value false", "MultiPV value 3"], "position startpos moves d2d4", "go depth 5"),
        (["MultiPV value 1", "Threads value 2"], "position startpos moves c2c4", "go movetime 200"),
        (["Threads value 1", "UCI_LimitStrength value true", "UCI_Elo value 1500"], "position startpos",
         "go wtime 3000 btime 3000"),
        (["UCI_LimitStrength value false", f"SyzygyPath value {syzygy}"], "position fen 8/8/8/3k4/8/8/3PK3/8 w - - 0 1",
         "go nodes 20000"),
        (["SyzygyPath value <empty>"], "position fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "go mate 2"),
        ([], "position startpos moves g1f3", "go ponder wtime 1000 btime 1000"),
    ]
    with event.install_listener("numba:compile", Listener()):
        for options, position, go in sessions:
            for option in options:
                engine.handle(f"setoption name {option}")
            engine.handle("isready")
            engine.handle(position)
            out.bestmove.clear()
            engine.handle(go)
            if "ponder" in go:
                time.sleep(0.2)
                engine.handle("ponderhit")
            assert out.bestmove.wait(60), (go, out.lines[-5:])
            engine.wait_for_search()
    errors = [line for line in out.lines if line.startswith("info string") and "error" in line]
    assert not errors, errors
    assert not compiled, f"kernels compiled after readyok: {sorted(set(compiled))}"


def uci_exchange(command: list[str], env: dict[str, str], cwd: Path, script: list[tuple[str, str]],
                 timeout: float) -> list[tuple[float, str]]:
    """Start ``command``; for each (line to send, line to wait for) send and wait; return every line sent
    (as ``"> line"``) and read, with its seconds from the process start.  An empty line to wait
    for waits for nothing.  Fails if a wait passes ``timeout`` seconds.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=cwd)
    assert proc.stdin and proc.stdout
    seen: list[tuple[float, str]] = []
    try:
        for send, wait_for in script:
            seen.append((time.perf_counter() - start, "> " + send))
            proc.stdin.write(send + "\n")
            proc.stdin.flush()
            deadline = time.perf_counter() + timeout
            while wait_for:
                line = proc.stdout.readline()
                assert line, f"engine ended early: {seen[-5:]} {proc.stderr.read() if proc.stderr else ''}"
                seen.append((time.perf_counter() - start, line.strip()))
                if line.startswith(wait_for):
                    break
                assert time.perf_counter() < deadline, f"no {wait_for!r} within {timeout} s: {seen[-5:]}"
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(timeout=30)
    finally:
        proc.kill()
    return seen


def lines_after(seen: list[tuple[float, str]], prefix: str) -> list[tuple[float, str]]:
    """The lines read (not sent) after the first line starting with ``prefix``."""
    index = next(i for i, (_, line) in enumerate(seen) if line.startswith(prefix))
    return [(at, line) for at, line in seen[index + 1:] if not line.startswith("> ")]


def seconds_to_answer(seen: list[tuple[float, str]], command: str, nth: int = 1) -> float:
    """Seconds from sending the ``nth`` ``command`` to the ``bestmove`` that answers it."""
    sent = [i for i, (_, line) in enumerate(seen) if line == "> " + command][nth - 1]
    answer = next(at for at, line in seen[sent:] if line.startswith("bestmove"))
    return answer - seen[sent][0]


@pytest.mark.slow
def test_a_cold_start_says_it_compiles_and_answers_readyok_when_a_search_can_run(tmp_path: Path) -> None:
    from engine.uci import COLD_START_MESSAGE

    # Native code, which no wheel ships: cold even in a checkout where ``make wheel`` left
    # its x86-64-v3 kernels in engine/kernels/.
    env = {**os.environ, "NUMBAT_CACHE_DIR": str(tmp_path / "cache"), "NUMBAT_CPU": "native"}
    seen = uci_exchange(ENGINE, env, tmp_path, [
        ("uci", "uciok"), ("isready", "readyok"),
        ("position startpos moves e2e4", ""), ("go wtime 1000 btime 1000", "bestmove"),
    ], timeout=600)
    after_uciok = lines_after(seen, "uciok")
    assert after_uciok[0][1] == f"info string {COLD_START_MESSAGE}"
    ready_at = next(at for at, line in seen if line == "readyok")
    uciok_at = next(at for at, line in seen if line == "uciok")
    assert ready_at - uciok_at > 10, "readyok came before the kernels could have compiled"
    answer = seconds_to_answer(seen, "go wtime 1000 btime 1000")
    assert answer < 1.0, f"the first go took {answer:.2f} s on a one-second clock"


def processes_using(marker: str) -> list[int]:
    """The ids of the live processes whose environment holds ``marker`` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
                state = next(line for line in (entry / "status").read_text().splitlines() if line.startswith("State:"))
            except (OSError, StopIteration):
                continue
            if marker.encode() in environ and "zombie" not in state:
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("ending", ["quit", "kill"])
def test_an_engine_ended_during_a_cold_compile_exits_at_once_and_leaves_no_compiler_running(
        tmp_path: Path, ending: str) -> None:
    """A GUI may close the engine during its first start: by ``quit``, or by killing it when it is slow to go."""
    cache = str(tmp_path / "cold-cache")
    env = {**os.environ, "NUMBAT_CACHE_DIR": cache, "NUMBAT_CPU": "native"}
    proc = subprocess.Popen(ENGINE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env, cwd=tmp_path)
    assert proc.stdin and proc.stdout
    try:
        proc.stdin.write("uci\n")
        proc.stdin.flush()
        while not proc.stdout.readline().startswith("uciok"):
            pass
        deadline = time.perf_counter() + 30
        while len(processes_using(cache)) < 2:  # the engine and its compiling workers
            assert time.perf_counter() < deadline, "no compile started after uci on an empty cache"
            time.sleep(0.1)
        time.sleep(1.0)  # well inside the compile (a minute or more)
        ended = time.perf_counter()
        if ending == "quit":
            proc.stdin.write("quit\n")
            proc.stdin.flush()
        else:
            proc.kill()
        proc.wait(timeout=60)
        exit_seconds = time.perf_counter() - ended
    finally:
        proc.kill()
    assert exit_seconds < 5, f"{ending} took {exit_seconds:.1f} s during a cold compile"
    deadline = time.perf_counter() + 5
    while processes_using(cache):
        assert time.perf_counter() < deadline, f"compile processes outlived the engine: {processes_using(cache)}"
        time.sleep(0.1)


def wheel_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel under test: ``$NUMBAT_WHEEL`` (what ``.ci/run`` builds), else built here."""
    given = os.environ.get("NUMBAT_WHEEL")
    if given:
        return Path(given)
    from engine.tools.wheel import build_wheel

    return build_wheel(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the wheel, the ``numbat`` of a fresh virtual environment it is installed into)."""
    wheel = wheel_path(tmp_path_factory)
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)], check=True,
                   timeout=900)
    return wheel, venv / "bin" / "numbat"


def clean_env(home: Path) -> dict[str, str]:
    """An environment with an empty home and cache, and nothing of the checkout's."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("NUMBA", "PYTHON", "XDG_")) and key != "VIRTUAL_ENV"}
    env["HOME"] = str(home)
    return env


@pytest.mark.slow
def test_the_wheel_carries_its_kernels_and_not_the_tools(installed_wheel: tuple[Path, Path]) -> None:
    wheel, _ = installed_wheel
    names = zipfile.ZipFile(wheel).namelist()
    assert not [name for name in names if name.startswith("engine/tools/")]
    assert [name for name in names if name.startswith("engine/kernels/") and "search.search-" in name]
    assert "-linux_x86_64.whl" in wheel.name and f"-cp{sys.version_info[0]}{sys.version_info[1]}-" in wheel.name


@pytest.mark.slow
def test_the_wheel_plays_at_once_with_an_empty_cache(installed_wheel: tuple[Path, Path], tmp_path: Path) -> None:
    _, numbat = installed_wheel
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(home)
    seen = uci_exchange([str(numbat)], env, tmp_path, [
        ("uci", "uciok"), ("isready", "readyok"),
        ("position startpos", ""), ("go wtime 1000 btime 1000", "bestmove"),
        ("setoption name OwnBook value false", ""), ("position startpos moves e2e4 c7c5 g1f3", ""),
        ("go wtime 1000 btime 1000", "bestmove"),
    ], timeout=30)
    ready_at = next(at for at, line in seen if line == "readyok")
    assert ready_at <= 2.0, f"readyok {ready_at:.2f} s after the start"
    texts = [line for _, line in seen]
    assert not [line for line in texts if "compiling" in line], texts
    assert any(line.startswith("info string book move") for line in texts), "the book was not found"
    searched = lines_after(seen, "> setoption")
    assert any(line.startswith("info depth") for _, line in searched)
    for nth in (1, 2):  # the book's move, then a searched one
        answer = seconds_to_answer(seen, "go wtime 1000 btime 1000", nth)
        assert answer < 1.0, f"go {nth} took {answer:.2f} s on a one-second clock"
    assert (home / ".cache" / "numbat").is_dir()


@pytest.mark.slow
def test_the_installed_engine_benches_and_says_its_version(installed_wheel: tuple[Path, Path],
                                                           tmp_path: Path) -> None:
    from engine.bench import BENCH_SIGNATURE

    _, numbat = installed_wheel
    env = clean_env(tmp_path)
    version = subprocess.run([str(numbat), "--version"], env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=60, check=True)
    assert version.stdout.strip() == f"{ENGINE_NAME} {__version__}"
    bench = subprocess.run([str(numbat), "bench"], env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=300, check=True)
    nodes = int(bench.stdout.strip().splitlines()[-1].split()[0])
    assert nodes == BENCH_SIGNATURE
    assert "compil" not in bench.stderr.lower(), bench.stderr
