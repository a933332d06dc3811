"""The family plug-in contract: a family declared in a test registers tasks (grid and
cases), settings that become part of each task's identity, protocols bound to its tasks
and a report section, all through ``engine.family`` alone."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import engine.registry as reg
from engine.errors import UnknownTaskError, UserError
from engine.family import Family, Setting
from engine.protocol import Protocol, Turn
from engine.sample import Draw
from engine.scene import Scene
from evals.harness import evaluate
from evals.runners import OracleRunner


@pytest.fixture
def registry(monkeypatch):
    """The real registry (families discovered) with a throwaway copy of its tables."""
    reg.list_tasks()
    for name in ("_FAMILIES", "_TASKS", "_ROOTS", "_PROTOCOLS"):
        monkeypatch.setattr(reg, name, dict(getattr(reg, name)))
    return reg


def _check_colour(value):
    if value not in ("red", "blue"):
        raise UserError(f"toy.colour={value!r}; allowed: red, blue")
    return value


@pytest.fixture
def toy(registry):
    fam = Family("toy", "A family declared by a test.",
                 settings=[Setting("colour", "the disc colour", "red", env="PROCVIS_TOY_COLOUR", check=_check_colour)])

    @fam.task("toy/grid/{a}/{b}", a=[1, 2], b=["x", "y"], rank=lambda a, b: a)
    def grid(rng, a, b):
        return Draw(Scene(), f"{a}{b}?", f"{a}{b}", "single")

    @fam.task(cases={"toy/disc/small": {"r": 0.1}, "toy/disc/large": {"r": 0.3}},
              answer_distribution={"red": 0.5, "blue": 0.5})
    def disc(rng, r, settings):
        s = Scene()
        s.circle((0.5, 0.5), r, color=(255, 0, 0) if settings["colour"] == "red" else (0, 0, 255))
        return Draw(s, "Which colour?", settings["colour"], "fixed", options=["red", "blue"],
                    caption=f"a {settings['colour']} disc")

    @fam.protocol
    class Twice(Protocol):
        """Toy: the question twice."""

        name = "toy-twice"

        def first(self, sample, images):
            return Turn(sample.question, list(images))

        def next(self, sample, images, turns):
            return Turn(sample.question, list(images)) if len(turns) == 1 else None

    @fam.report
    def report(results, folder, title):
        return f"## Toy\n\n{len(results)} toy results by {title}\n"

    return fam


def test_tasks_register_from_a_grid_and_from_cases(toy):
    assert reg.list_tasks("toy/*") == ["toy/disc/large", "toy/disc/small", "toy/grid/1/x", "toy/grid/1/y",
                                       "toy/grid/2/x", "toy/grid/2/y"]
    t = reg.get_task("toy/grid/2/y")
    assert t.family == "toy" and t.params == {"a": 2, "b": "y"} and t.rank == 2
    assert t.sample(0, 0).answer == "2y" and t.sample(0, 0).meta["params"] == {"a": 2, "b": "y"}
    assert reg.get_task("toy/disc/large").answer_distribution == {"red": 0.5, "blue": 0.5}


def test_settings_are_part_of_the_task_and_the_sample(toy, monkeypatch):
    s = reg.get_task("toy/disc/small").sample(0, 0)
    assert s.answer == "red" and s.settings == {"colour": "red"} and s.record()["meta"]["settings"] == {"colour": "red"}
    blue = reg.get_task("toy/disc/small", {"toy.colour": "blue"})
    assert blue.sample(0, 0).answer == "blue" and blue.identity != reg.get_task("toy/disc/small").identity
    monkeypatch.setenv("PROCVIS_TOY_COLOUR", "blue")                  # the environment gives the default
    assert reg.get_task("toy/disc/small").sample(0, 0).answer == "blue"
    assert reg.get_task("toy/disc/small", {"toy.colour": "red"}).sample(0, 0).answer == "red"
    assert reg.task_of(blue.sample(0, 1)).settings == {"colour": "blue"}
    with pytest.raises(UserError, match="toy.colour='green'; allowed: red, blue"):
        reg.get_task("toy/disc/small", {"toy.colour": "green"})
    with pytest.raises(UserError, match="unknown setting 'toy.size'; settings: .*toy.colour"):
        reg.resolve("toy/*", {"toy.size": "3"})
    assert reg.run_settings(reg.resolve("toy/*", {"toy.colour": "blue"})) == {"toy.colour": "blue"}


def test_a_root_belongs_to_one_family_and_ids_are_unique(toy):
    other = Family("other", "Another test family.")
    with pytest.raises(ValueError, match="belong to 'toy'"):
        other.task("toy/stolen")(lambda rng: None)
    with pytest.raises(ValueError, match="registered twice"):
        toy.task("toy/grid/1/x")(lambda rng: None)
    with pytest.raises(UnknownTaskError, match="tasks of 'toy' include toy/disc/large"):
        reg.get_task("toy/nothing")


def test_protocols_fit_their_family_and_reports_come_from_it(toy, tmp_path):
    assert reg.protocols()["toy-twice"].family == "toy"
    with pytest.raises(UserError, match="'toy-twice' is for toy tasks, not 'shapes/colours'; protocols for shapes: "
                                        "direct"):
        evaluate("shapes/colours", OracleRunner(), str(tmp_path / "a"), count=1, size=16, progress=False,
                 protocol="toy-twice")
    rows = evaluate("toy/disc/*", OracleRunner(), str(tmp_path / "b"), count=2, size=16, progress=False,
                    protocol="toy-twice", settings={"toy.colour": "blue"})
    assert all(r["accuracy"] == 1.0 for r in rows.values())
    summary = (tmp_path / "b" / "summary.md").read_text()
    assert "## Toy\n\n4 toy results by oracle" in summary
    turns = json.loads((tmp_path / "b" / "transcripts.jsonl").read_text().splitlines()[0])["turns"]
    assert len(turns) == 2 and turns[1]["reply"] == "blue"


def test_every_family_draws_after_a_discovery_without_torch():
    """Families are discovered without torch; what they load later (torch, kornia, the
    sprite and tile kernels) must still arrive whole, whatever imports torch first."""
    code = """
