"""Calibrate the strength levels: each ``UCI_Elo`` setting against Stockfish at the same setting.

    python -m engine.tools.calibrate [--elos 1400,1650,1900,2150,2400] [--games 100] [--tc 10+0.1]
        [--stockfish /usr/games/stockfish] [--results docs/calibration.json] [--plot docs/calibration.png]

For every setting, Numbat with ``UCI_LimitStrength`` and ``UCI_Elo`` = setting plays
``--games`` games against Debian's Stockfish 15.1 with the same two options (its
ladder is anchored to CCRL 40/4), paired openings from ``8moves_v3.pgn``, through
:mod:`engine.tools.match` (progress bar, adjudication, faults counted).  A setting is
on its label when its Elo difference is within +-100 (a score of 36% to 64%).

Then each setting's moves are judged by a deeper search of Numbat's own at full strength
(``--judge-depth``, on a seeded sample of ``--judge-moves`` moves): the average centipawn
loss (scores capped at +-1000) and the share of moves losing 300 cp or more.

Results go to a small JSON file, one entry per setting, rewritten after each setting:
a run stopped part-way resumes with the settings it has not finished.  ``--plot`` draws
the calibration curve (setting against measured Elo, 95% error bars, the ideal
diagonal) with matplotlib, an optional extra (``pip install numbat[tools]``).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from datetime import date
from pathlib import Path

import chess
import chess.pgn

from engine.tools.data import REPO_ROOT, shared_data_dir
from engine.tools.engines import NUMBAT_COMMAND, STOCKFISH_PATH, EngineConfig, quiet_engine_log
from engine.tools.match import DrawAdjudication, MatchConfig, ResignAdjudication, TimeControl, format_report, run_match

DEFAULT_ELOS = (1400, 1650, 1900, 2150, 2400)
ON_LABEL_ELO = 100        # a setting is calibrated when within this many Elo of its label
LOSS_CAP = 1000           # centipawns: scores (mates) are capped here before losses are averaged
BLUNDER_CP = 300          # a move losing this much or more counts as a large mistake
NUMBAT = "numbat"
STOCKFISH = "stockfish"


def git_commit() -> str:
    """The short commit hash of the checkout, with ``-dirty`` if tracked files differ from it; or 'unknown'."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    try:
        dirty = git("status", "--porcelain", "--untracked-files=no") != ""
        return git("rev-parse", "--short", "HEAD") + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def play_setting(elo: int, games: int, tc: str, stockfish: str, openings: str | None, seed: int, concurrency: int,
                 pgn_path: Path, tb_path: str | None) -> dict:
    """Play one setting's match; return its result entry (without the move judgement)."""
    numbat = EngineConfig(list(NUMBAT_COMMAND), NUMBAT,
                          options={"UCI_LimitStrength": "true", "UCI_Elo": str(elo), "OwnBook": "false",
                                   "Hash": "16"})
    sf = EngineConfig([stockfish], STOCKFISH,
                      options={"UCI_LimitStrength": "true", "UCI_Elo": str(elo), "Hash": "16", "Threads": "1"})
    config = MatchConfig(engines=[numbat, sf], openings=openings, seed=seed, tc=TimeControl.parse(tc),
                         rounds=(games + 1) // 2, games=2, concurrency=concurrency,
                         draw=DrawAdjudication(), resign=ResignAdjudication(twosided=True), tb_path=tb_path,
                         pgn_out=str(pgn_path), event=f"Numbat calibration UCI_Elo {elo}")
    result = run_match(config)
    print(format_report(result), flush=True)
    pairing = result.pairings[0]
    estimate = pairing.elo()
    faults = result.engines[NUMBAT]
    return {
        "elo": elo, "games": pairing.games, "wins": pairing.wins, "draws": pairing.draws, "losses": pairing.losses,
        "pentanomial": pairing.pentanomial, "elo_diff": round(estimate.elo, 1), "elo_low": round(estimate.lower, 1),
        "elo_high": round(estimate.upper, 1), "score": round(pairing.score, 4), "tc": tc, "seed": seed,
        "time_losses": faults.time_losses, "illegal_moves": faults.illegal_moves, "commit": git_commit(),
        "date": date.today().isoformat(), "pgn": str(pgn_path),
    }


