"""Bongard evaluation: the five prompting strategies as multi-turn protocols, the judges and
the report in the seed's layout."""
import json

import pytest

from engine.registry import get_task
from evals.harness import evaluate
from scenes.bongard import CONCEPTS, STRATEGIES, judge, judge_agreement, judge_prompt, model_judge
from tests.runners import Recorder

TASK = "bongard/classic/number/three_vs_five"
TURNS = {"bongard-direct": 1, "bongard-descriptive-direct": 13, "bongard-contrastive-direct": 7,
         "bongard-contrastive-iterative": 6, "bongard-descriptive-iterative": 13}


@pytest.mark.parametrize("protocol", STRATEGIES)
def test_every_strategy_runs_its_turns_and_scores_the_last(tmp_path, protocol):
    runner = Recorder()
    rows = evaluate(TASK, runner, str(tmp_path), count=2, size=32, progress=False, protocol=protocol)
    assert rows[TASK]["accuracy"] == 1.0
    assert len(runner.requests) == 2 * TURNS[protocol]
    first = runner.requests[0]
    assert first.prompt.startswith("You are a vision understanding module")
    t = json.loads((tmp_path / "transcripts.jsonl").read_text().splitlines()[0])
    assert len(t["turns"]) == TURNS[protocol]
    images = [u["images"] for u in t["turns"]]
    expected = {"bongard-direct": [1], "bongard-descriptive-direct": [1] * 13,
                "bongard-contrastive-direct": [2] * 6 + [1], "bongard-contrastive-iterative": [2] * 6,
                "bongard-descriptive-iterative": [1] * 13}[protocol]
    assert images == expected
    if protocol == "bongard-contrastive-iterative":
        assert "Your previous candidate concept is: " in t["turns"][1]["prompt"]
        assert t["turns"][0]["reply"] in t["turns"][1]["prompt"]
    summary = (tmp_path / "summary.md").read_text()
    assert "| Humans (paper, real images) | — | — | 0.745 | 0.823 |" in summary
    assert f"| `recorder` | `{protocol}` | 2 | 1.000 | 1.000 |" in summary
    assert f"| {TASK} | 2 | 100.00 | 0.00 | — | — |" in summary and "nan" not in summary
    row = json.loads((tmp_path / "results.json").read_text())[0]
    assert row["model"] == "recorder" and row["protocol"] == protocol


def test_the_rule_judge_agrees_with_every_stored_label():
    r = judge_agreement(judge)
    assert r["agreement"] == 1.0 and r["items"] >= 5 * len(CONCEPTS)


class RuleBacked:
    """A stand-in text model that grades like the rule judge."""

    name = "rule-backed"

    def generate(self, requests):
        out = []
        for r in requests:
            answer = r.prompt.rsplit("Model answer:\n", 1)[1]
            out.append("correct" if judge(r.task, answer) else "incorrect, because ...")
        return out


def test_the_model_judge_uses_the_seeds_prompts_through_a_runner():
    c = CONCEPTS[TASK]
    p = judge_prompt(c, "Three. Five.")
    assert p.startswith("You evaluate the user's answer") and "\u201cnumber\u201d type" in p
    assert f"Left: {c.left}" in p and "Model answer:\nThree. Five." in p

    runner = RuleBacked()
    assert model_judge(runner, [(TASK, f"{c.left} {c.right}"), (TASK, "Few. Many.")]) == [True, False]
    grade = lambda tid, ans: model_judge(runner, [(tid, ans)])[0]  # noqa: E731
    assert judge_agreement(grade)["agreement"] == 1.0


def test_eval_reports_the_model_judges_agreement_with_the_rule_judge(tmp_path):
    runner = RuleBacked()
    evaluate(TASK, Recorder(), str(tmp_path / "right"), count=2, size=32, progress=False, judge=runner)
    evaluate(TASK, Recorder("Few shapes. Many shapes."), str(tmp_path / "wrong"), count=2, size=32, progress=False,
             judge=runner)
    for run, both, neither in (("right", 2, 0), ("wrong", 0, 2)):
        summary = (tmp_path / run / "summary.md").read_text()
        assert "They agree on 2 of 2 (100.00%)" in summary
        assert f"| rule judge: correct | {both} | 0 |" in summary and f"| rule judge: incorrect | 0 | {neither} |" in summary
        rows = json.loads((tmp_path / run / "results.json").read_text())
        assert [r["model_judge"] for r in rows] == [r["correct"] for r in rows]


def test_sample_reader_and_oracle_through_direct(tmp_path):
    rows = evaluate("bongard/aerial/*", Recorder(), str(tmp_path), count=1, size=32, progress=False)
    assert len(rows) == 13 and all(r["accuracy"] == 1.0 for r in rows.values())
    s = get_task(TASK).sample(0, 0)
    assert get_task(TASK).reader("Left: three shapes. Right: five shapes.", s).value == s.answer_text
