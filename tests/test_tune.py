"""The Texel tuner: its linear model is the evaluation, and it fits weights that explain labels."""

from __future__ import annotations

import numpy as np

import engine.evaluate as E
from conftest import random_playout_fens
from engine.board import Board
from engine.tools.tune import K_LOGISTIC, LinearEval, adam, feature_matrix, sigmoid


def test_the_linear_model_equals_the_kernel() -> None:
    fens = random_playout_fens(60, seed=3, max_plies=80)
    weights = E.load_weights()
    model = LinearEval(*feature_matrix(fens))
    predicted = model(weights.astype(np.float64))
    for fen, value in zip(fens, predicted, strict=True):
        board = Board(fen)
        score = int(E.evaluate(board.pos, board.tab, E.make_evaluator(weights)))
        white = score if board.turn == 0 else -score
        assert abs(white - value) <= 2, fen  # float model against integer rounding


def test_adam_recovers_weights_that_generated_the_labels() -> None:
    fens = random_playout_fens(800, seed=4, max_plies=80)
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


def test_the_sparse_and_the_dense_feature_matrix_give_the_same_loss_and_gradient() -> None:
    import numpy as np

    from engine.tools.tune import LinearEval

    rng = np.random.default_rng(3)
    X = (rng.random((500, 40)) < 0.1) * rng.integers(-3, 4, (500, 40))
    phase, scale, mop_up = rng.integers(0, 25, 500), rng.integers(0, 65, 500), rng.integers(-50, 50, 500)
    weights = rng.normal(0, 50, (40, 2))
    target = rng.random(500)
    dense = LinearEval(X, phase, scale, mop_up, sparse=False)
    sparse = LinearEval(X, phase, scale, mop_up, sparse=True)
    assert type(sparse.X).__module__.startswith("scipy")  # scipy is a test dependency: the fast path is tested
    loss_d, grad_d = dense.loss_and_gradient(weights, target)
    loss_s, grad_s = sparse.loss_and_gradient(weights, target)
    assert np.allclose(dense(weights), sparse(weights), atol=1e-3)
    assert abs(loss_d - loss_s) < 1e-7 and np.allclose(grad_d, grad_s, rtol=1e-4, atol=1e-9)


def test_the_linear_model_equals_the_kernel_with_the_complexity_term_on() -> None:
    """Complexity is linear once the endgame score's sign is fixed; with a sum that cannot
    be negative the kernel's clamp never acts, so model and kernel agree."""
    fens = random_playout_fens(60, seed=5, max_plies=120)
    weights = E.load_weights()
    weights[E.COMPLEXITY:E.COMPLEXITY + len(E.COMPLEXITY_LABELS), 1] = (3, 9, 12, 25, 6)
    model = LinearEval(*feature_matrix(fens), complexity=(E.COMPLEXITY, len(E.COMPLEXITY_LABELS)))
    predicted = model(weights.astype(np.float64))
    moved = 0
    for fen, value in zip(fens, predicted, strict=True):
        board = Board(fen)
        score = int(E.evaluate(board.pos, board.tab, E.make_evaluator(weights)))
        white = score if board.turn == 0 else -score
        assert abs(white - value) <= 2, fen
        moved += white != int(E.evaluate(board.pos, board.tab, E.make_evaluator(E.load_weights()))) * (
            1 if board.turn == 0 else -1)
    assert moved > 30   # the term changed most evaluations


COMPLEXITY_COLUMNS = (E.COMPLEXITY, len(E.COMPLEXITY_LABELS))


def test_the_model_applies_the_complexity_clamp_as_the_kernel_does() -> None:
    """With a large negative constant the complexity sum often exceeds the endgame advantage:
    the kernel then stops at zero, and so must the model."""
    fens = random_playout_fens(80, seed=7, max_plies=160)
    weights = E.load_weights()
    weights[E.COMPLEXITY:E.COMPLEXITY + len(E.COMPLEXITY_LABELS), 1] = (6, 7, 42, 83, -600)
    features = feature_matrix(fens, weights=weights)
    model = LinearEval(*features, complexity=COMPLEXITY_COLUMNS)
    linear = LinearEval(*features)
    predicted = model(weights.astype(np.float64))
    clamped = 0
    for fen, value, unclamped in zip(fens, predicted, linear(weights.astype(np.float64)), strict=True):
        board = Board(fen)
        score = int(E.evaluate(board.pos, board.tab, E.make_evaluator(weights)))
        white = score if board.turn == 0 else -score
        assert abs(white - value) <= 2, fen
        clamped += abs(white - unclamped) > 2
    assert clamped >= 10   # the clamp acted, and the purely linear model missed it


def test_the_model_follows_the_kernel_when_the_weights_move_away_from_the_trace() -> None:
    """Training traces once, under the starting weights, and then moves them: here from no
    complexity (and one tempo) to a complexity with a negative constant (and another tempo).
    Where the endgame scale and mop-up stay what the trace recorded, model = kernel, also
    for positions whose endgame score was exactly level when traced."""
    fens = random_playout_fens(400, seed=9, max_plies=160)
    start = E.load_weights()
    moved = start.copy()
    moved[E.COMPLEXITY:E.COMPLEXITY + len(E.COMPLEXITY_LABELS), 1] = (6, 7, 42, 83, -120)
    moved[E.TEMPO, 1] += 5
    traced = feature_matrix(fens, weights=start)
    retraced = feature_matrix(fens, weights=moved)
    model = LinearEval(*traced, complexity=COMPLEXITY_COLUMNS)
    predicted = model(moved.astype(np.float64))
    compared = 0
    for i, fen in enumerate(fens):
        if traced[2][i] != retraced[2][i] or traced[3][i] != retraced[3][i]:
            continue   # the favoured side changed its endgame scale or mop-up: outside the model
        board = Board(fen)
        score = int(E.evaluate(board.pos, board.tab, E.make_evaluator(moved)))
        white = score if board.turn == 0 else -score
        assert abs(white - predicted[i]) <= 2, fen
        compared += 1
    assert compared >= 390


