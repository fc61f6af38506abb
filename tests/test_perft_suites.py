"""Perft against every suite in tests/data/perft, within the CI budget.

Every position of each file is checked at the deepest listed depth whose expected
count is at most ``PERFT_CAP`` nodes (or at its shallowest listed depth when every
count is larger: some lines list one deep count only).  tests/data holds the small
suites whole and seeded subsets of the two big ones (see tests/data/SOURCES.md):
ferdy_enpassant_perft.epd is the 200-position sample, checked in full;
marcel_van_kervinck_perft.epd is a 1000-position subset, checked on a seeded sample
of 200 at the cap and in full at depth 2.  ``NUMBAT_PERFT_CAP`` overrides the cap;
the full-depth run over the complete files is ``python -m engine.tools.perft_suite``.
"""

from __future__ import annotations

import os
import time

import pytest

from conftest import PERFT_DIR
from engine.board import Board
from engine.fen import STARTING_FEN
from engine.perft import perft
from engine.tools.perft_suite import (
    PerftCase,
    deepest_under,
    load_file,
    parse_epd_line,
    parse_epd_text,
    parse_perft_text,
    sample_cases,
)

PERFT_CAP = int(os.environ.get("NUMBAT_PERFT_CAP", 5_000_000))
SAMPLE_SEED = 20240
SAMPLE_SIZE = 200

# (file, sample size or None for every position)
SUITES = [
    ("perftsuite.epd", None),
    ("ethereal_standard.epd", None),
    ("cpw_perft_results.epd", None),
    ("ethereal_fischer960.epd", None),
    ("whittington_special_moves_perft.epd", None),
    ("ferdy_double_checks_perft.epd", None),
    ("python-chess_tricky.perft", None),
    ("marcel_van_kervinck_perft.epd", SAMPLE_SIZE),
    ("ferdy_enpassant_perft.epd", None),  # the file is already the seeded 200-position sample
]

# Positions per file of tests/data/perft (tests/data/SOURCES.md).  The two subsets come
# from files of 6838 (marcel) and 3760 (ferdy) positions.
EXPECTED_POSITIONS = {
    "perftsuite.epd": 126,
    "ethereal_standard.epd": 128,
    "cpw_perft_results.epd": 7,
    "ethereal_fischer960.epd": 960,
    "whittington_special_moves_perft.epd": 174,
    "ferdy_double_checks_perft.epd": 184,
    "python-chess_tricky.perft": 19,
    "marcel_van_kervinck_perft.epd": 1000,
    "ferdy_enpassant_perft.epd": 200,
}


def _selected(name: str, sample: int | None) -> list[PerftCase]:
    cases = load_file(PERFT_DIR / name)
    return sample_cases(cases, sample, SAMPLE_SEED) if sample else cases


@pytest.mark.parametrize("name,sample", SUITES, ids=[name for name, _ in SUITES])
def test_perft_suite(name: str, sample: int | None) -> None:
    cases = _selected(name, sample)
    assert cases, f"no positions in {name}"
    failures = []
    nodes = 0
    t0 = time.perf_counter()
    for case in cases:
        depth, expected = deepest_under(case, PERFT_CAP)
        assert depth >= 1
        try:
            got = perft(Board(case.fen, chess960=case.chess960), depth)
        except Exception as exc:  # report every position, not just the first crash
            failures.append(f"{case.label}: {case.fen!r} chess960={case.chess960}: raised {exc!r}")
            continue
        nodes += got
        if got != expected:
            failures.append(f"{case.label}: {case.fen!r} chess960={case.chess960} "
                            f"depth {depth}: expected {expected}, got {got}")
    seconds = time.perf_counter() - t0
    print(f"{name}: {len(cases)} positions, {nodes:,} nodes, {seconds:.1f} s")
    assert not failures, (f"{len(failures)} of {len(cases)} positions of {name} differ:\n"
                          + "\n".join(failures[:25]))


