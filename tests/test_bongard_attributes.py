"""One answer per Bongard concept: the side probe reads what each panel shows (counts, sizes,
positions, colours and kinds of every object type, the background) and, leaving out the
attributes that state the rule, must not tell the left panels from the right ones."""
import fnmatch

import numpy as np
import pytest

from engine.registry import get_family, get_task
from evals.audit.run import audit
from evals.audit.sides import PROBLEMS, attribute_matrix, side_probe, task_side_probe
from scenes.bongard import CONCEPTS
from scenes.bongard.attributes import STATES, panel_attributes
from tests.selection import slow_except

FAMILY = get_family("bongard")


def test_attributes_of_a_panel():
    figs = [{"kind": "circle", "center": [0.2, 0.4], "radius": 0.1, "filled": False},
            {"kind": "square", "center": [0.6, 0.8], "radius": 0.2, "filled": True},
            {"kind": "square", "center": [0.4, 0.6], "radius": 0.2, "filled": False}]
    a = panel_attributes({"figures": figs, "dot": [0.5, 0.25], "road": {"vertical": True}, "terrain": "grass"})
    assert a["all.count"] == 3 and a["all.kinds"] == 2 and a["kind:square.count"] == 2
    assert a["all.size"] == pytest.approx((0.2 + 0.4 + 0.4) / 3) and a["all.size_spread"] == pytest.approx(0.2)
    assert a["kind:square.x"] == pytest.approx(0.5) and a["kind:circle.y"] == pytest.approx(0.4)
    assert a["all.filled=True"] == pytest.approx(1 / 3) and a["kind:square.filled=False"] == 0.5
    assert a["all.kind=square"] == pytest.approx(2 / 3)
    assert a["dot.x"] == 0.5 and a["road.vertical"] == 1.0 and a["terrain=grass"] == 1.0
    # a share is whole when every object has the value, whatever their number (summed
    # fractions would round differently for 3 and 7 objects and leak the count)
    for n in (3, 5, 6, 7):
        one = panel_attributes({"figures": [dict(figs[0]) for _ in range(n)]})
        assert one["all.filled=False"] == 1.0


def test_missing_values_say_nothing():
    panels = [{"all.count": 2.0, "kind:car.count": 2.0, "kind:car.colour=red": 1.0, "kind:car.size": 0.1},
              {"all.count": 1.0}]
    X = attribute_matrix(panels, ["kind:car.colour=red", "kind:car.count", "kind:car.size", "all.count"])
    assert X[1, 1] == 0.0                       # no cars: a count of 0
    assert np.isnan(X[1, 0]) and np.isnan(X[1, 2])   # no cars: no colour share, no size (filled with the mean)


def _described(value_of, problems=60, seed=0):
    """Synthetic problems: six panels per side, attribute ``cue`` from ``value_of(rng, side)``,
    ``rule`` equal to the side, and two noise attributes."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(problems):
        panels = [(side, {"rule": float(side), "cue": value_of(rng, side), "noise": rng.normal(),
                          "kind:tree.count": float(rng.integers(0, 3))})
                  for side in (0, 1) for _ in range(6)]
        out.append((panels, lambda name: name == "rule"))
    return out


def test_the_side_probe_finds_a_second_answer_and_passes_noise():
    fair = side_probe(_described(lambda rng, side: rng.uniform(0, 1)))
    assert fair["high"] <= 0.6 and fair["stated"] == ["rule"] and fair["attributes"] == 3
    confound = side_probe(_described(lambda rng, side: rng.uniform(0, 1) + 0.4 * side))
    assert confound["high"] > 0.6 and confound["strongest"][0][0] == "cue"
    weak = side_probe(_described(lambda rng, side: rng.uniform(0, 1) + 0.25 * side))
    assert weak["accuracy"] > 0.6                       # a weaker confound is still found


def test_every_concept_states_its_rule_with_attributes_its_panels_have():
    assert set(STATES) == {c.name for c in CONCEPTS.values()}
    for tid, c in CONCEPTS.items():
        names = set()
        for s in get_task(tid).samples(0, range(4)):
            rows, _ = FAMILY.attributes_fn(s)
            assert [side for side, _ in rows] == [0] * 6 + [1] * 6
            names |= {n for _, a in rows for n in a}
        for pattern in STATES[c.name]:
            assert any(fnmatch.fnmatchcase(n, pattern) for n in names), (tid, pattern)
        assert any(not FAMILY.attributes_fn(s)[1](n) for n in names) or c.name == "trees_vs_houses", tid


# every classic concept (1-3 s each); two of the aerial ones (8-15 s each), the rest in the slow run
AERIAL_KEPT = ["bongard/aerial/number/two_vs_six_buildings", "bongard/aerial/semantic/trees_vs_houses"]


@pytest.mark.parametrize("tid", slow_except(sorted(CONCEPTS), [t for t in CONCEPTS if "/aerial/" not in t] + AERIAL_KEPT))
def test_no_attribute_but_the_rule_tells_the_sides_apart(tid):
    """The issue's bar: at 60 problems (720 panels) the rule-blind probe's upper 95% bound on
    the held-out problems' panels stays at or under 60%."""
    task = get_task(tid)
    r = task_side_probe(task.samples(0, range(PROBLEMS)), FAMILY)
    assert r["problems"] == PROBLEMS and r["n"] == PROBLEMS // 2 * 12
    assert r["high"] <= 0.6, (tid, r["accuracy"], r["strongest"])


def test_the_audit_judges_the_side_probe():
    row = audit("bongard/classic/number/three_vs_five", count=8, progress=False)["tasks"][
        "bongard/classic/number/three_vs_five"]
    sides = row["probe"]["sides"]
    assert sides["problems"] == PROBLEMS and "all.count" in sides["stated"]
    assert row["bars"]["probe"] == "pass"