def numbat_moves(pgn_path: Path) -> list[tuple[str, str]]:
    """(FEN before the move, UCI move) of every move Numbat played in the PGN file."""
    moves = []
    with open(pgn_path, encoding="utf-8", errors="replace") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            colour = chess.WHITE if game.headers.get("White") == NUMBAT else chess.BLACK
            board = game.board()
            for move in game.mainline_moves():
                if board.turn == colour:
                    moves.append((board.fen(), move.uci()))
                board.push(move)
    return moves


def judge_moves(moves: list[tuple[str, str]], depth: int, sample: int, seed: int) -> dict:
    """Average centipawn loss and the share of moves losing ``BLUNDER_CP`` or more, by a full-strength search."""
    from engine.board import Board
    from engine.searcher import Searcher
    from engine.timeman import Limits

    chosen = random.Random(seed).sample(moves, min(sample, len(moves)))
    searcher = Searcher(hash_mb=64)
    losses = []
    for fen, move in chosen:
        board = Board(fen)
        searcher.think(board, Limits(depth=depth), None)
        best = max(-LOSS_CAP, min(LOSS_CAP, searcher.last_lines[0].score))
        searcher.think(board, Limits(depth=depth, searchmoves=[move]), None)
        played = max(-LOSS_CAP, min(LOSS_CAP, searcher.last_lines[0].score))
        losses.append(max(0, best - played))
    if not losses:
        return {"judged_moves": 0, "acpl": None, "blunder_share": None}
    return {"judged_moves": len(losses), "judge_depth": depth, "acpl": round(sum(losses) / len(losses), 1),
            "blunder_share": round(sum(loss >= BLUNDER_CP for loss in losses) / len(losses), 4)}


def plot(entries: list[dict], path: Path) -> None:
    """Setting against measured Elo (label + difference) with 95% error bars, and the ideal diagonal."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    entries = sorted(entries, key=lambda e: e["elo"])
    x = [e["elo"] for e in entries]
    y = [e["elo"] + e["elo_diff"] for e in entries]
    low = [e["elo_diff"] - e["elo_low"] for e in entries]
    high = [e["elo_high"] - e["elo_diff"] for e in entries]
    fig, ax = plt.subplots(figsize=(6, 5))
    lo, hi = min(x) - 150, max(x) + 150
    ax.plot([lo, hi], [lo, hi], color="grey", linestyle="--", label="ideal")
    ax.fill_between([lo, hi], [lo - ON_LABEL_ELO, hi - ON_LABEL_ELO], [lo + ON_LABEL_ELO, hi + ON_LABEL_ELO],
                    color="grey", alpha=0.15, label=f"±{ON_LABEL_ELO} Elo")
    ax.errorbar(x, y, yerr=[low, high], fmt="o", capsize=4, label="measured (95%)")
    ax.set_xlabel("UCI_Elo setting")
    ax.set_ylabel("measured Elo on Stockfish 15.1's UCI_Elo scale")
    ax.set_title(f"Numbat strength levels at {entries[0]['tc']}")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"wrote {path}")


def markdown_table(entries: list[dict]) -> str:
    """The README's calibration table: one row per setting, from the results file."""
    rows = ["| `UCI_Elo` | games | W-D-L | Elo difference (95%) | on label | average loss | moves losing ≥ 300 cp |",
            "|---|---|---|---|---|---|---|"]
    for e in sorted(entries, key=lambda e: e["elo"]):
        on_label = "yes" if abs(e["elo_diff"]) <= ON_LABEL_ELO else "no"
        acpl = f"{e['acpl']:.0f} cp" if e.get("acpl") is not None else "n/a"
        blunders = f"{100 * e['blunder_share']:.1f}%" if e.get("blunder_share") is not None else "n/a"
        rows.append(f"| {e['elo']} | {e['games']} | {e['wins']}-{e['draws']}-{e['losses']} | "
                    f"{e['elo_diff']:+.0f} ({e['elo_low']:+.0f} to {e['elo_high']:+.0f}) | {on_label} | {acpl} | "
                    f"{blunders} |")
    return "\n".join(rows)


