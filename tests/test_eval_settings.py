"""Generation settings of the Hugging Face runner (reply length, sampling with a seed, dtype,
device map), Hub ids resolved from the local cache only, and the family defaults of the
reply length."""
import importlib.util
import json
import shutil

import pytest
import torch

from engine.cli import main
from engine.errors import UserError
from engine.outputs import render_samples
from engine.protocol import Request
from engine.registry import get_task
from evals.hf_runner import MAX_NEW_TOKENS, HFRunner, default_max_new_tokens
from evals.tiny_model import build_tiny_model

TASK, SIZE = "shapes/same_shape", 32


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="module")
def requests():
    samples = get_task(TASK).samples(0, range(4))
    return [Request(id=f"{s.id}#0", task=s.task, images=ims, prompt=s.question, answer_type=s.answer_type,
                    options=s.options, gold=s.answer_text) for s, ims in zip(samples, render_samples(samples, SIZE))]


def test_greedy_identity_is_unchanged_and_sampling_settings_join_it(tiny):
    greedy = json.loads(HFRunner(tiny).identity[3:])
    assert set(greedy) == {"checkpoint", "dtype", "max_new_tokens", "do_sample"}
    assert greedy["dtype"] == "torch.float32" and greedy["max_new_tokens"] == 32 and greedy["do_sample"] is False
    sampled = json.loads(HFRunner(tiny, temperature=0.7, top_p=0.9, seed=3, max_new_tokens=8).identity[3:])
    assert sampled | {"checkpoint": None} == {"checkpoint": None, "dtype": "torch.float32", "max_new_tokens": 8,
                                              "do_sample": True, "temperature": 0.7, "top_p": 0.9, "seed": 3}
    assert sampled["checkpoint"] == greedy["checkpoint"]


def test_sampling_is_reproducible_under_its_seed_and_leaves_the_global_rng_alone(tiny, requests):
    def run(seed, batch_size=4):
        return HFRunner(tiny, temperature=1.5, max_new_tokens=12, seed=seed, batch_size=batch_size).generate(requests)

    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    first = run(0)
    assert torch.rand(1) == before                       # the global generator was not consumed
    assert run(0) == first                               # same seed, same replies
    assert run(1) != first                               # another seed samples otherwise
    assert first != HFRunner(tiny, max_new_tokens=12).generate(requests)     # and it is not greedy


def test_max_new_tokens_bounds_the_reply(tiny, requests):
    runner = HFRunner(tiny, max_new_tokens=2)
    generate, new_tokens = runner.model.generate, []

    def counted(**kwargs):
        out = generate(**kwargs)
        new_tokens.append(out.shape[1] - kwargs["input_ids"].shape[1])
        return out

    runner.model.generate = counted
    short = runner.generate(requests)
    assert new_tokens and max(new_tokens) <= 2
    assert max(map(len, HFRunner(tiny, max_new_tokens=20).generate(requests))) > max(map(len, short))


def test_dtype_loads_the_weights_in_it(tiny, requests):
    runner = HFRunner(tiny, dtype="bfloat16", max_new_tokens=4)
    assert runner.model.dtype == torch.bfloat16
    assert json.loads(runner.identity[3:])["dtype"] == "torch.bfloat16"
    assert len(runner.generate(requests[:2])) == 2
    assert HFRunner(tiny, dtype="auto").model.dtype == torch.float32      # the checkpoint's own


@pytest.mark.parametrize("kwargs, words", [({"dtype": "float8"}, ["--dtype", "float8", "bfloat16"]),
                                           ({"max_new_tokens": 0}, ["--max-new-tokens"]),
                                           ({"temperature": -1.0}, ["--temperature"]),
                                           ({"top_p": 0.0}, ["--top-p"])])
def test_a_bad_setting_is_a_one_line_error(tiny, kwargs, words):
    with pytest.raises(UserError) as e:
        HFRunner(tiny, **kwargs)
    assert all(w in str(e.value) for w in words) and "\n" not in str(e.value)


def test_a_device_map_without_accelerate_says_so(tiny, monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "accelerate" else find_spec(name, *a))
    with pytest.raises(UserError, match="accelerate") as e:
        HFRunner(tiny, device_map="auto")
    assert "\n" not in str(e.value)


