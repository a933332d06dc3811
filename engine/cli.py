"""The ``procvis`` command line.

Every user error (unknown task, bad size or count, unknown setting, unwritable output)
ends with one line ``procvis: error: ...`` on stderr and exit code 2, before anything is
written; any other exception is a bug and keeps its traceback.

The engine's own commands are defined here; other packages add theirs as entry points of
the group ``procvis.commands`` (each a :class:`Command`), so the engine imports neither
``evals`` nor ``benchmarks``. Nothing heavy is imported before the arguments are parsed:
``procvis --help`` and ``procvis list`` answer without loading torch.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kernels.errors import SetupError

from . import registry
from .canvas import MAX_SIDE, canvas_size
from .errors import UserError
from .scene import Scene, parse_color
from .stats import chance, critical_accuracy, percent

EXIT_USAGE = 2
COMMANDS_GROUP = "procvis.commands"


@dataclass(frozen=True)
class Command:
    """A sub-command: ``arguments(parser)`` declares its options, ``run(args) -> int`` runs it
    (imports of heavy modules belong inside ``run``); ``epilog()`` may add text to its help."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    epilog: Callable[[], str] | None = None


# ---------------------------------------------------------------- option types shared by commands

def positive_int(name: str):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {text!r}") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {text!r}")
        return v
    return parse


def canvas(text: str) -> tuple[int, int]:
    """``N`` or ``HxW`` -> ``(H, W)``."""
    try:
        return canvas_size(tuple(text.split("x")) if "x" in text else text)
    except UserError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def side(text: str) -> int:
    """``N`` -> N; ``HxW`` is refused: task panels have their own shapes."""
    if "x" in text:
        raise argparse.ArgumentTypeError(
            f"--size {text!r}: give one number of pixels N (1..{MAX_SIDE}); a task's panels keep their own shapes "
            "(a square panel is N x N, a collage of several images is wider)")
    return canvas(text)[0]


def setting(text: str) -> tuple[str, str]:
    name, eq, value = text.partition("=")
    if not eq or "." not in name:
        raise argparse.ArgumentTypeError(f"--set {text!r}: expected FAMILY.SETTING=VALUE, e.g. jigsaw.images=/data/photos")
    return name.strip(), value


def settings_of(args) -> dict:
    """The ``--set`` options as a dict of qualified names (later ones win)."""
    return dict(getattr(args, "set", None) or [])


def sampling_options(p: argparse.ArgumentParser, count: int, size: int | None, quiet: bool = True) -> None:
    """The options every sampling command shares: --count, --seed, --size, --set (and --quiet);
    ``size`` None: each family's native panel side."""
    p.add_argument("--count", type=positive_int("--count"), default=count, help="samples per task")
    p.add_argument("--seed", type=int, default=0, help="dataset seed: with task and index it decides every sample")
    p.add_argument("--size", type=side, default=size, metavar="N",
                   help="panel side in pixels" if size is not None else
                   "panel side in pixels (default: each family's native size, e.g. 224; Percept-V 512)")
    p.add_argument("--set", type=setting, action="append", metavar="FAMILY.SETTING=VALUE", default=[],
                   help="a family setting (repeatable; see 'procvis families'), e.g. jigsaw.images=/data/photos")
    if quiet:
        p.add_argument("--quiet", action="store_true", help="no progress bar")


