"""Real Bongard problems from folders (``bongard.problems``): task ids, seeded choice of
images, the collage read back from pixels, one-line errors, evaluation under the five
strategies with both judges, generation, and the model x strategy report."""
import importlib
import json

import numpy as np
import pytest
from PIL import Image

from engine.cli import main
from engine.errors import UserError
from engine.outputs import generate, verify
from engine.registry import bound_task, get_task, list_tasks, resolve
from engine.rendering import render
from engine.reports import write_report
from evals.harness import evaluate
from scenes.bongard import STRATEGIES
from scenes.bongard.folders import check_problems
from scenes.bongard.tasks import collage_pixels, panel_boxes
from tests.runners import Recorder

RULE = ("Every figure is red.", "Every figure is blue.")
WRONG = "Every figure is large. Every figure is small."


@pytest.fixture(autouse=True)
def _rule_judge(monkeypatch):
    """Until the structured rule judge lands, a stand-in that accepts the reference sentences
    repeated verbatim (the only answers these tests grade as right)."""
    judge = importlib.import_module("scenes.bongard.judge")
    if not hasattr(judge, "judge_rule"):
        monkeypatch.setattr(judge, "judge_rule", lambda left, right, reply:
                            " ".join(reply.split()) == f"{left} {right}", raising=False)


def colour(side: str, k: int) -> tuple[int, int, int]:
    """The flat colour of image ``k`` of a side: red shades left, blue shades right."""
    return (220, 12 * k, 20) if side == "left" else (20, 12 * k, 220)


def problem(root, name="reds", left=6, right=6, category="size", rule="\n".join(RULE), test=0):
    """A problem folder of flat 24x20 images; returns its path."""
    d = root / name
    for side, n in (("left", left), ("right", right)):
        (d / side).mkdir(parents=True)
        for k in range(n):
            Image.fromarray(np.full((20, 24, 3), colour(side, k), np.uint8)).save(d / side / f"{k:02d}.png")
        if test:
            (d / "test" / side).mkdir(parents=True)
            for k in range(test):
                Image.new("RGB", (16, 16), colour(side, 19)).save(d / "test" / side / f"t{k}.png")
    if rule is not None:
        (d / "rule.txt").write_text(rule)
    if category is not None:
        (d / "category.txt").write_text(category + "\n")
    return d


@pytest.fixture
def problems(tmp_path):
    """A folder of two problems: ``size/reds`` (9 images a side, held-out images) and
    ``uncategorised/plain`` (6 a side, rule lines without full stops)."""
    root = tmp_path / "problems"
    problem(root, "reds", left=9, right=9, test=2)
    problem(root, "plain", category=None, rule="Every figure is red\n\nEvery figure is blue\n")
    return root


IDS = ["bongard/real/size/reds", "bongard/real/uncategorised/plain"]


def test_each_problem_folder_is_a_task_by_setting_or_environment(problems, monkeypatch):
    given = {"bongard.problems": str(problems)}
    assert list_tasks("bongard/real/*", given) == sorted(IDS)
    assert [t.id for t in resolve("bongard/*/size/*", given)][-1] == "bongard/real/size/reds"
    assert "bongard/real/size/reds" not in list_tasks("bongard/*")           # nothing without the setting
    t = get_task("bongard/real/uncategorised/plain", given)
    assert t.open_answer and t.settings == {"problems": str(problems)}
    assert get_task("bongard/classic/number/three_vs_five", given).settings == {}   # procedural ones untouched
    s = t.sample(0, 0)
    assert s.answer_text == "Every figure is red. Every figure is blue."
    assert s.meta["reference"] == {"left": RULE[0], "right": RULE[1]} and s.meta["category"] == "uncategorised"
    assert bound_task(s.task, s.settings).id == s.task
    monkeypatch.setenv("PROCVIS_BONGARD_PROBLEMS", str(problems))
    assert list_tasks("bongard/real/*") == sorted(IDS)
    with pytest.raises(UserError, match="unknown task 'bongard/real/size/blues'; tasks under 'bongard/real/' "
                                        "include bongard/real/size/reds"):
        get_task("bongard/real/size/blues")


