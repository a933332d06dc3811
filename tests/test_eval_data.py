"""Results you can cite: an evaluation of a dataset folder written by ``generate`` asks the
same requests and scores the same replies as one that renders afresh; replies made
elsewhere (``replies:FILE.jsonl``) are scored by the same readers; eval_run.json and summary.md
say what produced a run."""
import json

import pytest
import torch

from engine.cli import main
from engine.errors import UserError
from engine.outputs import generate
from evals.harness import evaluate
from evals.runners import RandomRunner, make_runner
from tests.runners import Recorder

PATTERN, COUNT, SEED, SIZE = "shapes/[cs][oa]*", 5, 3, 32      # shapes/colours, shapes/count/*, shapes/same_shape


@pytest.fixture(scope="module", params=["parquet", "imagefolder", "hf"])
def dataset(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param) / "data"
    generate(PATTERN, str(out), seed=SEED, count=COUNT, size=SIZE, fmt=request.param, shard_size=2, progress=False)
    return out


def _results(folder) -> list[dict]:
    return json.loads((folder / "results.json").read_text())


def test_a_dataset_folder_scores_as_a_fresh_render(dataset, tmp_path):
    fresh, read = Recorder(), Recorder()
    evaluate(PATTERN, fresh, str(tmp_path / "fresh"), count=COUNT, seed=SEED, size=SIZE, progress=False,
             batch_size=3)
    evaluate(PATTERN, read, str(tmp_path / "read"), count=None, seed=None, progress=False, data=str(dataset),
             batch_size=3)
    assert len(fresh.requests) == len(read.requests) > COUNT
    for a, b in zip(fresh.requests, read.requests):
        assert (a.id, a.prompt, a.gold, a.options) == (b.id, b.prompt, b.gold, b.options)
        assert len(a.images) == len(b.images) and all(torch.equal(x, y) for x, y in zip(a.images, b.images))
    assert _results(tmp_path / "fresh") == _results(tmp_path / "read")
    run = json.loads((tmp_path / "read" / "eval_run.json").read_text())
    assert run["data"] == str(dataset.resolve()) and (run["seed"], run["count"], run["size"]) == (SEED, COUNT, SIZE)
    evaluate(PATTERN, RandomRunner(1), str(tmp_path / "rf"), count=3, seed=SEED, size=SIZE, progress=False)
    evaluate(PATTERN, RandomRunner(1), str(tmp_path / "rr"), count=3, progress=False, data=str(dataset), seed=None)
    assert _results(tmp_path / "rf") == _results(tmp_path / "rr")


