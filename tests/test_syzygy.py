"""Our Syzygy WDL prober (engine.syzygy) against python-chess, plus damaged files.

python-chess is the oracle: ``probe_wdl_table`` for the raw table value and
``probe_wdl`` (captures resolved, en passant handled) for the full probe.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import chess
import chess.syzygy
import numpy as np
import pytest

from conftest import DATA, REPO, SYZYGY_DIR
from engine.board import Board
from engine.jit import hot_njit
from engine.movegen import GEN_ALL, generate_moves
from engine.position import make_move, unmake_move
from engine.syzygy import (
    TB_FAIL,
    empty_tablebases,
    load_tablebases,
    make_scratch,
    probe_table,
    probe_wdl,
    probe_wdl_board,
)
from engine.tools.tb_speed import random_position, random_positions, table_names

REGULAR = SYZYGY_DIR  # tests/data/syzygy/regular: all 35 3-4-man .rtbw tables
EPD = DATA / "syzygy" / "endgame_wdl_dtz.epd"


@pytest.fixture(scope="module")
def tables():
    """Our tables and python-chess's, both over the test 3-4-man directory."""
    tb, max_pieces, messages = load_tablebases(str(REGULAR))
    reference = chess.syzygy.open_tablebase(str(REGULAR))
    yield tb, max_pieces, messages, reference
    reference.close()


def _ours(tb, board: chess.Board, scratch) -> tuple[int, int]:
    """(raw table value, full WDL) from our prober; TB_FAIL where it has no answer."""
    engine_board = Board(board.fen())
    raw = int(probe_table(tb, engine_board.pos, scratch))
    full = int(probe_wdl(tb, engine_board.pos, engine_board.tab, scratch))
    assert engine_board.fen() == Board(board.fen()).fen(), "probe must leave the position unchanged"
    return raw, full


@hot_njit
def _children_wdl(tb, pos, tab, scratch, moves, out):
    """A search-like caller: WDL of every child, probed between make and unmake."""
    end = generate_moves(pos, tab, moves, 0, GEN_ALL)
    for i in range(end):
        make_move(pos, tab, moves[i])
        out[i] = probe_wdl(tb, pos, tab, scratch)
        unmake_move(pos, tab)
    return end


def test_loads_every_regular_table(tables):
    tb, max_pieces, messages, _ = tables
    assert messages == []
    assert max_pieces == 4
    assert int(tb.meta[2]) == len(table_names(REGULAR)) == 35


def test_epd_positions_match_python_chess(tables):
    tb, _, _, reference = tables
    scratch = make_scratch()
    compared = 0
    for line in EPD.read_text().splitlines():
        if not line.strip():
            continue
        fields = line.split()
        board = chess.Board(" ".join(fields[:4]) + " 0 1")
        ops = dict(op.strip().split(" ", 1) for op in " ".join(fields[4:]).split(";") if op.strip())
        raw, full = _ours(tb, board, scratch)
        assert raw == reference.probe_wdl_table(board) == int(ops["wdl_table"]), board.fen()
        assert full == reference.probe_wdl(board) == int(ops["wdl"]), board.fen()
        compared += 1
    assert compared == 200


def test_random_positions_of_every_table_match_python_chess(tables):
    tb, _, _, reference = tables
    scratch = make_scratch()
    names = table_names(REGULAR)
    boards = random_positions(names, per_table=80, seed=7, ep_per_table=40)
    seen = {}
    ep_positions = ep_decides = 0
    for board in boards:
        raw, full = _ours(tb, board, scratch)
        expected = reference.probe_wdl(board)
        assert raw == reference.probe_wdl_table(board), board.fen()
        assert full == expected, board.fen()
        key = (chess.syzygy.calc_key(board), board.turn)
        seen[key] = seen.get(key, 0) + 1
        if board.has_legal_en_passant():
            ep_positions += 1
            without_ep = board.copy()
            without_ep.ep_square = None
            ep_decides += reference.probe_wdl(without_ep) != expected
    # Every table, with its material on either colour and either side to move.
    for name in names:
        first, second = name.split("v")
        for key in (f"{first}v{second}", f"{second}v{first}"):
            assert seen.get((key, chess.WHITE), 0) >= 10 and seen.get((key, chess.BLACK), 0) >= 10, key
    assert len(boards) >= 35 * 80
    assert ep_positions >= 40  # only KPvKP among the 3-4-man tables allows en passant
    assert ep_decides >= 5  # positions whose value the en-passant capture changes


def test_five_piece_positions_resolved_by_captures(tables):
    """With only 3-4-man tables, a 5-piece position is known exactly when a capture wins."""
    tb, _, _, reference = tables
    scratch = make_scratch()
    rng = random.Random(11)
    names = ["KQRvKR", "KRvKRP", "KQvKNP", "KRBvKR", "KPPvKP", "KQvKRB"]
    known = unknown = 0
    for i in range(600):
        name = names[i % len(names)]
        board = random_position(rng, name, flipped=bool(i & 2), turn=bool(i & 1))
        if board is None:
            continue
        _, full = _ours(tb, board, scratch)
        try:
            expected = reference.probe_wdl(board)
        except KeyError:
            assert full == TB_FAIL, board.fen()
            unknown += 1
        else:
            assert full == expected, board.fen()
            known += 1
    assert known >= 50 and unknown >= 50