def load_results(path: Path) -> dict[int, dict]:
    """The entries of a results file by setting (empty when the file does not exist)."""
    if not path.exists():
        return {}
    return {int(entry["elo"]): entry for entry in json.loads(path.read_text())["settings"]}


def save_results(path: Path, entries: dict[int, dict]) -> None:
    """Write the results file, settings in order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"settings": [entries[k] for k in sorted(entries)]}, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Play (or resume) the calibration, judge the moves, write the results and the plot."""
    data = shared_data_dir()
    parser = argparse.ArgumentParser(prog="python -m engine.tools.calibrate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--elos", default=",".join(map(str, DEFAULT_ELOS)), help="settings, comma separated")
    parser.add_argument("--games", type=int, default=100, help="games per setting (default 100)")
    parser.add_argument("--tc", default="10+0.1", help="time control (default 10+0.1)")
    parser.add_argument("--concurrency", type=int, default=2, help="games at once (default 2)")
    parser.add_argument("--stockfish", default=STOCKFISH_PATH, help="Stockfish binary")
    parser.add_argument("--openings", default=str(data / "openings" / "8moves_v3.pgn") if data else None,
                        help="openings (default: ../shared/data/openings/8moves_v3.pgn)")
    parser.add_argument("--tb", default=str(data / "syzygy" / "regular") if data else None,
                        help="Syzygy folder for adjudication (default: ../shared/data/syzygy/regular)")
    parser.add_argument("--seed", type=int, default=5800, help="opening seed (the setting is added to it)")
    parser.add_argument("--results", type=Path, default=REPO_ROOT / "docs" / "calibration.json")
    parser.add_argument("--plot", type=Path, default=REPO_ROOT / "docs" / "calibration.png")
    parser.add_argument("--pgn-dir", type=Path, default=Path("calibration-games"), help="where the games go")
    parser.add_argument("--judge-depth", type=int, default=10, help="depth of the judging search")
    parser.add_argument("--judge-moves", type=int, default=300, help="moves judged per setting")
    parser.add_argument("--redo", action="store_true", help="play settings again even when the file has them")
    parser.add_argument("--table-only", action="store_true", help="print the README table and plot; play nothing")
    args = parser.parse_args(argv)
    quiet_engine_log()
    if args.openings is None:
        print("no openings: pass --openings FILE (8moves_v3.pgn is CC0; see tests/data/SOURCES.md)", file=sys.stderr)
        return 2
    entries = load_results(args.results)
    args.pgn_dir.mkdir(parents=True, exist_ok=True)
    for elo in ([] if args.table_only else (int(text) for text in args.elos.split(","))):
        done = entries.get(elo)
        if done and not args.redo and done["games"] >= args.games and done["tc"] == args.tc:
            print(f"UCI_Elo {elo}: done ({done['games']} games), skipped")
            continue
        pgn_path = args.pgn_dir / f"calibration_{elo}.pgn"
        pgn_path.unlink(missing_ok=True)
        entry = play_setting(elo, args.games, args.tc, args.stockfish, args.openings, args.seed + elo,
                             args.concurrency, pgn_path, args.tb)
        entry.update(judge_moves(numbat_moves(pgn_path), args.judge_depth, args.judge_moves, elo))
        entries[elo] = entry
        save_results(args.results, entries)
        verdict = "on its label" if abs(entry["elo_diff"]) <= ON_LABEL_ELO else "OFF its label"
        print(f"UCI_Elo {elo}: {entry['wins']}-{entry['draws']}-{entry['losses']}, {entry['elo_diff']:+.0f} "
              f"({entry['elo_low']:+.0f} to {entry['elo_high']:+.0f}), {verdict}; average loss {entry['acpl']} cp, "
              f"{100 * (entry['blunder_share'] or 0):.1f}% of moves lose {BLUNDER_CP} cp or more", flush=True)
    if entries:
        print(markdown_table(list(entries.values())))
    if args.plot and str(args.plot) not in ("", ".") and entries:
        try:
            plot(list(entries.values()), args.plot)
        except ImportError:
            print("matplotlib is not installed (pip install matplotlib): no plot", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
