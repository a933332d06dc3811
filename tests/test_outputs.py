"""Dataset outputs: readable by datasets.load_dataset, deterministic, resumable after kill -9 (the Hub
layout of ``--format hf`` has its own tests in test_hub_dataset.py)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import datasets
import pytest

from engine.errors import OutputError, UserError
from engine.outputs import _sha256, generate, verify
from tests.selection import slow_except

PATTERN = "shapes/*"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("fmt", ["parquet", "imagefolder"])
def test_load_dataset_reads_the_output_with_no_custom_code(tmp_path, fmt):
    out = tmp_path / fmt
    m = generate(PATTERN, str(out), seed=3, count=5, size=40, fmt=fmt, shard_size=2, progress=False)
    ds = datasets.load_dataset(str(out), split="train", cache_dir=str(tmp_path / "cache"))
    assert len(ds) == m["total"] == 5 * len(m["tasks"])
    assert {"id", "task", "seed", "index", "question", "answer", "answer_type", "meta", "images"} <= set(ds.features)
    assert isinstance(ds.features["images"].feature, datasets.Image)
    rows = {r["id"]: r for r in ds}
    pair = rows["shapes/same_shape:3:4"]
    assert pair["num_panels"] == 2 and len(pair["images"]) == 2 and pair["images"][0].size == (40, 40)
    assert pair["answer"] in ("yes", "no") and json.loads(pair["options"]) == ["yes", "no"]
    assert json.loads(rows["shapes/colours:3:1"]["options"]) == []
    assert json.loads(rows["shapes/count/star:3:0"]["meta"])["params"] == {"shape": "star"}
    assert verify(str(out)) == []


def test_workers_and_reruns_give_identical_files(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    generate(PATTERN, str(a), seed=5, count=6, size=32, shard_size=4, progress=False)
    generate(PATTERN, str(b), seed=5, count=6, size=32, shard_size=4, workers=2, progress=False)
    assert _files(a) == _files(b)
    before = _files(a)
    generate(PATTERN, str(a), seed=5, count=6, size=32, shard_size=4, progress=False)
    assert _files(a) == before


def test_parquet_footers_keep_statistics_of_short_columns_only(tmp_path):
    # min/max of the image bytes put two whole PNGs in every row group's footer (a sixth of a
    # 10-sample ELVIS shard); those of the metadata and question, long texts
    import pyarrow.parquet as pq

    generate("shapes/colours", str(tmp_path / "p"), count=3, size=32, progress=False)
    generate("shapes/colours", str(tmp_path / "h"), count=3, size=32, fmt="hf", progress=False)
    for f in [*(tmp_path / "p").rglob("*.parquet"), *(tmp_path / "h").rglob("*.parquet")]:
        meta = pq.ParquetFile(f).metadata
        stats = {meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i).is_stats_set
                 for i in range(meta.num_columns)}
        assert stats["index"] and not any(on for name, on in stats.items()
                                           if name.startswith(("image", "meta", "question"))), (f, stats)
        assert b"\x89PNG" not in f.read_bytes()[-meta.serialized_size - 8:]


def _python_prints(script: str, *args) -> list[str]:
    """The words ``script`` prints, run by a fresh interpreter from the repository (it must
    exit 0)."""
    run = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True, timeout=300,
                         cwd=Path(__file__).resolve().parents[1], env={**os.environ, "PYTHONPATH": "."})
    assert run.returncode == 0, run.stderr[-800:]
    return run.stdout.split()


def test_a_parent_with_workers_leaves_torch_to_them(tmp_path):
    # the workers load torch side by side when a job draws with it; a parent that loaded it
    # first started them about a second later
    script = tmp_path / "run.py"
    script.write_text("import sys\nfrom engine.outputs import generate\nif __name__ == '__main__':\n"
                      "    generate('shapes/count/*', sys.argv[1], count=3, size=32, workers=2, shard_size=2, progress=False)\n"
                      "    print('TORCH' if 'torch._C' in sys.modules else 'LIGHT')\n")
    run = subprocess.run([sys.executable, str(script), str(tmp_path / "out")], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[1], env={**os.environ, "PYTHONPATH": "."}, timeout=300)
    assert run.returncode == 0, run.stderr[-800:]
    assert run.stdout.split() == ["LIGHT"] and verify(str(tmp_path / "out")) == []


def test_a_worker_drawing_batched_tasks_never_loads_torch(tmp_path):
    # importing torch was about 2.7 s of each worker's start on two cores; batched tasks are
    # rendered from their numpy columns, and a job drawing with torch gives it the worker's threads
    script = ("import os, sys\nfrom engine import outputs\noutputs._init_worker(1, os.getppid(), 1 << 30)\n"
              "task = 'elvis/closure/feature_circle/rel-color+shape_irr-size_g1'\n"
              "outputs.write_shard(sys.argv[1], outputs.RunConfig(task, 0, 4, 32, 'parquet', 4), task, 0)\n"
              "print('torch' in sys.modules)\n"
              "outputs.write_shard(sys.argv[1], outputs.RunConfig('shapes/same_shape', 0, 2, 32, 'parquet', 2), "
              "'shapes/same_shape', 0)\nimport torch\nprint(torch.get_num_threads())\n")
    assert _python_prints(script, tmp_path / "out") == ["False", "1"]


def test_only_processes_procvis_owns_have_their_collector_tuned(tmp_path, monkeypatch):
    # a library call leaves the caller's garbage collector alone; the command line freezes
    # what outlives each job while it runs and restores the collector after; the workers
    # freeze for good. The files are the same either way.
    import gc

    from engine import outputs
    from engine.cli import main

    frozen, real = [], gc.freeze
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1) or real())
    gc.unfreeze()              # the caller starts with nothing frozen (some hosts freeze at start-up)
    run = dict(count=2, size=32, workers=1, progress=False)
    generate("elvis/closure/feature_*", str(tmp_path / "library"), **run)
    assert not frozen and gc.get_freeze_count() == 0 and not outputs._OWN_HEAP
    cli = ["generate", "elvis/closure/feature_*", "--count", "2", "--size", "32", "--workers", "1", "--quiet"]
    assert main(cli + ["--out", str(tmp_path / "cli")]) == 0
    assert frozen and gc.get_freeze_count() == 0 and not outputs._OWN_HEAP and gc.isenabled()
    files = [json.loads((tmp_path / d / "manifest.json").read_text())["files"] for d in ("library", "cli")]
    assert files[0] == files[1]
    # a caller that froze objects itself keeps them frozen, and the run freezes nothing more
    real()
    try:
        before, frozen[:] = gc.get_freeze_count(), []
        assert main(cli + ["--out", str(tmp_path / "cli2")]) == 0
        assert not frozen and 0 < gc.get_freeze_count() <= before and not outputs._OWN_HEAP  # some freed since
    finally:
        gc.unfreeze()
    # a worker's collector runs only between its jobs
    script = "import gc, os, sys\nfrom engine import outputs\noutputs._init_worker(1, os.getppid(), 1 << 30)\n" \
             "print(outputs._OWN_HEAP, gc.isenabled())\n" \
             "outputs.write_shard(sys.argv[1], outputs.RunConfig('shapes/colours', 0, 2, 16, 'parquet', 4), " \
             "'shapes/colours', 0)\nprint(gc.isenabled(), gc.get_freeze_count() > 0)\n"
    assert _python_prints(script, tmp_path / "worker") == ["True", "True", "False", "True"]


@pytest.mark.parametrize("pattern", ["elvis/closure/feature_*", "shapes/[cs][oi]*"])
@pytest.mark.parametrize("fmt", ["imagefolder", "parquet"])
def test_shards_drawn_together_are_the_shards_written_one_at_a_time(tmp_path, pattern, fmt):
    """Shards of batched tasks sharing a batch key are drawn and rendered together (one
    bundle across tasks, rendered from the drawn columns), and a Parquet shard holds rows of
    several tasks; every file is the one writing that shard alone gives."""
    from engine import outputs
    a, b = tmp_path / "a", tmp_path / "b"
    m = generate(pattern, str(a), seed=2, count=5, size=48, shard_size=2 if fmt == "imagefolder" else 7, fmt=fmt,
                 progress=False)
    cfg = outputs.RunConfig(**m["config"])
    shards = list(outputs.Layout(cfg, m["tasks"]).shards())
    bundles = list(outputs._bundled([(str(a), cfg, s) for s in shards]))
    if pattern.startswith("elvis") and fmt == "imagefolder":
        assert len(bundles) < len(m["tasks"]) and max(len(s) for _, _, s in bundles) > 3       # across tasks
    if fmt == "parquet":
        assert len(shards) == -(-len(m["tasks"]) * 5 // 7) and any(len(s.segments) > 1 for s in shards)
    for s in shards:
        outputs._write_shard(str(b), cfg, s)
    drawn, alone = _files(a), _files(b)
    assert alone and all(drawn[f] == data for f, data in alone.items())


def test_a_worker_writes_parquet_without_loading_pandas(tmp_path):
    """pyarrow imported pandas on a worker's first array (0.7 s of its start); a process procvis
    owns writes without it, and pandas still loads where a user asks for it afterwards."""
    script = ("import glob, sys\nfrom engine import outputs\noutputs.own_heap()\n"
              "outputs.generate('shapes/colours', sys.argv[1], count=2, size=16, workers=1, progress=False)\n"
              "print('pandas' in sys.modules)\nimport pyarrow.parquet as pq\n"
              "print(type(pq.read_table(glob.glob(sys.argv[1] + '/data/*/*.parquet')[0]).to_pandas()).__name__)\n")
    assert _python_prints(script, tmp_path / "out") == ["False", "DataFrame"]


def test_a_parquet_folder_of_the_old_layout_is_refused_by_name(tmp_path):
    """Format version 1 wrote a Parquet folder per task: verify, the --data reader and a resume
    name the version rather than calling every file a stray."""
    from engine import outputs
    from evals.datafolder import DataFolder
    out = tmp_path / "old"
    generate("shapes/count/*", str(out), seed=1, count=2, size=24, shard_size=3, progress=False)
    m = json.loads((out / "manifest.json").read_text())
    m["format_version"] = 1
    (out / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(OutputError, match="format version 1 .parquet.; this procvis .* reads version 2"):
        verify(str(out))
    with pytest.raises(UserError, match="format version 1"):
        DataFolder(out)
    with pytest.raises(UserError, match="shard 9 of 'shapes': the run has 1 there"):
        outputs.write_shard(str(tmp_path / "w"), outputs.RunConfig(**m["config"]), "shapes/count/circle", 9)


def test_a_shard_installed_but_never_journaled_is_resumed_over(tmp_path):
    """A worker may install shards that the parent never records (it was stopped first): the
    folder already says whose they are, so the same command resumes and gives the files of an
    uninterrupted run."""
    from engine import outputs
    a, b = tmp_path / "a", tmp_path / "b"
    args = dict(seed=3, count=4, size=48, shard_size=2, fmt="imagefolder", progress=False)
    m = generate("shapes/count/*", str(a), **args)
    cfg = outputs.RunConfig(**m["config"])
    outputs.write_shard(str(b), cfg, m["tasks"][1], 1)          # what a stopped run leaves
    assert (b / outputs.RUN_FILE).is_file()
    generate("shapes/count/*", str(b), **args)
    assert _files(b) == _files(a)


def test_workers_keep_within_a_numba_thread_cap_the_user_set(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")              # the spawned workers read it at start
    monkeypatch.setattr(os, "cpu_count", lambda: 8)           # so each worker's share is 4 threads
    m = generate("shapes/count/star", str(tmp_path / "a"), seed=1, count=4, size=32, shard_size=2, workers=2,
                 progress=False)
    assert m["total"] == 4 and verify(str(tmp_path / "a")) == []


def test_auto_workers_start_no_pool_for_small_runs_and_every_core_for_large_ones(monkeypatch):
    from engine.outputs import AUTO_SAMPLES, auto_workers
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert auto_workers(AUTO_SAMPLES - 1, 224) == 1
    assert auto_workers(AUTO_SAMPLES, 224) == 3
    monkeypatch.setenv("PROCVIS_MEMORY_BUDGET", "600M")                # the memory budget still caps it
    assert auto_workers(AUTO_SAMPLES, 2048) < 3


def test_auto_is_the_default_and_a_bad_worker_count_names_what_is_allowed(tmp_path, capsys):
    from engine.cli import main
    from engine.errors import UserError
    m = generate("shapes/count/star", str(tmp_path / "a"), seed=1, count=3, size=32, progress=False)
    assert m["total"] == 3
    with pytest.raises(UserError, match="positive integer or 'auto'"):
        generate("shapes/count/star", str(tmp_path / "b"), count=3, size=32, workers="many", progress=False)
    assert main(["generate", "shapes/count/star", "--out", str(tmp_path / "c"), "--workers", "0"]) == 2
    assert "--workers must be 'auto' or a positive integer, got '0'" in capsys.readouterr().err
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


# hf: shards of about 10 KB (a few rows of 96 px shapes), so that there are many to kill between
KILL_FORMATS = {"parquet": ["--shard-size", "3"], "hf": ["--format", "hf", "--shard-mb", "0.01", "--shard-size", "2"]}


@pytest.mark.parametrize("fmt", slow_except(list(KILL_FORMATS), ["parquet"]))
def test_resume_after_kill_9_ends_with_the_files_of_an_uninterrupted_run(tmp_path, fmt):
    args = ["-m", "engine.cli", "generate", PATTERN, "--seed", "2", "--count", "60", "--size", "96", "--quiet",
            *KILL_FORMATS[fmt]]
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    subprocess.run([sys.executable, *args, "--out", str(clean)], check=True, capture_output=True)
    assert len(list(clean.rglob("*.parquet"))) >= 20
    proc = subprocess.Popen([sys.executable, *args, "--out", str(killed)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and len(list(killed.rglob("[st]*-*.parquet"))) < 5:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = list(killed.rglob("[st]*-*.parquet"))
    assert 5 <= len(partial) < 200 and not (killed / "manifest.json").exists(), "kill landed too late to test"
    subprocess.run([sys.executable, *args, "--out", str(killed)], check=True, capture_output=True)
    assert _files(killed) == _files(clean)
    assert not list(killed.rglob(".tmp-*"))


def test_other_settings_in_the_same_folder_are_refused_and_nothing_is_touched(tmp_path):
    out = tmp_path / "d"
    generate(PATTERN, str(out), seed=1, count=2, size=24, progress=False)
    before = _files(out)
    with pytest.raises(OutputError, match="count: 2 there, 3 asked"):
        generate(PATTERN, str(out), seed=1, count=3, size=24, progress=False)
    with pytest.raises(ValueError, match="no registered task matches"):
        generate("nothing/*", str(out), seed=1, count=2, size=24, progress=False)
    assert _files(out) == before


JIGSAW = "jigsaw/connection"


@pytest.mark.parametrize("fmt", ["parquet", "imagefolder"])
def test_family_settings_are_the_runs_identity(tmp_path, monkeypatch, fmt):
    """Another image folder for the same command is refused, and the settings are written in
    run.json, the manifest, the dataset card and every row."""
    out = tmp_path / "d"
    small = {"jigsaw.images": "generated:12", "jigsaw.image_size": 48}
    m = generate(JIGSAW, str(out), count=3, size=24, fmt=fmt, progress=False, settings=small)
    assert m["config"]["settings"] == {"jigsaw.embedder": "", "jigsaw.image_size": 48, "jigsaw.images": "generated:12"}
    assert json.loads((out / "run.json").read_text())["settings"] == m["config"]["settings"]
    assert "--set jigsaw.images=generated:12" in (out / "README.md").read_text()
    ds = datasets.load_dataset(str(out), split="train", cache_dir=str(tmp_path / "cache"))
    assert all(json.loads(r["meta"])["settings"]["images"] == "generated:12" for r in ds)
    before = _files(out)
    with pytest.raises(OutputError, match="jigsaw.images: 'generated:12' there, 'generated:20' asked"):
        generate(JIGSAW, str(out), count=3, size=24, fmt=fmt, progress=False,
                 settings={**small, "jigsaw.images": "generated:20"})
    monkeypatch.setenv("PROCVIS_JIGSAW_IMAGES", "generated:20")     # the environment is a setting too
    with pytest.raises(OutputError, match="other settings"):
        generate(JIGSAW, str(out), count=3, size=24, fmt=fmt, progress=False, settings={"jigsaw.image_size": 48})
    assert _files(out) == before


@pytest.mark.parametrize("fmt", ["parquet", "imagefolder"])
def test_verify_finds_a_folder_mixed_from_two_image_sources(tmp_path, fmt):
    """Shards written under other settings are found from their rows, even when the manifest's
    checksums were rewritten over them (what a resume with another folder used to do)."""
    a, b = tmp_path / "a", tmp_path / "b"
    for out, n in ((a, 12), (b, 20)):
        generate(JIGSAW, str(out), count=4, size=24, shard_size=2, fmt=fmt, progress=False,
                 settings={"jigsaw.images": f"generated:{n}", "jigsaw.image_size": 48})
    assert verify(str(a)) == [] and verify(str(b)) == []
    shard = "data/jigsaw/shard-00001.parquet" if fmt == "parquet" else \
        "images/jigsaw__connection/shard-00001"
    import shutil

    shutil.rmtree(a / shard) if (a / shard).is_dir() else (a / shard).unlink()
    shutil.copytree(b / shard, a / shard) if (b / shard).is_dir() else shutil.copy(b / shard, a / shard)
    manifest = json.loads((a / "manifest.json").read_text())
    manifest["files"] = {f: _sha256(a / f) for f in manifest["files"]}
    manifest["sizes"] = {f: (a / f).stat().st_size for f in manifest["files"]}
    (a / "manifest.json").write_text(json.dumps(manifest))
    bad = verify(str(a))
    assert bad == [shard if fmt == "parquet" else shard + "/metadata.jsonl"]


def test_unwritable_output_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("keep me")
    with pytest.raises(OutputError, match="cannot create output directory"):
        generate(PATTERN, str(blocker / "sub"), count=1, progress=False)
    assert blocker.read_text() == "keep me"


def test_progress_bar_goes_to_stderr(tmp_path):
    r = subprocess.run([sys.executable, "-m", "engine.cli", "generate", "shapes/colours", "--out", str(tmp_path / "p"),
                        "--count", "3", "--size", "24"], capture_output=True, text=True, check=True)
    assert "generate" in r.stderr and "3/3" in r.stderr
    assert "wrote 3 samples" in r.stdout


def test_png_encoding_is_lossless_and_standard():
    import io

    import numpy as np
    from PIL import Image

    import torch

    from engine.outputs import encode_png

    for shape in ((3, 1, 1), (3, 37, 53), (3, 224, 224)):
        x = torch.randint(0, 256, shape, dtype=torch.uint8, generator=torch.Generator().manual_seed(shape[1]))
        img = Image.open(io.BytesIO(encode_png(x)))
        assert img.mode == "RGB" and img.size == (shape[2], shape[1])
        assert np.array_equal(np.asarray(img), x.permute(1, 2, 0).numpy())


def test_generate_to_a_url_is_made_locally_then_uploaded(tmp_path, monkeypatch):
    fsspec = pytest.importorskip("fsspec")
    from engine.cli import main

    monkeypatch.setenv("PROCVIS_CACHE", str(tmp_path / "cache"))
    args = ["generate", "shapes/colours", "--count", "3", "--size", "32", "--quiet", "--out"]
    assert main(args + ["memory://bucket/ds"]) == 0
    assert main(args + [str(tmp_path / "local")]) == 0
    fs = fsspec.filesystem("memory")
    remote = {p[len("/bucket/ds/"):]: fs.cat(p) for p in fs.find("/bucket/ds")}
    local = {str(p.relative_to(tmp_path / "local")): p.read_bytes() for p in (tmp_path / "local").rglob("*")
             if p.is_file() and ".lock" not in p.name}
    data = {k for k in local if k.startswith("data/")}
    assert data and {k: remote[k] for k in data} == {k: local[k] for k in data}
    assert json.loads(remote["manifest.json"])["files"] == json.loads(local["manifest.json"])["files"]
    assert main(args + ["memory://bucket/ds"]) == 0                # the same command again: resumed, nothing new
    assert main(args[:3] + ["7"] + args[4:] + ["memory://bucket/ds"]) == 0     # other settings: staged apart
    assert json.loads(fs.cat("/bucket/ds/manifest.json"))["config"]["count"] == 7
    fs.rm("/bucket", recursive=True)
    assert main(args + [f"file://{tmp_path / 'viaurl'}"]) == 0              # a file:// URL is a local path
    assert (tmp_path / "viaurl" / "manifest.json").is_file()


def test_a_url_without_a_driver_is_refused_before_drawing(tmp_path, capsys, monkeypatch):
    pytest.importorskip("fsspec")
    from engine.cli import main

    monkeypatch.setenv("PROCVIS_CACHE", str(tmp_path / "cache"))
    assert main(["generate", "shapes/colours", "--count", "2", "--size", "32", "--out", "nosuchscheme://b/ds"]) == 2
    assert "no file system driver" in capsys.readouterr().err
    assert not (tmp_path / "cache" / "staging").exists()


def test_encode_png_refuses_an_image_that_is_not_three_planes_of_bytes():
    """A [4,H,W] image would otherwise lose its alpha plane silently, a float one its values."""
    import re

    import torch

    from engine.outputs import encode_png

    for shape in ((4, 8, 8), (1, 8, 8), (8, 8)):
        with pytest.raises(ValueError, match=r"\[3,H,W\].*" + re.escape(str(list(shape)))):
            encode_png(torch.zeros(shape, dtype=torch.uint8))
    for dtype in (torch.float32, torch.int16):
        with pytest.raises(ValueError, match=r"encode_png takes a \[3,H,W\] uint8 image, not " + str(dtype)):
            encode_png(torch.zeros((3, 8, 8), dtype=dtype))
