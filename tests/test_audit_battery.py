"""The reply battery (``evals.audit.battery``): it runs on every kind of task, it is
deterministic, and it can fail: readers built to be wrong are caught. It does not require
today's readers to pass; their findings are printed (``pytest -s``)."""
import dataclasses
import time

import pytest

from engine.registry import get_task, list_tasks
from engine.replies import Parsed
from evals.audit.battery import Reply, replies_for, run_battery, wrong_answers

INDICES = [0, 55, 123]          # Percept-V sizes 1, 6 and 13; any index elsewhere
KEYS = {"n", "false_positives", "false_negatives", "noanswer_scored", "crashes", "compliant_false_positives",
        "compliant_false_negatives", "by_style", "examples"}
STYLE_KEYS = {"n", "fp", "fn", "noanswer_scored", "crashes"}
EXAMPLE_KEYS = {"sample", "style", "states", "compliant", "reply", "parsed", "gold", "error"}


def _ids() -> list[str]:
    ids = [list_tasks("elvis/*")[0], *list_tasks("kiva/*")[:1], *list_tasks("shapes/*")[:1], "shapes/count/circle"]
    for domain in ("list_colours", "counting_circles", "circle_location", "locate_circles_colour", "inside_circles"):
        ids += list_tasks(f"perceptv/{domain}")
    return ids


IDS = _ids()


@pytest.fixture(scope="module")
def drawn():
    """``{task id: (task, samples)}`` for the tasks under test."""
    out = {}
    for tid in IDS:
        task = get_task(tid)
        out[tid] = (task, task.samples(0, INDICES))
    return out


def _findings(tid: str, result: dict) -> str:
    worst = sorted(result["by_style"].items(), key=lambda kv: -(kv[1]["fp"] + kv[1]["fn"] + kv[1]["crashes"]))
    worst = [s for s, v in worst[:4] if v["fp"] + v["fn"] + v["crashes"]]
    return (f"{tid}: n={result['n']} fp={result['false_positives']} (compliant {result['compliant_false_positives']}) "
            f"fn={result['false_negatives']} noanswer_scored={result['noanswer_scored']} crashes={result['crashes']} "
            f"worst={worst}")


@pytest.mark.parametrize("tid", IDS)
def test_the_battery_runs_and_reports(drawn, tid):
    task, samples = drawn[tid]
    result = run_battery(task, samples)
    print(_findings(tid, result))
    assert KEYS <= set(result) and "skipped" not in result and result["n"] > 50
    assert all(set(v) == STYLE_KEYS for v in result["by_style"].values())
    assert sum(v["n"] for v in result["by_style"].values()) == result["n"]
    assert result["compliant_false_positives"] <= result["false_positives"]
    assert result["false_negatives"] == result["compliant_false_negatives"] <= result["gold_misses"]
    assert sum(v["fn"] for v in result["by_style"].values()) == result["gold_misses"]
    assert len(result["examples"]) <= 12 and all(EXAMPLE_KEYS <= set(e) for e in result["examples"])
    assert result["crashes"] == 0


@pytest.mark.parametrize("tid", IDS)
def test_each_reply_knows_what_it_states(drawn, tid):
    task, samples = drawn[tid]
    for i, s in enumerate(samples):
        wrong = wrong_answers(task, s)
        assert wrong and s.reply_text not in wrong and len(set(wrong)) == len(wrong)
        assert not set(wrong) & {str(a) for a in s.meta.get("accepted", [])}
        replies = replies_for(s, wrong, huge=i == 0)
        assert all(isinstance(r, Reply) and r.states in ("gold", "wrong", "none") for r in replies)
        assert Reply("exact", "gold", True, s.reply_text) in replies
        assert {w for w in wrong} == {r.text for r in replies if r.style == "exact" and r.states == "wrong"}
        assert not any(r.compliant for r in replies if r.states == "none")
        assert any(len(r.text) >= 1_000_000 for r in replies) == (i == 0)


