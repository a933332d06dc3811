"""``procvis generate --format hf``: a folder the Hub accepts as it is and that
``datasets.load_dataset(DIR, CONFIG, split=...)`` reads offline with no custom code: a config
per benchmark, the papers' splits, a dataset card with its YAML header, shards sized by
bytes; deterministic, checksummed and resumable like the other formats."""
import json
import shutil
from pathlib import Path

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest
import torch
import yaml

from engine import cli, hub, outputs
from engine.errors import OutputError, UserError
from engine.outputs import generate, render_samples, verify
from engine.registry import get_task, list_tasks

MIXED = "[ps]*/co*[sl]"            # perceptv/count..., perceptv_fixed/counting_locations, shapes/colours
MIXED_CONFIGS = {"perceptv", "perceptv_fixed", "shapes"}
ELVIS = "*/c*triangle*g1"          # two ELVIS closure tasks
RUN = dict(seed=3, count=25, size=32, progress=False)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _header(folder: Path) -> dict:
    text = (folder / "README.md").read_text()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def _load(folder: Path, config: str, split: str, cache: Path, monkeypatch) -> datasets.Dataset:
    """The split as ``datasets`` reads it with the network off."""
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    return datasets.load_dataset(str(folder), config, split=split, cache_dir=str(cache))


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hub") / "mixed"
    generate(MIXED, str(out), fmt="hf", **RUN)
    return out


