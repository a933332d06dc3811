"""The dataset-writing path under damage, strangers' files, other settings, signals, a second
writer, failures and broken caches: every case ends with the bytes of an uninterrupted run
or with a one-line error naming what is wrong, and files procvis did not write are left alone."""
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine import cli
from engine.errors import Interrupted, OutputError, UserError
from engine.outputs import _sha256, generate, verify

PATTERN = "shapes/c*"                       # two cheap tasks: shapes/colours and shapes/count/circle
RUN = dict(seed=4, count=4, size=32, shard_size=2, progress=False)
SHARD = {"parquet": "data/shapes/shard-00001.parquet", "imagefolder": "images/shapes__colours/shard-00001"}
FORMATS = ("parquet", "imagefolder")


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict[str, Path]:
    """An uninterrupted run of ``RUN`` in each format."""
    base = tmp_path_factory.mktemp("clean")
    for fmt in FORMATS:
        generate(PATTERN, str(base / fmt), fmt=fmt, **RUN)
    return {fmt: base / fmt for fmt in FORMATS}


def _copy(clean: dict, fmt: str, tmp_path: Path) -> Path:
    out = tmp_path / "d"
    shutil.copytree(clean[fmt], out)
    return out


def _one_line_error(argv: list[str], capsys) -> str:
    """The CLI's error line for ``argv`` (asserting exit 2 and a single line)."""
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("procvis: error: "), err
    return err


# ---------------------------------------------------------------- 1. repaired, never blessed

def _flip(p: Path) -> None:
    b = bytearray(p.read_bytes())
    b[len(b) // 2] ^= 0xFF
    p.write_bytes(bytes(b))


def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _edit_answer(p: Path) -> None:
    if p.suffix == ".parquet":
        import pyarrow.parquet as pq

        t = pq.read_table(p)
        answers = t.column("answer").to_pylist()
        answers[0] = answers[0] + "x"
        pq.write_table(t.set_column(t.schema.get_field_index("answer"), "answer", [answers]), p)
    else:
        rows = [json.loads(line) for line in p.read_text().splitlines()]
        rows[0]["answer"] += "x"
        p.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def _target(out: Path, fmt: str, what: str) -> Path:
    shard = out / SHARD[fmt]
    if fmt == "parquet":
        return shard
    return shard / "metadata.jsonl" if what == "edit" else sorted(shard.glob("*.png"))[0]


DAMAGE = {"flip": _flip, "truncate": _truncate, "delete": Path.unlink, "edit": _edit_answer}


@pytest.mark.parametrize("what", DAMAGE)
@pytest.mark.parametrize("fmt", FORMATS)
def test_damage_is_reported_then_repaired_to_the_bytes_of_a_clean_run(clean, tmp_path, capsys, fmt, what):
    out = _copy(clean, fmt, tmp_path)
    target = _target(out, fmt, what)
    DAMAGE[what](target)
    assert verify(str(out)) == [target.relative_to(out).as_posix()]
    generate(PATTERN, str(out), fmt=fmt, **RUN)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"procvis: repairing {SHARD[fmt]}: "), lines
    assert _files(out) == _files(clean[fmt]) and verify(str(out)) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_edited_card_and_a_whole_missing_shard_are_rewritten(clean, tmp_path, capsys, fmt):
    out = _copy(clean, fmt, tmp_path)
    (out / "README.md").write_text("my notes\n")
    shutil.rmtree(out / SHARD[fmt]) if fmt == "imagefolder" else (out / SHARD[fmt]).unlink()
    found = verify(str(out))
    assert "README.md" in found and all(f == "README.md" or f.startswith(SHARD[fmt]) for f in found)
    generate(PATTERN, str(out), fmt=fmt, **RUN)
    assert capsys.readouterr().err.splitlines() == [f"procvis: repairing {SHARD[fmt]}: missing",
                                                    "procvis: repairing README.md: it differs from this run's"]
    assert _files(out) == _files(clean[fmt])


