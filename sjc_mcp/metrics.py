"""Small, dependency-free metrics: AUROC with ties, and a logistic regression fitted by Newton steps."""

from __future__ import annotations

import math
from collections.abc import Sequence


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Probability that a random positive outscores a random negative (ties count half)."""
    pairs = sorted(zip(scores, labels, strict=True), key=lambda t: t[0])
    pos = sum(1 for _, y in pairs if y)
    neg = len(pairs) - pos
    if pos == 0 or neg == 0:
        return None
    rank_sum = 0.0
    i = 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        avg_rank = (i + 1 + j) / 2
        rank_sum += avg_rank * sum(1 for k in range(i, j) if pairs[k][1])
        i = j
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[piv] = m[piv], m[c]
        if abs(m[c][c]) < 1e-12:
            continue
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(n)]


def fit_logistic(
    rows: Sequence[Sequence[float]],
    ys: Sequence[bool],
    l2: float = 1.0,
    iters: int = 50,
    sample_weight: Sequence[float] | None = None,
) -> list[float]:
    """Weights ``[bias, w1, …]`` of an L2-regularised logistic regression (the bias is not penalised)."""
    n_feat = len(rows[0]) + 1
    x = [[1.0, *r] for r in rows]
    sw = list(sample_weight) if sample_weight is not None else [1.0] * len(rows)
    w = [0.0] * n_feat
    for _ in range(iters):
        grad = [0.0] * n_feat
        hess = [[0.0] * n_feat for _ in range(n_feat)]
        for xi, yi, si in zip(x, ys, sw, strict=True):
            z = sum(a * b for a, b in zip(w, xi, strict=True))
            p = 1.0 / (1.0 + math.exp(-max(-35.0, min(35.0, z))))
            g = (p - (1.0 if yi else 0.0)) * si
            h = p * (1 - p) * si
            for a in range(n_feat):
                grad[a] += g * xi[a]
                for b in range(a, n_feat):
                    hess[a][b] += h * xi[a] * xi[b]
        for a in range(1, n_feat):
            grad[a] += l2 * w[a]
            hess[a][a] += l2
        for a in range(n_feat):
            for b in range(a):
                hess[a][b] = hess[b][a]
        step = _solve(hess, grad)
        w = [wi - si for wi, si in zip(w, step, strict=True)]
        if max(abs(s) for s in step) < 1e-7:
            break
    return w