@pytest.mark.skipif(importlib.util.find_spec("accelerate") is None, reason="accelerate is not installed")
def test_a_device_map_places_the_model(tiny, requests):
    runner = HFRunner(tiny, device_map="cpu", max_new_tokens=4)
    assert runner.model.device.type == "cpu" and runner.settings["device_map"] == "cpu"
    assert runner.identity == HFRunner(tiny, max_new_tokens=4).identity      # placement is not what replies depend on
    assert runner.generate(requests[:2]) == HFRunner(tiny, max_new_tokens=4).generate(requests[:2])


def _cache_with(tmp_path, tiny, repo="org/tiny", commit="0123456789abcdef0123456789abcdef01234567"):
    """A Hub cache folder holding ``tiny`` as ``repo`` at ``commit`` (the cache's own layout)."""
    cache = tmp_path / "hub"
    entry = cache / f"models--{repo.replace('/', '--')}"
    shutil.copytree(tiny, entry / "snapshots" / commit)
    (entry / "refs").mkdir()
    (entry / "refs" / "main").write_text(commit)
    return cache, commit


def test_a_hub_id_loads_from_the_local_cache_only(tiny, tmp_path, monkeypatch, requests):
    cache, commit = _cache_with(tmp_path, tiny)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    runner = HFRunner("org/tiny", max_new_tokens=4)
    assert runner.source == {"id": "org/tiny", "revision": commit} and runner.name == "hf:org/tiny"
    assert runner.identity == HFRunner(tiny, max_new_tokens=4).identity         # the same contents
    assert runner.generate(requests[:1]) == HFRunner(tiny, max_new_tokens=4).generate(requests[:1])
    assert HFRunner(f"org/tiny@{commit}", max_new_tokens=4).source["revision"] == commit
    with pytest.raises(UserError) as e:
        HFRunner("org/absent")
    assert "'org/absent'" in str(e.value) and str(cache) in str(e.value) and "\n" not in str(e.value)


def test_the_command_refuses_an_absent_hub_id_and_bad_values_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    base = [TASK, "--out", str(tmp_path / "out"), "--count", "1", "--size", "32", "--quiet"]
    assert main(["eval", *base, "--model", "org/absent"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "org/absent" in err and "empty-cache" in err
    for bad in (["--temperature", "-1"], ["--top-p", "0"], ["--top-p", "1.5"], ["--dtype", "float8"],
                ["--max-new-tokens", "0"], ["--temperature", "nan"]):
        assert main(["eval", *base, "--model", "oracle", *bad]) == 2, bad
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and bad[0] in err, (bad, err)
    assert not (tmp_path / "out").exists()


def test_family_defaults_of_the_reply_length():
    assert MAX_NEW_TOKENS["kiva"] == 300
    assert default_max_new_tokens(["shapes"]) == MAX_NEW_TOKENS["shapes"]
    assert default_max_new_tokens(["shapes", "kiva", "perceptv"]) == 300
    assert default_max_new_tokens(["bongard", "kiva"]) == 512
    # Percept-V's longest gold answer (problem size 20, every domain) fits with room: 2 characters a token
    longest = max(len(s.reply_text) for t in _perceptv_tasks() for s in get_task(t).samples(0, range(190, 200)))
    assert longest / 2 * 1.5 <= MAX_NEW_TOKENS["perceptv"]


def _perceptv_tasks():
    from engine.registry import list_tasks

    return [t for t in list_tasks() if t.startswith("perceptv/")]


def test_the_command_passes_the_settings_and_records_them(tiny, tmp_path):
    out = tmp_path / "run"
    assert main(["eval", TASK, "--model", str(tiny), "--out", str(out), "--count", "2", "--size", "32", "--quiet",
                 "--temperature", "0.5", "--top-p", "0.8", "--seed", "4", "--dtype", "bfloat16"]) == 0
    gen = json.loads((out / "eval_run.json").read_text())["model"]["generation"]
    assert gen == {"dtype": "torch.bfloat16", "max_new_tokens": MAX_NEW_TOKENS["shapes"], "do_sample": True,
                   "temperature": 0.5, "top_p": 0.8, "seed": 4}
    out2 = tmp_path / "run2"
    assert main(["eval", TASK, "--model", str(tiny), "--out", str(out2), "--count", "2", "--size", "32", "--quiet",
                 "--max-new-tokens", "5"]) == 0
    run = json.loads((out2 / "eval_run.json").read_text())
    assert run["model"]["generation"] == {"dtype": "torch.float32", "max_new_tokens": 5, "do_sample": False}
    assert run["model"]["source"] == {"path": str(tiny.resolve())}
    assert "max_new_tokens 5" in (out2 / "summary.md").read_text()