def test_a_run_file_landed_by_another_worker_meanwhile_is_not_called_a_repair(clean, tmp_path, capsys, monkeypatch):
    # two workers landing their first shards at once: this one finds no run.json, the other's
    # (the same text) lands before this one looks again
    other = (clean["parquet"] / "run.json").read_text()
    read, raced = Path.read_text, []

    def racing(self, *a, **k):
        if self.name == "run.json" and not raced and not self.exists() \
                and sys._getframe(1).f_code.co_name == "_write_identity":
            raced.append(True)
            self.write_text(other)
            raise FileNotFoundError(self)
        return read(self, *a, **k)
    monkeypatch.setattr(Path, "read_text", racing)
    generate(PATTERN, str(tmp_path / "d"), workers=1, **RUN)
    assert raced and capsys.readouterr().err == ""
    assert _files(tmp_path / "d") == _files(clean["parquet"])


def test_a_damaged_run_file_or_a_lost_manifest_is_rebuilt(clean, tmp_path, capsys):
    out = _copy(clean, "parquet", tmp_path)
    (out / "run.json").write_text('{"count": ')
    assert verify(str(out)) == ["run.json"]
    generate(PATTERN, str(out), **RUN)
    assert capsys.readouterr().err == "procvis: repairing run.json: it differs from this run's\n"
    (out / "manifest.json").unlink()
    with pytest.raises(OutputError, match="no readable manifest.json"):
        verify(str(out))
    generate(PATTERN, str(out), **RUN)                  # unrecorded shards are written again
    assert _files(out) == _files(clean["parquet"])


def test_rows_under_a_rewritten_manifest_are_found_and_repaired(clean, tmp_path):
    """A manifest rewritten over a shard with a row removed: verify finds it from the rows, and
    the re-run agrees and rewrites it."""
    out = _copy(clean, "imagefolder", tmp_path)
    meta = out / SHARD["imagefolder"] / "metadata.jsonl"
    meta.write_text(meta.read_text().splitlines()[0] + "\n")
    m = json.loads((out / "manifest.json").read_text())
    rel = meta.relative_to(out).as_posix()
    m["files"][rel], m["sizes"][rel] = _sha256(meta), meta.stat().st_size
    (out / "manifest.json").write_text(json.dumps(m))
    assert verify(str(out)) == [rel]
    generate(PATTERN, str(out), fmt="imagefolder", **RUN)
    assert _files(out) == _files(clean["imagefolder"])


# ---------------------------------------------------------------- 2 and 10. only our files; extra files seen

def _stray(out: Path, fmt: str, kind: str) -> Path:
    """Put a file or folder procvis did not write into the data tree; returns it."""
    tree = out / ("data" if fmt == "parquet" else "images")
    if kind == "holiday":
        p = tree / "holiday.parquet"
        p.write_bytes(b"mine")
    elif kind == "copied_shard":                   # a copied shard: 8 more rows, same names inside
        src = out / SHARD[fmt]
        p = src.with_name(src.name.replace("00001", "00099"))         # beyond the run
        shutil.copytree(src, p) if src.is_dir() else shutil.copy(src, p)
    else:                                           # a sub-folder inside a shard (or task) folder
        p = (out / SHARD[fmt] if fmt == "imagefolder" else (out / SHARD[fmt]).parent) / "extra"
        p.mkdir()
        (p / "note.txt").write_text("mine")
    return p


