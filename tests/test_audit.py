"""The audit instrument: each measure can fail (shown on constructed cases), and the
``procvis audit`` command writes its report."""
import json
import subprocess
import sys

import numpy as np
import pytest

from engine.protocol import Protocol, Turn
from engine.rendering import render
from engine.scene import Scene
from evals.audit.features import pixel_features, scene_features, PIXEL_FEATURES
from evals.audit.legibility import panel_legibility
from evals.audit.probe import few_shot_split, pool, probe, wilson
from evals.audit.solvability import unsolvable_turns, visible


def test_wilson_interval_matches_known_values():
    lo, hi = wilson(50, 100)
    assert abs(lo - 0.4038) < 1e-3 and abs(hi - 0.5962) < 1e-3
    assert wilson(0, 0) == (0.0, 1.0)


def test_probe_finds_a_separating_statistic_and_not_noise():
    rng = np.random.default_rng(0)
    y = np.array(["positive", "negative"] * 100)
    noise = rng.normal(size=(200, 5))
    leak = noise.copy()
    leak[:, 2] += np.where(y == "positive", 6.0, 0.0)             # one statistic separates the classes
    tr, te = np.arange(100), np.arange(100, 200)
    assert probe(leak[tr], y[tr], leak[te], y[te])["low"] > 0.9
    blind = probe(noise[tr], y[tr], noise[te], y[te])
    assert blind["chance"] == 0.5 and blind["low"] < 0.5 < blind["high"] + 1e-9


def test_few_shot_split_takes_the_first_examples_of_each_class():
    assert few_shot_split(list("aabbab"), 2) == ([0, 1, 2, 3], [4, 5])


def test_pixel_statistics_count_blobs_and_colours():
    s = Scene()
    for k, c in enumerate([(220, 30, 30), (30, 30, 220), (220, 30, 30)]):
        s.circle((0.2 + 0.3 * k, 0.5), 0.08, color=c)
    f = dict(zip(PIXEL_FEATURES, pixel_features(render([s], 128)[0])))
    assert f["blobs"] == 3 and f["colours"] == 2
    assert 0.05 < f["ink"] < 0.2 and f["blob_spread"] > 0.2


def test_areas_do_not_depend_on_an_objects_contrast():
    # a faint colour loses more anti-aliased edge pixels under the ink threshold; measured by
    # coverage, the same shape has the same area and centre whatever its colour
    feats = []
    for c in [(0, 0, 255), (255, 160, 122), (139, 0, 139), (233, 150, 122)]:
        s = Scene(background=(211, 211, 211))
        s.pacman((0.5, 0.5), 0.15, mouth=60, direction=0, color=c)
        s.circle((0.2, 0.2), 0.05, color=c)
        feats.append(dict(zip(PIXEL_FEATURES, pixel_features(render([s], 224)[0]))))
    for name in ("ink", "blob_area", "blob_area_cv", "blob_spread"):
        vals = [f[name] for f in feats]
        assert max(vals) - min(vals) <= 0.002 * max(vals), (name, vals)


def test_ink_on_a_backdrop_does_not_depend_on_the_objects_colours():
    # objects on a dark disc join it into one ink region; how much ink the picture holds must
    # not change with the objects' colours (that is a colour statistic, not an amount)
    feats = []
    for c in [(255, 255, 0), (0, 0, 139), (255, 160, 122), (0, 0, 0)]:
        s = Scene(background=(211, 211, 211))
        s.circle((0.5, 0.5), 0.4, color=(47, 79, 79))
        for k in range(4):
            s.square((0.3 + 0.13 * k, 0.5), 0.08, color=c)
        feats.append(dict(zip(PIXEL_FEATURES, pixel_features(render([s], 224)[0]))))
    vals = [f["ink"] for f in feats]
    assert max(vals) - min(vals) <= 0.01 * max(vals), vals


def test_scene_statistics_leave_out_cut_outs():
    s = Scene(background=(211, 211, 211))
    s.circle((0.5, 0.5), 0.2, color=(30, 30, 220))
    plain = scene_features(s)
    s.circle((0.5, 0.3), 0.05, color=(211, 211, 211))         # a bite in the background colour
    assert np.array_equal(scene_features(s), plain)


def test_legibility_measures_what_is_visible():
    s = Scene()
    s.circle((0.4, 0.5), 0.05, color=(220, 30, 30))           # drawn first, then covered by the square
    s.square((0.5, 0.5), 0.5, color=(30, 160, 30))
    s.circle((0.1, 0.1), 0.005, color=(0, 0, 0))                 # about 1 px at 128 px
    s.text("HELLO", (0.5, 0.9), height=0.1)
    r = panel_legibility(s, (128, 128))
    assert r["hidden"] == 1 and r["min_extent"] <= 2
    assert 7 <= r["min_text"] <= 13


def test_shadows_and_backdrop_tiles_are_not_hidden_objects():
    s = Scene(background=(235, 235, 235))
    s.square((0.3, 0.3), 0.3, color=(235, 235, 235))             # a tile in the background colour
    s.ellipse((0.72, 0.72), (0.1, 0.08), color=(40, 40, 40), alpha=0.5)   # a shadow ...
    s.circle((0.7, 0.7), 0.15, color=(200, 30, 30))               # ... under what casts it
    s.circle((0.3, 0.7), 0.03, color=(30, 30, 200))               # an opaque object ...
    s.circle((0.32, 0.7), 0.15, color=(200, 30, 30))              # ... hidden under another
    assert panel_legibility(s, (128, 128))["hidden"] == 1