def test_the_unlabelled_canonical_answer_is_compliant_only_when_the_prompt_does_not_ask_for_the_label(drawn):
    task, samples = drawn["perceptv/counting_circles"]
    asked = samples[1]
    assert "COUNT:x" in asked.question and asked.reply_text.startswith("COUNT:")
    unasked = dataclasses.replace(asked, question=asked.question.replace("of form COUNT:x", "a number"))
    for s, compliant in ((asked, False), (unasked, True)):
        bare = [r for r in replies_for(s, wrong_answers(task, s)) if r.style == "bare:exact"]
        assert bare and all(r.compliant == compliant for r in bare)


def test_the_battery_catches_a_reader_that_always_says_gold(drawn):
    task, samples = drawn[IDS[0]]
    bad = dataclasses.replace(task, reader=lambda reply, s: Parsed(s.answer_text, True))
    result = run_battery(bad, samples)
    assert result["false_positives"] > 0 and result["compliant_false_positives"] > 0
    silent = sum(r.states == "none" for i, s in enumerate(samples)
                 for r in replies_for(s, wrong_answers(task, s), huge=i == 0))
    assert result["noanswer_scored"] == silent > 0
    assert result["false_negatives"] == result["gold_misses"] == 0
    assert {e["kind"] for e in result["examples"]} >= {"compliant-fp", "noanswer-scored"}


@pytest.mark.parametrize("tid", [IDS[0], "perceptv/counting_circles"])
def test_the_battery_catches_a_reader_that_reads_nothing(drawn, tid):
    task, samples = drawn.get(tid, drawn[IDS[0]])
    bad = dataclasses.replace(task, reader=lambda reply, s: Parsed(None, False))
    result = run_battery(bad, samples)
    compliant_gold = sum(r.compliant and r.states == "gold" for i, s in enumerate(samples)
                         for r in replies_for(s, wrong_answers(task, s), huge=i == 0))
    assert result["false_negatives"] == compliant_gold > 0
    assert result["false_positives"] == result["noanswer_scored"] == result["crashes"] == 0


def test_a_reader_that_raises_is_counted_not_raised(drawn):
    task, samples = drawn[IDS[0]]

    def broken(reply, sample):
        raise RuntimeError("boom")

    result = run_battery(dataclasses.replace(task, reader=broken), samples)
    assert result["crashes"] == result["n"] > 0
    assert result["examples"] and all("RuntimeError: boom" in e["error"] for e in result["examples"])


def test_the_battery_is_deterministic(drawn):
    for tid in (IDS[0], "perceptv/list_colours"):
        task, samples = drawn.get(tid, drawn[IDS[0]])
        fresh = get_task(tid)
        assert run_battery(task, samples) == run_battery(fresh, fresh.samples(0, INDICES))


def test_the_battery_is_fast(drawn):
    task, samples = drawn.get("perceptv/list_colours", drawn[IDS[0]])
    run_battery(task, samples)                    # the task's answer space is computed once
    start = time.perf_counter()
    run_battery(task, samples)
    assert time.perf_counter() - start < 1.0


def test_free_text_tasks_are_skipped():
    open_ids = [t for t in list_tasks("bongard/*") if get_task(t).open_answer][:1]
    if not open_ids:
        pytest.skip("no free-text task is registered")
    task = get_task(open_ids[0])
    result = run_battery(task, task.samples(0, [0]))
    assert result["skipped"] and result["n"] == 0 and result["examples"] == []


def test_a_protocol_reader_can_be_audited_in_place_of_the_task_reader(drawn):
    task, samples = drawn[IDS[0]]
    calls = []

    def counting(reply, sample):
        calls.append(reply)
        return task.read(reply, sample)

    assert run_battery(task, samples, read=counting) == run_battery(task, samples)
    assert len(calls) == run_battery(task, samples)["n"]
