"""The Texel tuner: its linear model is the evaluation, and it fits weights that explain labels."""

from __future__ import annotations

import numpy as np

import engine.evaluate as E
from engine.board import Board
from engine.tools.tune import K_LOGISTIC, LinearEval, adam, feature_matrix, sigmoid

from conftest import random_playout_fens


def test_the_linear_model_equals_the_kernel() -> None:
    fens = random_playout_fens(60, seed=3, max_plies=80)
    weights = E.load_weights()
    model = LinearEval(*feature_matrix(fens))
    predicted = model(weights.astype(np.float64))
    for fen, value in zip(fens, predicted):
        board = Board(fen)
        score = int(E.evaluate(board.pos, board.tab, E.make_evaluator(weights)))
        white = score if board.turn == 0 else -score
        assert abs(white - value) <= 2, fen  # float model against integer rounding


def test_adam_recovers_weights_that_generated_the_labels() -> None:
    fens = random_playout_fens(400, seed=4, max_plies=80)
    model = LinearEval(*feature_matrix(fens))
    truth = E.load_weights().astype(np.float64)
    truth[E.MATERIAL + 1] += (60, 40)          # knights worth more than we think
    truth[E.PAWN_DOUBLED] += (-30, -30)
    target = sigmoid(K_LOGISTIC * model(truth))
    start = E.load_weights().astype(np.float64)
    frozen = np.zeros(E.N_TERMS, dtype=bool)
    tuned = adam(model, start, target, epochs=300, rate=2.0, frozen=frozen)
    assert model.loss(tuned, target) < 0.2 * model.loss(start, target)
    # Material and piece-square terms overlap, so only part of the change lands on the
    # material row; its direction must be right.
    assert tuned[E.MATERIAL + 1].sum() > start[E.MATERIAL + 1].sum() + 20
    assert tuned[E.PAWN_DOUBLED].sum() < start[E.PAWN_DOUBLED].sum() - 20


def test_weights_file_round_trips(tmp_path) -> None:
    weights = E.load_weights()
    path = tmp_path / "weights.txt"
    E.save_weights(weights, path, header="test")
    assert np.array_equal(E.load_weights(path), weights)
    assert path.read_text().startswith("# test\n")
