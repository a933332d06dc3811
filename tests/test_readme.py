"""The README speaks of what exists: every task id it names is registered, every family
and protocol it names is one, and every repository path it names is there."""
import re
from pathlib import Path

from engine.registry import families, get_task, list_tasks, protocols

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
ROOTS = {t.split("/", 1)[0] for t in list_tasks()}


def _quoted() -> list[str]:
    return re.findall(r"`([^`\s]+)`", README) + re.findall(r"'([^'\s]+)'", README)


def test_every_task_id_in_the_readme_is_registered():
    tokens = {t.strip("`'\"(),.:;") for t in README.split()}
    ids = {t for t in tokens if t.split("/", 1)[0] in ROOTS and "/" in t
           and not any(c in t for c in "*<{[") and not t.endswith("/")}
    assert len(ids) >= 8
    for tid in sorted(ids):
        get_task(tid)                                  # raises naming the id when it is not a task


def test_every_protocol_named_exists():
    named = set(re.findall(r"--protocol (\S+)", README)) | set(re.findall(r"`(bongard-[a-z-]+|kiva[a-z-]*|elvis[a-z-]*|perceptv[0-9a-z-]*)`", README))
    named = {n for n in named if n in protocols() or "-" in n}
    assert named and all(n in protocols() for n in named), named - set(protocols())
    assert set(families()) == {"bongard", "elvis", "jigsaw", "kiva", "perceptv", "shapes"}


def test_every_path_in_the_readme_exists():
    paths = {q for q in _quoted() if re.fullmatch(r"(engine|kernels|scenes|evals|benchmarks|tests)/[\w/.]+\.(py|md|png|json)", q)}
    paths |= set(re.findall(r"\]\(((?:scenes|benchmarks)/[\w/.]+)\)", README))
    assert len(paths) >= 10
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, missing
