"""Exports: ``procvis export lmms-eval`` writes a task folder and ``procvis export vlmevalkit``
a TSV dataset with its scoring script; both send the prompts and panels ``procvis eval``
sends and score replies with procvis's own readers (:mod:`engine.readers`), which import
neither torch nor the 3D stack. The slow tests install each framework into its own virtual
environment, run an exported task with a fixed-reply model and get ``procvis eval``'s score.
"""
import base64
import csv
import importlib.util
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from engine import readers
from engine.cli import main
from engine.errors import UserError
from engine.protocol import Protocol, Turn
from engine.registry import families, get_protocol, get_task
from engine.replies import is_correct
from engine.sample import Sample
from evals.export import _one_turn, single_turn, slug
from evals.harness import evaluate
from tests.runners import Recorder

ROOT = Path(__file__).resolve().parents[1]
PATTERN, COUNT, SEED, SIZE = "shapes/[cs][oa]*", 4, 0, 32      # shapes/colours, shapes/count/*, shapes/same_shape
HEAVY = ("torch", "open3d", "pyrender", "transformers", "trimesh")
REPLIES = ["yes", "no", "7", "Answer: 9", "[yellow]", "[red, blue]", "(B)", "B", "", "positive", "COUNT:1",
           "The number of figures is even. The number of figures is odd.", "Judgment: A\nError Position:\nError Type:"]


def _samples() -> list[tuple[Sample, str]]:
    """Samples of every family's reader (and ELVIS's protocol reader), each with the protocol
    it is read under; KiVA's is built by hand (drawing its 3D objects takes long)."""
    out = [(get_task(t).sample(3, i), "direct") for t in ("shapes/same_shape", "shapes/count/star", "shapes/colours",
                                                         "perceptv/change_colour", "perceptv/colours_present",
                                                         "perceptv_fixed/circle_right_triangle",
                                                         "bongard/classic/number/even_vs_odd") for i in range(2)]
    out.append((get_task("jigsaw/anomaly").sample(3, 0), "direct"))
    elvis = get_task("elvis/closure/big_circle/rel-color+size_irr-shape_g1_ql").sample(3, 0)
    out += [(elvis, "direct"), (elvis, "elvis")]
    kiva = Sample(task="kiva/colour/blue", seed=0, index=0, panels=[], question="Which? (A) (B) (C) (D)", answer="(B)",
                  answer_type="fixed", options=["(A)", "(B)", "(C)", "(D)"], meta={})
    return out + [(kiva, "direct")]


def _eval_score(reply: str, sample: Sample, protocol: str) -> dict:
    """How ``procvis eval`` scores ``reply`` as the scored turn of ``sample`` (harness code path)."""
    task = get_task(sample.task)
    parsed = get_protocol(protocol).parse(reply, sample, task)
    return {"correct": is_correct(parsed, sample.answer_text, sample.answer_type),
            "format_error": parsed.format_error, "parsed": parsed.value, "strict": parsed.strict}


def test_light_readers_score_as_eval_without_torch_or_3d(tmp_path):
    cases = _samples()
    recs = [json.loads(json.dumps(readers.record(s, p))) for s, p in cases]       # as a file holds them
    assert all(set(r) == set(readers.RECORD_KEYS) for r in recs)
    expected = [[_eval_score(r, s, p) for r in REPLIES + [s.reply_text]] for s, p in cases]
    flat = [e for row in expected for e in row]
    assert any(e["correct"] for e in flat) and any(e["format_error"] for e in flat)
    (tmp_path / "cases.json").write_text(json.dumps({"records": recs, "replies": REPLIES}))
    # numba made unimportable: a harness environment holds the readers' needs, not the drawing's
    code = ("import json, sys\nsys.modules['numba'] = None\nfrom engine import readers, registry\n"
            "d = json.load(open(sys.argv[1]))\n"
            "out = [[readers.score(r, rec) for r in d['replies'] + [rec['gold_text'] or rec['gold']]] "
            "for rec in d['records']]\n"
            f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
            "print(json.dumps({'scores': out, 'heavy': heavy, 'families': registry.families()}))")
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path / "cases.json")], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["heavy"] == []
    assert got["families"] == families()                  # every plug-in registers without the drawing's kernels
    assert got["scores"] == expected


