"""The baseline runners (random, oracle) and ``make_runner``, which turns a ``--model``
value into a runner.

A runner is anything with ``name`` and ``generate(requests) -> list[str]`` (one reply per
request, in order; the contract is :class:`engine.protocol.Runner`). Protocols build
requests; runners never see tasks; scoring reads replies. A runner may also state an
``identity``, a string naming everything its replies depend on (a checkpoint's contents and
the generation settings); the evaluation cache keys on it (see :func:`runner_identity`).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from engine.errors import UserError
from engine import registry
from engine.protocol import Request, Runner
from engine.task import Task


def answer_space(task: Task, n: int = 512) -> tuple[tuple[str, float], ...]:
    """The distribution of ``task``'s gold answers under its settings: the one the task
    states, else the empirical one over ``n`` samples at a seed no dataset uses (answers in
    the family's own format when it has one), rounded up to whole copies of the benchmark
    (``Family.block``: Percept-V's 10 problems per size weigh every size alike). Returns
    ``((answer, p), ...)``; computed once per task identity (id and settings)."""
    block = registry.get_family(task.family).block
    n = -(-n // block) * block
    key = (task.identity, n)
    if key not in _SPACES:
        _SPACES[key] = _answer_space(task, n)
    return _SPACES[key]


_SPACES: dict[tuple[str, int], tuple[tuple[str, float], ...]] = {}


def _answer_space(task: Task, n: int) -> tuple[tuple[str, float], ...]:
    if task.answer_distribution:
        total = sum(task.answer_distribution.values())
        return tuple((a, p / total) for a, p in task.answer_distribution.items())
    counts: dict[str, int] = {}
    for s in task.samples(2 ** 31 - 1, range(n)):
        text = s.reply_text                                   # written as the family writes answers
        counts[text] = counts.get(text, 0) + 1
    return tuple((a, c / n) for a, c in sorted(counts.items()))


class RandomRunner:
    """Guesses drawn from each task's answer distribution (so its expected accuracy is the
    chance row ``sum p^2``), or uniformly from a turn's own ``choices`` when the protocol
    names them (a staged question's option numbers), seeded per request id: the same
    request, the same guess. For a free-text task (``open_answer``) it declines to answer:
    chance is 0 there."""

    def __init__(self, seed: int = 0):
        self.seed = int(seed)
        self.name = f"random-{self.seed}"

    def generate(self, requests: list[Request]) -> list[str]:
        out = []
        for r in requests:
            key = int.from_bytes(hashlib.blake2b(f"{self.seed}\x00{r.id}".encode(), digest_size=8).digest(), "little")
            pick = np.random.Generator(np.random.Philox(key=key))
            if r.choices:
                out.append(r.choices[int(pick.integers(len(r.choices)))])
                continue
            task = registry.bound_task(r.task, r.settings)
            if task.open_answer:                  # no distribution to draw a free-text answer from
                out.append("I do not know.")
                continue
            answers, probs = zip(*answer_space(task))
            out.append(answers[int(pick.choice(len(answers), p=probs))])
        return out


class OracleRunner:
    """Replies with the gold answer: validates a pipeline end to end (it must score 100%)."""

    name = "oracle"

    def generate(self, requests: list[Request]) -> list[str]:
        return [r.gold for r in requests]


def runner_identity(runner: Runner) -> str:
    """What the evaluation cache keys ``runner``'s replies on: its ``identity`` when it states
    one, else its ``name`` with its class's module and qualified name (so two runner classes
    sharing a name keep their replies apart)."""
    identity = getattr(runner, "identity", None)
    if isinstance(identity, str) and identity:
        return identity
    cls = type(runner)
    return f"{runner.name} ({cls.__module__}.{cls.__qualname__})"


def make_runner(model: str, seed: int = 0, device: str = "cpu", batch_size: int = 8,
                generation: dict | None = None) -> Runner:
    """``random``, ``oracle``, ``replies:FILE.jsonl`` (replies made elsewhere), a runner a
    family registered (``NAME`` or ``NAME:ARG``, e.g. ``vit``, the ELVIS baseline), a model
    behind an OpenAI-compatible endpoint (``openai:MODEL@URL``, see ``evals.openai_runner``), or a local
    Hugging Face vision-language checkpoint (its folder, or its Hub id in the local cache),
    run with the ``generation`` settings (``max_new_tokens``, ``temperature``, ``top_p``,
    ``dtype``, ``device_map``; sampling is seeded by ``seed``). Returns the runner."""
    if model.startswith("replies:"):
        from .replies_runner import RepliesRunner

        return RepliesRunner(model[len("replies:"):])
    if model.startswith("openai:"):             # a served model: openai:MODEL@URL (stdlib HTTP only)
        from .openai_runner import OpenAIRunner, parse_model

        name, url = parse_model(model)
        kept = {k: v for k, v in (generation or {}).items() if k in ("max_new_tokens", "temperature", "top_p")
                and v is not None}                # dtype, device_map: the server's business
        return OpenAIRunner(url, name, seed=seed, **kept)
    if model == "random":
        return RandomRunner(seed)
    if model == "oracle":
        return OracleRunner()
    family_runner = registry.get_runner(model, seed=seed, device=device, batch_size=batch_size)
    if family_runner is not None:
        return family_runner
    from .hf_runner import is_hub_id

    if (Path(model) / "config.json").is_file() or is_hub_id(model):
        from .hf_runner import HFRunner          # transformers: only for this runner

        return HFRunner(model, device=device, batch_size=batch_size, seed=seed, **(generation or {}))
    names = ", ".join(["random", "oracle", *(f"{n}[:ARG]" for n in registry.runners()), "replies:FILE.jsonl"])
    allowed = f"expected {names}, a folder holding a Hugging Face checkpoint (config.json) or a Hub id ORG/NAME in " \
              "the local cache"
    if model.startswith((".", "/", "~")) and not Path(model).expanduser().exists():
        raise UserError(f"--model {model!r}: no such folder; {allowed}")
    if Path(model).is_dir():
        raise UserError(f"--model {model!r}: the folder holds no config.json, so it is not a Hugging Face "
                        "checkpoint (save one with save_pretrained, or name the folder that holds config.json)")
    raise UserError(f"--model {model!r}: {allowed}")