def _pictures(swap: bool):
    s = Scene()
    centres = [(0.25, 0.5), (0.75, 0.5)]
    s.circle(centres[1 if swap else 0], 0.1, color=(220, 30, 30))
    s.square(centres[0 if swap else 1], 0.2, color=(30, 30, 220))
    return render([s], 96)[0]


def test_a_redrawn_composite_with_moved_pieces_is_still_visible():
    assert visible(_pictures(True), [_pictures(False)])
    blank = render([Scene()], 96)[0]
    assert not visible(_pictures(False), [blank])


class _Reask(Protocol):
    """Asks, then asks again in a fresh conversation: with the picture, quoting, or neither."""

    def __init__(self, how):
        self.how = how

    def first(self, sample, images):
        return Turn("What is shown?", [images[0]], gold="a red circle left of a blue square")

    def next(self, sample, images, turns):
        if len(turns) > 1:
            return None
        if self.how == "picture":
            return Turn("Again: what is shown?", [images[0]], history=False)
        if self.how == "quote":
            return Turn(f"Given that it is {turns[0].reply}, answer.", [], history=False)
        return Turn("Again: what is shown?", [], history=False)


@pytest.mark.parametrize("how, bad", [("picture", 0), ("quote", 0), ("neither", 1)])
def test_a_fresh_turn_must_show_or_quote_what_it_asks_about(how, bad):
    from evals.audit.solvability import play

    class Fake:
        reply_text = "x"
    turns = play(_Reask(how), Fake(), [_pictures(False)])
    assert len(unsolvable_turns(turns)) == bad


def test_audit_command_writes_its_report(tmp_path):
    out = tmp_path / "audit"
    pattern = "elvis/proximity/red_triangle/rel-color+size_irr-shape_g2_q[lm]_all"
    cmd = [sys.executable, "-m", "engine.cli", "audit", pattern, "--count", "12", "--size", "96", "--out", str(out), "--quiet"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    result = json.loads((out / "audit.json").read_text())
    assert len(result["tasks"]) == 2
    for row in result["tasks"].values():
        assert set(row["bars"]) == {"probe", "reader", "legibility", "solvability"}
        assert {"elvis", "elvis-blind", "direct"} <= set(row["solvability"])
    text = (out / "AUDIT.md").read_text()
    assert "## Per family" in text and "| elvis | 2 |" in text and (out / "probe.png").is_file()
    bad = subprocess.run(cmd[:5] + ["--count", "4", "--out", str(out)], capture_output=True, text=True)
    assert bad.returncode == 2 and "at least 8" in bad.stderr


def test_an_exemption_needs_a_reason_and_is_printed_with_the_verdict():
    from engine.registry import get_family
    from evals.audit.run import audit

    shapes = get_family("shapes")
    assert "blob count" in shapes.exemption("shapes/count/circle", "probe")
    assert shapes.exemption("shapes/colours", "probe") is None
    with pytest.raises(ValueError, match="needs a reason"):
        shapes.exempt("shapes/*", "probe", " ")
    rows = audit("shapes/count/*", count=8, size=96, progress=False, probe_n=8)["tasks"]
    assert all(r["bars"]["probe"] in ("pass",) or r["bars"]["probe"].startswith("exempt: the answer is the number")
               for r in rows.values())


def test_the_probe_is_blind_only_to_what_the_rule_is_about():
    from engine.registry import resolve
    from evals.audit.features import FEATURES
    from evals.audit.run import blind

    task = resolve("elvis/closure/big_circle/rel-color_irr-shape+size_g1_qm")[0]
    X = np.ones((4, len(FEATURES)))
    col = {n: i for i, n in enumerate(FEATURES)}
    attr = blind(task, X, "attribute")            # a colour rule's attribute negatives differ in colour
    assert attr[:, col["colours"]].sum() == 0 and attr[:, col["prim_colours"]].sum() == 0
    assert attr[:, col["blob_spread"]].all() and attr[:, col["prim_size"]].all()
    assert blind(task, X, "principle").all()      # a principle negative must keep its colours
    assert X.all()                                # the input is left alone


def test_other_pictures_that_look_alike_are_not_a_re_ask():
    def scene(x):
        s = Scene(background=(90, 150, 90))
        s.rectangle((0.5, 0.5), (1.0, 0.2), color=(120, 120, 120))      # the same road in both
        s.circle((x, 0.5), 0.1, color=(200, 30, 30))                   # a car somewhere else
        return render([s], 96)[0]

    a, b = scene(0.2), scene(0.8)
    turns = [Turn("Describe the difference.", [a, b], reply="A long description of both pictures."),
             Turn("Describe the difference.", [b, a], reply="A long description of both pictures.", history=False)]
    assert unsolvable_turns(turns) == []          # the same two pictures asked again, both shown
    turns[1] = Turn("Describe the difference.", [scene(0.6), scene(0.4)], reply="Another description.",
                    history=False)
    assert unsolvable_turns(turns) == []          # two other pictures: another question
    turns[1] = Turn("Describe the difference.", [a, scene(0.5)], reply="Another description.", history=False)
    assert unsolvable_turns(turns) == []          # one picture again, paired with another: another question
    turns[1] = Turn("Describe the difference.", [b], reply="Another description.", history=False)
    assert unsolvable_turns(turns) == [{"turn": 1, "missing": [0]}]   # asked again without one of them


def test_pooling_chooses_one_classifier_for_the_pool():
    # two classifiers that are each right on half the tasks: the better one per task would
    # look perfect; pooled, each is right half the time
    results = [{"n": 2, "correct": 2, "accuracy": 1.0, "chance": 0.5,
                "by": {"centroid": 1.0 if t % 2 else 0.0, "logistic": 0.0 if t % 2 else 1.0}} for t in range(10)]
    assert pool(results)["accuracy"] == 0.5 and pool(results)["n"] == 20
