"""The Hugging Face runner, end to end on a tiny checkpoint built in-process."""
import json
import subprocess
import sys

import pytest

from engine.outputs import render_samples
from engine.errors import UserError
from engine.protocol import Request
from engine.registry import get_task
from evals.harness import evaluate
from evals.hf_runner import HFRunner
from evals.runners import make_runner
from evals.tiny_model import build_tiny_model
from tests.selection import SMALL_IMAGES


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


def _requests(ids_counts, size=32):
    reqs = []
    for task_id, n in ids_counts:
        samples = get_task(task_id, SMALL_IMAGES).samples(0, range(n))
        for s, imgs in zip(samples, render_samples(samples, size)):
            reqs.append(Request(id=s.id, task=s.task, images=imgs, prompt=s.question, answer_type=s.answer_type,
                                options=s.options, gold=s.answer_text))
    return reqs


def test_replies_do_not_depend_on_the_batch_size(tiny):
    # one, two and five images per request, mixed in the same batches
    reqs = _requests([("shapes/count/circle", 3), ("jigsaw/connection", 3), ("jigsaw/missing_piece/easy", 2)])
    one = HFRunner(tiny, batch_size=1).generate(reqs)
    four = HFRunner(tiny, batch_size=4).generate(reqs)
    assert one == four
    assert all(isinstance(r, str) for r in one) and len(one) == len(reqs)


def test_harness_runs_the_real_runner(tiny, tmp_path):
    rows = evaluate("shapes/same_shape", make_runner(str(tiny), batch_size=4), str(tmp_path), count=6, size=32,
                    progress=False)
    results = json.loads((tmp_path / "results.json").read_text())
    assert len(results) == 6 and rows["shapes/same_shape"]["n"] == 6
    assert all(isinstance(r["reply"], str) for r in results)
    assert all(r["format_error"] == (r["parsed"] is None) for r in results)


def test_tiny_model_cli_writes_a_loadable_checkpoint(tmp_path):
    r = subprocess.run([sys.executable, "-m", "engine.cli", "tiny-model", "--out", str(tmp_path / "m")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-500:]
    runner = HFRunner(tmp_path / "m")
    assert len(runner.generate(_requests([("shapes/read_text", 1)]))) == 1
    with pytest.raises(UserError, match="no model checkpoint"):
        HFRunner(tmp_path / "nothing")


def test_eval_benchmark_paths_agree():
    from benchmarks import eval_bench

    r = eval_bench.run(quick=True)
    assert r["same_answers"] and set(r["rates"]) == {"in_process", "file_round_trip"}


def test_conversation_history_goes_through_the_chat_template(tiny):
    first = _requests([("shapes/same_shape", 1)])[0]
    runner = HFRunner(tiny)
    reply = runner.generate([first])[0]
    follow = Request(id=first.id + "#1", task=first.task, images=[], prompt="Are you sure?", answer_type="fixed",
                     options=["yes", "no"], history=[(first.prompt, first.images, reply)])
    text = runner.prompt(follow)
    assert text.count("<image>") == 2 and "Are you sure?" in text and "ASSISTANT:" in text
    assert len(runner.generate([follow, first])) == 2


def test_requests_without_images_batch_beside_requests_with_them(tiny):
    pictured = _requests([("shapes/count/circle", 2)])
    plain = [Request(id=f"t{i}", task="shapes/count/circle", images=[], prompt=p, answer_type="number")
             for i, p in enumerate(["How many circles?", "Count them."])]
    mixed = [pictured[0], plain[0], pictured[1], plain[1]]
    runner = HFRunner(tiny, batch_size=4, max_new_tokens=5)
    replies = runner.generate(mixed)
    alone = HFRunner(tiny, batch_size=1, max_new_tokens=5).generate(mixed)
    assert replies == alone and len(replies) == 4
    assert replies[1::2] == runner.generate(plain)