def test_the_choice_of_images_is_seeded_by_task_seed_and_index(problems):
    t = get_task("bongard/real/size/reds", {"bongard.problems": str(problems)})
    shown = lambda s: (s.meta["images"]["left"], s.meta["images"]["right"], s.meta["held_out"])  # noqa: E731
    a = [shown(t.sample(0, i)) for i in range(6)]
    assert a == [shown(t.sample(0, i)) for i in range(6)]                   # same seed and index: same images
    assert len({json.dumps(x) for x in a}) > 1                               # other indices: other choices
    assert shown(t.sample(1, 0)) != a[0] or shown(t.sample(2, 0)) != a[0]
    for left, right, held in a:
        assert len(left) == len(right) == 6 and left == sorted(left) and held["left"][0].startswith("test/left/")
    plain = get_task("bongard/real/uncategorised/plain", {"bongard.problems": str(problems)}).sample(0, 3)
    assert plain.meta["images"]["left"] == [f"left/{k:02d}.png" for k in range(6)]
    assert len(plain.panels) == 13 and plain.meta["held_out"] == {"left": [], "right": []}


def test_the_collage_shows_each_chosen_photo_on_its_side(problems):
    s = get_task("bongard/real/size/reds", {"bongard.problems": str(problems)}).sample(0, 4)
    assert len(s.panels) == 15                       # collage, 12 panels, one held-out panel per side
    panel = 40
    H, W = collage_pixels(panel)
    img = render([s.panels[0]], (H, W))[0].numpy().astype(int)
    files = s.meta["images"]["left"] + s.meta["images"]["right"]
    for (x0, y0, x1, y1), f in zip(panel_boxes(), files):
        side, k = f.split("/")[0], int(f.split("/")[1][:2])
        y, x = int((y0 + y1) / 2 * panel), int((x0 + x1) / 2 * panel)
        assert np.abs(img[:, y, x] - np.array(colour(side, k))).max() <= 3, (f, img[:, y, x])
    single = render([s.panels[1 + 6]], (16, 16))[0].numpy().astype(int)       # the first right panel alone
    right0 = s.meta["images"]["right"][0]
    assert np.abs(single[:, 8, 8] - np.array(colour("right", int(right0.split("/")[1][:2])))).max() <= 3


def _bad_image(root):
    d = problem(root)
    (d / "left" / "03.png").write_bytes(b"not a picture")
    return "03.png"


@pytest.mark.parametrize("case, message", [
    ("no_right", r"reds/right' is not a folder; a problem needs left/ and right/ with at least 6 images each"),
    ("five", r"reds/right' holds 5 images; at least 6 needed there"),
    ("unreadable", r"cannot read image '.*reds/left/03\.png'"),
    ("not_image", r"reds/left/notes\.txt' is not an image file; allowed: \.png, \.jpg"),
    ("no_rule", r"reds/rule\.txt' is missing; it holds two lines"),
    ("one_line_rule", r"reds/rule\.txt' holds 1 non-empty line; it needs exactly 2"),
    ("bad_category", r"reds/category\.txt' names category 'colour'; allowed: size, number, spatial, same, shape, "
                     r"semantic, presence"),
    ("empty_test", r"reds/test/right' holds 0 images; at least 1 needed there"),
    ("bad_name", r"problem folder '.*/red s': its name becomes a task id"),
    ("not_folder", r"bongard\.problems='.*/nowhere': not a folder"),
])
def test_a_bad_problem_folder_is_a_one_line_error_naming_it(tmp_path, case, message):
    root = tmp_path / "problems"
    if case == "no_right":
        problem(root, right=0)
        (root / "reds" / "right").rmdir()
    elif case == "five":
        problem(root, right=5)
    elif case == "unreadable":
        _bad_image(root)
    elif case == "not_image":
        (problem(root) / "left" / "notes.txt").write_text("hi")
    elif case == "no_rule":
        problem(root, rule=None)
    elif case == "one_line_rule":
        problem(root, rule="Every figure is red.\n")
    elif case == "bad_category":
        problem(root, category="colour")
    elif case == "empty_test":
        d = problem(root, test=1)
        (d / "test" / "right" / "t0.png").unlink()
    elif case == "bad_name":
        problem(root, name="red s")
    elif case == "not_folder":
        root = tmp_path / "nowhere"
    with pytest.raises(UserError, match=message) as e:
        check_problems(str(root))
    assert "\n" not in str(e.value)
    out = tmp_path / "run"
    with pytest.raises(UserError, match=message):
        evaluate("bongard/real/*", Recorder(), str(out), count=1, size=16, progress=False,
                 settings={"bongard.problems": str(root)})
    assert not out.exists()                                                  # nothing written