@pytest.mark.parametrize("kind", ["holiday", "copied_shard", "subfolder"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_strays_in_the_data_tree_are_reported_refused_by_name_and_left_alone(clean, tmp_path, capsys, fmt, kind):
    out = _copy(clean, fmt, tmp_path)
    p = _stray(out, fmt, kind)
    rel = p.relative_to(out).as_posix()
    found = verify(str(out))
    assert rel in found or any(f.startswith(rel + "/") for f in found)
    before = _files(out)
    err = _one_line_error(["generate", PATTERN, "--out", str(out), "--format", fmt, "--seed", "4", "--count", "4",
                           "--size", "32", "--shard-size", "2", "--quiet"], capsys)
    assert repr(rel) in err and "did not write it" in err
    assert _files(out) == before
    shutil.rmtree(p) if p.is_dir() else p.unlink()
    assert verify(str(out)) == []


def test_user_files_beside_the_dataset_are_never_touched(clean, tmp_path, capsys):
    out = _copy(clean, "parquet", tmp_path)
    mine = {"notes.txt": b"keep", ".tmp-1-notes.txt": b"keep", "sub/.tmp-x": b"keep", "images/a.png": b"keep"}
    for rel, data in mine.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    (out / SHARD["parquet"]).unlink()
    generate(PATTERN, str(out), fmt="parquet", **RUN)
    files = _files(out)
    assert {rel: files.pop(rel) for rel in mine} == mine
    assert files == _files(clean["parquet"]) and verify(str(out)) == []


def test_a_folder_that_is_not_a_run_is_refused_untouched(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    for name in ("README.md", "manifest.json", ".tmp-123-draft"):
        (out / name).write_text("my own " + name)
    before = _files(out)
    err = _one_line_error(["generate", PATTERN, "--out", str(out), "--count", "2", "--size", "32", "--quiet"], capsys)
    assert "is not empty and holds no procvis dataset" in err
    assert _files(out) == before
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert "--out '' names no folder" in _one_line_error(["generate", PATTERN, "--out", "", "--quiet"], capsys)
    finally:
        os.chdir(cwd)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


# ---------------------------------------------------------------- 3. identity

def _photos(folder: Path, n: int = 4) -> Path:
    import numpy as np
    from PIL import Image

    folder.mkdir()
    rng = np.random.default_rng(n)
    for i in range(n):
        noise = rng.integers(0, 255, (64, 64, 3), dtype=np.uint8)
        Image.fromarray(noise).resize((256, 256), Image.BILINEAR).save(folder / f"p{i}.png")
    return folder


def test_every_setting_that_changes_bytes_is_the_identity_and_named_on_resume(tmp_path, monkeypatch, capsys):
    photos = _photos(tmp_path / "photos")
    out = tmp_path / "d"
    settings = {"jigsaw.images": str(photos), "jigsaw.image_size": 48}
    m = generate("jigsaw/connection", str(out), count=2, size=24, progress=False, settings=settings)
    run = json.loads((out / "run.json").read_text())
    for key in ("pattern", "seed", "count", "size", "format", "shard_size", "settings", "font", "procvis_version"):
        assert key in run and run[key] == m["config"][key]
    assert run["inputs"] == m["config"]["inputs"] and run["inputs"]["jigsaw.images"].startswith("sha256:")
    before = _files(out)
    (photos / "p0.png").write_bytes((photos / "p1.png").read_bytes())       # same folder, other content
    with pytest.raises(OutputError, match=r"content of jigsaw.images: 'sha256:\w+' there, 'sha256:\w+' asked"):
        generate("jigsaw/connection", str(out), count=2, size=24, progress=False, settings=settings)
    assert _files(out) == before

    out = tmp_path / "text"
    generate("shapes/read_text", str(out), **RUN)
    before = _files(out)
    fonts = sorted(Path("/usr/share/fonts/truetype/dejavu").glob("DejaVuSans-*.ttf"))
    if fonts:
        monkeypatch.setenv("PROCVIS_FONT", str(fonts[0]))
        with pytest.raises(OutputError, match=r"font \(\$PROCVIS_FONT\): 'sha256:\w+' there, 'sha256:\w+' asked"):
            generate("shapes/read_text", str(out), **RUN)
        monkeypatch.delenv("PROCVIS_FONT")
    monkeypatch.setattr("engine.outputs.procvis_version", lambda: "99.0")
    with pytest.raises(OutputError, match=r"procvis_version: '[^']+' there, '99.0' asked"):
        generate("shapes/read_text", str(out), **RUN)
    assert "size: 32 there, 40 asked" in _one_line_error(
        ["generate", "shapes/read_text", "--out", str(out), "--seed", "4", "--count", "4", "--size", "40",
         "--shard-size", "2"], capsys)
    assert _files(out) == before


# ---------------------------------------------------------------- 5. signals and the parent's death

ARGS = ["shapes/*", "--seed", "2", "--count", "30", "--size", "64", "--shard-size", "1", "--quiet"]


def _session(sid: int) -> list[int]:
    """The live (not zombie) processes of session ``sid``."""
    out = []
    for d in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{d}/stat").read_text() if d.isdigit() else ""
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split() if stat else []
        if fields and int(fields[3]) == sid and fields[0] != "Z":
            out.append(int(d))
    return out


def _wait_until(predicate, timeout: float) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# long enough (900 one-sample shards) that a signal sent once work is under way lands before the
# end, even on a loaded machine
SIGNAL_ARGS = ["shapes/*", "--seed", "2", "--count", "90", "--size", "32", "--shard-size", "1", "--quiet"]


def _default_signals() -> None:
    """In the child: the signals' default actions, as in a terminal (a test run started in the
    background, e.g. under nohup, hands its children SIGINT and SIGHUP ignored)."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


@pytest.fixture(scope="module")
def clean_cli(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("clean_cli") / "d"
    assert cli.main(["generate", *SIGNAL_ARGS, "--out", str(out)]) == 0
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find processes")
# SIGHUP to the group takes the path SIGINT and SIGTERM take (the run ends itself and says so);
# those two run in the slow suite
@pytest.mark.parametrize("sig, group", [pytest.param(signal.SIGINT, False, marks=pytest.mark.slow),
                                        pytest.param(signal.SIGTERM, False, marks=pytest.mark.slow),
                                        (signal.SIGKILL, False), (signal.SIGHUP, True)],
                         ids=["SIGINT", "SIGTERM", "SIGKILL", "SIGHUP-to-group"])
def test_a_signal_to_the_parent_ends_every_worker_and_the_run_resumes(clean_cli, tmp_path, sig, group):
    """``group``: the signal goes to the whole process group, as a closed terminal sends it."""
    out = tmp_path / "d"
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "generate", *SIGNAL_ARGS, "--workers", "2", "--out",
                             str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_default_signals)
    working = _wait_until(lambda: len(_session(proc.pid)) >= 3 and len(list(out.rglob("shard-*.parquet"))) >= 2, 120)
    os.killpg(proc.pid, sig) if group else os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=60)
    assert working and not (out / "manifest.json").exists(), "the signal landed too late to test"
    assert _wait_until(lambda: not _session(proc.pid), 10), f"left running: {_session(proc.pid)}"
    if sig != signal.SIGKILL:
        assert proc.returncode == 128 + sig
        assert err.strip().splitlines() == [f"procvis: interrupted by {signal.Signals(sig).name}; "
                                            "run the same command again to resume"]
        assert not [p for p in out.rglob("*") if p.name.startswith(".tmp-") or p.name == ".procvis.lock"]
    assert cli.main(["generate", *SIGNAL_ARGS, "--out", str(out)]) == 0
    assert _files(out) == _files(clean_cli)


# ---------------------------------------------------------------- 6. one writer per folder

@pytest.mark.parametrize("fmt", FORMATS)
def test_a_second_writer_is_refused_naming_the_first_and_a_stale_lock_is_taken_over(tmp_path, capsys, fmt):
    out = tmp_path / "d"
    argv = ["generate", *ARGS, "--format", fmt, "--out", str(out)]
    first = subprocess.Popen([sys.executable, "-m", "engine.cli", *argv], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    lock = out / ".procvis.lock"
    assert _wait_until(lambda: lock.is_file() and str(first.pid) in lock.read_text(), 60)
    try:
        err = _one_line_error(argv, capsys)
        assert f"is being written by another procvis generate (pid {first.pid})" in err
    finally:
        first.kill()
        first.wait()
    assert lock.is_file()                            # stale: its owner is gone
    assert cli.main(argv) == 0
    assert not lock.exists() and verify(str(out)) == []


# ---------------------------------------------------------------- 9. failures leave nothing that blocks the fix

@pytest.mark.parametrize("where, error", [("_write_parquet", RuntimeError), ("_install", OSError)],
                         ids=["writing", "installing"])
def test_a_failure_before_the_first_shard_leaves_nothing(tmp_path, monkeypatch, capsys, where, error):
    """``installing``: run.json and the card go down just before a folder's first shard is
    installed (so that installed shards always have their run beside them); when that
    install fails, the run leaves nothing either."""
    out = tmp_path / "d"
    assert "seed=1180591620717411303424 must lie in" in _one_line_error(
        ["generate", PATTERN, "--out", str(out), "--seed", str(2 ** 70), "--quiet"], capsys)
    assert not out.exists()

    def broken(*a, **k):
        raise error("a bug")

    monkeypatch.setattr(f"engine.outputs.{where}", broken)
    with pytest.raises(error):
        generate(PATTERN, str(out), **RUN)
    assert not out.exists()
    out.mkdir()
    with pytest.raises(error):
        generate(PATTERN, str(out), **RUN)
    assert list(out.iterdir()) == []
    monkeypatch.undo()
    generate(PATTERN, str(out), seed=5, count=2, size=32, progress=False)     # the corrected command
    assert verify(str(out)) == []


def _disk_full_after(n: int, real):
    calls = []

    def write(path, *a):
        calls.append(path)
        if len(calls) > n:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, *a)
    return write


def test_disk_full_is_a_one_line_error_and_the_same_command_resumes(clean, tmp_path, monkeypatch, capsys):
    from engine import outputs

    out = tmp_path / "d"
    monkeypatch.setattr(outputs, "_write_parquet", _disk_full_after(2, outputs._write_parquet))
    err = _one_line_error(["generate", PATTERN, "--out", str(out), "--seed", "4", "--count", "4", "--size", "32",
                           "--shard-size", "2", "--quiet"], capsys)
    assert "disk full while writing data/" in err and "run the same command again" in err
    assert not list(out.rglob(".tmp-*"))
    monkeypatch.undo()
    generate(PATTERN, str(out), **RUN)
    assert _files(out) == _files(clean["parquet"])


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="mounting a small file system needs root")
def test_a_really_full_disk_is_a_one_line_error(tmp_path, capsys):
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True).returncode:
        pytest.skip("cannot mount a small file system here")
    try:
        err = _one_line_error(["generate", "shapes/*", "--out", str(disk / "d"), "--count", "40", "--size", "64",
                               "--quiet"], capsys)
        assert "disk full while writing" in err
        assert not list((disk / "d").rglob(".tmp-*")) and not (disk / "d" / ".procvis.lock").exists()
    finally:
        subprocess.run(["umount", str(disk)], check=True)


@pytest.mark.parametrize("damage", [b"", b"PK\x03\x04 truncated", None])
def test_a_damaged_glyph_atlas_cache_is_rebuilt(tmp_path, monkeypatch, damage):
    from kernels import glyphs

    monkeypatch.setenv("PROCVIS_CACHE", str(tmp_path))
    glyphs.load_atlas.cache_clear()
    good = glyphs.load_atlas()
    path = next(tmp_path.glob("glyphs-*.npz"))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage is None else damage)
    glyphs.load_atlas.cache_clear()
    try:
        assert (glyphs.load_atlas().sdf == good.sdf).all()
        assert path.read_bytes() == data
        monkeypatch.setenv("PROCVIS_CACHE", str(path))           # a file where the folder should be
        glyphs.load_atlas.cache_clear()
        assert (glyphs.load_atlas().sdf == good.sdf).all()
    finally:
        glyphs.load_atlas.cache_clear()


def test_a_damaged_sprite_cache_is_rebuilt(tmp_path, monkeypatch):
    import torch

    views = pytest.importorskip("scenes.kiva.views")
    monkeypatch.setenv("PROCVIS_CACHE", str(tmp_path))
    monkeypatch.setattr(views, "build", lambda name: name)
    monkeypatch.setattr(views, "render_parts",
                        lambda parts, view, size: torch.full((4, size, size), 9, dtype=torch.uint8))
    views.sprite.cache_clear()
    try:
        good = views.sprite("cube", "front", 8)
        path = next((tmp_path / "kiva").glob("*.png"))
        for damage in (b"", path.read_bytes()[:30]):
            path.write_bytes(damage)
            views.sprite.cache_clear()
            assert torch.equal(views.sprite("cube", "front", 8), good)
    finally:
        views.sprite.cache_clear()


def test_errors_are_user_errors_and_interrupted_is_a_keyboard_interrupt():
    assert issubclass(OutputError, UserError)
    assert isinstance(Interrupted(signal.SIGTERM), KeyboardInterrupt)
    assert str(Interrupted(signal.SIGTERM)) == "interrupted by SIGTERM"