@pytest.fixture(scope="module")
def elvis(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hub") / "elvis"
    generate(ELVIS, str(out), fmt="hf", seed=1, count=10, size=32, progress=False)
    return out


def _splits(header: dict) -> dict[str, list[str]]:
    return {c["config_name"]: [f["split"] for f in c["data_files"]] for c in header["configs"]}


def test_every_config_and_split_loads_offline_with_the_rows_of_a_fresh_render(mixed, tmp_path, monkeypatch):
    header = _header(mixed)
    splits = _splits(header)
    assert set(splits) == MIXED_CONFIGS | {"perceptv_by_size", "perceptv_fixed_by_size"}
    assert splits["shapes"] == ["test"] and splits["perceptv"] == ["test"]
    assert splits["perceptv_by_size"] == ["size_01", "size_02", "size_03"]     # 25 per task: sizes 1, 2 and 3
    tasks = list_tasks(MIXED)
    seen = set()
    for config, names in splits.items():
        root = config.removesuffix("_by_size")
        mine = [t for t in tasks if t.split("/")[0] == root]
        for split in names:
            ds = _load(mixed, config, split, tmp_path / "cache", monkeypatch)
            assert list(ds.features) == list(hub.features(root))
            assert isinstance(ds.features["images"].feature, datasets.Image)
            want = _expected(root, mine, split, 25)
            assert [(r["task"], r["index"]) for r in ds.select_columns(["task", "index"])] == want
            seen |= {(config, t, i) for t, i in want}
            _equal_to_a_fresh_render(ds.select(range(0, len(ds), 7)))
    assert len({(c, t, i) for c, t, i in seen if not c.endswith("_by_size")}) == 25 * len(tasks)


def _expected(root: str, tasks: list[str], split: str, count: int) -> list[tuple[str, int]]:
    """``(task, index)`` of a split's rows in file order: Percept-V's ``test`` holds its
    problem sizes one after the other (one file each), each task by task."""
    if not root.startswith("perceptv"):
        return [(t, i) for t in tasks for i in range(count)]
    sizes = range(1, 21) if split == "test" else [int(split.removeprefix("size_"))]
    return [(t, i) for s in sizes for t in tasks for i in range(count) if i // 10 % 20 + 1 == s]


def _equal_to_a_fresh_render(rows) -> None:
    """Every row's fields and decoded images equal those of the sample drawn afresh."""
    for r in rows:
        s = get_task(r["task"]).samples(r["seed"], [r["index"]])[0]
        rec = s.record()
        assert (r["id"], r["question"], r["answer"], r["answer_type"], r["num_panels"]) == \
            (rec["id"], rec["question"], rec["answer"], rec["answer_type"], rec["num_panels"])
        assert json.loads(r["meta"]) == json.loads(json.dumps(rec["meta"]))
        fresh = render_samples([s], 32)[0]
        got = [torch.from_numpy(np.array(im.convert("RGB"))).permute(2, 0, 1) for im in r["images"]]
        assert len(got) == len(fresh) and all(torch.equal(a, b) for a, b in zip(got, fresh))
        if "problem_size" in r:
            assert r["problem_size"] == s.meta["size"] == r["index"] // 10 % 20 + 1


def test_elvis_has_the_papers_train_and_test_splits(elvis, tmp_path, monkeypatch):
    assert _splits(_header(elvis)) == {"elvis": ["train", "test"]}
    train = _load(elvis, "elvis", "train", tmp_path / "cache", monkeypatch)
    test = _load(elvis, "elvis", "test", tmp_path / "cache", monkeypatch)
    tasks = list_tasks(ELVIS)
    assert len(tasks) == 2
    # count 10: two images per class to learn the rule from (indices 0..3), the rest to classify
    assert [(r["task"], r["index"]) for r in train] == [(t, i) for t in tasks for i in range(4)]
    assert [(r["task"], r["index"]) for r in test] == [(t, i) for t in tasks for i in range(4, 10)]
    labels = [json.loads(r["meta"])["label"] for r in train]
    assert labels.count(1) == labels.count(0) == 4
    _equal_to_a_fresh_render(test.select([0, 5]))
    assert "image-classification" in _header(elvis)["task_categories"]


def test_the_card_header_parses_and_lists_every_config_of_every_benchmark():
    tasks = list_tasks()
    parts = hub.plan(tasks, 200)
    header = yaml.safe_load(hub.card_header(parts, "apache-2.0").split("---\n")[1])
    roots = {t.split("/")[0] for t in tasks}
    assert {"elvis", "perceptv", "kiva", "bongard", "jigsaw"} <= roots
    splits = _splits(header)
    assert set(splits) == roots | {f"{r}_by_size" for r in roots if r.startswith("perceptv")}
    assert splits["elvis"] == ["train", "test"] and splits["kiva"] == ["test"] and splits["jigsaw"] == ["test"]
    assert splits["perceptv_by_size"] == [f"size_{s:02d}" for s in range(1, 21)]
    assert {d["config_name"] for d in header["dataset_info"]} == set(splits)
    assert header["license"] == "apache-2.0" and header["pretty_name"]
    assert {"visual-question-answering", "image-text-to-text"} <= set(header["task_categories"])
    assert "procedural-generation" in header["tags"] and header["size_categories"] == ["100K<n<1M"]
    assert all(c.get("default") is None for c in header["configs"])          # several configs: name one
    for c in header["configs"]:
        for f in c["data_files"]:
            root = c["config_name"].removesuffix("_by_size")
            assert f["path"].startswith(f"data/{root}/{f['split'] if f['split'].startswith(('train', 'test')) else ''}")
    body = hub.card_body(parts, "procvis generate '*' --format hf", "0.1.0", 0, "note")
    for key in hub.PAPERS:
        assert hub.bibtex(key) in body
    assert "## Citation" in body and "## License" in body


def test_the_folder_card_says_how_it_was_made_and_cites_its_papers(mixed):
    text = (mixed / "README.md").read_text()
    header = _header(mixed)
    assert header["license"] == "apache-2.0" and header["size_categories"] == ["n<1K"]
    assert "procvis generate '[ps]*/co*[sl]' --format hf --seed 3 --count 25 --size 32 --out DIR" in text
    assert hub.bibtex("perceptv") in text and hub.bibtex("elvis") not in text and "author" in hub.bibtex("perceptv")
    assert json.loads((mixed / "run.json").read_text())["shard_bytes"] == hub.SHARD_BYTES


def test_a_small_run_writes_one_file_per_split_and_bytes_decide_the_shards(mixed, tmp_path):
    data = sorted(p.relative_to(mixed).as_posix() for p in (mixed / "data").rglob("*"))
    assert data == ["data/perceptv", "data/perceptv/test-size_01-00000.parquet",
                    "data/perceptv/test-size_02-00000.parquet", "data/perceptv/test-size_03-00000.parquet",
                    "data/perceptv_fixed", "data/perceptv_fixed/test-size_01-00000.parquet",
                    "data/perceptv_fixed/test-size_02-00000.parquet", "data/perceptv_fixed/test-size_03-00000.parquet",
                    "data/shapes", "data/shapes/test-00000.parquet"]
    meta = pq.ParquetFile(mixed / "data/shapes/test-00000.parquet").metadata
    assert meta.num_rows == 25 and meta.num_row_groups == 1
    small = tmp_path / "small"
    generate(MIXED, str(small), fmt="hf", shard_bytes=8192, shard_size=4, **RUN)
    shards = sorted(p.name for p in (small / "data/shapes").iterdir())
    cfg = outputs.RunConfig(**json.loads((small / "manifest.json").read_text())["config"])
    per = next(p.rows_per_shard for p in outputs._hub_plan(cfg, list_tasks(MIXED)) if p.config == "shapes")
    assert shards == [f"test-{k:05d}.parquet" for k in range(-(-25 // per))] and len(shards) > 1
    rows = [pq.ParquetFile(small / "data/shapes" / s).metadata for s in shards]
    assert [m.num_rows for m in rows] == [per] * (len(shards) - 1) + [25 - per * (len(shards) - 1)]
    assert all(m.row_group(g).num_rows <= 4 for m in rows for g in range(m.num_row_groups))
    sizes = [(small / "data/shapes" / s).stat().st_size for s in shards]
    assert max(sizes[:-1]) < 2 * 8192 + 8192             # near the target (plus a file's own metadata)
    assert verify(str(small)) == []


def test_the_demo_writes_a_few_files_instead_of_one_per_task():
    """``procvis demo`` draws 4 samples of every task: one Parquet file per task before
    (3,546), one per config and split (and Percept-V size) in the Hub layout."""
    tasks = list_tasks()
    cfg = outputs.RunConfig(pattern="*", seed=0, count=4, size=224, format="hf", shard_size=100,
                            shard_bytes=hub.SHARD_BYTES)
    parts = outputs._hub_plan(cfg, tasks)
    files = sum(p.shard_count() for p in parts)
    assert len(tasks) > 3000 and files == len(parts) < 20
    assert all(p.shard_count() == 1 for p in parts)


def test_workers_and_reruns_give_identical_files_and_damage_is_repaired(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    run = dict(fmt="hf", seed=5, count=12, size=32, shard_bytes=6000, shard_size=3, progress=False)
    generate(MIXED, str(a), **run)
    generate(MIXED, str(b), workers=2, **run)
    assert _files(a) == _files(b)
    clean = _files(a)
    shards = sorted((a / "data/shapes").iterdir())
    assert len(shards) >= 2
    shards[0].unlink()
    data = bytearray(shards[1].read_bytes())
    data[len(data) // 2] ^= 0xFF
    shards[1].write_bytes(bytes(data))
    assert set(verify(str(a))) == {f"data/shapes/{shards[0].name}", f"data/shapes/{shards[1].name}"}
    capsys.readouterr()
    generate(MIXED, str(a), **run)
    err = capsys.readouterr().err.splitlines()
    assert err == [f"procvis: repairing data/shapes/{shards[0].name}: missing",
                   f"procvis: repairing data/shapes/{shards[1].name}: it does not match its checksum in the manifest"]
    assert _files(a) == clean and verify(str(a)) == []


def test_an_interrupted_run_resumes_to_the_files_of_an_uninterrupted_one(tmp_path, monkeypatch):
    run = dict(fmt="hf", seed=2, count=12, size=32, shard_bytes=6000, shard_size=3, progress=False)
    clean, cut = tmp_path / "clean", tmp_path / "cut"
    generate(MIXED, str(clean), **run)
    real, calls = outputs._HubShards.add, []

    def add(self, result):
        calls.append(result[0])
        if len(calls) > 9:
            raise KeyboardInterrupt
        return real(self, result)

    monkeypatch.setattr(outputs._HubShards, "add", add)
    with pytest.raises(KeyboardInterrupt):
        generate(MIXED, str(cut), **run)
    monkeypatch.undo()
    assert (cut / ".procvis-journal.jsonl").is_file() and not (cut / "manifest.json").exists()
    assert not [p for p in cut.rglob("*") if p.name.startswith(".tmp-")]
    generate(MIXED, str(cut), **run)
    assert _files(cut) == _files(clean)


def test_strays_other_settings_and_bad_options_are_one_line_errors(mixed, tmp_path, capsys):
    out = tmp_path / "d"
    shutil.copytree(mixed, out)
    (out / "data/shapes/notes.parquet").write_bytes(b"mine")
    assert "data/shapes/notes.parquet" in verify(str(out))
    with pytest.raises(OutputError, match="'data/shapes/notes.parquet' in .* procvis did not write it"):
        generate(MIXED, str(out), fmt="hf", **RUN)
    (out / "data/shapes/notes.parquet").unlink()
    with pytest.raises(OutputError, match="shard_bytes: 268435456 there, 1048576 asked"):
        generate(MIXED, str(out), fmt="hf", shard_bytes=2 ** 20, **RUN)
    with pytest.raises(UserError, match=r"shard_bytes=4096 \(--shard-mb\): .* for format 'hf' only"):
        generate(MIXED, str(tmp_path / "p"), shard_bytes=4096, **RUN)
    assert cli.main(["generate", MIXED, "--out", str(tmp_path / "q"), "--shard-mb", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "for format 'hf' only" in err
    assert verify(str(out)) == []


def test_every_row_is_found_in_its_row_group_and_wrong_rows_are_found_under_a_rewritten_manifest(tmp_path):
    out = tmp_path / "d"
    generate(MIXED, str(out), fmt="hf", seed=5, count=12, size=32, shard_bytes=6000, shard_size=3, progress=False)
    parts = outputs.hub_plan(str(out))
    for task in list_tasks(MIXED):
        for i in range(12):
            rel, group = outputs.hub_locate(str(out), task, i, parts)
            ids = pq.ParquetFile(out / rel).read_row_group(group, columns=["id"]).column("id").to_pylist()
            assert f"{task}:5:{i}" in ids and len(ids) <= 3
    with pytest.raises(OutputError, match="does not hold sample 12 of 'shapes/colours'"):
        outputs.hub_locate(str(out), "shapes/colours", 12)
    shard = out / "data/shapes/test-00000.parquet"
    table = pq.read_table(shard)
    pq.write_table(table.slice(0, table.num_rows - 1), shard)
    manifest = json.loads((out / "manifest.json").read_text())
    rel = "data/shapes/test-00000.parquet"
    manifest["files"][rel], manifest["sizes"][rel] = outputs._sha256(shard), shard.stat().st_size
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert outputs.check(str(out)) == {rel: f"holds {table.num_rows - 1} rows, not the {table.num_rows} rows of its "
                                            "place in shapes/test"}


class _InProcess:
    """An executor (the contract :class:`engine.ray_jobs.RayExecutor` keeps) that runs every
    job here, in order, and counts them."""

    def __init__(self):
        self.jobs = 0

    def run_jobs(self, jobs, workers, done):
        for job in jobs:
            self.jobs += 1
            done(outputs._worker(job))

    def run_ordered(self, jobs, workers, done):
        for job in jobs:
            self.jobs += 1
            done(outputs._hub_worker(job))


@pytest.mark.parametrize("fmt", ["hf", "parquet"])
def test_an_executor_makes_the_same_files_as_local_workers(tmp_path, fmt):
    run = dict(fmt=fmt, seed=6, count=5, size=24, shard_size=2, progress=False)
    executor = _InProcess()
    generate("shapes/c*", str(tmp_path / "a"), executor=executor, **run)
    generate("shapes/c*", str(tmp_path / "b"), **run)
    assert executor.jobs >= 3 and _files(tmp_path / "a") == _files(tmp_path / "b")


def test_rows_per_shard_are_recorded_and_read_back_not_measured_again(tmp_path, monkeypatch):
    out = tmp_path / "d"
    run = dict(fmt="hf", seed=3, count=8, size=32, shard_bytes=4000, shard_size=2, progress=False)
    generate("shapes/colours", str(out), **run)
    layout = json.loads((out / "manifest.json").read_text())["layout"]
    assert layout and all(e["rows_per_shard"] >= 1 for e in layout)
    assert not (out / outputs.PLAN_FILE).exists()

    def measured(*_):
        raise AssertionError("the rows per shard were measured again")
    monkeypatch.setattr(outputs, "_row_bytes", measured)      # e.g. another zlib would measure otherwise
    assert verify(str(out)) == []
    assert outputs.hub_locate(str(out), "shapes/colours", 7)[0].startswith("data/shapes/")
    before = {p: p.read_bytes() for p in out.rglob("*.parquet")}
    generate("shapes/colours", str(out), **run)                # the same command again
    assert {p: p.read_bytes() for p in out.rglob("*.parquet")} == before
