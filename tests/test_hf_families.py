"""Every vision-language family the Hugging Face runner supports, end to end through
``procvis eval`` on a tiny random checkpoint built here (evals/tiny_families.py), with the
same replies at batch sizes 1 and 3; and the one-line refusals of checkpoints it cannot run
(missing, unsupported, remote code without --trust-remote-code), none of which reads stdin."""
import builtins
import importlib.util
import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from engine.cli import main
from evals import hf_runner
from evals.hf_runner import TESTED_FAMILIES, HFRunner, default_chat_template
from evals.tiny_families import FAMILIES, build_family

PATTERN = "jigsaw/[ac]*"      # anomaly: 1 image a request, connection: 2 (a run batches each task's samples)
SMALL = ["--set", "jigsaw.images=generated:30", "--set", "jigsaw.image_size=96"]
NEEDS = {"smolvlm": "num2words"}     # SmolVLM's processor refuses to construct without it


def _stand_in(monkeypatch, family) -> None:
    """Where ``family``'s package in :data:`NEEDS` is absent, a stand-in for it: SmolVLM's
    processor calls num2words only to word a video's frame count, never for images."""
    if family in NEEDS and importlib.util.find_spec(NEEDS[family]) is None:
        import transformers.models.smolvlm.processing_smolvlm as smolvlm

        monkeypatch.setattr(smolvlm, "num2words", str)


def _eval(model, out, *extra) -> int:
    """``procvis eval`` of 3 samples per task of :data:`PATTERN`; returns its exit status."""
    return main(["eval", PATTERN, "--model", str(model), "--out", str(out), "--count", "3", "--size", "32",
                 "--max-new-tokens", "6", "--quiet", *SMALL, *extra])


def _replies(out) -> dict:
    """The replies of the run in ``out``, by task and sample id."""
    return {(r["task"], r["id"]): r["reply"] for r in json.loads((out / "results.json").read_text())}


def test_the_families_named_as_tested_are_the_ones_tested():
    assert set(TESTED_FAMILIES) == set(FAMILIES)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_runs_through_procvis_eval_alike_at_batch_sizes_1_and_3(family, tmp_path, monkeypatch):
    _stand_in(monkeypatch, family)
    asked = []
    monkeypatch.setattr(builtins, "input", lambda *a: asked.append(a) or "n")
    ckpt = build_family(family, tmp_path / "ckpt")
    runs = {}
    for batch in (1, 3):
        assert _eval(ckpt, tmp_path / f"b{batch}", "--batch-size", str(batch)) == 0
        runs[batch] = _replies(tmp_path / f"b{batch}")
    assert len(runs[1]) == 6 and runs[1] == runs[3]
    assert any(r.strip() for r in runs[1].values())       # the model said something (untied random head)
    assert not asked


def test_a_checkpoint_without_a_chat_template_gets_the_default(tmp_path):
    ckpt = build_family("paligemma", tmp_path / "pg")         # like the real PaliGemma checkpoints: none
    assert not (ckpt / "chat_template.jinja").exists()
    runner = HFRunner(ckpt, max_new_tokens=3)
    assert runner.processor.chat_template == default_chat_template("<image>")
    from engine.protocol import Request

    first = Request(id="a", task="t", images=[], prompt="How many?", answer_type="number")
    follow = Request(id="a#1", task="t", images=[], prompt="Sure?", answer_type="number",
                     history=[("How many?", [object(), object()], "3")])
    assert runner.prompt(first) == "How many?"
    assert runner.prompt(follow) == "<image><image>How many?\n3\nSure?"