def test_cli_errors_name_the_file_in_one_line(tmp_path, capsys):
    name = _bad_image(tmp_path / "problems")
    out = tmp_path / "data"
    code = main(["generate", "bongard/real/*", "--out", str(out), "--count", "1", "--size", "16", "--quiet",
                 "--set", f"bongard.problems={tmp_path / 'problems'}"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and name in err and not out.exists()


@pytest.mark.parametrize("protocol", STRATEGIES)
def test_every_strategy_grades_real_problems_by_their_rule(problems, tmp_path, protocol):
    given = {"bongard.problems": str(problems)}
    rows = evaluate("bongard/real/*", Recorder(), str(tmp_path / "right"), count=1, size=16, progress=False,
                    protocol=protocol, settings=given)
    assert set(rows) == set(IDS) and all(r["accuracy"] == 1.0 for r in rows.values())
    rows = evaluate("bongard/real/*", Recorder(WRONG), str(tmp_path / "wrong"), count=1, size=16, progress=False,
                    protocol=protocol, settings=given)
    assert all(r["accuracy"] == 0.0 for r in rows.values())


class VerbatimJudge:
    """A stand-in text model as judge: ``correct`` when the answer repeats the references."""

    name = "verbatim-judge"

    def __init__(self):
        self.prompts = []

    def generate(self, requests):
        out = []
        for r in requests:
            self.prompts.append(r.prompt)
            ref = r.prompt.split("Reference answers:\nLeft: ", 1)[1]
            left, right = ref.split("\nRight: ", 1)[0], ref.split("\nRight: ", 1)[1].split("\n", 1)[0]
            answer = r.prompt.rsplit("Model answer:\n", 1)[1]
            out.append("Correct." if answer == f"{left} {right}" else "incorrect")
        return out


class AlwaysCorrect:
    name = "yes-judge"

    def generate(self, requests):
        return ["correct"] * len(requests)


def test_the_model_judge_is_reported_beside_the_rule_judge(problems, tmp_path):
    given = {"bongard.problems": str(problems)}
    judge = VerbatimJudge()
    evaluate("bongard/real/*", Recorder(), str(tmp_path / "a"), count=2, size=16, progress=False, settings=given,
             judge=judge)
    # one request per distinct judge prompt: the two samples of a problem answer alike
    assert len(judge.prompts) == 2 and "Left: Every figure is red.\nRight: Every figure is blue." in judge.prompts[0]
    assert any("the user's answer" in p and "No category is given" in p for p in judge.prompts)   # uncategorised
    rows = json.loads((tmp_path / "a" / "results.json").read_text())
    assert all(r["model_judge"] is True and r["correct"] for r in rows)
    summary = (tmp_path / "a" / "summary.md").read_text()
    assert "They agree on 4 of 4 (100.00%)" in summary and "| rule judge: correct | 4 | 0 |" in summary
    evaluate("bongard/real/*", Recorder(WRONG), str(tmp_path / "b"), count=2, size=16, progress=False,
             settings=given, judge=AlwaysCorrect())
    summary = (tmp_path / "b" / "summary.md").read_text()
    assert "They agree on 0 of 4 (0.00%)" in summary and "| rule judge: incorrect | 4 | 0 |" in summary
    again = VerbatimJudge()                                                 # judge replies come from the cache
    evaluate("bongard/real/*", Recorder(), str(tmp_path / "a"), count=2, size=16, progress=False, settings=given,
             judge=again)
    assert again.prompts == []
    with pytest.raises(UserError, match="none of the 1 tasks has one"):
        evaluate("jigsaw/anomaly", Recorder(), str(tmp_path / "c"), count=1, size=16, progress=False,
                 judge=AlwaysCorrect())


def test_eval_and_generate_from_the_command_line(problems, tmp_path, capsys):
    sets = ["--set", f"bongard.problems={problems}"]
    assert main(["eval", "bongard/real/*", "--model", "oracle", "--judge", "oracle", "--protocol",
                 "bongard-contrastive-direct", "--count", "1", "--size", "16", "--quiet", "--out",
                 str(tmp_path / "run"), *sets]) == 0
    summary = (tmp_path / "run" / "summary.md").read_text()
    assert "mean accuracy 100.00%" in capsys.readouterr().out and "They agree on 2 of 2 (100.00%)" in summary
    assert "| bongard/real/size/reds | 1 | 100.00 | 0.00 | — | — |" in summary and "nan" not in summary
    assert main(["generate", "bongard/real/*", "--out", str(tmp_path / "data"), "--count", "2", "--size", "16",
                 "--format", "imagefolder", "--quiet", *sets]) == 0
    m = json.loads((tmp_path / "data" / "manifest.json").read_text())
    assert m["tasks"] == sorted(IDS) and m["total"] == 4 and m["config"]["settings"] == {
        "bongard.problems": str(problems)}
    assert sum(f.endswith(".png") for f in m["files"]) == 2 * 15 + 2 * 13
    mixed = generate("bongard/*/size/*", str(tmp_path / "mixed"), count=1, size=16, progress=False,
                     settings={"bongard.problems": str(problems)})
    assert "bongard/real/size/reds" in mixed["tasks"] and "bongard/classic/size/large_vs_small" in mixed["tasks"]
    assert verify(str(tmp_path / "data")) == [] and verify(str(tmp_path / "mixed")) == []
    capsys.readouterr()
    assert main(["list", "bongard/real/*", *sets]) == 0 and capsys.readouterr().out.split() == sorted(IDS)
    assert main(["baselines", "bongard/real/*", "--n", "50", *sets]) == 0
    out = capsys.readouterr().out
    assert [line.split()[1:3] for line in out.splitlines()[1:]] == [["—", "—"]] * 2 and "nan" not in out


class Named(Recorder):
    def __init__(self, name, reply=None):
        super().__init__(reply)
        self.name = name


def test_one_table_of_models_and_strategies_from_several_runs(problems, tmp_path, capsys):
    given = {"bongard.problems": str(problems)}
    runs = [("model-a", "bongard-direct", None), ("model-a", "bongard-contrastive-direct", WRONG),
            ("model-b", "bongard-direct", None)]
    for k, (model, protocol, reply) in enumerate(runs):
        evaluate("bongard/real/*", Named(model, reply), str(tmp_path / f"run{k}"), count=2, size=16,
                 progress=False, protocol=protocol, settings=given, judge=AlwaysCorrect() if k < 2 else None)
    evaluate("bongard/classic/number/three_vs_five", Named("model-b"), str(tmp_path / "run3"), count=1, size=16,
             progress=False, protocol="bongard-direct")
    folders = [str(tmp_path / f"run{k}") for k in range(4)]
    assert main(["report", *folders, "--out", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "| Model | Strategy | n | all | number | presence | same | semantic | shape | size | spatial | " \
           "uncategorised |" in text
    assert "| Humans (paper, real images) | — | — | 0.745 | 0.823 |" in text and "| Chance | — | — | — |" in text
    assert "| `model-a` | `bongard-direct` | 4 | 1.000 | — | — | — | — | — | 1.000 | — | 1.000 | 1.000 (4) |" in text
    assert "| `model-a` | `bongard-contrastive-direct` | 4 | 0.000 |" in text and "| 0.000 (4) |" in text
    assert "| `model-b` | `bongard-direct` | 4 | 1.000 | — | — | — | — | — | 1.000 | — | 1.000 | — |" in text
    assert "| `model-b` | `bongard-direct` | 1 | 1.000 | 1.000 |" in text                  # classic table
    assert "### real problems from folders" in text and "### classic procedural problems" in text
    assert "measured on the paper's own real images" in text and "Chance is —: a free-text answer" in text
    assert "nan" not in text and "{" not in text
    with pytest.raises(UserError, match="both score sample"):
        write_report([folders[0], folders[0] + "/."], tmp_path / "again")
    with pytest.raises(UserError, match="results.json' does not exist"):
        write_report([str(tmp_path)], tmp_path / "again")
