"""The ``procvis`` command line.

Every user error (unknown task, bad size or count, unknown primitive kind, unwritable
output) ends with one line ``procvis: error: ...`` on stderr and exit code 2, before
anything is written.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_USAGE = 2


class CLIError(ValueError):
    pass


def _positive_int(name):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {text!r}") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {text!r}")
        return v
    return parse


def _size(text):
    from .render import canvas_size

    try:
        return canvas_size(text if "x" not in text else tuple(text.split("x")))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def cmd_list(a) -> int:
    from .registry import list_tasks, resolve

    ids = list_tasks() if a.pattern is None else [t.id for t in resolve(a.pattern)]
    sys.stdout.write("".join(t + "\n" for t in ids))
    return 0


def cmd_generate(a) -> int:
    from .outputs import generate

    m = generate(a.pattern, a.out, seed=a.seed, count=a.count, size=a.size[0] if a.size[0] == a.size[1] else a.size,
                 fmt=a.format, workers=a.workers, shard_size=a.shard_size, progress=not a.quiet)
    print(f"wrote {m['total']} samples of {len(m['tasks'])} tasks to {a.out} ({len(m['files'])} files)")
    return 0


def cmd_preview(a) -> int:
    from .preview import preview

    out = Path(a.out)
    if out.suffix.lower() != ".png":
        raise CLIError(f"--out {a.out!r} must be a .png file")
    _writable_parent(out)
    path = preview(a.pattern, out, count=a.count, seed=a.seed, size=a.size[0])
    print(f"wrote {path}")
    return 0


def _writable_parent(path: Path) -> None:
    import os

    parent = path.parent if str(path.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CLIError(f"cannot create folder {str(parent)!r}: {e.strerror}") from None
    if not os.access(parent, os.W_OK):
        raise CLIError(f"folder {str(parent)!r} is not writable")


def cmd_render(a) -> int:
    """Render a JSON scene file: ``{"background": [r,g,b], "primitives": [{"kind": ..., ...}]}``."""
    from .preview import save_png
    from .render import render
    from .scene import Scene

    try:
        spec = json.loads(Path(a.scene).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise CLIError(f"cannot read scene file {a.scene!r}: {e}") from None
    specs = spec if isinstance(spec, list) else [spec]
    scenes = []
    for k, sd in enumerate(specs):
        if not isinstance(sd, dict) or not isinstance(sd.get("primitives"), list):
            raise CLIError(f"scene {k} must be an object with a 'primitives' list")
        s = Scene(background=tuple(sd.get("background", (255, 255, 255))))
        for i, p in enumerate(sd["primitives"]):
            if not isinstance(p, dict) or "kind" not in p:
                raise CLIError(f"scene {k} primitive {i} must be an object with a 'kind'")
            params = {key: (tuple(v) if isinstance(v, list) and key not in ("points",) else v)
                      for key, v in p.items() if key != "kind"}
            try:
                s.add(p["kind"], **params)
            except ValueError as e:
                raise CLIError(f"scene {k} primitive {i}: {e}") from None
        scenes.append(s)
    out = Path(a.out)
    _writable_parent(out)
    imgs = render(scenes, a.size)
    from kernels.layout import stitch

    save_png(stitch(imgs) if len(imgs) > 1 else imgs[0], out)
    print(f"wrote {out}")
    return 0


def cmd_demo(a) -> int:
    from .outputs import generate
    from .preview import preview
    from .registry import list_tasks

    out = Path(a.out)
    m = generate(a.pattern, str(out), seed=a.seed, count=a.count, size=a.size[0], progress=not a.quiet, workers=2)
    sheet = preview(a.pattern, out / "contact_sheet.png", count=min(max(len(list_tasks(a.pattern)), 8), 24),
                    seed=a.seed)
    print(f"wrote {m['total']} samples of {len(m['tasks'])} tasks to {out}/ and a contact sheet at {sheet}")
    return 0


def cmd_baselines(a) -> int:
    """Chance accuracy and the exact one-sided binomial p < alpha threshold per task."""
    from evals.baselines import chance, critical_accuracy, percent

    from .registry import resolve

    tasks = sorted(resolve(a.pattern), key=lambda t: (t.family, t.rank, t.id))
    missing = [t.id for t in tasks if t.answer_distribution is None]
    if missing:
        raise CLIError(f"no stated answer distribution for {', '.join(missing[:3])}"
                       f"{' and more' if len(missing) > 3 else ''}; baselines need tasks that declare one")
    width = max(len(t.id) for t in tasks)
    print(f"{'task':<{width}}  {'chance %':>8}  {'p<' + str(a.alpha) + ' %':>8}   (n = {a.n})")
    closed = []
    for t in tasks:
        p0 = chance(t.answer_distribution)
        # Critical accuracy as the papers report it: k/n rounded to one decimal.
        crit = percent(critical_accuracy(a.n, p0, a.alpha), 1)
        open_answer = t.sample(0, 0).answer_type != "fixed"
        if not open_answer:
            closed.append(p0)
        note = "   open answer: not in the overall" if open_answer else ""
        print(f"{t.id:<{width}}  {percent(p0):8.2f}  {crit:8.2f}{note}")
    if closed:
        print(f"{'overall (mean of the closed-answer tasks)':<{width}}  {percent(sum(closed) / len(closed)):8.2f}")
    return 0


def cmd_eval(a) -> int:
    from evals.harness import evaluate
    from evals.runners import make_runner

    runner = make_runner(a.model, a.seed, device=a.device, batch_size=a.batch_size)
    rows = evaluate(a.pattern, runner, a.out, count=a.count, seed=a.seed, batch_size=a.batch_size,
                    size=a.size[0], progress=not a.quiet, protocol=a.protocol)
    mean = sum(r["accuracy"] for r in rows.values()) / len(rows)
    print(f"{runner.name}: mean accuracy {100 * mean:.2f}% over {len(rows)} tasks; see {a.out}/summary.md")
    return 0


def cmd_tiny_model(a) -> int:
    from evals.tiny_model import build_tiny_model

    _writable_parent(Path(a.out) / "x")
    print(f"wrote a tiny random vision-language checkpoint to {build_tiny_model(a.out, seed=a.seed)}")
    return 0


def cmd_bench(a) -> int:
    if a.eval:
        from benchmarks import eval_bench

        return eval_bench.main(quick=a.quick, out=a.results)
    if a.elvis:
        from benchmarks import elvis_bench

        return elvis_bench.main(quick=a.quick, out=a.results)
    if a.perceptv:
        from benchmarks import perceptv_bench

        return perceptv_bench.main(quick=a.quick, out=a.results)
    if a.bongard:
        from benchmarks import bongard_bench

        return bongard_bench.main(quick=a.quick, out=a.results)
    if a.kiva:
        from benchmarks import kiva_bench

        return kiva_bench.main(quick=a.quick, out=a.results)
    from benchmarks import render_bench

    return render_bench.main(quick=a.quick, out=a.results)


def _sampling_args(s, count: int, size: int) -> None:
    """The options every sampling command shares: --count, --seed, --size, --quiet."""
    s.add_argument("--count", type=_positive_int("--count"), default=count, help="samples per task")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--size", type=_size, default=(size, size), help="image side in pixels (or HxW)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block) and exit code 2."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"procvis: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="procvis", description="Batched procedural rendering of visual-cognition benchmarks.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("list", help="print registered task ids, one per line")
    s.add_argument("pattern", nargs="?", help="glob pattern, e.g. 'shapes/*'")
    s.set_defaults(fn=cmd_list)

    s = sub.add_parser("generate", help="write a dataset (Parquet or imagefolder shards + manifest)")
    s.add_argument("pattern")
    s.add_argument("--out", required=True)
    _sampling_args(s, count=10, size=224)
    s.add_argument("--format", choices=("parquet", "imagefolder"), default="parquet")
    s.add_argument("--workers", type=_positive_int("--workers"), default=1)
    s.add_argument("--shard-size", type=_positive_int("--shard-size"), default=256)
    s.set_defaults(fn=cmd_generate)

    s = sub.add_parser("preview", help="contact sheet of samples with question and answer")
    s.add_argument("pattern")
    s.add_argument("--out", required=True)
    s.add_argument("--count", type=_positive_int("--count"), default=8)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--size", type=_size, default=(192, 192))
    s.set_defaults(fn=cmd_preview)

    s = sub.add_parser("render", help="render a JSON scene file to PNG")
    s.add_argument("scene")
    s.add_argument("--out", required=True)
    s.add_argument("--size", type=_size, default=(224, 224))
    s.set_defaults(fn=cmd_render)

    s = sub.add_parser("demo", help="generate a small sample of every task and a contact sheet")
    s.add_argument("--pattern", default="*")
    s.add_argument("--out", default="out/demo")
    _sampling_args(s, count=4, size=224)
    s.set_defaults(fn=cmd_demo)

    s = sub.add_parser("baselines", help="chance accuracy and significance thresholds per task")
    s.add_argument("pattern")
    s.add_argument("--n", type=_positive_int("--n"), default=1100, help="items per task")
    s.add_argument("--alpha", type=float, default=0.05)
    s.set_defaults(fn=cmd_baselines)

    s = sub.add_parser("eval", help="run a model on samples and score it (results.json, summary.md)")
    s.add_argument("pattern")
    s.add_argument("--model", required=True, help="random, oracle, vit (ELVIS ViT-B/16 baseline; vit:WEIGHTS for local weights), "
                        "or the folder of a local Hugging Face checkpoint")
    s.add_argument("--device", default="cpu")
    s.add_argument("--protocol", default="direct", help="evaluation protocol (direct: the question with every panel)")
    s.add_argument("--out", required=True)
    _sampling_args(s, count=10, size=224)
    s.add_argument("--batch-size", type=_positive_int("--batch-size"), default=8)
    s.set_defaults(fn=cmd_eval)

    s = sub.add_parser("tiny-model", help="write a tiny random vision-language checkpoint (offline tests, plumbing)")
    s.add_argument("--out", required=True)
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(fn=cmd_tiny_model)

    s = sub.add_parser("bench", help="render throughput vs a Pillow reference; writes benchmarks/RESULTS.md")
    s.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    s.add_argument("--eval", action="store_true", help="evaluation throughput instead of rendering")
    s.add_argument("--elvis", action="store_true", help="ELVIS dataset generation (all 3,388 tasks) vs Pillow")
    s.add_argument("--perceptv", action="store_true", help="Percept-V dataset generation vs reference-style scripts")
    s.add_argument("--bongard", action="store_true", help="Bongard problems per second vs the reference figure")
    s.add_argument("--kiva", action="store_true", help="KiVA trials per second vs the public scripts")
    s.add_argument("--results", default=None, help="markdown file to write (default: print only)")
    s.set_defaults(fn=cmd_bench)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    a = parser.parse_args(argv)
    try:
        return a.fn(a)
    except (ValueError, FileNotFoundError, PermissionError, TypeError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"procvis: error: {msg}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