import sys
import engine
from engine.registry import families, list_tasks, get_task
roots = sorted({t.split('/')[0] for t in list_tasks()})
assert 'torch._C' not in sys.modules, 'discovery loaded torch'
import torch                                       # what a user's training script does next
small = {'jigsaw.images': 'generated:12', 'jigsaw.image_size': 48}
for root in roots:
    task = get_task(list_tasks(root + '/*')[0], small)
    s = task.sample(0, 0)
    assert engine.render(s.panels[:1], 32).shape == (1, 3, 32, 32)
print('drew', len(roots))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert r.returncode == 0, r.stderr[-1500:]
    assert r.stdout.split() == ["drew", "9"]


def test_declared_options_give_label_maps_without_drawing_and_are_checked(registry, monkeypatch):
    from engine.streams import stream
    fam = Family("toy", "A family declared by a test.")
    drawn = []

    @fam.task("toy/ask/{order}", order=["kept", "swapped"], options=["yes", "no"])
    def ask(rng, order):
        drawn.append(order)
        return Draw(Scene(), "Yes?", "yes", "fixed", options=["yes", "no"] if order == "kept" else ["no", "yes"])

    s = stream("toy/ask/*", seed=0, batch_size=2, size=16, count=2)
    assert s.label_map == {"toy/ask/kept": ["yes", "no"], "toy/ask/swapped": ["yes", "no"]} and drawn == []
    assert reg.get_task("toy/ask/kept").sample(0, 3).options == ["yes", "no"]
    with pytest.raises(ValueError, match=r"toy/ask/swapped: sample 3 offers options \['no', 'yes'\].*declares "
                                         r"\['yes', 'no'\]"):
        reg.get_task("toy/ask/swapped").sample(0, 3)
