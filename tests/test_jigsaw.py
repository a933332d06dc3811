"""Jigsaw tasks: answers re-derived from the pixels handed to the model, declared answer
distributions matching the generator, hard distractors closer than easy ones, sources."""
import collections
import warnings

import numpy as np
import pytest
import torch
from PIL import Image

import scenes.jigsaw.tasks as J
from engine.cli import main
from engine.errors import UserError
from engine.registry import get_task, list_tasks
from tests.selection import slow_except
from kernels import tiles as T
from kernels.images import colour_dct
from scenes.jigsaw.puzzle import drawn_labels
from scenes.jigsaw.sources import FolderSource, HFSource, SourceError, source_for

TASKS = list_tasks("jigsaw/*")
SMALL = {"jigsaw.images": "generated:12", "jigsaw.image_size": 96}


@pytest.fixture
def small_source():
    return source_for("generated:12", 96)


def _img(panel) -> torch.Tensor:
    return panel.sprites[0]


def _derive(s, src) -> str:
    """The gold answer recomputed from the shown images and the source photo alone."""
    full = src[s.meta["image"]]
    task = s.task
    if task.startswith("jigsaw/missing_piece"):
        masked = _img(s.panels[0])
        cells = T.split(masked[None], 3, 3)[0]
        hole = [t for t in range(9) if bool((cells[t] == 255).all())]
        assert len(hole) == 1
        truth = T.split(full[None], 3, 3)[0, hole[0]]
        hits = [k for k in range(4) if torch.equal(_img(s.panels[1 + k]), truth)]
        assert len(hits) == 1
        return "ABCD"[hits[0]]
    if task.startswith("jigsaw/localization"):
        g = 2 if task.endswith("easy") else 3
        masked = T.split(_img(s.panels[0])[None], g, g)[0]
        holes = [t for t in range(g * g) if bool((masked[t] == 255).all())]
        truth = T.split(full[None], g, g)[0]
        hits = [j for j, t in enumerate(holes) if torch.equal(truth[t], _img(s.panels[1]))]
        assert len(hits) == 1
        return drawn_labels(s.panels[0], g)[hits[0]]            # the letter drawn in that hole
    quarters = T.split(full[None], 2, 2)[0]
    if task == "jigsaw/connection":
        a, b = [next(t for t in range(4) if torch.equal(quarters[t], _img(p))) for p in s.panels]
        return "A" if a // 2 == b // 2 else ("B" if a % 2 == b % 2 else "C")
    if task == "jigsaw/anomaly":
        shown = T.split(_img(s.panels[0])[None], 2, 2)[0]
        bad = [t for t in range(4) if not torch.equal(shown[t], quarters[t])]
        if not bad:
            return J.anomaly_answer(None, None)
        assert len(bad) == 1
        q = bad[0]
        rotated = any(torch.equal(torch.rot90(quarters[q], k, (-2, -1)), shown[q]) for k in (1, 2, 3))
        mirrored = torch.equal(torch.flip(quarters[q], (-1,)), shown[q]) or torch.equal(torch.flip(quarters[q], (-2,)), shown[q])
        assert rotated != mirrored
        return J.anomaly_answer("ABCD"[q], "A" if rotated else "B")
    order = [next(j + 1 for j, p in enumerate(s.panels) if torch.equal(_img(p), quarters[r])) for r in range(4)]
    if task == "jigsaw/order_generation":
        return "[" + ", ".join(map(str, order)) + "]"
    listed = s.meta["options"]
    return "ABCD"[listed.index("[" + ", ".join(map(str, order)) + "]")]


@pytest.mark.parametrize("task_id", TASKS)
def test_answers_follow_from_the_pixels(task_id, small_source):
    for s in get_task(task_id, SMALL).samples(3, range(40)):
        assert _derive(s, small_source) == s.answer_text