VIDEO_FAMILIES = ("smolvlm", "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "internvl")     # processors with a video part


@pytest.mark.parametrize("family", VIDEO_FAMILIES)
def test_a_checkpoint_saved_without_a_video_processor_loads_where_torchvision_is_installed(family, tmp_path,
                                                                                          monkeypatch):
    _stand_in(monkeypatch, family)
    ckpt = build_family(family, tmp_path / "ckpt")       # saved without a video processor, as every tiny one is
    find_spec = importlib.util.find_spec
    seen = SimpleNamespace(util=SimpleNamespace(find_spec=lambda name, *a: object() if name == "torchvision"
                                                else find_spec(name, *a)))
    monkeypatch.setattr(hf_runner, "importlib", seen)    # the runner finds torchvision; transformers still does not
    runner = HFRunner(ckpt, max_new_tokens=3)            # AutoProcessor would look for a video processor config
    assert not hasattr(runner.processor, "video_processor") and runner.processor.image_processor is not None
    assert not hf_runner.ships_video_processor(ckpt)
    config = json.loads((ckpt / "processor_config.json").read_text())
    (ckpt / "processor_config.json").write_text(json.dumps({**config, "video_processor": {}}))
    assert hf_runner.ships_video_processor(ckpt)


def _write_config(folder, config, weights=True):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    if weights:
        (folder / "model.safetensors").write_bytes(b"")
    return folder


def _refused(capsys, model, *extra) -> str:
    """The one line ``procvis eval --model MODEL`` is refused with (exit status 2)."""
    assert _eval(model, model.parent / "out", *extra) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_checkpoints_that_cannot_run_are_refused_in_one_line(tmp_path, capsys):
    missing = tmp_path / "nothing" / "here"
    err = _refused(capsys, missing)
    assert str(missing) in err and "no such folder" in err
    (tmp_path / "empty").mkdir()
    assert "holds no config.json" in _refused(capsys, tmp_path / "empty")
    err = _refused(capsys, _write_config(tmp_path / "noweights", {"model_type": "llava"}, weights=False))
    assert "no weights" in err and "model.safetensors" in err
    err = _refused(capsys, _write_config(tmp_path / "unknown", {"model_type": "no_such_vlm"}))
    assert "'no_such_vlm'" in err and "unknown to the installed transformers" in err
    err = _refused(capsys, _write_config(tmp_path / "textonly", {"model_type": "bert"}))
    assert "'bert'" in err and "not a vision-language model" in err and "qwen2_vl" in err
    err = _refused(capsys, _write_config(tmp_path / "broken", {"model_type": "llava"}))    # empty weights file
    assert "'broken'" in err or "broken" in err and "cannot load the checkpoint" in err


REMOTE_CONFIG = """from pathlib import Path
from transformers import LlavaConfig
Path({marker!r}).write_text("ran")
class TinyRemoteConfig(LlavaConfig):
    model_type = "tiny_remote_vlm"
"""
REMOTE_MODEL = """from transformers import LlavaForConditionalGeneration
from .configuration_tiny_remote import TinyRemoteConfig
class TinyRemoteModel(LlavaForConditionalGeneration):
    config_class = TinyRemoteConfig
"""


def _remote_checkpoint(tmp_path):
    """A LLaVA checkpoint whose config and model classes are Python files in its folder; the
    config's file writes ``tmp_path/ran`` when executed. Returns (folder, marker path)."""
    ckpt, marker = build_family("llava", tmp_path / "remote"), tmp_path / "ran"
    config = json.loads((ckpt / "config.json").read_text())
    config.update(model_type="tiny_remote_vlm", architectures=["TinyRemoteModel"],
                  auto_map={"AutoConfig": "configuration_tiny_remote.TinyRemoteConfig",
                            "AutoModelForImageTextToText": "modeling_tiny_remote.TinyRemoteModel"})
    (ckpt / "config.json").write_text(json.dumps(config))
    (ckpt / "configuration_tiny_remote.py").write_text(REMOTE_CONFIG.format(marker=str(marker)))
    (ckpt / "modeling_tiny_remote.py").write_text(REMOTE_MODEL)
    return ckpt, marker


def test_remote_code_runs_only_with_the_flag_and_nothing_prompts(tmp_path, monkeypatch):
    ckpt, marker = _remote_checkpoint(tmp_path)
    import transformers.dynamic_module_utils as dynamic

    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))      # the subprocess's
    monkeypatch.setattr(dynamic, "HF_MODULES_CACHE", str(tmp_path / "modules"))
    cmd = [sys.executable, "-m", "engine.cli", "eval", PATTERN, "--model", str(ckpt), "--count", "1", "--size", "32",
           "--max-new-tokens", "3", "--quiet", *SMALL]
    r = subprocess.run([*cmd, "--out", str(tmp_path / "a")], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr[-2000:]
    assert "--trust-remote-code" in r.stderr and "configuration_tiny_remote.py" in r.stderr
    assert not marker.exists()                                # nothing from the folder was executed
    asked = []
    monkeypatch.setattr(builtins, "input", lambda *a: asked.append(a) or "n")
    assert main([*cmd[3:], "--out", str(tmp_path / "b"), "--trust-remote-code"]) == 0
    assert marker.exists() and not asked
    assert len(_replies(tmp_path / "b")) == 2
    assert '"trust_remote_code": true' in (tmp_path / "b" / "eval_run.json").read_text()


def test_a_missing_package_of_a_family_is_named_in_one_line(tmp_path, capsys, monkeypatch):
    if importlib.util.find_spec("num2words") is not None:
        pytest.skip("num2words is installed: SmolVLM runs in the family test")
    with monkeypatch.context() as patched:              # only to write the checkpoint
        _stand_in(patched, "smolvlm")
        ckpt = build_family("smolvlm", tmp_path / "smolvlm")
    capsys.readouterr()                                 # the build's progress bars
    err = _refused(capsys, ckpt)
    assert "num2words" in err and "pip install num2words" in err
