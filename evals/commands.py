"""The evaluation commands, added to ``procvis`` through the ``procvis.commands`` entry points:
``procvis eval``, ``procvis audit`` and ``procvis tiny-model``. Heavy imports happen when a command runs."""
from __future__ import annotations

from pathlib import Path

from engine.cli import Command, integer, positive_int, real, sampling_options, settings_of, writable_parent
from engine.errors import UserError
from engine.registry import check_fit, get_protocol, protocols, resolve, runners


def _eval_args(p) -> None:
    p.add_argument("pattern", help="task id or glob pattern")
    p.add_argument("--model", required=True,
                   help="random, oracle, a family's runner (listed below), replies:FILE.jsonl (replies made elsewhere, "
                        "one JSON line {id, turn, reply} per sample and turn), the folder of a local Hugging Face "
                        "vision-language checkpoint, or its Hub id ORG/NAME[@REVISION] found in the local cache "
                        "(nothing is downloaded)")
    p.add_argument("--data", default=None, metavar="DIR",
                   help="score the samples of a dataset folder written by 'procvis generate' (its images, seed, size "
                        "and settings; --count defaults to its count) instead of rendering them")
    p.add_argument("--protocol", default="direct", help="how the model is asked; the protocols are listed below")
    p.add_argument("--device", default="cpu", help="torch device of the model (samples are rendered on the CPU)")
    p.add_argument("--out", required=True, help="run folder: results.json, transcripts.jsonl, summary.md, plots")
    sampling_options(p, count=10, size=None)
    p.set_defaults(count=Unset(10), seed=Unset(0))      # with --data: the folder's own unless given
    p.add_argument("--batch-size", type=positive_int("--batch-size"), default=8, help="requests per model call")
    _generation_args(p)
    p.add_argument("--judge", default=None, metavar="MODEL",
                   help="also grade every free-text final reply with the family's model judge, a text model given "
                        "like --model (a family runner or a local checkpoint folder); the rule judge stays the score "
                        "and summary.md reports how often the two agree")


class Unset(int):
    """A default the user did not give (an ``int`` that prints as one under ``--help``)."""


def _given(value):
    """``value``, or None where it is an :class:`Unset` default."""
    return None if isinstance(value, Unset) else value


def _generation_args(p) -> None:
    g = p.add_argument_group("generation (Hugging Face checkpoints)")
    g.add_argument("--max-new-tokens", type=positive_int("--max-new-tokens", 1 << 20), default=None, metavar="N",
                   help="reply length limit in tokens (default: the longest of the run's families' defaults, "
                        "e.g. KiVA 300)")
    g.add_argument("--temperature", type=real("--temperature", 0.0, 1e6), default=0.0,
                   help="0 (default): greedy decoding; above 0: sampling, seeded by --seed and each batch's samples")
    g.add_argument("--top-p", type=real("--top-p", 0.0, 1.0), default=1.0, help="nucleus sampling mass, in (0, 1]")
    g.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16", "auto"],
                   help="weights' dtype (auto: the checkpoint's own)")
    g.add_argument("--device-map", default=None, metavar="MAP",
                   help="passed to from_pretrained (e.g. auto: spread over the GPUs; needs accelerate); "
                        "replaces --device")
    g.add_argument("--trust-remote-code", action="store_true",
                   help="run a checkpoint whose model or processor is Python code in its folder (auto_map in "
                        "config.json); off by default: such a checkpoint is refused, never prompted for")


def _protocol_list() -> str:
    rows = []
    for name, cls in protocols().items():
        about = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        rows.append(f"  {name:<31} {about}")
    models = [f"  {name:<31} {about}" for name, about in runners().items()]
    return "protocols:\n" + "\n".join(rows) + ("\n\nfamily runners (--model):\n" + "\n".join(models) if models else "")


def _check_protocol(a, settings: dict | None = None) -> list:
    """Refuse, before any model is loaded or any file written, a ``--protocol`` that is not one
    or that does not fit the family of every task ``a.pattern`` names under ``settings``
    (default: the ``--set`` options; a :class:`UserError` naming the protocol, the first task
    it does not fit and that task family's protocols); returns the tasks when it fits."""
    tasks = resolve(a.pattern, settings_of(a) if settings is None else settings)
    check_fit(get_protocol(a.protocol), tasks)
    return tasks