# the hard levels place their answer as the easy ones do; their searches (distractors that fit
# the hole, a place told apart by its content) make 600 samples 10-20 s each: the slow run counts them
@pytest.mark.parametrize("task_id", slow_except(TASKS, [t for t in TASKS if not t.endswith("/hard")]))
def test_declared_answer_distribution_matches_the_generator(task_id):
    task = get_task(task_id, SMALL)
    n = 600
    counts = collections.Counter(s.answer_text for s in task.samples(5, range(n)))
    dist = task.answer_distribution
    assert set(counts) <= set(dist)
    for answer, p in dist.items():
        sd = (n * p * (1 - p)) ** 0.5
        assert abs(counts[answer] - n * p) <= 5 * sd + 1, (answer, counts[answer], n * p)


def test_hard_distractors_look_more_like_the_missing_piece():
    sims = {}
    for level in ("easy", "hard"):
        vals = []
        task = get_task(f"jigsaw/missing_piece/{level}", {"jigsaw.images": "generated:80", "jigsaw.image_size": 96})
        for s in task.samples(0, range(30)):
            pieces = torch.stack([_img(p) for p in s.panels[1:]])
            feats = colour_dct(pieces)
            k = "ABCD".index(s.answer)
            vals += [float(feats[j] @ feats[k]) for j in range(4) if j != k]
        sims[level] = np.mean(vals)
    assert sims["hard"] > sims["easy"] + 0.05, sims


