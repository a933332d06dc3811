"""The ELVIS protocol (rule induction, then per-image classification), its parser and scorer."""
import json

import pytest

from engine.registry import list_tasks
from evals.harness import evaluate
from evals.runners import OracleRunner, RandomRunner
from scenes.elvis import f1_curve, grouped, induction_prompt, negative_kind, parse_label, task_metrics
from tests.runners import Recorder

TASKS = "elvis/closure/feature_square/*"


@pytest.mark.parametrize("reply, label", [
    ("positive", "positive"), ("Negative.", "negative"), ("  POSITIVE\n", "positive"),
    ("The image is positive.", "positive"), ("not positive", "negative"), ("It is not negative.", "positive"),
    ("Positive, not negative", "positive"), ("positive or negative", None), ("Positive. Negative.", None),
    ("", None), ("I cannot tell", None), ("positively", None), (None, None),
])
def test_label_parser_reads_tricky_replies(reply, label):
    p = parse_label(reply)
    assert p.value == label and p.format_error == (label is None)
    assert p.strict == (isinstance(reply, str) and reply.strip().lower() in ("positive", "negative"))


def _r(task, gold, correct):
    return {"task": task, "gold": gold, "correct": correct}


def test_metrics_follow_their_definitions():
    t1, t2 = "elvis/closure/feature_square/a", "elvis/symmetry/axis_symmetry/b"
    results = ([_r(t1, "positive", True)] * 2 + [_r(t1, "positive", False)] + [_r(t1, "negative", True)] * 2
               + [_r(t1, "negative", False)]
               + [_r(t2, "positive", False)] * 3 + [_r(t2, "negative", True)] * 3 + [_r("shapes/x", "a", True)])
    m = task_metrics(results)
    assert set(m) == {t1, t2}
    assert m[t1]["precision"] == pytest.approx(2 / 3) and m[t1]["recall"] == pytest.approx(2 / 3)
    assert m[t1]["f1"] == pytest.approx(2 / 3) and m[t1]["accuracy"] == pytest.approx(4 / 6)
    assert m[t2]["precision"] == 0 and m[t2]["recall"] == 0 and m[t2]["f1"] == 0 and m[t2]["accuracy"] == 0.5
    g = grouped(m, "principle")
    assert g["closure"]["f1"] == (pytest.approx(2 / 3), 0.0)
    assert dict(f1_curve(m))[0.0] == 1.0 and dict(f1_curve(m))[0.5] == 0.5 and dict(f1_curve(m))[0.7] == 0.0


class PrincipleBlind:
    """Answers as if it saw every attribute but not the principle: a principle negative
    keeps the attributes, so it reads as positive."""

    name = "principle-blind"

    def generate(self, requests):
        out = []
        for r in requests:
            index = int(r.id.split("#")[0].rsplit(":", 1)[1])
            out.append("negative" if r.gold == "negative" and negative_kind(index) == "attribute" else "positive")
        return out


def test_report_scores_each_kind_of_negative_and_the_principle_decides(tmp_path):
    rows = evaluate(TASKS, PrincipleBlind(), str(tmp_path), count=3, size=32, batch_size=16, progress=False,
                    protocol="elvis")
    # test split 6..11: 3 positives, 2 principle negatives, 1 attribute negative
    assert all(r["accuracy"] == pytest.approx(4 / 6) for r in rows.values())
    results = json.loads((tmp_path / "results.json").read_text())
    assert [r["negative"] for r in results[:6]] == [None, "attribute", None, "principle", None, "principle"]
    summary = (tmp_path / "summary.md").read_text()
    assert "principle negatives 0.000 (20), attribute negatives 1.000 (10)" in summary
    assert "| feature_square | 10 | 0.667 ± 0.000 | 0.600 ± 0.000 | 1.000 ± 0.000 | 0.750 ± 0.000 | 0.000 (20) | " \
           "1.000 (10) |" in summary


@pytest.mark.parametrize("protocol", ["elvis", "elvis-blind"])
def test_oracle_solves_every_task_with_one_rule_induction_per_task(tmp_path, protocol):
    runner = Recorder()
    rows = evaluate(TASKS, runner, str(tmp_path), count=3, size=48, batch_size=4, progress=False, protocol=protocol)
    tasks = list_tasks(TASKS)
    assert set(rows) == set(tasks) and all(r["accuracy"] == 1.0 and r["n"] == 6 for r in rows.values())
    inductions = [r for r in runner.requests if len(r.images) == 6]
    assert len(inductions) == len(tasks) and len(runner.requests) == len(tasks) * 7
    assert ("Principle under consideration: closure." in inductions[0].prompt) == (protocol == "elvis")
    classify = [r for r in runner.requests if len(r.images) == 1]
    assert all(r.history == [] and r.prompt.startswith("Using the following reasoning rules: ") for r in classify)
    t = json.loads((tmp_path / "transcripts.jsonl").read_text().splitlines()[0])
    assert [u["images"] for u in t["turns"]] == [6, 1] and t["turns"][0]["reply"].startswith("1 illusory square is induced by pac-men facing the centre, and all objects are red or blue.")
    assert t["id"].endswith(":6")                        # the test split: indices 6..11
    summary = (tmp_path / "summary.md").read_text()
    assert "## ELVIS" in summary and "| feature_square | 10 | 1.000 ± 0.000" in summary
    from PIL import Image

    assert Image.open(tmp_path / "elvis_f1_threshold.png").size == (820, 480)
    assert Image.open(tmp_path / "elvis_categories.png").size[0] == 760


