"""The command line: listing, previews, scene files and one-line errors with exit code 2."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from engine.cli import main
from engine.registry import get_task, list_tasks

ROOT = Path(__file__).resolve().parents[1]


def test_list_prints_one_id_per_line(capsys):
    assert main(["list", "shapes/count/*"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == list_tasks("shapes/count/*") and len(out) == 5


def test_preview_writes_a_contact_sheet(tmp_path):
    out = tmp_path / "sheet.png"
    assert main(["preview", "shapes/*", "--out", str(out), "--count", "3", "--size", "64"]) == 0
    img = Image.open(out)
    assert img.width > 3 * 64 and img.height > 64


def test_render_draws_a_json_scene(tmp_path):
    scene = {"background": [255, 255, 255], "primitives": [
        {"kind": "circle", "center": [0.5, 0.5], "radius": 0.3, "color": [255, 0, 0]},
        {"kind": "spline", "points": [[0.1, 0.9], [0.5, 0.6], [0.9, 0.9]], "width": 0.02}]}
    (tmp_path / "s.json").write_text(json.dumps(scene))
    assert main(["render", str(tmp_path / "s.json"), "--out", str(tmp_path / "s.png"), "--size", "50"]) == 0
    assert Image.open(tmp_path / "s.png").getpixel((25, 25)) == (255, 0, 0)


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True, text=True, cwd=cwd)


BAD = [
    (["list", "nope/*"], "no registered task matches 'nope/*'"),
    (["generate", "shapes/*", "--out", "{tmp}/o", "--count", "0"], "--count must be a positive integer, got '0'"),
    (["generate", "shapes/*", "--out", "{tmp}/o", "--size", "nan"], "size='nan' must be a whole number of pixels"),
    (["generate", "shapes/*", "--out", "{tmp}/o", "--size", "-4"], "size='-4' must be a whole number of pixels"),
    (["generate", "shapes/*", "--out", "{tmp}/file/o"], "cannot create output directory"),
    (["generate", "elvis/proximty/*", "--out", "{tmp}/o"], "no registered task matches 'elvis/proximty/*'"),
    (["preview", "shapes/*", "--out", "{tmp}/x.png", "--count", "-1"], "--count must be a positive integer"),
    (["render", "{tmp}/bad.json", "--out", "{tmp}/b.png"], "unknown primitive kind 'blob'; allowed: circle"),
    (["generate", "shapes/*", "--out", "{tmp}/o", "--size", "64x128"], "--size '64x128': give one number of pixels N"),
    (["generate", "jigsaw/*", "--out", "{tmp}/o", "--set", "jigsaw.images={tmp}/nowhere"],
     "image folder '{tmp}/nowhere' does not exist"),
    (["generate", "shapes/*", "--out", "{tmp}/o", "--set", "jigsaw.colour=red"], "unknown setting 'jigsaw.colour'"),
    (["preview", "shapes/*", "--out", "{tmp}/x.png", "--set", "nonsense"], "expected FAMILY.SETTING=VALUE"),
    (["eval", "shapes/*", "--model", "oracle", "--protocol", "elvis", "--out", "{tmp}/o"],
     "--protocol 'elvis' is for elvis tasks, not 'shapes/colours'; protocols for shapes: direct"),
    (["eval", "shapes/*", "--model", "oracle", "--protocol", "nope", "--out", "{tmp}/o"],
     "--protocol 'nope' is not a protocol; protocols: bongard-contrastive-direct"),
    (["bench", "nope"], "argument NAME: invalid choice: 'nope'"),
    (["render", "{tmp}/bg.json", "--out", "{tmp}/b.png"], "scene 0 background: colour 'zzz' is not '#rrggbb'"),
    (["render", "{tmp}/big.json", "--out", "{tmp}/b.png"], "scene 0 primitive 0: radius='big' must be finite"),
]


@pytest.mark.parametrize("args,message", BAD)
def test_bad_input_is_one_line_exit_2_and_harmless(tmp_path, args, message):
    (tmp_path / "file").write_text("precious")
    (tmp_path / "bad.json").write_text(json.dumps({"primitives": [{"kind": "blob", "center": [0.5, 0.5]}]}))
    (tmp_path / "bg.json").write_text(json.dumps({"background": "zzz", "primitives": []}))
    (tmp_path / "big.json").write_text(json.dumps({"primitives": [{"kind": "circle", "center": [0.5, 0.5],
                                                                  "radius": "big"}]}))
    r = _run(*[a.format(tmp=tmp_path) for a in args])
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("procvis: error:") and message.format(tmp=tmp_path) in lines[0], \
        r.stderr
    assert (tmp_path / "file").read_text() == "precious"
    assert not (tmp_path / "o").exists() and not (tmp_path / "x.png").exists()


def test_render_honours_height_by_width(tmp_path):
    scene = {"background": [255, 255, 255], "primitives": [{"kind": "circle", "center": [0.5, 0.25], "radius": 0.2,
                                                           "color": [0, 0, 255]}]}
    (tmp_path / "s.json").write_text(json.dumps(scene))
    assert main(["render", str(tmp_path / "s.json"), "--out", str(tmp_path / "s.png"), "--size", "64x128"]) == 0
    img = Image.open(tmp_path / "s.png")
    assert img.size == (128, 64) and img.getpixel((64, 32)) == (0, 0, 255)     # width 128, height 64


@pytest.mark.parametrize("args", [["--help"], ["list", "elvis/*"], ["eval", "--help"], ["generate", "--help"],
                                  ["families"]])
def test_parsing_and_listing_load_no_torch(args):
    code = ("import sys\nfrom engine.cli import main\ntry:\n    main(" + repr(args) + ")\nexcept SystemExit:\n    pass\n"
            "print('TORCH' if 'torch._C' in sys.modules else 'LIGHT')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-800:]
    assert r.stdout.strip().splitlines()[-1] == "LIGHT"


def test_help_shows_every_default_and_lists_the_protocols():
    import argparse

    from engine.cli import _Formatter, build_parser

    r = _run("eval", "--help")
    assert r.returncode == 0
    assert "--count COUNT         samples per task (default: 10)" in r.stdout
    for name in ("direct", "elvis-blind", "perceptv-1shot", "kiva-stitched", "bongard-contrastive-iterative"):
        assert any(line.split()[:1] == [name] and len(line.split()) > 3 for line in r.stdout.splitlines()), name
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) >= {"list", "families", "generate", "preview", "render", "demo", "baselines", "eval",
                                "tiny-model", "bench"}
    for command, parser in sub.choices.items():
        for action in parser._actions:
            if not action.option_strings or action.dest == "help":
                continue
            text = _Formatter(command)._get_help_string(action)
            assert action.help and ("(default: " in text or text.endswith("(required)")), (command, action.dest, text)


def test_internal_errors_keep_their_traceback(monkeypatch, capsys):
    import engine.registry

    def broken(pattern=None):
        raise ValueError("a bug, not a user error")

    monkeypatch.setattr(engine.registry, "list_tasks", broken)
    with pytest.raises(ValueError, match="a bug"):
        main(["list"])


def test_a_drawing_command_says_so_when_its_kernels_must_compile_first_and_not_before_checking_its_input(
        tmp_path, monkeypatch, capsys):
    # a fresh machine: the note comes once drawing starts, so a refused command still
    # prints its one line of error alone (a note printed first made it two lines)
    import kernels.raster_numba as rn
    from engine import outputs

    monkeypatch.setattr(rn, "compiled_on_disk", lambda: False)
    assert main(["preview", "shapes/colours", "--out", str(tmp_path / "x.gif")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("procvis: error:") and ".gif" in err[0]
    assert main(["preview", "shapes/colours", "--out", str(tmp_path / "p.png"), "--count", "2", "--size", "32"]) == 0
    assert capsys.readouterr().err.count("compiling the renderer's kernels") == 1
    assert main(["list", "shapes/*"]) == 0                  # listing draws nothing
    assert "compiling" not in capsys.readouterr().err
    outputs.render_samples([get_task("shapes/colours").sample(0, 0)], 32)    # a library call later: no note
    assert capsys.readouterr().err == ""
    started = []
    rn.note_before_compiling(lambda: started.append("sampling"))     # sampling kernels compile too
    get_task("shapes/colours").sample(0, 1)
    assert started == ["sampling"]
    started.clear()
    # generate's parent says it before starting the workers that compile

    class Pool:
        def __init__(self, *a, **k):
            started.append("pool")

        def submit(self, fn, job):
            return None
    monkeypatch.setattr(outputs, "ProcessPoolExecutor", Pool)
    rn.note_before_compiling(lambda: started.append("note"))
    outputs._start_pool(["job"], 2)
    assert started == ["note", "pool"]
    monkeypatch.setattr(rn, "compiled_on_disk", lambda: True)
    assert main(["preview", "shapes/colours", "--out", str(tmp_path / "q.png"), "--count", "2", "--size", "32"]) == 0
    assert capsys.readouterr().err == ""


