"""The opening book: the shipped book's legality, book play over UCI, the builder's round trip."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import chess
import chess.polyglot

from engine.board import Board
from engine.book import OpeningBook, default_book_path
from engine.fen import KIWIPETE
from engine.tools.book_audit import book_positions
from engine.tools.book_builder import main as build_book

REPO = Path(__file__).resolve().parents[1]
ENGINE = [sys.executable, str(REPO / "run_engine.py")]
SHIPPED = REPO / "books" / "numbat.bin"


def test_shipped_book_is_found_and_every_move_is_legal() -> None:
    assert default_book_path() == SHIPPED
    with chess.polyglot.open_reader(SHIPPED) as reader:
        positions = book_positions(reader)
        keys_reached = {chess.polyglot.zobrist_hash(b) for b in positions}
        all_keys = {reader[i].key for i in range(len(reader))}
        assert keys_reached == all_keys  # the tree walk covers the whole book
        raw_entries = 0
        for board in positions:
            raw = list(reader.find_all(chess.polyglot.zobrist_hash(board)))
            legal = list(reader.find_all(board))  # python-chess drops illegal entries
            assert len(raw) == len(legal), board.fen()
            raw_entries += len(raw)
        assert raw_entries == len(reader)
    book = OpeningBook(SHIPPED)
    ours = book.moves(Board())
    assert {Board().move_to_uci(m) for m, _ in ours} >= {"e2e4", "d2d4", "c2c4", "g1f3"}


def run(script: str) -> list[str]:
    """Send the script line by line; after each ``go`` wait for its bestmove."""
    proc = subprocess.Popen(ENGINE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    assert proc.stdin and proc.stdout
    lines: list[str] = []
    for command in script.splitlines():
        proc.stdin.write(command + "\n")
        proc.stdin.flush()
        if command.startswith("go"):
            while True:
                lines.append(proc.stdout.readline().strip())
                if lines[-1].startswith("bestmove"):
                    break
    proc.stdin.close()
    lines += [line.strip() for line in proc.stdout]
    assert proc.wait(timeout=60) == 0
    return lines


def test_in_book_go_answers_a_book_move_at_once_and_out_of_book_searches() -> None:
    lines = run("position startpos\ngo wtime 60000 btime 60000\n"
                f"position fen {KIWIPETE}\ngo depth 3\nquit\n")
    best = [line for line in lines if line.startswith("bestmove")]
    first_move = best[0].split()[1]
    with chess.polyglot.open_reader(SHIPPED) as reader:
        assert first_move in {e.move.uci() for e in reader.find_all(chess.Board())}
    assert any(line.startswith("info string book move") for line in lines)
    first_best = lines.index(best[0])
    assert not any(line.startswith("info depth") for line in lines[:first_best])  # no search for the book move
    assert any(line.startswith("info depth 3") for line in lines[first_best:])


def test_ownbook_false_always_searches_and_infinite_never_uses_the_book() -> None:
    lines = run("setoption name OwnBook value false\nposition startpos\ngo depth 2\nquit\n")
    assert any(line.startswith("info depth 2") for line in lines)
    assert not any("book move" in line for line in lines)
    lines = run("position startpos\ngo depth 2 searchmoves a2a3\nquit\n")
    assert [line for line in lines if line.startswith("bestmove")][0].split()[1] == "a2a3"


def test_bad_book_files_give_one_info_string_and_play_on(tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.bin"
    truncated.write_bytes(SHIPPED.read_bytes()[:1000])
    missing = tmp_path / "missing.bin"
    unsorted = tmp_path / "unsorted.bin"
    data = SHIPPED.read_bytes()
    entries = [data[i:i + 16] for i in range(0, len(data), 16)]
    unsorted.write_bytes(b"".join(reversed(entries)))
    for path in (truncated, missing, unsorted):
        lines = run(f"setoption name BookFile value {path}\nposition startpos\ngo depth 2\nquit\n")
        infos = [line for line in lines if line.startswith("info string") and "book" in line]
        assert len(infos) == 1, lines
        assert any(line.startswith("bestmove") for line in lines)


def test_builder_round_trip(tmp_path: Path) -> None:
    pgn = tmp_path / "tiny.pgn"
    pgn.write_text(
        '[Result "1-0"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n\n'
        '[Result "1/2-1/2"]\n\n1. e4 c5 2. Nf3 d6 1/2-1/2\n\n'
        '[Result "0-1"]\n\n1. d4 d5 2. O-O-O 0-1\n\n'  # illegal O-O-O: python-chess stops the game there
        '[Result "1-0"]\n\n1. e4 e5 2. Nf3 Nf6 1-0\n\n'
    )
    out = tmp_path / "tiny.bin"
    assert build_book([str(pgn), "-o", str(out), "--max-ply", "3", "--min-games", "1"]) == 0
    with chess.polyglot.open_reader(out) as reader:
        start = {e.move.uci(): e.weight for e in reader.find_all(chess.Board(), minimum_weight=0)}
        assert start == {"e2e4": 2 + 1 + 2, "d2d4": 0}
        after_e4 = chess.Board()
        after_e4.push_uci("e2e4")
        replies = {e.move.uci(): e.weight for e in reader.find_all(after_e4, minimum_weight=0)}
        assert replies == {"e7e5": 0, "c7c5": 1}  # black lost both e5 games, drew the c5 one
        after_e4.push_uci("c7c5")
        assert {e.move.uci() for e in reader.find_all(after_e4)} == {"g1f3"}  # ply 3 is the last recorded
    data = out.read_bytes()
    keys = [struct.unpack(">Q", data[i:i + 8])[0] for i in range(0, len(data), 16)]
    assert keys == sorted(keys)