def _generation(a, tasks) -> dict:
    """The Hugging Face runner's generation settings from the command's options (the
    families' default ``max_new_tokens`` when it is not given, see
    :func:`evals.hf_runner.default_max_new_tokens`) and ``--trust-remote-code``. Returns them
    as keyword arguments."""
    from .hf_runner import default_max_new_tokens, parse_dtype

    parse_dtype(a.dtype)
    if not 0 < a.top_p <= 1:
        raise UserError(f"--top-p {a.top_p!r}: must lie in (0, 1]")
    tokens = a.max_new_tokens or default_max_new_tokens(t.family for t in tasks)
    return {"max_new_tokens": tokens, "temperature": a.temperature, "top_p": a.top_p, "dtype": a.dtype,
            "device_map": a.device_map, "trust_remote_code": a.trust_remote_code}


def _eval(a) -> int:
    """``procvis eval``: returns the exit status (0)."""
    from .harness import evaluate           # torch, transformers: loaded when the command runs
    from .runners import make_runner

    settings, seed, count = settings_of(a), int(a.seed), int(a.count)
    if a.data:
        from .datafolder import DataFolder

        folder = DataFolder(a.data)                          # the tasks and seed as the dataset drew them
        settings = settings or folder.settings
        seed = folder.seed if _given(a.seed) is None else a.seed      # a different --seed is refused by evaluate
        count = _given(a.count)                                       # None: the folder's count
    tasks = _check_protocol(a, settings)
    generation = _generation(a, tasks)
    runner = make_runner(a.model, seed, device=a.device, batch_size=a.batch_size, generation=generation)
    judge = make_runner(a.judge, seed, device=a.device, batch_size=a.batch_size, generation=generation) \
        if a.judge else None
    rows = evaluate(a.pattern, runner, a.out, count=count, seed=seed, batch_size=a.batch_size, size=a.size,
                    progress=not a.quiet, protocol=a.protocol, settings=settings_of(a) or None, judge=judge,
                    data=a.data, run={"options": _options(a)})
    mean = sum(r["accuracy"] for r in rows.values()) / len(rows)
    print(f"{runner.name}: mean accuracy {100 * mean:.2f}% over {len(rows)} tasks; see {a.out}/summary.md")
    return 0


def _options(a) -> dict:
    """The command's model options as eval_run.json records them (a checkpoint's generation
    settings, family default filled in, are the model's own entry there)."""
    return {"model": a.model, "judge": a.judge, "device": a.device_map or a.device}


def _tiny_args(p) -> None:
    p.add_argument("--out", required=True, help="checkpoint folder to write")
    p.add_argument("--seed", type=int, default=0, help="weight initialisation seed")


def _tiny(a) -> int:
    from .tiny_model import build_tiny_model   # transformers: loaded when the command runs

    writable_parent(Path(a.out) / "x")
    print(f"wrote a tiny random vision-language checkpoint to {build_tiny_model(a.out, seed=a.seed)}")
    return 0


def _audit_args(p) -> None:
    p.add_argument("pattern", nargs="+", help="task ids or glob patterns")
    p.add_argument("--out", required=True, help="folder for audit.json, AUDIT.md and plots")
    sampling_options(p, count=24, size=None)


def _audit(a) -> int:
    from .audit.report import write_report      # torch, numba: loaded when the command runs
    from .audit.run import audit

    writable_parent(Path(a.out) / "x")
    result = audit(a.pattern, count=a.count, seed=a.seed, size=a.size, settings=settings_of(a),
                   progress=not a.quiet)
    path = write_report(result, a.out)
    failing = sum(any(v.startswith("fail") for v in r["bars"].values()) for r in result["tasks"].values())
    print(f"audited {len(result['tasks'])} tasks in {result['seconds']:.0f} s: {failing} fail a bar; see {path}")
    return 0


EVAL = Command("eval", "run a model on samples and score it (results.json, summary.md)", _eval_args, _eval,
               epilog=_protocol_list)
AUDIT = Command("audit", "check that each task's score measures its skill: shortcut probes, answer "
                "predictability, reply battery, legibility, solvability (audit.json, AUDIT.md)", _audit_args, _audit)
TINY_MODEL = Command("tiny-model", "write a tiny random vision-language checkpoint (offline tests, plumbing)",
                     _tiny_args, _tiny)
