"""The command line: listing, previews, scene files and one-line errors with exit code 2."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from engine.cli import main
from engine.registry import list_tasks

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
]


@pytest.mark.parametrize("args,message", BAD)
def test_bad_input_is_one_line_exit_2_and_harmless(tmp_path, args, message):
    (tmp_path / "file").write_text("precious")
    (tmp_path / "bad.json").write_text(json.dumps({"primitives": [{"kind": "blob", "center": [0.5, 0.5]}]}))
    r = _run(*[a.format(tmp=tmp_path) for a in args])
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("procvis: error:") and message in lines[0], r.stderr
    assert (tmp_path / "file").read_text() == "precious"
    assert not (tmp_path / "o").exists() and not (tmp_path / "x.png").exists()
