"""Texel tuning: fit the evaluation weights to labelled positions by gradient descent.

The evaluation is linear in its weights (``engine.evaluate``): for a position with
feature counts ``x`` (White's minus Black's, one per row of the weight table), game
phase ``p`` (0..24) and endgame scale ``s`` (of 64),

    eval = (x . w_mg * p + (x . w_eg * s / 64 + mop_up) * (24 - p)) / 24

The optional complexity term (``engine.evaluate._complexity``) is the one exception, and
the model follows the kernel there too: with ``c`` the weighted sum of its counts (both
colours together, as the trace records them) and ``e`` the rest of the endgame sum,

    endgame = e + sign(e) * max(c, -|e|)

so the term may bring an advantage to zero but never turn it round.  Its middlegame
weights are unused and stay at zero.  (Until 928421b, 2026-12-03, the clamp was left out, and the
model let a negative ``c`` hand the advantage to the other side where the kernel stops
at zero.)

A traced evaluation of every position gives ``x``, ``p``, ``s`` and the fixed mop-up,
so the whole data set becomes one matrix ``X`` and the fit needs no engine calls.
The loss is the mean squared error between ``sigmoid(K * eval)`` and a target that
mixes the game result with Stockfish's score, ``lambda * result + (1 - lambda) *
sigmoid(K * stockfish_cp)`` (``K = ln 10 / 400``: 400 cp is ten-to-one odds), and Adam
minimises it over full batches.  A held-out tenth of the positions checks for
over-fitting.

Data: ``FEN;score;result`` lines (score in centipawns for White, result 1, 0.5 or 0
for White), as written by ``python -m engine.tools.datagen``.  Typical run::

    python -m engine.tools.tune --data /work/data/texel.txt --start engine/weights_start.txt --out engine/weights.txt
"""

from __future__ import annotations

import argparse
import hashlib
import math
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

K_LOGISTIC = math.log(10) / 400


def load_positions(path: Path, limit: int | None = None) -> tuple[list[str], np.ndarray, np.ndarray]:
    """FENs, Stockfish scores (cp, White's view) and results (White's view) from a data file."""
    fens: list[str] = []
    scores: list[float] = []
    results: list[float] = []
    with open(path) as handle:
        for line in handle:
            parts = line.strip().split(";")
            if len(parts) != 3:
                continue
            fens.append(parts[0])
            scores.append(float(parts[1]))
            results.append(float(parts[2]))
            if limit and len(fens) >= limit:
                break
    return fens, np.array(scores), np.array(results)


