"""Rule-blind classifiers: how well do nuisance statistics alone predict a task's answer?

Two small classifiers on standardised features, a nearest-centroid rule and an
L2-regularised softmax regression, both fitted by closed loops in numpy (deterministic).
The probe's accuracy is the better of the two on held-out data, which errs on the side of
finding a shortcut. :func:`wilson` gives the binomial confidence interval the bars use.
"""
from __future__ import annotations

import math

import numpy as np


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval ``(low, high)`` of ``k`` successes in ``n`` trials."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _standardise(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu = train.mean(0)
    sd = train.std(0)
    sd[sd < 1e-9] = 1.0
    return (train - mu) / sd, (test - mu) / sd


def nearest_centroid(xtr: np.ndarray, ytr: np.ndarray, xte: np.ndarray) -> np.ndarray:
    """Labels of ``xte`` ``[M,F]``: the class whose training mean is nearest (standardised)."""
    a, b = _standardise(xtr, xte)
    classes = np.unique(ytr)
    centres = np.stack([a[ytr == c].mean(0) for c in classes])
    return classes[((b[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1)]


def softmax_regression(xtr: np.ndarray, ytr: np.ndarray, xte: np.ndarray, l2: float = 0.05,
                       steps: int = 300, lr: float = 0.5) -> np.ndarray:
    """Labels of ``xte``: a multinomial logistic regression on standardised features."""
    a, b = _standardise(xtr, xte)
    classes, y = np.unique(ytr, return_inverse=True)
    a = np.hstack([a, np.ones((len(a), 1))])
    b = np.hstack([b, np.ones((len(b), 1))])
    w = np.zeros((a.shape[1], len(classes)))
    onehot = np.eye(len(classes))[y]
    for _ in range(steps):
        z = a @ w
        z -= z.max(1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(1, keepdims=True)
        w -= lr * (a.T @ (p - onehot) / len(a) + l2 * w)
    return classes[(b @ w).argmax(1)]


CLASSIFIERS = {"centroid": nearest_centroid, "logistic": softmax_regression}


def probe(xtr: np.ndarray, ytr: np.ndarray, xte: np.ndarray, yte: np.ndarray) -> dict:
    """Fit every classifier on ``(xtr, ytr)``, test on ``(xte, yte)``. Returns ``{"n", "correct",
    "accuracy", "low", "high", "chance", "by"}``: the better classifier's test accuracy with its
    Wilson interval, the majority-class rate of the test labels as chance, and each
    classifier's accuracy under ``by``."""
    ytr, yte = np.asarray(ytr), np.asarray(yte)
    n = len(yte)
    if n == 0 or len(np.unique(ytr)) < 2:
        return {"n": n, "correct": 0, "accuracy": float("nan"), "low": 0.0, "high": 1.0, "chance": float("nan"),
                "by": {}}
    by = {name: int((fn(xtr, ytr, xte) == yte).sum()) for name, fn in CLASSIFIERS.items()}
    best = max(by.values())
    low, high = wilson(best, n)
    _, counts = np.unique(yte, return_counts=True)
    return {"n": n, "correct": best, "accuracy": best / n, "low": low, "high": high,
            "chance": float(counts.max() / n), "by": {k: v / n for k, v in by.items()}}


def few_shot_split(labels: list, shots: int) -> tuple[list[int], list[int]]:
    """Indices of the first ``shots`` samples of every class (in order) and of the rest: what a
    protocol that shows ``shots`` examples per class before asking would allow a learner."""
    seen: dict = {}
    train, test = [], []
    for i, y in enumerate(labels):
        if seen.get(y, 0) < shots:
            seen[y] = seen.get(y, 0) + 1
            train.append(i)
        else:
            test.append(i)
    return train, test


def pool(results: list[dict]) -> dict:
    """Several probe results summed (e.g. the few-shot probes of a category's tasks): pooled
    accuracy with its interval, and the test-weighted mean chance. The classifier is chosen
    once for the pool, the one with the most correct answers over all of them: choosing it
    per result on a handful of test answers would pick the luckier one each time and
    overstate what the statistics predict."""
    rs = [r for r in results if r["n"] and not math.isnan(r["accuracy"])]
    n = sum(r["n"] for r in rs)
    names = set.intersection(*(set(r["by"]) for r in rs)) if rs else set()
    if names:
        k = max(int(round(sum(r["by"][c] * r["n"] for r in rs))) for c in names)
    else:
        k = sum(r["correct"] for r in rs)
    low, high = wilson(k, n)
    chance = sum(r["chance"] * r["n"] for r in rs) / n if n else float("nan")
    return {"n": n, "correct": k, "accuracy": k / n if n else float("nan"), "low": low, "high": high,
            "chance": chance, "tasks": len(rs)}