def writable_parent(path: Path) -> None:
    import os

    parent = path.parent if str(path.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create folder {str(parent)!r}: {e.strerror}") from None
    if not os.access(parent, os.W_OK):
        raise UserError(f"folder {str(parent)!r} is not writable")


# ---------------------------------------------------------------- the engine's commands

def _list_args(p):
    p.add_argument("pattern", nargs="?", help="glob pattern, e.g. 'elvis/closure/*' (all tasks when left out)")
    p.add_argument("--set", type=setting, action="append", metavar="FAMILY.SETTING=VALUE", default=[],
                   help="a family setting (repeatable), e.g. bongard.problems=DIR, whose folder provides tasks")


def _list(a) -> int:
    given = settings_of(a)
    pattern = "*" if a.pattern is None and given else a.pattern
    ids = registry.list_tasks() if pattern is None else [t.id for t in registry.resolve(pattern, given)]
    sys.stdout.write("".join(t + "\n" for t in ids))
    return 0


def _families_args(p):
    pass


def _families(a) -> int:
    """Every family with its task roots, protocols and settings (current value and source)."""
    import os

    tasks = [registry.get_task(t) for t in registry.list_tasks()]
    protocols = registry.protocols()
    for name in registry.families():
        fam = registry.get_family(name)
        mine = [t.id for t in tasks if t.family == name]
        roots = sorted({t.split("/", 1)[0] for t in mine})
        print(f"{name}: {fam.about}")
        print(f"  tasks: {len(mine)} under {', '.join(r + '/' for r in roots)}")
        print(f"  protocols: {', '.join(['direct'] + [n for n, p in protocols.items() if p.family == name])}")
        for s in fam.settings.values():
            env = f", or ${s.env}" if s.env else ""
            now = os.environ.get(s.env) if s.env and os.environ.get(s.env) else s.default
            print(f"  setting {name}.{s.name} = {now!r}  ({s.help}; set with --set {name}.{s.name}=VALUE{env})")
    return 0


def _generate_args(p):
    p.add_argument("pattern", help="task id or glob pattern")
    p.add_argument("--out", required=True, help="output folder (a resumed run must use the same settings)")
    sampling_options(p, count=10, size=224)
    p.add_argument("--format", choices=("parquet", "imagefolder"), default="parquet", help="shard format")
    p.add_argument("--workers", type=positive_int("--workers"), default=1, help="worker processes")
    p.add_argument("--shard-size", type=positive_int("--shard-size"), default=256, help="samples per shard")


def _generate(a) -> int:
    import signal

    from .outputs import generate          # torch: loaded when the command runs, not to parse it

    try:
        m = generate(a.pattern, a.out, seed=a.seed, count=a.count, size=a.size, fmt=a.format, workers=a.workers,
                     shard_size=a.shard_size, progress=not a.quiet, settings=settings_of(a))
    except KeyboardInterrupt as e:         # workers ended, temporary files removed: say how to resume
        signum = getattr(e, "signum", signal.SIGINT)
        print(f"procvis: interrupted by {signal.Signals(signum).name}; run the same command again to resume",
              file=sys.stderr)
        return 128 + signum
    print(f"wrote {m['total']} samples of {len(m['tasks'])} tasks to {a.out} ({len(m['files'])} files)")
    return 0


def _preview_args(p):
    p.add_argument("pattern", help="task id or glob pattern")
    p.add_argument("--out", required=True, help="the contact sheet, a .png file")
    sampling_options(p, count=8, size=192, quiet=False)


def _preview(a) -> int:
    from .preview import preview           # torch: loaded when the command runs

    out = Path(a.out)
    if out.suffix.lower() != ".png":
        raise UserError(f"--out {a.out!r} must be a .png file")
    writable_parent(out)
    path = preview(a.pattern, out, count=a.count, seed=a.seed, size=a.size, settings=settings_of(a))
    print(f"wrote {path}")
    return 0


def _render_args(p):
    p.add_argument("scene", help='JSON file: {"background": [r,g,b], "primitives": [{"kind": ..., ...}]} or a list')
    p.add_argument("--out", required=True, help="the image, a .png file (several scenes are drawn side by side)")
    p.add_argument("--size", type=canvas, default=(224, 224), metavar="N|HxW",
                   help="canvas side N, or height x width (scene units are fractions of the width)")


def _render(a) -> int:
    """Render a JSON scene file: ``{"background": [r,g,b], "primitives": [{"kind": ..., ...}]}``."""
    from kernels.layout import stitch      # torch: loaded when the command runs

    from .preview import save_png
    from .rendering import render

    try:
        spec = json.loads(Path(a.scene).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise UserError(f"cannot read scene file {a.scene!r}: {e}") from None
    specs = spec if isinstance(spec, list) else [spec]
    scenes = []
    for k, sd in enumerate(specs):
        if not isinstance(sd, dict) or not isinstance(sd.get("primitives"), list):
            raise UserError(f"scene {k} must be an object with a 'primitives' list")
        bg = sd.get("background", (255, 255, 255))
        bg = bg if isinstance(bg, str) else tuple(bg) if isinstance(bg, list) else bg
        try:
            parse_color(bg)
        except ValueError as e:              # the file's value, checked by the scene API
            raise UserError(f"scene {k} background: {e}") from None
        s = Scene(background=bg)
        for i, p in enumerate(sd["primitives"]):
            if not isinstance(p, dict) or "kind" not in p:
                raise UserError(f"scene {k} primitive {i} must be an object with a 'kind'")
            params = {key: (tuple(v) if isinstance(v, list) and key not in ("points",) else v)
                      for key, v in p.items() if key != "kind"}
            try:
                s.add(p["kind"], **params)
            except ValueError as e:          # the file's values, checked by the scene API
                raise UserError(f"scene {k} primitive {i}: {e}") from None
        scenes.append(s)
    out = Path(a.out)
    writable_parent(out)
    imgs = render(scenes, a.size)
    save_png(stitch(imgs) if len(imgs) > 1 else imgs[0], out)
    print(f"wrote {out}")
    return 0


def _demo_args(p):
    p.add_argument("--pattern", default="*", help="tasks to generate")
    p.add_argument("--out", default="out/demo", help="output folder")
    sampling_options(p, count=4, size=224)


def _demo(a) -> int:
    from .outputs import generate          # torch: loaded when the command runs
    from .preview import preview

    out = Path(a.out)
    m = generate(a.pattern, str(out), seed=a.seed, count=a.count, size=a.size, progress=not a.quiet, workers=2,
                 settings=settings_of(a))
    sheet = preview(a.pattern, out / "contact_sheet.png", count=min(max(len(registry.list_tasks(a.pattern)), 8), 24),
                    seed=a.seed, settings=settings_of(a))
    print(f"wrote {m['total']} samples of {len(m['tasks'])} tasks to {out}/ and a contact sheet at {sheet}")
    return 0


def _baselines_args(p):
    p.add_argument("pattern", help="task id or glob pattern")
    p.add_argument("--n", type=positive_int("--n"), default=1100, help="items per task")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the one-sided binomial test")
    p.add_argument("--set", type=setting, action="append", metavar="FAMILY.SETTING=VALUE", default=[],
                   help="a family setting (repeatable), e.g. bongard.problems=DIR, whose folder provides tasks")


def _baselines(a) -> int:
    """Chance accuracy and the exact one-sided binomial p < alpha threshold per task."""
    if not 0 < a.alpha < 1:
        raise UserError(f"--alpha {a.alpha!r} must lie strictly between 0 and 1")
    tasks = sorted(registry.resolve(a.pattern, settings_of(a)), key=lambda t: (t.root, t.rank, t.id))
    missing = [t.id for t in tasks if t.answer_distribution is None and not t.open_answer]
    if missing:
        raise UserError(f"no stated answer distribution for {', '.join(missing[:3])}"
                        f"{' and more' if len(missing) > 3 else ''}; baselines need tasks that declare one")
    width = max(len(t.id) for t in tasks)
    print(f"{'task':<{width}}  {'chance %':>8}  {'p<' + str(a.alpha) + ' %':>8}   (n = {a.n})")
    closed = []
    for t in tasks:
        if t.open_answer:                  # free text graded by a judge: nothing to guess from
            print(f"{t.id:<{width}}  {'—':>8}  {'—':>8}   free text graded by a judge: no chance level")
            continue
        p0 = chance(t.answer_distribution)
        # Critical accuracy as the papers report it: k/n rounded to one decimal.
        level = critical_accuracy(a.n, p0, a.alpha)
        crit = f"{percent(level, 1):8.2f}" if level == level else f"{'–':>8}"     # NaN: n of n does not reach it
        open_answer = t.sample(0, 0).answer_type != "fixed"
        if not open_answer:
            closed.append(p0)
        note = "   open answer: not in the overall" if open_answer else ""
        print(f"{t.id:<{width}}  {percent(p0):8.2f}  {crit}{note}")
    if closed:
        print(f"{'overall (mean of the closed-answer tasks)':<{width}}  {percent(sum(closed) / len(closed)):8.2f}")
    return 0


def _report_args(p):
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders written by 'procvis eval' (one model under "
                                                          "one protocol each)")
    p.add_argument("--out", required=True, help="folder for report.md (and the families' plots)")


def _report(a) -> int:
    """One report over several runs: each family's table over all of them (Bongard: models x strategies)."""
    from .reports import write_report

    print(f"wrote {write_report(a.runs, a.out)}")
    return 0


ENGINE_COMMANDS = (
    Command("list", "print registered task ids, one per line", _list_args, _list),
    Command("families", "describe every family: its tasks, protocols and settings", _families_args, _families),
    Command("generate", "write a dataset (Parquet or imagefolder shards + manifest)", _generate_args, _generate),
    Command("preview", "contact sheet of samples with question and answer", _preview_args, _preview),
    Command("render", "render a JSON scene file to PNG", _render_args, _render),
    Command("demo", "generate a small sample of every task and a contact sheet", _demo_args, _demo),
    Command("baselines", "chance accuracy and significance thresholds per task", _baselines_args, _baselines),
    Command("report", "one report over several 'procvis eval' runs (e.g. models x strategies)", _report_args,
            _report),
)


# ---------------------------------------------------------------- the parser

class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help text with every option's default (or that it is required); epilogs as written."""

    def _get_help_string(self, action):
        text = action.help or ""
        optional_positional = not action.option_strings and action.nargs == "?" and action.default is not None
        if (not action.option_strings and not optional_positional) or action.default is argparse.SUPPRESS \
                or "%(default)" in text:
            return text
        if action.required:
            return text + " (required)"
        if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            return text + f" (default: {'on' if action.default else 'off'})"
        default = action.default
        if isinstance(default, tuple) and len(default) == 2 and default[0] == default[1]:
            default = default[0]                     # a square canvas size
        if default in (None, [], ""):
            return text + " (default: none)"
        return text + f" (default: {default})"


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block), exit code 2, and an epilog that may
    be computed when the help is shown."""

    epilog_fn: Callable[[], str] | None = None

    def error(self, message):
        self.exit(EXIT_USAGE, f"procvis: error: {message}\n")

    def format_help(self):
        if self.epilog_fn is not None:
            self.epilog = self.epilog_fn()
        return super().format_help()


def plugin_commands() -> list[Command]:
    """The commands other packages declare as entry points of ``procvis.commands``."""
    from importlib.metadata import entry_points

    out = []
    for ep in sorted(entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
        cmd = ep.load()
        if not isinstance(cmd, Command):
            raise TypeError(f"entry point {ep.name} = {ep.value} is not an engine.cli.Command")
        out.append(cmd)
    return out


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="procvis", description="Batched procedural rendering of visual-cognition benchmarks.",
                formatter_class=_Formatter)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    for cmd in [*ENGINE_COMMANDS, *plugin_commands()]:
        s = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help, formatter_class=_Formatter)
        s.epilog_fn = cmd.epilog
        cmd.arguments(s)
        s.set_defaults(fn=cmd.run)
    return p


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    try:
        return a.fn(a)
    except (UserError, SetupError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"procvis: error: {msg}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    # Run the imported module, not this copy named __main__: plug-in commands are instances
    # of engine.cli.Command.
    from engine.cli import main as _main

    sys.exit(_main())
