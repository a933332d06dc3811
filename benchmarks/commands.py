"""``procvis bench``, added through the ``procvis.commands`` entry points: runs one of the
throughput benchmarks of this package and records it in a results file."""
from __future__ import annotations

import importlib

from engine.cli import Command
from engine.errors import UserError

# name -> (module, what it measures)
BENCHMARKS = {
    "render": ("render_bench", "render throughput vs a Pillow reference drawing the same scenes"),
    "raster": ("raster_bench", "the numba rasterizer and the replaced geometry operations, before vs after"),
    "eval": ("eval_bench", "evaluation throughput: in-process tensors vs a PNG round trip"),
    "elvis": ("elvis_bench", "ELVIS dataset generation (all 3,388 tasks) vs Pillow drawing the same scenes"),
    "perceptv": ("perceptv_bench", "Percept-V dataset generation vs reference-style scripts"),
    "bongard": ("bongard_bench", "Bongard problems per second vs the reference figure"),
    "kiva": ("kiva_bench", "KiVA trials per second vs the public scripts"),
    "jigsaw": ("jigsaw_bench", "built-in Jigsaw photographs and items per second per task"),
    "stream": ("stream_bench", "streams with batched sampling vs drawing one sample at a time, same positions"),
    "ray": ("ray_bench", "generate --ray on a local 2-node Ray cluster vs --workers 2, and the scaling model"),
    "gpu": ("gpu_bench", "the CUDA path: parity with the CPU per family; render, stream and eval images/s"),
    "profile": ("profile_bench", "per family: sampling, collation, rendering, encoding, writing per sample"),
}


def _args(p) -> None:
    p.add_argument("benchmark", nargs="?", default="render", choices=list(BENCHMARKS), metavar="NAME",
                   help="which benchmark (listed below)")
    p.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    p.add_argument("--results", default=None, help="markdown file to update; without it the results are only printed")


def _list() -> str:
    return "benchmarks:\n" + "\n".join(f"  {name:<10} {about}" for name, (_, about) in BENCHMARKS.items())


def _run(a) -> int:
    if a.results is not None and not a.results.endswith(".md"):
        raise UserError(f"--results {a.results!r} must be a markdown (.md) file")
    module = importlib.import_module(f"{__package__}.{BENCHMARKS[a.benchmark][0]}")
    return module.main(quick=a.quick, out=a.results)


BENCH = Command("bench", "throughput benchmarks; writes benchmarks/RESULTS.md", _args, _run, epilog=_list)
