"""The evaluation commands, added to ``procvis`` through the ``procvis.commands`` entry points:
``procvis eval``, ``procvis audit`` and ``procvis tiny-model``. Heavy imports happen when a command runs."""
from __future__ import annotations

from pathlib import Path

from engine.cli import Command, positive_int, sampling_options, settings_of, writable_parent
from engine.registry import check_fit, get_protocol, protocols, resolve, runners


def _eval_args(p) -> None:
    p.add_argument("pattern", help="task id or glob pattern")
    p.add_argument("--model", required=True,
                   help="random, oracle, a family's runner (listed below), or the folder of a local Hugging Face "
                        "vision-language checkpoint")
    p.add_argument("--protocol", default="direct", help="how the model is asked; the protocols are listed below")
    p.add_argument("--device", default="cpu", help="torch device of the model (samples are rendered on the CPU)")
    p.add_argument("--out", required=True, help="run folder: results.json, transcripts.jsonl, summary.md, plots")
    sampling_options(p, count=10, size=None)
    p.add_argument("--batch-size", type=positive_int("--batch-size"), default=8, help="requests per model call")
    p.add_argument("--judge", default=None, metavar="MODEL",
                   help="also grade every free-text final reply with the family's model judge, a text model given "
                        "like --model (a family runner or a local checkpoint folder); the rule judge stays the score "
                        "and summary.md reports how often the two agree")


def _protocol_list() -> str:
    rows = []
    for name, cls in protocols().items():
        about = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        rows.append(f"  {name:<31} {about}")
    models = [f"  {name:<31} {about}" for name, about in runners().items()]
    return "protocols:\n" + "\n".join(rows) + ("\n\nfamily runners (--model):\n" + "\n".join(models) if models else "")


def _check_protocol(a) -> None:
    """Refuse, before any model is loaded or any file written, a ``--protocol`` that is not one
    or that does not fit the family of every task ``a.pattern`` names (a :class:`UserError`
    naming the protocol, the first task it does not fit and that task family's protocols);
    returns None when it fits."""
    check_fit(get_protocol(a.protocol), resolve(a.pattern, settings_of(a)))


def _eval(a) -> int:
    """``procvis eval``: returns the exit status (0)."""
    from .harness import evaluate           # torch, transformers: loaded when the command runs
    from .runners import make_runner

    _check_protocol(a)
    runner = make_runner(a.model, a.seed, device=a.device, batch_size=a.batch_size)
    judge = make_runner(a.judge, a.seed, device=a.device, batch_size=a.batch_size) if a.judge else None
    rows = evaluate(a.pattern, runner, a.out, count=a.count, seed=a.seed, batch_size=a.batch_size, size=a.size,
                    progress=not a.quiet, protocol=a.protocol, settings=settings_of(a), judge=judge)
    mean = sum(r["accuracy"] for r in rows.values()) / len(rows)
    print(f"{runner.name}: mean accuracy {100 * mean:.2f}% over {len(rows)} tasks; see {a.out}/summary.md")
    return 0


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
