"""Percept-V evaluation: zero-shot and one-shot protocols, per-skill/size report, and replies
fuzzed with model-like text (readers never crash; format errors stay apart from wrong answers)."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.registry import get_task, list_tasks
from evals.harness import evaluate
from scenes.perceptv import DOMAINS, rows, tables
from tests.runners import Recorder


@pytest.mark.parametrize("protocol", ["perceptv", "perceptv-1shot", "direct"])
def test_oracle_scores_100_percent_with_the_domain_formats(tmp_path, protocol):
    runner = Recorder()
    rows_ = evaluate("perceptv/*", runner, str(tmp_path), count=4, size=48, progress=False, protocol=protocol)
    assert len(rows_) == 30 and all(r["accuracy"] == 1.0 and r["format_errors"] == 0 for r in rows_.values())
    assert len(runner.requests) == 30 * 4                   # the exemplar turn is never asked
    if protocol == "perceptv-1shot":
        r = runner.requests[0]
        assert len(r.history) == 1 and r.history[0][2].startswith("COUNT:") and r.prompt == r.history[0][0]
        assert all(h[1][0].shape == q.images[0].shape for q in runner.requests for h in q.history
                   if q.task.split("/")[1] in ("change_colour", "counting_circles", "comparing_size", "grid_path"))
        t = json.loads((tmp_path / "transcripts.jsonl").read_text().splitlines()[0])
        assert len(t["turns"]) == 2
    summary = (tmp_path / "summary.md").read_text()
    assert "## Percept-V" in summary and "| Visual Spatial Relationship |" in summary
    assert "| average of skills | | 100.00 |" in summary
    from PIL import Image

    assert Image.open(tmp_path / "perceptv_sizes.png").size == (820, 480)


def test_format_errors_are_counted_apart_from_wrong_answers(tmp_path):
    rows_ = evaluate("perceptv/counting_circles", Recorder("COUNT:999"), str(tmp_path / "w"), count=5, size=32,
                     progress=False)
    assert rows_["perceptv/counting_circles"]["accuracy"] == 0 and rows_["perceptv/counting_circles"]["format_errors"] == 0
    rows_ = evaluate("perceptv/counting_circles", Recorder("I am not sure."), str(tmp_path / "f"), count=5, size=32,
                     progress=False)
    assert rows_["perceptv/counting_circles"]["format_errors"] == 1


def test_tables_group_by_skill_domain_and_size():
    results = [{"task": "perceptv/counting_shapes", "id": "perceptv/counting_shapes:0:15", "correct": True,
                "format_error": False},
               {"task": "perceptv/counting_shapes", "id": "perceptv/counting_shapes:0:16", "correct": False,
                "format_error": True},
               {"task": "perceptv/maze_solving", "id": "perceptv/maze_solving:0:3", "correct": True, "format_error": False},
               {"task": "shapes/x", "id": "shapes/x:0:1", "correct": True, "format_error": False}]
    t = tables(rows(results))
    assert t["domain"]["counting_shapes"] == (0.5, 0.5, 2)
    assert set(t["skill"]) == {"Visual Discrimination", "Visual Memory", "Visual Form Constancy",
                               "Visual Spatial Relationship"}         # counting_shapes: D, M, FC; maze: SR
    assert t["size"] == {2: (0.5, 0.5, 2), 1: (1.0, 0.0, 1)}


SAMPLES = {name: get_task(f"perceptv/{name}").samples(0, [5, 77, 150]) for name in DOMAINS}
WORDS = ["COUNT", "ANSWER", "SHAPES", "COLOURS", "CIRCLES", "QUADRANT", "NODES", "EDGES", "ABOVE", "BELOW", "yes",
         "no", "None", "Blue", "green", "circle", "triangle", "S", "E", ":", ",", "(", ")", "[", "]", "\n", " ", "3", "(2,4)"]
replies = st.one_of(st.text(max_size=200), st.lists(st.sampled_from(WORDS), max_size=40).map("".join),
                    st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join))


@settings(max_examples=150, deadline=None)
@given(reply=replies, name=st.sampled_from(sorted(DOMAINS)))
def test_readers_never_crash_on_model_like_replies(reply, name):
    s = SAMPLES[name][0]
    p = get_task(s.task).reader(reply, s)
    assert p.value is None or isinstance(p.value, str)
    assert not (p.strict and p.value is None)


@settings(max_examples=60, deadline=None)
@given(noise=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60),
       name=st.sampled_from(sorted(DOMAINS)))
def test_gold_after_reasoning_text_is_still_read(noise, name):
    for s in SAMPLES[name]:
        reader = get_task(s.task).reader
        p = reader(noise.replace("\n", " ") + "\n" + s.reply_text, s)
        assert p.value == s.answer_text


def test_every_domain_registered_under_its_name():
    assert sorted(t.split("/", 1)[1] for t in list_tasks("perceptv/*")) == sorted(DOMAINS)


def test_the_size_axis_is_labelled_at_whole_sizes():
    from engine.plots import whole_ticks
    assert whole_ticks(1, 20) == [1, 5, 9, 13, 17]
    assert whole_ticks(1, 4) == [1, 2, 3, 4]
    assert whole_ticks(3, 4) == [3, 4]
    assert all(isinstance(v, int) for v in whole_ticks(1.0, 45.0))


def test_every_domain_has_a_chance_row_from_its_acceptance_sets():
    from scenes.perceptv.chance import table
    rows_ = table()
    assert set(rows_) == set(list_tasks("perceptv*/*"))
    assert all(0 < r["chance"] < 1 and r["n"] >= 20_000 for r in rows_.values())
    # a count that is the problem size: 1 of 20 sizes, exactly
    assert rows_["perceptv/counting_circles"] == {"chance": 0.05, "se": 0.0, "n": 20_000,
                                                  "method": "exact: each size fixes the answer"}


@pytest.mark.parametrize("tid", ["perceptv/cross_and_knots", "perceptv/list_shapes", "perceptv/inside_circles"])
def test_cached_chance_agrees_with_a_fresh_estimate_and_the_random_runner(tmp_path, tid):
    from engine.registry import get_task
    from evals.runners import RandomRunner
    from scenes.perceptv.chance import estimate, table

    cached = table()[tid]
    fresh = estimate(get_task(tid), 2_000, seed=7)              # another seed, 10 per size
    assert abs(fresh["chance"] - cached["chance"]) < 4 * (fresh["se"] + cached["se"])
    row = evaluate(tid, RandomRunner(1), str(tmp_path), count=400, size=24, progress=False)[tid]
    sigma = (cached["chance"] * (1 - cached["chance"]) / 400) ** 0.5
    assert row["chance"] == cached["chance"] and abs(row["accuracy"] - row["chance"]) < 3 * sigma, row


def test_cross_and_knots_chance_counts_any_safe_cell():
    from scenes.perceptv.chance import table
    from evals.runners import answer_space
    from engine.stats import chance

    plain = chance(dict(answer_space(get_task("perceptv/cross_and_knots"), 2_000)))
    assert table()["perceptv/cross_and_knots"]["chance"] > plain + 0.05       # the 20% printed before vs ~34%


def test_eval_renders_each_family_at_its_native_size_unless_told(tmp_path):
    runner = Recorder()
    evaluate("perceptv/counting_circles", runner, str(tmp_path / "a"), count=2, progress=False)
    evaluate("shapes/count/circle", runner, str(tmp_path / "b"), count=2, progress=False)
    evaluate("perceptv/counting_circles", runner, str(tmp_path / "c"), count=2, size=96, progress=False)
    widths = [tuple(r.images[0].shape[1:]) for r in runner.requests]
    assert widths == [(307, 512)] * 2 + [(224, 224)] * 2 + [(58, 96)] * 2     # 500 x 300 as the reference


def test_fixed_variants_have_their_own_rows_in_the_summary(tmp_path):
    evaluate("perceptv*/inside_circles", Recorder(), str(tmp_path), count=4, size=48, progress=False)
    summary = (tmp_path / "summary.md").read_text()
    assert "| inside_circles | 4 |" in summary and "| inside_circles (fixed) | 4 |" in summary
    skill = next(line for line in summary.splitlines() if line.startswith("| Visual Spatial Relationship |"))
    assert skill.split("|")[2].strip() == "4"                  # skills pool the benchmark's own domains


@pytest.mark.slow
def test_the_random_runner_lands_on_the_stated_chance_in_every_domain(tmp_path):
    from evals.runners import RandomRunner

    rows_ = evaluate("perceptv*/*", RandomRunner(5), str(tmp_path), count=1000, size=24, batch_size=200,
                     progress=False)
    off = []
    for tid, r in sorted(rows_.items()):
        sigma = (r["chance"] * (1 - r["chance"]) / r["n"]) ** 0.5
        if abs(r["accuracy"] - r["chance"]) > 3 * sigma + 1e-9:
            off.append(f"{tid}: {r['accuracy']:.4f} vs chance {r['chance']:.4f} (3 sigma {3 * sigma:.4f})")
    assert not off, "\n".join(off)



def test_significance_levels_never_exceed_100_percent(tmp_path):
    # 4 items of a yes/no domain: even 4 of 4 is not significant at p < 0.05
    evaluate("perceptv_fixed/inside_circles", Recorder(), str(tmp_path), count=4, size=48, progress=False)
    row = next(line for line in (tmp_path / "summary.md").read_text().splitlines()
               if line.startswith("| perceptv_fixed/inside_circles |"))
    assert row.split("|")[-2].strip() == "–" and row.split("|")[-3].strip() == "50.00"


@pytest.mark.parametrize("argv, named", [(["--n", "150"], "--n 150: a positive multiple of 200"),
                                         (["--tasks", "nope/*"], "--tasks 'nope/*' names no Percept-V task")])
def test_the_chance_command_refuses_bad_input_in_one_line(capsys, argv, named):
    from scenes.perceptv.chance import CACHE, main

    before = CACHE.read_bytes()
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and named in err[-1] and CACHE.read_bytes() == before
