"""The evaluation cache keys on what a model is, not what its folder is called, and a
protocol that does not fit a task's family is refused before any work."""
import json
import shutil
import subprocess
import sys

import pytest

from engine import digests
from engine.digests import checkpoint_digest
from evals.harness import evaluate
from evals.hf_runner import HFRunner
from evals.runners import OracleRunner, RandomRunner, runner_identity
from evals.tiny_model import build_tiny_model
from tests.runners import Recorder

# one of the suite's processes runs every test here: the twin checkpoints (25-40 s) are built once
pytestmark = pytest.mark.xdist_group("eval_identity")

TASK, COUNT, SIZE = "shapes/same_shape", 4, 32


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """Two different tiny checkpoints saved in folders of the same name: ``a/model``, ``b/model``."""
    root = tmp_path_factory.mktemp("twins")
    return build_tiny_model(root / "a" / "model", seed=0), build_tiny_model(root / "b" / "model", seed=1)


class Counted:
    """A runner's replies, counting the requests that reach it."""

    def __init__(self, runner):
        self.runner, self.name, self.identity, self.calls = runner, runner.name, runner.identity, 0

    def generate(self, requests):
        self.calls += len(requests)
        return self.runner.generate(requests)


def _replies(folder) -> list[str]:
    return [r["reply"] for r in json.loads((folder / "results.json").read_text())]


def _eval(runner, folder):
    evaluate(TASK, runner, str(folder), count=COUNT, size=SIZE, progress=False)
    return _replies(folder)


def test_a_model_in_a_same_named_folder_never_gets_anothers_replies(twins, tmp_path):
    a, b = Counted(HFRunner(twins[0])), Counted(HFRunner(twins[1]))
    assert a.name == b.name == "hf:model" and a.identity != b.identity
    shared = tmp_path / "shared"
    a_replies = _eval(a, shared)
    a_results = (shared / "results.json").read_text()
    b_replies = _eval(b, shared)                      # same folder, same cache, same runner name
    fresh_b = _eval(Counted(HFRunner(twins[1])), tmp_path / "fresh")
    assert a_replies != fresh_b                       # the two checkpoints do answer differently
    assert b.calls == COUNT and b_replies == fresh_b  # B was asked itself and kept its own replies
    again = Counted(HFRunner(twins[0]))
    assert _eval(again, shared) == a_replies and again.calls == 0      # A resumes from its cached replies
    assert (shared / "results.json").read_text() == a_results


def test_a_copied_checkpoint_keeps_its_identity_and_its_cached_replies(twins, tmp_path):
    copy = shutil.copytree(twins[0], tmp_path / "elsewhere" / "renamed")
    first, moved = Counted(HFRunner(twins[0])), Counted(HFRunner(copy))
    assert moved.identity == first.identity and moved.name != first.name
    replies = _eval(first, tmp_path / "run")
    assert _eval(moved, tmp_path / "run") == replies and moved.calls == 0


def test_the_identity_names_contents_and_generation_settings(twins, tmp_path):
    copy = shutil.copytree(twins[0], tmp_path / "m")
    before = checkpoint_digest(copy)
    assert before == checkpoint_digest(twins[0]) != checkpoint_digest(twins[1])
    (copy / "config.json").write_text((copy / "config.json").read_text().replace("\n", "\n ", 1))
    assert checkpoint_digest(copy) != before          # a changed config is another model
    assert HFRunner(twins[0], max_new_tokens=8).identity != HFRunner(twins[0], max_new_tokens=9).identity


def test_files_are_hashed_once_per_path_size_and_time(tmp_path, monkeypatch):
    f = tmp_path / "model.safetensors"
    f.write_bytes(b"x" * (3 * digests._CHUNK + 5))  # several chunks
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda p, *a, **k: opened.append(p) or real_open(p, *a, **k))
    import hashlib

    digest = digests.file_digest(f)
    assert digest == hashlib.sha256(f.read_bytes()).hexdigest()
    assert digests.file_digest(f) == digest and opened.count(f) == 1
    f.write_bytes(b"y" * 10)
    assert digests.file_digest(f) != digest and opened.count(f) == 2


def test_runners_without_an_identity_are_told_apart_by_name_and_class(tmp_path):
    class Recorder2(Recorder):
        pass

    assert runner_identity(Recorder()) == "recorder (tests.runners.Recorder)"
    assert runner_identity(Recorder2()) != runner_identity(Recorder())
    assert runner_identity(RandomRunner(1)) != runner_identity(RandomRunner(2))
    assert runner_identity(OracleRunner()) == "oracle (evals.runners.OracleRunner)"
    first, same, other = Recorder(), Recorder(), Recorder2("no")
    for r in (first, same, other):
        evaluate(TASK, r, str(tmp_path), count=3, size=SIZE, progress=False)
    assert (len(first.requests), len(same.requests), len(other.requests)) == (3, 0, 3)
    assert set(_replies(tmp_path)) == {"no"}


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True, text=True)


@pytest.mark.parametrize("protocol,family", [("bongard-direct", "bongard"), ("perceptv", "perceptv"),
                                             ("kiva", "kiva"), ("elvis", "elvis")])
def test_a_protocol_of_another_family_is_refused_in_one_line(tmp_path, protocol, family):
    r = _cli("eval", "shapes/*", "--model", "oracle", "--protocol", protocol, "--out", str(tmp_path / "o"))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("procvis: error: ")
    assert f"--protocol {protocol!r} is for {family} tasks, not 'shapes/" in lines[0]
    assert lines[0].endswith("protocols for shapes: direct")
    assert not (tmp_path / "o").exists()


def test_the_protocol_is_refused_before_the_model_loads(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{}")         # loading this checkpoint would fail with a traceback
    r = _cli("eval", "kiva/*", "--model", str(broken), "--judge", str(broken), "--protocol", "perceptv-1shot",
             "--out", str(tmp_path / "o"))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr[-2000:]
    assert "--protocol 'perceptv-1shot' is for perceptv tasks, not 'kiva/" in lines[0]
    assert lines[0].endswith("protocols for kiva: direct, kiva, kiva-stitched")
    assert not (tmp_path / "o").exists()