def test_the_command_reads_a_dataset_folder(dataset, tmp_path, capsys):
    assert main(["eval", PATTERN, "--model", "oracle", "--data", str(dataset), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    rows = _results(tmp_path / "o")
    assert all(r["correct"] for r in rows) and {r["id"].split(":")[1] for r in rows} == {str(SEED)}
    assert len(rows) == COUNT * len({r["task"] for r in rows})
    for bad, words in ((["--seed", "0"], ["--seed", "seed 3"]), (["--size", "64"], ["--size"]),
                       (["--count", str(COUNT + 1)], ["--count", f"holds {COUNT}"])):
        assert main(["eval", PATTERN, "--model", "oracle", "--data", str(dataset), "--out", str(tmp_path / "x"),
                     "--quiet", *bad]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and all(w in err for w in words), err
    for name, extra in (("rd", ["--data", str(dataset)]), ("rf", ["--seed", str(SEED), "--size", str(SIZE),
                                                                 "--count", str(COUNT)])):
        assert main(["eval", PATTERN, "--model", "random", "--out", str(tmp_path / name), "--quiet", *extra]) == 0
    assert _results(tmp_path / "rd") == _results(tmp_path / "rf")          # the guesser is seeded alike too
    assert main(["eval", "shapes/size_order", "--model", "oracle", "--data", str(dataset), "--out",
                 str(tmp_path / "x"), "--quiet"]) == 2
    assert "shapes/size_order" in capsys.readouterr().err
    assert main(["eval", PATTERN, "--model", "oracle", "--data", str(tmp_path), "--out", str(tmp_path / "x"),
                 "--quiet"]) == 2
    assert "manifest.json" in capsys.readouterr().err


def test_a_row_that_is_not_the_sample_is_refused(tmp_path):
    data = tmp_path / "data"
    generate("shapes/same_shape", str(data), seed=0, count=2, size=SIZE, fmt="imagefolder", progress=False)
    meta = next(data.rglob("metadata.jsonl"))
    rows = [json.loads(line) for line in meta.read_text().splitlines()]
    rows[1]["answer"] = "yes" if rows[1]["answer"] == "no" else "no"
    meta.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(UserError, match="shapes/same_shape:0:1"):
        evaluate("shapes/same_shape", Recorder(), str(tmp_path / "out"), count=None, progress=False, data=str(data))


class Answering:
    """A runner answering each request from ``{(sample id, turn): reply}``."""

    name = "answering"

    def __init__(self, replies):
        self.replies = replies

    def generate(self, requests):
        return [self.replies[(r.id.rpartition("#")[0], int(r.id.rpartition("#")[2]))] for r in requests]


def test_replies_made_elsewhere_are_scored_like_a_models(tmp_path):
    task = "shapes/count/circle"
    evaluate(task, Recorder(), str(tmp_path / "oracle"), count=4, size=SIZE, progress=False)
    gold = _results(tmp_path / "oracle")
    lines = [{"id": r["id"], "turn": 0, "reply": r["reply"] if i % 2 else "no idea"} for i, r in enumerate(gold)]
    path = tmp_path / "replies.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    runner = make_runner(f"replies:{path}")
    evaluate(task, runner, str(tmp_path / "replies"), count=4, size=SIZE, progress=False)
    rows = _results(tmp_path / "replies")
    assert [r["reply"] for r in rows] == [x["reply"] for x in lines]
    assert [r["correct"] for r in rows] == [False, True, False, True]
    own = Answering({(x["id"], x["turn"]): x["reply"] for x in lines})         # the same replies, in-process
    evaluate(task, own, str(tmp_path / "own"), count=4, size=SIZE, progress=False)
    strip = [{k: v for k, v in r.items() if k != "model"} for r in rows]
    assert strip == [{k: v for k, v in r.items() if k != "model"} for r in _results(tmp_path / "own")]
    run = json.loads((tmp_path / "replies" / "eval_run.json").read_text())
    assert run["model"]["source"]["replies"] == str(path.resolve()) and run["model"]["name"] == "replies:replies"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines[:3]))
    with pytest.raises(UserError, match=rf"no reply for sample '{task}:0:3' turn 0"):
        evaluate(task, make_runner(f"replies:{path}"), str(tmp_path / "short"), count=4, size=SIZE, progress=False)
    path.write_text('{"id": "x", "reply": 3}\n')
    with pytest.raises(UserError, match="line 1"):
        make_runner(f"replies:{path}")


def test_eval_run_json_and_summary_say_what_produced_the_run(tmp_path):
    evaluate("shapes/same_shape", RandomRunner(2), str(tmp_path / "r"), count=3, seed=5, size=SIZE, progress=False,
             protocol="direct")
    run = json.loads((tmp_path / "r" / "eval_run.json").read_text())
    from engine.outputs import procvis_version

    assert run["procvis_version"] == procvis_version()
    assert run["model"] == {"name": "random-2", "identity": "random-2 (evals.runners.RandomRunner)"}
    assert (run["protocol"], run["seed"], run["count"], run["size"]) == ("direct", 5, 3, SIZE)
    assert run["samples"] == {"shapes/same_shape": 3} and run["total"] == 3 and run["data"] is None
    assert isinstance(_results(tmp_path / "r"), list)                      # results.json keeps its shape
    line = [x for x in (tmp_path / "r" / "summary.md").read_text().splitlines() if x.startswith("Run:")]
    assert len(line) == 1 and f"procvis {procvis_version()}" in line[0] and "seed 5" in line[0]
    if "commit" in run:
        assert len(run["commit"]) == 40 and run["commit"][:12] in line[0]