def test_the_complexity_gradient_matches_finite_differences() -> None:
    fens = random_playout_fens(80, seed=8, max_plies=160)
    weights = E.load_weights().astype(np.float64)
    weights[E.COMPLEXITY:E.COMPLEXITY + len(E.COMPLEXITY_LABELS), 1] = (6, 7, 42, 83, -400)
    model = LinearEval(*feature_matrix(fens, weights=weights.astype(np.int32)), complexity=COMPLEXITY_COLUMNS)
    target = np.random.default_rng(8).random(len(fens))
    _, gradient = model.loss_and_gradient(weights, target)
    rows = [E.COMPLEXITY + i for i in range(len(E.COMPLEXITY_LABELS))] + [E.MATERIAL + 3, E.PASSED + 5]
    for row in rows:
        step = np.zeros_like(weights)
        step[row, 1] = 0.5   # the model computes in float32: a smaller step drowns in rounding
        numeric = (model.loss(weights + step, target) - model.loss(weights - step, target)) / 1.0
        assert abs(numeric - gradient[row, 1]) <= 0.02 * max(abs(numeric), 1e-6) + 1e-9, (row, numeric,
                                                                                         gradient[row, 1])


def test_adam_keeps_frozen_phases_of_a_row() -> None:
    fens = random_playout_fens(100, seed=6, max_plies=80)
    model = LinearEval(*feature_matrix(fens))
    start = E.load_weights().astype(np.float64)
    target = sigmoid(K_LOGISTIC * model(start + 20.0))
    frozen = np.zeros((E.N_TERMS, 2), dtype=bool)
    frozen[E.COMPLEXITY:E.COMPLEXITY + len(E.COMPLEXITY_LABELS), 0] = True
    tuned = adam(model, start, target, epochs=50, rate=2.0, frozen=frozen)
    assert np.array_equal(tuned[frozen], start[frozen])
    assert not np.array_equal(tuned[~frozen], start[~frozen])


def test_tracing_in_worker_processes_gives_the_same_matrix(monkeypatch) -> None:
    import engine.tools.tune as tune

    monkeypatch.setattr(tune, "TRACE_CHUNK", 7)   # several chunks, the last one short
    fens = random_playout_fens(30, seed=8, max_plies=80)
    serial = feature_matrix(fens)
    parallel = feature_matrix(fens, workers=2)
    for a, b in zip(serial, parallel, strict=True):
        assert a.shape[0] == 30 and np.array_equal(a, b)


def test_the_command_line_fits_a_data_file_and_can_keep_the_optional_terms(tmp_path) -> None:
    """``tune --freeze-optional`` fits the base terms alone: optional rows keep their start."""
    from engine.tools.tune import main

    fens = random_playout_fens(300, seed=10, max_plies=100)
    rng = np.random.default_rng(10)
    data = tmp_path / "data.txt"
    data.write_text("".join(f"{fen};{rng.integers(-300, 300)};{rng.choice([0.0, 0.5, 1.0])}\n" for fen in fens))
    start = E.load_weights()
    start[E.SPACE] = (3, 4)
    start_file = tmp_path / "start.txt"
    E.save_weights(start, start_file)
    out = tmp_path / "fitted.txt"
    assert main(["--data", str(data), "--start", str(start_file), "--out", str(out), "--epochs", "20",
                 "--workers", "1", "--freeze-optional"]) == 0
    fitted = E.load_weights(out)
    optional = np.zeros(E.N_TERMS, dtype=bool)
    for _, first, rows in E.OPTIONAL_ROWS:
        optional[first:first + rows] = True
    assert np.array_equal(fitted[optional], start[optional])
    assert not np.array_equal(fitted[~optional], start[~optional])
    assert out.read_text().startswith("# Tuned by engine.tools.tune on 300 positions")


def test_the_command_line_can_fit_one_group_of_rows_alone(tmp_path) -> None:
    """``tune --only king_safety.danger_index`` changes that table and nothing else (a new
    term's first fit, on less data than a whole refit needs)."""
    from engine.tools.tune import main

    fens = random_playout_fens(300, seed=11, max_plies=100)
    rng = np.random.default_rng(11)
    data = tmp_path / "data.txt"
    data.write_text("".join(f"{fen};{rng.integers(-300, 300)};{rng.choice([0.0, 0.5, 1.0])}\n" for fen in fens))
    out = tmp_path / "fitted.txt"
    assert main(["--data", str(data), "--out", str(out), "--epochs", "20", "--workers", "1",
                 "--only", "king_safety.danger_index.", "passed.rank."]) == 0
    start, fitted = E.load_weights(), E.load_weights(out)
    chosen = np.zeros(E.N_TERMS, dtype=bool)
    chosen[E.KING_DANGER_INDEX:E.KING_DANGER_INDEX + E.DANGER_INDEX_ROWS] = True
    chosen[E.PASSED:E.PASSED + 8] = True
    assert np.array_equal(fitted[~chosen], start[~chosen])
    assert not np.array_equal(fitted[chosen], start[chosen])