def test_without_numba_a_compiled_kernel_says_what_is_missing():
    code = ("import sys\nsys.modules['numba'] = None\nimport numpy as np\nfrom kernels.errors import SetupError\n"
            "from kernels.outline_stats import mean_nearest\ntry:\n    mean_nearest(np.zeros((3, 2)))\n"
            "except SetupError as e:\n    print(e)\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "mean_nearest is compiled with numba, which cannot be imported here (import of numba halted" in run.stdout
    assert "pip install numba" in run.stdout


def test_a_task_not_listed_where_scored_is_read_by_its_family_reader():
    sample = get_task("bongard/classic/number/even_vs_odd").sample(0, 0)
    rec = {**readers.record(sample), "task": "bongard/real/gone/problem", "settings": {"problems": "/no/such/folder"}}
    assert readers.score(sample.reply_text, rec)["correct"] and not readers.score("circles", rec)["correct"]
    assert readers.score("", rec)["format_error"]


def test_a_record_missing_a_field_is_a_one_line_error():
    rec = readers.record(get_task("shapes/same_shape").sample(0, 0))
    del rec["gold"]
    with pytest.raises(UserError, match="missing field 'gold'"):
        readers.score("yes", rec)
    with pytest.raises(UserError, match="not a JSON object"):
        readers.loads("[1, 2]")


def _fixed_eval(tmp_path, reply: str) -> tuple[dict, Recorder]:
    """``procvis eval``'s per-task summary and per-sample rows for a fixed-reply runner."""
    runner = Recorder(reply)
    summary = evaluate(PATTERN, runner, str(tmp_path / "eval"), count=COUNT, seed=SEED, size=SIZE, progress=False)
    rows = {r["id"]: r for r in json.loads((tmp_path / "eval" / "results.json").read_text())}
    return {t: s["accuracy"] for t, s in summary.items()}, rows, runner


def _png_array(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def lmms_folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("lmms") / "task"
    assert main(["export", "lmms-eval", PATTERN, "--out", str(out), "--count", str(COUNT), "--seed", str(SEED),
                 "--size", str(SIZE), "--quiet"]) == 0
    return out


def test_lmms_eval_folder_holds_what_eval_sends_and_scores_alike(lmms_folder, tmp_path):
    accuracy, rows, runner = _fixed_eval(tmp_path, "yes")
    sent = {r.id.split("#")[0]: r for r in runner.requests}
    yamls = sorted(lmms_folder.glob("procvis_*.yaml"))
    assert [p.stem for p in yamls] == sorted(f"procvis_{slug(t)}" for t in accuracy)
    text = yamls[0].read_text()
    for line in ("dataset_path: json", "doc_to_visual: !function utils.doc_to_visual", "test_split: test",
                 "process_results: !function utils.process_results", "  - metric: accuracy", 'tag: "procvis"'):
        assert line in text
    utils = _load(lmms_folder / "utils.py", "procvis_export_utils")
    got = {}
    for data in sorted((lmms_folder / "data").glob("*.jsonl")):
        docs = [json.loads(line) for line in data.read_text().splitlines()]
        task = docs[0]["task"]
        assert f'test: "{data.resolve()}"' in (lmms_folder / f"procvis_{data.stem}.yaml").read_text()
        for doc in docs:
            req = sent[doc["id"]]
            assert utils.doc_to_text(doc) == req.prompt and doc["answer"] == rows[doc["id"]]["gold"]
            images = utils.doc_to_visual(doc)
            assert len(images) == len(req.images)
            assert all((np.asarray(im) == t.permute(1, 2, 0).numpy()).all() for im, t in zip(images, req.images))
            scored = utils.process_results(doc, ["yes"])
            assert scored["accuracy"] == float(rows[doc["id"]]["correct"])
        got[task] = sum(utils.process_results(d, ["yes"])["accuracy"] for d in docs) / len(docs)
    assert got == accuracy and 0 < sum(got.values()) < len(got)


def _read_tsv(path: Path) -> list[dict]:
    csv.field_size_limit(sys.maxsize)
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_vlmevalkit_tsv_holds_what_eval_sends_and_its_script_scores_alike(tmp_path):
    out = tmp_path / "vk"
    assert main(["export", "vlmevalkit", PATTERN, "--out", str(out), "--count", str(COUNT), "--seed", str(SEED),
                 "--size", str(SIZE), "--name", "procvis_shapes", "--quiet"]) == 0
    accuracy, rows, runner = _fixed_eval(tmp_path, "yes")
    sent = {r.id.split("#")[0]: r for r in runner.requests}
    table = _read_tsv(out / "procvis_shapes.tsv")
    assert list(table[0])[:4] == ["index", "image", "question", "answer"] and "A" not in table[0]
    assert [int(r["index"]) for r in table] == list(range(len(rows)))
    for r in table:
        req = sent[r["id"]]
        images = json.loads(r["image"]) if r["image"].startswith("[") else [r["image"]]
        assert len(images) == len(req.images) and r["question"] == req.prompt and r["answer"] == rows[r["id"]]["gold"]
        for b64, t in zip(images, req.images):
            assert (_png_array(base64.b64decode(b64)) == t.permute(1, 2, 0).numpy()).all()
        assert (json.loads(r["options"]) if r["options"] else None) == req.options
    preds = tmp_path / "model_procvis_shapes.tsv"
    with open(preds, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(["index", "question", "prediction"])
        w.writerows([r["index"], r["question"], "yes"] for r in table)
    run = subprocess.run([sys.executable, str(out / "score.py"), str(preds)], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert {t: v["accuracy"] for t, v in summary.items() if t != "overall"} == accuracy
    saved = json.loads((tmp_path / "model_procvis_shapes_procvis.json").read_text())
    assert {r["id"]: r["correct"] for r in saved["rows"]} == {i: r["correct"] for i, r in rows.items()}


def test_multi_turn_protocols_and_bad_options_are_refused(tmp_path, capsys):
    assert main(["export", "lmms-eval", "perceptv/change_colour", "--protocol", "perceptv-1shot", "--count", "1",
                 "--size", "32", "--out", str(tmp_path / "a"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "'perceptv-1shot' asks several turns" in err and "perceptv" in err and "\n" not in err
    assert main(["export", "lm-eval", "shapes/colours", "--out", str(tmp_path / "b")]) == 2
    assert "'lm-eval'" in capsys.readouterr().err
    assert main(["export", "vlmevalkit", "shapes/colours", "--name", "1x", "--out", str(tmp_path / "c")]) == 2
    assert "--name '1x'" in capsys.readouterr().err


def test_a_sample_whose_protocol_asks_again_is_refused():
    class Again(Protocol):
        name = "again"

        def first(self, sample, images):
            return Turn("q", images)

        def next(self, sample, images, turns):
            return Turn("more", images) if len(turns) < 2 else None

    with pytest.raises(UserError, match="'again' asks several turns.*direct"):
        _one_turn(Again(), get_task("shapes/colours").sample(0, 0), [])
    sample = get_task("shapes/colours").sample(0, 0)
    panels = [np.zeros((3, 4, 4), np.uint8) for _ in sample.panels]
    assert _one_turn(get_protocol("direct"), sample, panels).prompt == sample.question


def test_an_export_replaces_its_own_earlier_export_and_no_other_folder(tmp_path, capsys):
    out = tmp_path / "lm"
    args = ["export", "lmms-eval", "shapes/count/*", "--out", str(out), "--count", "1", "--size", "16", "--quiet"]
    assert main(args) == 0 and len(list(out.glob("*.yaml"))) == 5
    (out / "images" / "notes.png").write_bytes(b"x")                  # not the export's: kept
    assert main(args[:2] + ["shapes/colours"] + args[3:]) == 0
    assert [p.name for p in out.glob("*.yaml")] == ["procvis_shapes_colours.yaml"]
    assert not list((out / "data").glob("*count*")) and not list((out / "images").glob("*count*"))
    assert (out / "images" / "notes.png").read_bytes() == b"x"
    vlm = tmp_path / "vlm"
    vargs = ["export", "vlmevalkit", "shapes/colours", "--out", str(vlm), "--count", "1", "--size", "16", "--quiet"]
    assert main(vargs) == 0
    (vlm / "images" / "procvis").mkdir(parents=True)                   # VLMEvalKit's decoded panels of the TSV
    (vlm / "images" / "procvis" / "0.jpg").write_bytes(b"old")
    (vlm / "other.tsv").write_text("another dataset")
    assert main(vargs) == 0
    assert not (vlm / "images" / "procvis").exists() and (vlm / "other.tsv").read_text() == "another dataset"
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    assert main(args[:3] + ["--out", str(other)]) == 2
    assert "is not empty" in capsys.readouterr().err and (other / "notes.txt").exists()


def test_the_single_turn_protocols_are_the_ones_the_readme_names():
    assert single_turn() == ["bongard-direct", "direct", "perceptv"]
    assert single_turn({"x": type("X", (Protocol,), {"next": lambda *a: None})}) == []
    assert single_turn({"y": type("Y", (Protocol,), {"next": lambda *a: None, "steps": lambda self: 1})}) == ["y"]


# ---------------------------------------------------------------- the frameworks themselves (slow)

LMMS_EVAL = "lmms-eval==0.7.3"
PINS = "torch==2.13.0\nfilelock<4\n"   # the CPU torch; lmms-eval 0.7.3 imports filelock._api, gone in filelock 4


def _pip(python: Path, *args: str, timeout: int = 900) -> None:
    """``pip install`` into ``python``'s environment under :data:`PINS` (a skip naming the
    packages when the registry cannot provide them)."""
    pins = python.parents[1] / "pins.txt"
    pins.write_text(PINS)
    run = subprocess.run([str(python), "-m", "pip", "install", "-q", "-c", str(pins), *args], capture_output=True,
                         text=True, timeout=timeout)
    if run.returncode != 0:
        pytest.skip(f"cannot install {' '.join(args)} from the package registry: {run.stderr.strip()[-300:]}")


def _venv(path: Path, env_python: str, install) -> Path:
    """The python of a framework's own virtual environment: ``$env_python`` when set (an
    environment made before), else a new one at ``path`` that ``install(python)`` fills.
    The registry's torchvision is a CUDA build that fails to load beside the CPU torch, so it
    is removed (neither framework's image-and-text path here uses it)."""
    if os.environ.get(env_python):
        return Path(os.environ[env_python])
    t0 = time.time()
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=120)
    python = path / "bin" / "python"
    install(python)
    subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "torchvision"], capture_output=True, timeout=120)
    print(f"{path.name}: installed in {time.time() - t0:.0f} s")
    return python


@pytest.mark.slow
def test_lmms_eval_runs_the_export_and_scores_as_eval(lmms_folder, tmp_path):
    python = _venv(tmp_path / "lmms-eval", "PROCVIS_LMMS_EVAL_PYTHON", lambda py: _pip(py, LMMS_EVAL))
    accuracy, rows, _ = _fixed_eval(tmp_path, "yes")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    t0 = time.time()
    run = subprocess.run([str(python), "-m", "lmms_eval", "--model", "dummy", "--model_args", "response=yes",
                          "--include_path", str(lmms_folder), "--tasks", "procvis", "--batch_size", "1",
                          "--output_path", str(tmp_path / "out"), "--log_samples"], capture_output=True, text=True,
                         timeout=900, env=env, cwd=tmp_path)
    print(f"lmms-eval ran in {time.time() - t0:.0f} s")
    assert run.returncode == 0 and "Error during evaluation" not in run.stdout + run.stderr, run.stdout[-3000:]
    result = json.loads(next((tmp_path / "out").rglob("*_results.json")).read_text())["results"]
    got = {k: v["accuracy,none"] for k, v in result.items()}
    assert got == {f"procvis_{slug(t)}": a for t, a in accuracy.items()}
    for log in (tmp_path / "out").rglob("*_samples_*.jsonl"):
        for line in log.read_text().splitlines():
            s = json.loads(line)
            assert s["filtered_resps"] in ("yes", ["yes"])
            assert s["accuracy"] == float(rows[_doc_id(lmms_folder, log, s)]["correct"])


def _doc_id(folder: Path, log: Path, sample: dict) -> str:
    """The procvis sample id of an lmms-eval samples-log entry (by task and doc_id)."""
    task = log.stem.split("_samples_", 1)[1].removeprefix("procvis_")
    return json.loads((folder / "data" / f"{task}.jsonl").read_text().splitlines()[sample["doc_id"]])["id"]


# VLMEvalKit is not published on the package registry (pip: "No matching distribution found
# for vlmeval"); it installs from a source checkout, named here.
VLMEVALKIT_SRC = "PROCVIS_VLMEVALKIT_SRC"

# Its dataset package imports torchvision for datasets other than this one (video, documents);
# the registry's torchvision is a CUDA build that cannot load beside the CPU torch, so the test
# environment gets this importable stand-in instead (any use returns another stand-in).
TORCHVISION_STANDIN = '''"""A stand-in for torchvision (procvis test environment): importable, never used."""
import importlib.abc
import importlib.machinery
import sys
import types


class _Absent:
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Absent()

    def __call__(self, *args, **kwargs):
        return _Absent()


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Absent()


class _Submodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        return importlib.machinery.ModuleSpec(name, self, is_package=True) if name.startswith("torchvision.") else None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__getattr__, module.__path__ = __getattr__, []
        return module

    def exec_module(self, module):
        pass


sys.meta_path.append(_Submodules())
__version__ = "0.0.0"          # what transformers reads: older than any it would use
'''

# VLMEvalKit's own inference loop (infer_data_job) on the exported dataset, with a model that
# gives one fixed reply; prints the dataset class, the prediction file and the messages sent.
VLMEVALKIT_DRIVER = '''import json, os, sys
from vlmeval.dataset import build_dataset
from vlmeval.inference import infer_data_job
from vlmeval.smp import get_pred_file_path


class FixedReply:
    is_api = False

    def __init__(self, reply):
        self.reply, self.messages = reply, []

    def set_dump_image(self, dump_image):
        self.dump_image = dump_image

    def generate(self, message, dataset=None):
        self.messages.append(message)
        return self.reply


name, reply, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
dataset = build_dataset(name)
model = FixedReply(reply)
infer_data_job(model, work_dir=work, model_name="fixed", dataset=dataset)
print(json.dumps({"class": type(dataset).__name__, "messages": model.messages,
                  "predictions": get_pred_file_path(work, "fixed", name, use_env_format=True)}))
'''


def _install_vlmevalkit(python: Path) -> None:
    src = Path(os.environ[VLMEVALKIT_SRC])
    _pip(python, "-r", str(src / "requirements.txt"), "rouge-score")      # its metrics import rouge_score
    _pip(python, "--no-deps", "-e", str(src))                             # its packages need the source tree
    subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "torchvision"], capture_output=True, timeout=120)
    site = next((python.parents[1] / "lib").glob("python*/site-packages"))
    (site / "torchvision").mkdir(exist_ok=True)
    (site / "torchvision" / "__init__.py").write_text(TORCHVISION_STANDIN)


@pytest.mark.slow
def test_vlmevalkit_runs_the_export_and_scores_as_eval(tmp_path):
    if not (os.environ.get(VLMEVALKIT_SRC) or os.environ.get("PROCVIS_VLMEVALKIT_PYTHON")):
        pytest.skip(f"VLMEvalKit is not on the package registry: set {VLMEVALKIT_SRC} to a VLMEvalKit source "
                    "checkout (or PROCVIS_VLMEVALKIT_PYTHON to an environment that has it)")
    python = _venv(tmp_path / "vlmevalkit", "PROCVIS_VLMEVALKIT_PYTHON", _install_vlmevalkit)
    out = tmp_path / "data"
    assert main(["export", "vlmevalkit", PATTERN, "--out", str(out), "--count", str(COUNT), "--seed", str(SEED),
                 "--size", str(SIZE), "--name", "procvis_shapes", "--quiet"]) == 0
    accuracy, rows, runner = _fixed_eval(tmp_path, "7")        # a number: the prediction sheet must keep it text
    assert 0 < sum(accuracy.values()) < len(accuracy)
    (tmp_path / "drive.py").write_text(VLMEVALKIT_DRIVER)
    t0 = time.time()
    run = subprocess.run([str(python), str(tmp_path / "drive.py"), "procvis_shapes", "7", str(tmp_path / "work")],
                         capture_output=True, text=True, timeout=900, cwd=tmp_path,
                         env={**os.environ, "LMUData": str(out), "HF_HUB_OFFLINE": "1"})
    print(f"VLMEvalKit inference ran in {time.time() - t0:.0f} s")
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["class"] == "CustomVQADataset"                 # loaded as is: no A/B columns, prompt unchanged
    assert [m[-1]["value"] for m in got["messages"]] == [r.prompt for r in runner.requests]
    for message, req in zip(got["messages"], runner.requests):
        paths = [part["value"] for part in message if part["type"] == "image"]
        assert [np.asarray(Image.open(p).convert("RGB")).tolist() for p in paths] == \
            [t.permute(1, 2, 0).numpy().tolist() for t in req.images]
    score = subprocess.run([str(python), str(out / "score.py"), got["predictions"]], capture_output=True, text=True,
                           timeout=300)
    assert score.returncode == 0, score.stderr[-3000:]
    summary = json.loads(score.stdout)
    assert {t: v["accuracy"] for t, v in summary.items() if t != "overall"} == accuracy
