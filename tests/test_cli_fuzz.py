"""Every command and option of ``procvis``, read from the parser itself, fed bad values: each
must end with exit code 2 and exactly one line ``procvis: error: ...`` that names the value
(so an option added later is covered without editing this file). Runs in-process."""
from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

import pytest

from engine import cli

PARSER = cli.build_parser()
COMMANDS = next(a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction)).choices
PATTERN = "shapes/colours"
UNWRITABLE = "/sys/procvis-fuzz/out"              # refused even to root
PATH_DESTS = {"out", "results", "scene", "runs"}  # options that name a file or folder


@pytest.fixture(autouse=True)
def _fresh_machine(monkeypatch):
    # as on a new machine, where the renderer's kernels must compile first: its note must
    # not join a refusal's one line
    import kernels.raster_numba as rn
    monkeypatch.setattr(rn, "compiled_on_disk", lambda: False)


def _run(argv: list[str]) -> tuple[int, str]:
    """``(exit code, stderr)`` of ``procvis argv`` run in this process."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = cli.main(argv)
        except SystemExit as e:
            code = e.code
    return code, err.getvalue()


def _valid(command: str, action: argparse.Action, tmp: Path) -> list[str]:
    """A valid, cheap value for ``action`` (a list: positionals may take several)."""
    dest = action.dest
    if dest == "scene":
        return [str(tmp / "scene.json")]
    if dest == "runs":
        return [str(tmp / "run")]
    if dest == "out":
        return [str(tmp / ("o.png" if command in ("render", "preview") else "o"))]
    if dest == "results":
        return [str(tmp / "r.md")]
    if dest in ("pattern", "task"):
        return [PATTERN]
    if dest == "model" or dest == "judge":
        return ["random"]
    if action.choices:
        return [str(next(iter(action.choices)))]
    if dest == "size":
        return ["16"]
    if dest == "set":
        return []
    bounds = getattr(action.type, "bounds", None)
    if bounds:
        return [str(1 if bounds[0] <= 1 <= bounds[1] else bounds[0])]
    return ["x"]


def _bad_values(action: argparse.Action, tmp: Path) -> list[str]:
    """Values ``action`` must refuse, by what its type allows (read from the parser)."""
    out = ["", " "]
    bounds = getattr(action.type, "bounds", None)
    if action.type in (cli.canvas, cli.side):
        out += ["0", "-5", "nan", "abc", str(cli.MAX_SIDE + 1), "1x2x3", "9" * 30, "16x0", "1.5"]
    elif bounds:
        lo, hi = bounds
        out += ["abc", "nan", "inf", "-inf", "1e400", "10**12"]
        out += [repr(float(v)) for v in (lo - 1, hi + 1) if abs(v) < 2 ** 63]
        if getattr(action.type, "kind", "integer") == "integer":
            out += ["1.5", str(int(lo) - 1), str(int(hi) + 1)]
    elif action.choices:
        out += ["nope", "ünïcode wrong"]
    elif action.dest == "set":
        out += ["nonsense", "=x", "nodot=1"]
    if action.dest in PATH_DESTS:
        out += ["\x01ctrl", UNWRITABLE, str(tmp / "file" / "below-a-file")]
    return out


def _cases():
    for command, parser in sorted(COMMANDS.items()):
        for action in parser._actions:
            if action.nargs == 0 or action.dest == "help":
                continue
            yield pytest.param(command, action.dest, id=f"{command}-{action.dest}")


def _argv(command: str, target: str, value: str, tmp: Path) -> list[str]:
    """``procvis command`` with every required option valid and ``target`` set to ``value``."""
    argv = [command]
    for action in COMMANDS[command]._actions:
        if action.nargs == 0 or action.dest == "help":
            continue
        given = action.dest == target
        if not (given or action.required or not action.option_strings and action.nargs not in ("?", "*")):
            continue
        values = [value] if given else _valid(command, action, tmp)
        if action.option_strings and values:          # --opt=VALUE: a value may start with "-"
            argv += [f"{action.option_strings[-1]}={v}" for v in values]
        else:
            argv += values
    for cheap in ("--count", "--quiet"):
        if target != "count" and any(cheap in a.option_strings for a in COMMANDS[command]._actions) \
                and cheap not in argv:
            argv += [cheap, "1"] if cheap == "--count" else [cheap]
    return argv


@pytest.fixture
def tmp(tmp_path):
    (tmp_path / "file").write_text("precious")
    (tmp_path / "run").mkdir()
    (tmp_path / "scene.json").write_text(json.dumps({"primitives": [{"kind": "circle", "center": [0.5, 0.5],
                                                                     "radius": 0.2}]}))
    return tmp_path


def _one_line_naming(code, err: str, value: str) -> None:
    lines = err.splitlines()
    assert code == 2, (code, err[-2000:])
    assert len(lines) == 1 and lines[0].startswith("procvis: error: "), err[-2000:]
    assert value.strip() and value in lines[0] or repr(value) in lines[0] or repr(value)[1:-1] in lines[0], \
        (value, lines[0])


@pytest.mark.parametrize("command,dest", list(_cases()))
def test_every_option_refuses_bad_values_in_one_line(command, dest, tmp):
    action = next(a for a in COMMANDS[command]._actions if a.dest == dest)
    for value in _bad_values(action, tmp):
        code, err = _run(_argv(command, dest, value, tmp))
        _one_line_naming(code, err, value)
    assert (tmp / "file").read_text() == "precious"


# ---------------------------------------------------------------- files and folders confused

FOLDER_FOR_FILE = [("render", "out"), ("render", "scene"), ("preview", "out"), ("bench", "results")]
FILE_FOR_FOLDER = [("generate", "out"), ("demo", "out"), ("report", "out"), ("report", "runs"),
                   ("tiny-model", "out"), ("eval", "out"), ("audit", "out")]


@pytest.mark.parametrize("command,dest", FOLDER_FOR_FILE)
def test_a_folder_where_a_file_is_expected_is_refused(command, dest, tmp):
    folder = tmp / ("a folder.png" if dest != "results" else "a folder.md")
    folder.mkdir()
    code, err = _run(_argv(command, dest, str(folder), tmp))
    _one_line_naming(code, err, str(folder))
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("command,dest", FILE_FOR_FOLDER)
def test_a_file_where_a_folder_is_expected_is_refused(command, dest, tmp):
    code, err = _run(_argv(command, dest, str(tmp / "file"), tmp))
    _one_line_naming(code, err, str(tmp / "file"))
    assert (tmp / "file").read_text() == "precious"


def test_render_refuses_an_unknown_extension_listing_the_allowed_ones(tmp):
    code, err = _run(["render", str(tmp / "scene.json"), "--out", str(tmp / "x.gif")])
    _one_line_naming(code, err, str(tmp / "x.gif"))
    assert ".png, .jpg, .jpeg, .webp" in err and not (tmp / "x.gif").exists()


# ---------------------------------------------------------------- what is fine must stay fine

@pytest.mark.parametrize("argv", [
    ["render", "{scene}", "--out", "{tmp}/dir with space/ünï 画.png", "--size", "16"],
    ["generate", PATTERN, "--out", "{tmp}/ü d", "--count", "1", "--size", "16", "--quiet"],
    ["preview", PATTERN, "--out", "{tmp}/é x/sheet.png", "--count", "1", "--size", "16"],
])
def test_unicode_and_spaces_in_paths_work(argv, tmp):
    shutil_free = tmp / "scene with space é.json"
    shutil_free.write_text((tmp / "scene.json").read_text())
    code, err = _run([a.format(tmp=tmp, scene=shutil_free) for a in argv])
    assert code == 0, err


def test_a_bug_keeps_its_traceback(monkeypatch, tmp):
    """An OSError about a path nobody gave is a bug: it propagates with its traceback."""
    import engine.rendering

    def broken(*a, **k):
        raise FileNotFoundError(2, "No such file or directory", "/internal/cache/file")

    monkeypatch.setattr(engine.rendering, "render", broken)
    with pytest.raises(FileNotFoundError):
        cli.main(["render", str(tmp / "scene.json"), "--out", str(tmp / "o.png")])