def test_baselines_print_the_published_rows(capsys):
    assert main(["baselines", "jigsaw/*", "--n", "1100"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split()[1:3] for line in lines[1:]}
    expect = {"jigsaw/missing_piece/easy": ["25.00", "27.30"], "jigsaw/missing_piece/hard": ["25.00", "27.30"],
              "jigsaw/localization/easy": ["50.00", "52.50"], "jigsaw/localization/hard": ["25.00", "27.30"],
              "jigsaw/connection": ["33.33", "35.70"], "jigsaw/anomaly": ["28.13", "30.50"],
              "jigsaw/order_restoration": ["25.00", "27.30"]}
    for task, want in expect.items():
        assert rows[task] == want, task
    assert lines[-1].startswith("overall") and lines[-1].split()[-1] == "30.21"
    assert "open answer" in next(line for line in lines if line.startswith("jigsaw/order_generation"))


def _write(path, arr):
    Image.fromarray(arr).save(path)


def test_folder_source_skips_and_counts_bad_images(tmp_path):
    rng = np.random.default_rng(0)
    _write(tmp_path / "good.png", rng.integers(0, 256, (300, 400, 3), dtype=np.uint8))
    (tmp_path / "sub").mkdir()
    _write(tmp_path / "sub" / "good2.jpg", rng.integers(0, 256, (320, 320, 3), dtype=np.uint8))
    _write(tmp_path / "small.png", rng.integers(0, 256, (50, 60, 3), dtype=np.uint8))
    _write(tmp_path / "wide.png", rng.integers(0, 256, (300, 900, 3), dtype=np.uint8))
    _write(tmp_path / "flat.png", np.full((300, 300, 3), 128, np.uint8))
    (tmp_path / "broken.jpg").write_bytes(b"not an image")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        src = FolderSource(tmp_path, size=96)
    assert [p.name for p in src.paths] == ["good.png", "good2.jpg"]
    assert src.skipped == {"too small": 1, "aspect ratio": 1, "low structure": 1, "unreadable": 1}
    assert any("skipped 4 of 6" in str(x.message) for x in w)
    assert src[0].shape == (3, 96, 96) and src[0].dtype == torch.uint8


def test_empty_or_missing_sources_are_clear_errors(tmp_path):
    with pytest.raises(SourceError, match="holds no usable image"):
        FolderSource(tmp_path)
    with pytest.raises(SourceError, match="does not exist"):
        FolderSource(tmp_path / "nope")
    with pytest.raises(SourceError, match="does not exist"):
        HFSource(tmp_path / "nope")


def test_local_hugging_face_dataset_source(tmp_path):
    import datasets

    rng = np.random.default_rng(1)
    imgs = [Image.fromarray(rng.integers(0, 256, (300, 360, 3), dtype=np.uint8)) for _ in range(3)]
    imgs.insert(1, Image.fromarray(rng.integers(0, 256, (40, 40, 3), dtype=np.uint8)))     # too small
    datasets.Dataset.from_dict({"image": imgs}, features=datasets.Features({"image": datasets.Image()})) \
        .save_to_disk(str(tmp_path / "ds"))
    with pytest.warns(UserWarning, match="skipped 1 of 4"):
        src = HFSource(tmp_path / "ds", size=48)
    assert len(src) == 3 and src.rows == [0, 2, 3] and src[2].shape == (3, 48, 48)
    assert src.skipped == {"too small": 1}
    with pytest.raises(SourceError, match="no column 'photo'"):
        HFSource(tmp_path / "ds", column="photo")


def test_hard_distractors_from_a_local_clip_style_checkpoint(tmp_path):
    from transformers import CLIPConfig, CLIPModel

    from scenes.jigsaw.features import ModelFeatures

    torch.manual_seed(0)
    cfg = CLIPConfig(text_config=dict(hidden_size=32, intermediate_size=37, num_attention_heads=4, num_hidden_layers=1,
                                      vocab_size=99, eos_token_id=2, bos_token_id=1, pad_token_id=0),
                     vision_config=dict(hidden_size=32, intermediate_size=37, num_attention_heads=4,
                                        num_hidden_layers=1, image_size=32, patch_size=8), projection_dim=16)
    CLIPModel(cfg).save_pretrained(tmp_path / "clip")
    emb = ModelFeatures(tmp_path / "clip")
    x = torch.randint(0, 256, (5, 3, 40, 40), dtype=torch.uint8)
    f = emb(x)
    assert f.shape == (5, 16) and torch.allclose(f.norm(dim=1), torch.ones(5), atol=1e-5)
    assert torch.allclose(emb(x[:2]), f[:2], atol=1e-5)             # batch invariant
    settings = {"jigsaw.images": "generated:10", "jigsaw.image_size": 96, "jigsaw.embedder": str(tmp_path / "clip")}
    s = get_task("jigsaw/missing_piece/hard", settings).sample(0, 0)
    assert len(s.meta["distractor_images"]) == 3 and len(s.meta["distractor_boxes"]) == 3
    pieces = [p.sprites[0] for p in s.panels[1:]]
    truth = pieces["ABCD".index(s.answer_text)]
    assert sum(torch.equal(p, truth) for p in pieces) == 1
    assert s.settings["embedder"] == str(tmp_path / "clip")                 # recorded with the sample
    with pytest.raises(UserError, match="no model checkpoint"):
        ModelFeatures(tmp_path / "missing")
    with pytest.raises(UserError, match="jigsaw.embedder=.*no model checkpoint"):
        get_task("jigsaw/missing_piece/hard", {"jigsaw.embedder": str(tmp_path / "missing")})


@pytest.mark.slow
@pytest.mark.parametrize("task_id", TASKS)
def test_answers_follow_from_the_pixels_on_the_default_images(task_id):
    src = source_for("generated", 384)
    for seed in (0, 1):
        for s in get_task(task_id).samples(seed, range(0, 1100, 11)):
            assert _derive(s, src) == s.answer_text


def test_cli_reports_an_empty_image_folder_in_one_line(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, PROCVIS_JIGSAW_IMAGES=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "engine.cli", "preview", "jigsaw/*", "--out", str(tmp_path / "x.png")],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2 and not (tmp_path / "x.png").exists()
    assert r.stderr.strip().splitlines()[-1].startswith("procvis: error:") and "holds no usable image" in r.stderr
