"""The side probe: for a family whose answer is a rule over labelled panels (Bongard), can
the attributes the rule is not about tell the panels' labels apart?

The family describes each panel as named numbers and says which names state its rule
(``FAMILY.attributes``). Every other attribute goes to the rule-blind classifiers of
:mod:`.probe`, fitted on the panels of the even-numbered problems and tested on those of the
odd ones. If they beat chance, a solver naming that attribute would be right about every
panel and graded wrong: the concept has a second answer.
"""
from __future__ import annotations

import warnings

import numpy as np

from .probe import probe

PROBLEMS = 60               # problems per concept the side probe reads (720 panels for 6 + 6)


def _group(name: str) -> str:
    return name.split(".", 1)[0]


def attribute_matrix(panels: list[dict[str, float]], names: list[str]) -> np.ndarray:
    """``[N, F]`` values of ``names`` for every panel. A count a panel lacks is 0, as is a share
    of a group the panel has (``kind:car.colour=red`` on a panel with cars); any other
    missing value (the size of objects the panel does not have) is NaN, to be filled with
    the training mean so that it says nothing."""
    X = np.full((len(panels), len(names)), np.nan)
    for i, p in enumerate(panels):
        for j, n in enumerate(names):
            if n in p:
                X[i, j] = p[n]
            elif n.endswith(".count") or ("=" in n and f"{_group(n)}.count" in p):
                X[i, j] = 0.0
    return X


def _fill(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with warnings.catch_warnings():                 # a column no training panel has: mean 0
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nan_to_num(np.nanmean(train, axis=0))
    return np.where(np.isnan(train), mean, train), np.where(np.isnan(test), mean, test)


def _threshold(xtr, ytr, xte, yte) -> float:
    """Test accuracy of the best single threshold on one attribute, fitted on the training panels."""
    best, cut, sign = -1.0, 0.0, 1
    for t in np.unique(xtr):
        for sg in (1, -1):
            acc = ((sg * (xtr - t) > 0) == ytr).mean()
            if acc > best:
                best, cut, sign = acc, t, sg
    return float(((sign * (xte - cut) > 0) == yte).mean())


def side_probe(described: list[tuple[list, object]]) -> dict:
    """The side probe over problems ``described`` (what ``FAMILY.attributes`` returned for
    each, in order). Returns :func:`.probe.probe`'s result plus ``problems``, ``attributes``
    (how many were probed), ``stated`` (the names left out as the rule's own) and
    ``strongest`` (the three probed attributes whose best single threshold does best on the
    test panels, with that accuracy)."""
    names = sorted({n for panels, _ in described for _, attrs in panels for n in attrs})
    states = described[0][1]
    stated = [n for n in names if states(n)]
    kept = [n for n in names if not states(n)]
    X, y, half = [], [], []
    for k, (panels, _) in enumerate(described):
        for label, attrs in panels:
            X.append(attrs)
            y.append(label)
            half.append(k % 2)
    y, half = np.array(y), np.array(half)
    M = attribute_matrix(X, kept)
    tr, te = half == 0, half == 1
    xtr, xte = _fill(M[tr], M[te])
    if kept:
        out = probe(xtr, y[tr], xte, y[te])
        single = sorted(((_threshold(xtr[:, j], y[tr], xte[:, j], y[te]), n) for j, n in enumerate(kept)),
                        reverse=True)[:3]
    else:
        out = probe(np.zeros((int(tr.sum()), 1)), y[tr], np.zeros((int(te.sum()), 1)), y[te])
        single = []
    out.update(problems=len(described), attributes=len(kept), stated=stated,
               strongest=[[n, round(a, 3)] for a, n in single])
    return out


def task_side_probe(samples, family) -> dict | None:
    """:func:`side_probe` of one task's ``samples`` (at least :data:`PROBLEMS` of them, the
    caller draws them), or None when ``family`` describes no panels for them."""
    described = [family.attributes_fn(s) for s in samples]
    if not described or any(d is None for d in described):
        return None
    return side_probe(described)