def test_probe_from_inside_a_search_kernel(tables):
    tb, _, _, reference = tables
    scratch = make_scratch()
    moves = np.zeros(256, dtype=np.int32)
    out = np.zeros(256, dtype=np.int64)
    compared = 0
    for board in random_positions(["KRvKP", "KQvKR", "KPvKP", "KBNvK"], per_table=6, seed=3, ep_per_table=2):
        engine_board = Board(board.fen())
        count = _children_wdl(tb, engine_board.pos, engine_board.tab, scratch, moves, out)
        assert count == board.legal_moves.count()
        for i in range(count):
            child = board.copy()
            child.push_uci(engine_board.move_to_uci(int(moves[i])))
            try:
                expected = reference.probe_wdl(child)
            except KeyError:  # only KvK-free tables exist; every child here is covered
                expected = TB_FAIL
            assert out[i] == expected, child.fen()
            compared += 1
        assert engine_board.fen() == board.fen()
    assert compared >= 200


def test_special_cases(tables):
    tb, _, _, _ = tables
    assert probe_wdl_board(tb, Board("8/8/8/3k4/8/8/8/4K3 w - - 0 1")) == 0  # KvK needs no file
    # Castling rights: the tables do not cover them.
    assert probe_wdl_board(tb, Board("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1")) is None
    assert probe_wdl_board(tb, Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")) == 2
    # Too many pieces, and no tables at all.
    assert probe_wdl_board(tb, Board("4k3/pppp4/8/8/8/8/PPPP4/4K3 w - - 0 1")) is None
    assert probe_wdl_board(empty_tablebases(), Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")) is None


def test_several_directories_and_flipped_names(tmp_path, tables):
    _, _, _, reference = tables
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    for name in ("KQvK", "KRvK"):
        shutil.copy(REGULAR / f"{name}.rtbw", first)
    for name in ("KRvKP", "KPvK", "KQvKR"):
        shutil.copy(REGULAR / f"{name}.rtbw", second)
    tb, max_pieces, messages = load_tablebases(f"{first}:{second}:{tmp_path / 'missing'}")
    assert max_pieces == 4 and int(tb.meta[2]) == 5
    assert len(messages) == 1 and "not a directory" in messages[0]
    board = chess.Board("8/8/8/8/2k5/8/1p6/4RK2 b - - 0 1")  # KRvKP with the pawn side to move
    assert probe_wdl_board(tb, Board(board.fen())) == reference.probe_wdl(board)
    board = chess.Board("8/8/8/2r5/8/2k5/8/3QK3 w - - 0 1")
    assert probe_wdl_board(tb, Board(board.fen())) == reference.probe_wdl(board)


def _damaged_copies(directory: Path) -> list[str]:
    """Truncated and byte-corrupted copies of a few tables, one directory each."""
    rng = random.Random(5)
    dirs = []
    for name in ("KQvKR", "KPvKP", "KBNvK", "KRPvK"):
        data = (REGULAR / f"{name}.rtbw").read_bytes()
        variants = {
            "half": data[: len(data) // 2],
            "minus64": data[:-64],  # still 16 mod 64: only the layout check can tell
            "header": data[:5] + bytes(rng.randrange(256) for _ in range(60)) + data[65:],
        }
        for k in range(6):
            damaged = bytearray(data)
            # Anywhere (mostly refused at load), or only in the second half: the
            # compressed blocks, which only the probe kernels can notice.
            low = 5 if k < 2 else len(data) // 2
            for _ in range(40 if k < 2 else 400):
                damaged[rng.randrange(low, len(damaged))] = rng.randrange(256)
            variants[f"noise{k}"] = bytes(damaged)
        for label, content in variants.items():
            target = directory / f"{name}-{label}"
            target.mkdir()
            (target / f"{name}.rtbw").write_bytes(content)
            dirs.append(str(target))
    return dirs


def test_damaged_files_never_crash(tmp_path):
    dirs = _damaged_copies(tmp_path)
    script = textwrap.dedent(f"""
        import random, sys
        sys.path.insert(0, {str(REPO)!r})
        from engine.board import Board
        from engine.syzygy import TB_FAIL, load_tablebases, make_scratch, probe_wdl, probe_table
        from engine.tools.tb_speed import random_position
        rng = random.Random(3)
        scratch = make_scratch()
        skipped = probed = 0
        for directory in {dirs!r}:
            tb, max_pieces, messages = load_tablebases(directory)
            if messages:
                assert max_pieces == 0 and all("skipped" in m for m in messages), messages
                skipped += 1
            name = directory.rsplit("/", 1)[1].split("-")[0]
            for i in range(150):
                board = random_position(rng, name, flipped=bool(i & 2), turn=bool(i & 1))
                if board is None:
                    continue
                b = Board(board.fen())
                value = int(probe_wdl(tb, b.pos, b.tab, scratch))
                raw = int(probe_table(tb, b.pos, scratch))
                assert value == TB_FAIL or -2 <= value <= 2
                assert raw == TB_FAIL or -2 <= raw <= 2
                if messages:
                    assert raw == TB_FAIL
                probed += 1
        print("done", skipped, probed)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    words = result.stdout.split()
    assert words[0] == "done"
    skipped, probed = int(words[1]), int(words[2])
    loaded = len(dirs) - skipped
    assert skipped >= 8  # every truncated copy (and some header damage) is refused at load
    assert loaded >= 12  # and many damaged copies load, so the kernels meet the damage
    assert probed >= 3000


def test_truncated_file_message(tmp_path):
    data = (REGULAR / "KQvKR.rtbw").read_bytes()
    (tmp_path / "KQvKR.rtbw").write_bytes(data[:1000])
    (tmp_path / "KRvK.rtbw").write_bytes(b"")
    tb, max_pieces, messages = load_tablebases(str(tmp_path))
    assert max_pieces == 0 and int(tb.meta[2]) == 0
    assert any("KQvKR.rtbw" in m and "invalid size" in m for m in messages), messages
    assert any("KRvK.rtbw" in m and "empty" in m for m in messages), messages
    assert probe_wdl_board(tb, Board("8/8/8/2r5/8/2k5/8/3QK3 w - - 0 1")) is None
