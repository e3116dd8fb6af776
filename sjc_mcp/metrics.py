"""Small, dependency-free metrics: AUROC with ties, and a logistic regression fitted by Newton steps."""

from __future__ import annotations

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


def fit_logistic(
    rows: Sequence[Sequence[float]],
    ys: Sequence[bool],
    l2: float = 1.0,
    iters: int = 50,
    sample_weight: Sequence[float] | None = None,
) -> list[float]:
    """Weights ``[bias, w1, …]`` of an L2-regularised logistic regression (the bias is not penalised),
    fitted by Newton steps."""
    import numpy as np

    x = np.hstack([np.ones((len(rows), 1)), np.asarray(rows, dtype=np.float64)])
    y = np.asarray([1.0 if v else 0.0 for v in ys])
    sw = np.asarray(sample_weight, dtype=np.float64) if sample_weight is not None else np.ones(len(rows))
    penalty = np.full(x.shape[1], float(l2))
    penalty[0] = 0.0
    w = np.zeros(x.shape[1])
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -35.0, 35.0)))
        grad = x.T @ ((p - y) * sw) + penalty * w
        hess = (x * (p * (1 - p) * sw)[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        w = w - step
        if float(np.max(np.abs(step))) < 1e-9:
            break
    return [float(v) for v in w]