# ---------------------------------------------------------------------------
# The loader itself
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(EXPECTED_POSITIONS))
def test_every_file_parses_and_every_fen_is_accepted(name: str) -> None:
    cases = load_file(PERFT_DIR / name)
    assert len(cases) == EXPECTED_POSITIONS[name]
    for case in cases:
        assert case.counts and all(d >= 1 and n >= 0 for d, n in case.counts), case.label
        assert [d for d, _ in case.counts] == sorted({d for d, _ in case.counts}), case.label
        assert case.chess960 == (name in ("ethereal_fischer960.epd", "python-chess_tricky.perft"))
        Board(case.fen, chess960=case.chess960)  # raises FenError if we reject a suite position


def test_marcel_every_position_at_depth_2() -> None:
    """The sampled file is also checked in full (all 1000 positions of the subset) at a shallow depth."""
    failures = []
    for case in load_file(PERFT_DIR / "marcel_van_kervinck_perft.epd"):
        expected = dict(case.counts)[2]
        got = perft(Board(case.fen), 2)
        if got != expected:
            failures.append(f"{case.label}: {case.fen!r} depth 2: expected {expected}, got {got}")
    assert not failures, "\n".join(failures[:25])


def test_parse_epd_line_formats() -> None:
    fen = STARTING_FEN
    assert parse_epd_line(f"{fen} ;D1 20 ;D2 400") == (fen, ((1, 20), (2, 400)))
    assert parse_epd_line(f"{fen}; D1 20; D2 400") == (fen, ((1, 20), (2, 400)))
    assert parse_epd_line(fen.replace(" - ", " -  ") + ";  D4   197281 ") == (fen, ((4, 197281),))
    assert parse_epd_line(f"{fen} ;D2 400 ;D1 20") == (fen, ((1, 20), (2, 400)))
    for bad in (f"{fen}", f"{fen} ;X1 20", f"{fen} ;D1", f"{fen} ;D1 twenty", " ;D1 20"):
        with pytest.raises(ValueError):
            parse_epd_line(bad)


def test_parse_epd_text_skips_blank_lines_and_keeps_line_numbers() -> None:
    text = "# comment\n\n4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 66\n\n8/8/8/8/8/8/8/K6k w - - ;D1 3\n"
    cases = parse_epd_text(text, "x.epd")
    assert [(c.line, c.counts) for c in cases] == [(3, ((1, 15), (2, 66))), (5, ((1, 3),))]
    assert cases[1].fen == "8/8/8/8/8/8/8/K6k w - -"


def test_parse_perft_blocks() -> None:
    text = """
# header
id first
epd 4k3/8/8/8/8/8/8/4K2R w K -
perft 1 15
perft 2 66

id second
epd 8/8/8/8/8/8/8/K6k w - -
perft 1 3
"""
    first, second = parse_perft_text(text, "t.perft")
    assert (first.name, first.fen, first.counts, first.line) == (
        "first", "4k3/8/8/8/8/8/8/4K2R w K -", ((1, 15), (2, 66)), 4)
    assert (second.name, second.counts, second.chess960) == ("second", ((1, 3),), True)
    with pytest.raises(ValueError):
        parse_perft_text("perft 1 20\n")
    with pytest.raises(ValueError):
        parse_perft_text("id x\nepd 8/8/8/8/8/8/8/K6k w - -\n")
    with pytest.raises(ValueError):
        parse_perft_text("id x\nepd 8/8/8/8/8/8/8/K6k w - -\nperft one 3\n")


def test_deepest_under_cap() -> None:
    case = PerftCase("x", 1, "fen", ((1, 20), (2, 400), (3, 8902)))
    assert deepest_under(case, 8902) == (3, 8902)
    assert deepest_under(case, 8901) == (2, 400)
    assert deepest_under(case, 5) == (1, 20)  # nothing fits: still checked once, shallowest