Features = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""X int16[N, N_TERMS] (White's counts minus Black's), phase, endgame scale and mop-up of N positions."""

TRACE_CHUNK = 20_000   # positions a worker traces per task


def _trace_chunk(task: tuple[list[str], np.ndarray | None]) -> Features:
    """Traced features of some positions under some weights (one worker's task, or the whole job)."""
    from engine.board import Board
    from engine.evaluate import N_TERMS, TRACE_MOPUP, TRACE_PHASE, TRACE_SCALE, make_evaluator, trace_position

    fens, weights = task
    ev = make_evaluator(weights, traced=True)
    X = np.zeros((len(fens), N_TERMS), dtype=np.int16)
    phase = np.zeros(len(fens), dtype=np.float64)
    scale = np.zeros(len(fens), dtype=np.float64)
    mop_up = np.zeros(len(fens), dtype=np.float64)
    for i, fen in enumerate(fens):
        board = Board(fen)
        trace_position(board.pos, board.tab, ev)
        X[i] = ev.feature_counts[0, :N_TERMS] - ev.feature_counts[1, :N_TERMS]
        phase[i] = ev.feature_counts[0, TRACE_PHASE]
        scale[i] = ev.feature_counts[0, TRACE_SCALE]
        mop_up[i] = ev.feature_counts[0, TRACE_MOPUP]
    return X, phase, scale, mop_up


def feature_matrix(fens: list[str], workers: int = 1, weights: np.ndarray | None = None) -> Features:
    """Traced features of every position, in ``workers`` processes (the same arrays for any number).

    Most counts do not depend on the weights, but the complexity term's sign, the endgame
    scale and the mop-up follow the side the endgame score favours, which ``weights``
    (default: the committed table) decide.
    """
    tasks = [(fens[i:i + TRACE_CHUNK], weights) for i in range(0, len(fens), TRACE_CHUNK)] or [([], weights)]
    workers = min(workers, len(tasks))
    bar = tqdm(total=len(fens), desc="tracing", unit="pos", mininterval=1.0)
    parts: list[Features] = []
    if workers <= 1:
        for task in tasks:
            parts.append(_trace_chunk(task))
            bar.update(len(task[0]))
    else:
        # spawn: a fresh interpreter per worker, which loads the kernels from the disk cache
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            for part in pool.imap(_trace_chunk, tasks):   # in order, so rows match ``fens``
                parts.append(part)
                bar.update(len(part[1]))
    bar.close()
    X, phase, scale, mop_up = (np.concatenate([part[k] for part in parts]) for k in range(4))
    return X, phase, scale, mop_up


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Logistic function."""
    return 1.0 / (1.0 + np.exp(-x))


class LinearEval:
    """The evaluation as a function of its weights, over a fixed feature matrix."""

    def __init__(self, X: np.ndarray, phase: np.ndarray, scale: np.ndarray, mop_up: np.ndarray,
                 sparse: bool = True, complexity: tuple[int, int] | None = None) -> None:
        """``complexity``: (first column, columns) of the complexity counts, applied with the
        kernel's clamp (see the module docstring); None for a purely linear model."""
        self.complexity = complexity
        if complexity is not None:
            first, count = complexity
            signed = np.asarray(X[:, first:first + count], dtype=np.float32)
            self.complexity_signed = signed          # as traced: under the colour then favoured
            self.complexity_counts = np.abs(signed)  # the counts themselves
        # Each position has some 40 non-zero counts of 825, so with scipy (the ``tools``
        # extra) X is kept sparse: each pass over it is three or four times as fast.
        self.mg_factor = (phase / 24.0).astype(np.float32)
        self.eg_factor = (scale / 64.0 * (24.0 - phase) / 24.0).astype(np.float32)
        self.constant = (mop_up * (24.0 - phase) / 24.0).astype(np.float32)
        self.X: Any = X.astype(np.float32)
        self.XT: Any = self.X.T
        if sparse:
            try:
                from scipy import sparse as scipy_sparse
            except ImportError:
                return
            self.X = scipy_sparse.csr_matrix(self.X)
            self.XT = self.X.T.tocsr()

    def _evaluate(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """(evaluation, complexity's sign, where the clamp does not act) of every position;
        the last two are None without the complexity term."""
        sign = free = None
        if self.complexity is not None:
            first, count = self.complexity
            weights = weights.copy()
            weights[first:first + count, 0] = 0   # the kernel reads only the endgame weights
        sums = np.asarray(self.X @ weights.astype(np.float32))  # one pass over X for both phases
        endgame = sums[:, 1]
        if self.complexity is not None:
            w = weights[first:first + count, 1].astype(np.float32)
            rest = endgame - self.complexity_signed @ w
            sign = np.sign(rest)
            bonus = self.complexity_counts @ w
            free = bonus > -np.abs(rest)
            endgame = rest + sign * np.where(free, bonus, -np.abs(rest))
        return sums[:, 0] * self.mg_factor + endgame * self.eg_factor + self.constant, sign, free

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        """Evaluation of every position (cp, White's view) for float weights [N_TERMS, 2]."""
        return self._evaluate(weights)[0]

    def loss_and_gradient(self, weights: np.ndarray, target: np.ndarray) -> tuple[float, np.ndarray]:
        """Mean squared error of sigmoid(K * eval) against ``target`` and its gradient."""
        value, sign, free = self._evaluate(weights)
        predicted = sigmoid(K_LOGISTIC * value)
        error = predicted - target
        loss = float(np.mean(error ** 2))
        g = (2.0 / len(target)) * error * predicted * (1.0 - predicted) * K_LOGISTIC
        g_endgame = g * self.eg_factor
        complexity_g = None
        if sign is not None and free is not None:
            # Clamped, the endgame sum is 0 whatever the weights.  With sign 0 (the rest exactly
            # 0, which only integer weights hit) the slope of 1 taken here is one side's.
            g_endgame = np.where(free | (sign == 0), g_endgame, 0.0)
            complexity_g = sign * np.where(free, g_endgame, 0.0)
        per_phase = np.stack([g * self.mg_factor, g_endgame], axis=1).astype(np.float32)
        gradient = np.asarray(self.XT @ per_phase).astype(weights.dtype)  # one more pass for the gradient
        if self.complexity is not None and complexity_g is not None:
            first, count = self.complexity
            gradient[first:first + count, 1] = self.complexity_counts.T @ complexity_g
        return loss, gradient

    def loss(self, weights: np.ndarray, target: np.ndarray) -> float:
        """Mean squared error only."""
        return float(np.mean((sigmoid(K_LOGISTIC * self(weights)) - target) ** 2))


def adam(model: LinearEval, weights: np.ndarray, target: np.ndarray, epochs: int, rate: float,
         frozen: np.ndarray, l2: float = 0.0, check: tuple[LinearEval, np.ndarray] | None = None) -> np.ndarray:
    """Adam over full batches; weights with ``frozen`` set (a row mask, or a mask of rows and
    phases) keep their starting values.

    ``l2`` pulls every weight towards its starting value (``l2 * (w - start)**2`` is added
    to the loss), so a feature the data rarely shows cannot wander off on noise.
    """
    start = weights.astype(np.float64)
    w = start.copy()
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    bar = tqdm(range(1, epochs + 1), desc="tuning", unit="epoch")
    for epoch in bar:
        loss, grad = model.loss_and_gradient(w, target)
        grad += 2.0 * l2 * (w - start)
        grad[frozen] = 0.0
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad * grad
        step = rate * (m / (1 - beta1 ** epoch)) / (np.sqrt(v / (1 - beta2 ** epoch)) + eps)
        w -= step
        if epoch % 10 == 0 or epoch == epochs:
            postfix = {"loss": f"{loss:.6f}"}
            if check is not None:
                postfix["held-out"] = f"{check[0].loss(w, check[1]):.6f}"
            bar.set_postfix(postfix)
    return w


def main(argv: list[str] | None = None) -> int:
    """Command line: tune the weights on a data file and write the weights file."""
    from engine.evaluate import (
        COMPLEXITY,
        COMPLEXITY_LABELS,
        MATERIAL,
        OPTIONAL_ROWS,
        TERM_NAMES,
        WEIGHTS_FILE,
        load_weights,
        save_weights,
    )

    parser = argparse.ArgumentParser(prog="python -m engine.tools.tune", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="FEN;score;result lines (engine.tools.datagen)")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N positions")
    parser.add_argument("--start", type=Path, default=WEIGHTS_FILE, help="starting weights (default: committed)")
    parser.add_argument("--out", type=Path, default=None, help="weights file to write (default: print only)")
    parser.add_argument("--epochs", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=3.0, help="Adam step size in centipawns")
    parser.add_argument("--result-weight", type=float, default=0.3,
                        help="lambda: share of the game result in the target (the rest is Stockfish's score)")
    parser.add_argument("--l2", type=float, default=1e-10, help="pull towards the starting weights")
    parser.add_argument("--freeze-material", action="store_true", help="keep the material values fixed")
    parser.add_argument("--freeze-optional", action="store_true",
                        help="keep every optional term at its starting weights (0: fit the base terms alone)")
    parser.add_argument("--only", nargs="+", default=None, metavar="PREFIX",
                        help="fit only the rows whose names start with one of these (king_safety. ...); "
                             "the rest keep their starting weights")
    parser.add_argument("--seed", type=int, default=1, help="seed of the held-out split")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)),
                        help="processes tracing the positions (default: one per core)")
    args = parser.parse_args(argv)

    started = time.time()
    fens, scores, results = load_positions(args.data, args.limit)
    print(f"{len(fens):,} positions from {args.data}", file=sys.stderr)
    start = load_weights(args.start)
    start[COMPLEXITY:COMPLEXITY + len(COMPLEXITY_LABELS), 0] = 0   # unused by the kernel: frozen at 0 below
    # The features depend on the evaluation's code and, through the side the endgame score
    # favours, on the weights they are traced under (the starting ones): both key the cache.
    weights_key = hashlib.sha256(start.tobytes()).hexdigest()[:12]
    cache = args.data.with_suffix(f".features-{len(fens)}-{weights_key}.npz")
    evaluation_source = Path(__file__).resolve().parents[1] / "evaluate.py"
    if cache.exists() and cache.stat().st_mtime > evaluation_source.stat().st_mtime:
        stored = np.load(cache)
        X, phase, scale, mop_up = stored["X"], stored["phase"], stored["scale"], stored["mop_up"]
    else:
        X, phase, scale, mop_up = feature_matrix(fens, args.workers, start)
        np.savez(cache, X=X, phase=phase, scale=scale, mop_up=mop_up)
    start = start.astype(np.float64)
    target = (args.result_weight * results
              + (1 - args.result_weight) * sigmoid(K_LOGISTIC * np.clip(scores, -3000, 3000)))

    rng = np.random.default_rng(args.seed)
    held_out = rng.random(len(fens)) < 0.1
    columns = (COMPLEXITY, len(COMPLEXITY_LABELS))
    train = LinearEval(X[~held_out], phase[~held_out], scale[~held_out], mop_up[~held_out], complexity=columns)
    check = LinearEval(X[held_out], phase[held_out], scale[held_out], mop_up[held_out], complexity=columns)
    frozen = np.zeros((len(TERM_NAMES), 2), dtype=bool)   # rows and phases that keep their start values
    frozen[COMPLEXITY:COMPLEXITY + len(COMPLEXITY_LABELS), 0] = True  # the kernel reads only their eg
    if args.freeze_material:
        frozen[MATERIAL:MATERIAL + 5] = True
    if args.freeze_optional:
        for _, first, rows in OPTIONAL_ROWS:
            frozen[first:first + rows] = True
    if args.only:
        fitted = np.array([name.startswith(tuple(args.only)) for name in TERM_NAMES])
        if not fitted.any():
            parser.error(f"no row's name starts with {' or '.join(args.only)}")
        frozen[~fitted] = True
    before = (train.loss(start, target[~held_out]), check.loss(start, target[held_out]))
    tuned = adam(train, start, target[~held_out], args.epochs, args.rate, frozen, args.l2, (check, target[held_out]))
    after = (train.loss(tuned, target[~held_out]), check.loss(tuned, target[held_out]))
    print(f"loss train {before[0]:.6f} -> {after[0]:.6f}, held-out {before[1]:.6f} -> {after[1]:.6f} "
          f"({time.time() - started:.0f} s)", file=sys.stderr)
    weights = np.rint(tuned).astype(np.int32)
    if args.out:
        header = (f"Tuned by engine.tools.tune on {len(fens):,} positions of {args.data.name} "
                  f"(lambda {args.result_weight}, {args.epochs} epochs, rate {args.rate}, l2 {args.l2}).\n"
                  f"Loss: train {after[0]:.6f}, held-out {after[1]:.6f} (starting weights: {before[0]:.6f}, "
                  f"{before[1]:.6f}).")
        save_weights(weights, args.out, header)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        for name, (mg, eg) in zip(TERM_NAMES, weights, strict=True):
            print(f"{name:<40} {mg:6d} {eg:6d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