def test_train_images_come_positives_first(tmp_path):
    runner = Recorder()
    evaluate(list_tasks(TASKS)[0], runner, str(tmp_path), count=2, size=32, progress=False, protocol="elvis")
    induction = next(r for r in runner.requests if len(r.images) == 4)
    assert induction.prompt == induction_prompt("closure", 2)
    assert "positive examples are image 01, image 02. The negative examples are image 03, image 04." in induction.prompt


def test_random_runner_scores_near_chance_under_the_protocol(tmp_path):
    rows = evaluate("elvis/closure/feature_*", RandomRunner(5), str(tmp_path), count=3, size=16, batch_size=64,
                    progress=False, protocol="elvis")
    acc = sum(r["accuracy"] for r in rows.values()) / len(rows)
    assert len(rows) == 68 and abs(acc - 0.5) < 4 * (0.25 / (68 * 6)) ** 0.5 + 0.01


def test_resume_asks_nothing_again(tmp_path):
    evaluate(TASKS, Recorder(), str(tmp_path), count=3, size=32, progress=False, protocol="elvis")
    again = Recorder()
    evaluate(TASKS, again, str(tmp_path), count=3, size=32, progress=False, protocol="elvis")
    assert again.requests == []


def test_unknown_protocol_names_the_available_ones(tmp_path):
    with pytest.raises(ValueError, match="elvis-blind"):
        evaluate(TASKS, OracleRunner(), str(tmp_path), count=3, size=32, progress=False, protocol="elvis-typo")


TINY_VIT = dict(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                intermediate_size=64)


def test_vit_baseline_trains_a_fresh_classifier_per_task(tmp_path):
    from scenes.elvis.vit_runner import ViTRunner

    runner = ViTRunner(config=TINY_VIT, epochs=30, lr=3e-3)
    t1, t2 = list_tasks(TASKS)[:2]
    rows = evaluate(f"{TASKS[:-1]}rel-color_irr-size_g[12]", runner, str(tmp_path / "a"), count=3, size=32,
                    batch_size=4, progress=False, protocol="elvis")
    assert set(rows) == {t1, t2} and all(r["n"] == 6 and r["format_errors"] == 0 for r in rows.values())
    first = json.loads((tmp_path / "a" / "results.json").read_text())
    assert {r["parsed"] for r in first} <= {"positive", "negative"}
    # a second runner, tasks in the other order: every task starts from the same weights
    again = ViTRunner(config=TINY_VIT, epochs=30, lr=3e-3)
    evaluate(t2, again, str(tmp_path / "b"), count=3, size=32, progress=False, protocol="elvis")
    evaluate(t1, again, str(tmp_path / "b1"), count=3, size=32, progress=False, protocol="elvis")
    second = json.loads((tmp_path / "b" / "results.json").read_text()) + json.loads(
        (tmp_path / "b1" / "results.json").read_text())
    assert sorted((r["id"], r["reply"]) for r in first) == sorted((r["id"], r["reply"]) for r in second)
    assert "## ELVIS" in (tmp_path / "a" / "summary.md").read_text()


def test_vit_baseline_fits_its_train_split():
    from engine.outputs import render_samples
    from engine.registry import get_task
    from scenes.elvis.vit_runner import ViTRunner
    from scenes.elvis import split_indices

    runner = ViTRunner(config=TINY_VIT, epochs=200, lr=3e-3)
    samples = get_task(list_tasks(TASKS)[0]).samples(0, split_indices(3)["train"])
    samples = [s for s in samples if s.meta["label"] == 1] + [s for s in samples if s.meta["label"] == 0]
    images = [ims[0] for ims in render_samples(samples, 32)]
    key = runner.train(images, [1, 1, 1, 0, 0, 0])
    assert runner.predict(key, images) == ["positive"] * 3 + ["negative"] * 3


def test_vit_baseline_refuses_other_protocols(tmp_path):
    from scenes.elvis.vit_runner import ViTRunner

    with pytest.raises(ValueError, match="elvis protocol only"):
        evaluate(list_tasks(TASKS)[0], ViTRunner(config=TINY_VIT), str(tmp_path), count=2, size=32, progress=False)


def test_the_vit_runner_is_found_through_the_family_registry(tmp_path):
    from engine.errors import UserError
    from engine.registry import runners
    from evals.runners import make_runner

    assert "vit" in runners()
    with pytest.raises(UserError, match="vit:.*missing.*config.json"):
        make_runner(f"vit:{tmp_path / 'missing'}")
    with pytest.raises(UserError, match=r"random, oracle, vit\[:ARG\]"):
        make_runner("no-such-model")
