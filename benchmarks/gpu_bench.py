"""The CUDA path on a GPU, one run: parity of the torch renderer on CUDA with the numba
renderer on the CPU for every family (the same samples drawn both ways), and images/s of
rendering (a collated batch), of the ELVIS stream into GPU memory and of in-process
evaluation, each beside the CPU path measured on the same machine in the same run.
Run: ``procvis bench gpu [--quick] [--results ...]`` on a machine with CUDA.
"""
from __future__ import annotations

import os
import time

import torch

from engine.batch import SceneBatch
from engine.errors import UserError
from engine.outputs import render_samples
from engine.registry import get_task, list_tasks
from engine.rendering import render
from kernels.raster_torch import COMPILE_ENV, FUSED_ENV

from .render_bench import make_scenes, rate
from .results_file import publish, run_meta

FAMILIES = ("shapes/*", "elvis/*", "perceptv/*", "perceptv_fixed/*", "kiva/*", "kiva_adults/*",
            "kiva_compositional/*", "bongard/*", "jigsaw/*")
SIZE = 224


def _tasks(pattern: str, n: int) -> list[str]:
    """Up to ``n`` task ids of ``pattern``, spread evenly over its sorted list."""
    ids = list_tasks(pattern)
    return [ids[k * len(ids) // n] for k in range(min(n, len(ids)))]


def _sync() -> None:
    torch.cuda.synchronize()


def parity(per_family: int, samples: int = 2) -> list[dict]:
    """Per family: panels compared, the largest difference in 0..255 levels between CUDA and
    the CPU renderer, the share of channel values more than 2 apart, and the task where the
    largest difference occurred."""
    rows = []
    for pattern in FAMILIES:
        row = {"family": pattern, "tasks": 0, "panels": 0, "max": 0, "over2": 0, "values": 0, "worst": ""}
        for t in _tasks(pattern, per_family):
            try:
                ss = get_task(t).samples(0, range(samples))
            except Exception as e:          # e.g. a machine without the 3D stack: reported, not fatal
                row.setdefault("errors", []).append(f"{t}: {type(e).__name__}: {str(e)[:120]}")
                continue
            for cpu, gpu in zip(render_samples(ss, SIZE, device="cpu"), render_samples(ss, SIZE, device="cuda")):
                _compare(row, t, cpu, gpu)
            row["tasks"] += 1
        rows.append(row)
        print(f"parity {pattern:<22} {row['tasks']:>4} tasks {row['panels']:>5} panels  max {row['max']}  "
              f"over 2: {row['over2']}/{row['values']}", row.get("errors", ""), flush=True)
    return rows


def _compare(row: dict, task: str, cpu: list, gpu: list) -> None:
    for a, b in zip(cpu, gpu):
        d = (a.int() - b.cpu().int()).abs()
        row["panels"] += 1
        row["over2"] += int((d > 2).sum())
        row["values"] += d.numel()
        if int(d.max()) > row["max"]:
            row["max"], row["worst"] = int(d.max()), task


def render_rates(quick: bool) -> list[dict]:
    """Images/s of one collated batch at 224 px on CUDA (several batch sizes, the primitives'
    copy to the device included): the default path (the fused pass when Triton is installed),
    the tiled path, and the tiled path compiled; and with numba on all the machine's cores."""
    repeats = 3 if quick else 7
    rows = []
    for prims in (5, 20, 100):
        base = make_scenes(prims, 256, seed=prims)
        cpu = SceneBatch.from_scenes(base * 4)
        row = {"prims": prims, "numba": rate(len(cpu), lambda: render(cpu, SIZE, backend="numba"), repeats)}
        for b in (1024, 4096) if quick else (1024, 4096, 16384):
            batch = SceneBatch.from_scenes(base * (b // len(base)))

            def on_gpu(batch=batch):
                render(batch, SIZE, device="cuda")
                _sync()
            row[f"cuda_{b}"] = rate(b, on_gpu, repeats)          # the fused pass where Triton is installed
            os.environ[FUSED_ENV] = "0"
            try:
                row[f"tiled_{b}"] = rate(b, on_gpu, repeats)
                if b == 4096:                   # the tiled path's coverage compiled (warm-up compiles)
                    os.environ[COMPILE_ENV] = "1"
                    row[f"compiled_{b}"] = rate(b, on_gpu, repeats)
            finally:
                os.environ.pop(COMPILE_ENV, None)
                os.environ.pop(FUSED_ENV)
        rows.append(row)
        print("render", prims, "prims:", {k: round(v[0]) for k, v in row.items() if k != "prims"}, flush=True)
    return rows


def upload_ms(prims: int = 20, batch: int = 4096, repeats: int = 7) -> dict:
    """Milliseconds to put one collated batch's primitives on the GPU (``batch`` scenes of
    ``prims`` primitives), waited for: one pageable copy per tensor, and the packed pinned
    copy the renderer uses (:func:`kernels.transfer.to_device`)."""
    from kernels.transfer import to_device

    host = list(SceneBatch.from_scenes(make_scenes(prims, 256, seed=prims) * (batch // 256)).primitives)
    out = {"prims": prims, "batch": batch, "bytes": sum(t.numel() * t.element_size() for t in host)}
    for name, copy in (("per_tensor", lambda: [t.to("cuda") for t in host]), ("packed", lambda: to_device(host, "cuda"))):
        copy()
        _sync()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            copy()
            _sync()
            times.append(1e3 * (time.perf_counter() - t0))
        out[name] = sorted(times)[len(times) // 2]
    print("upload", out, flush=True)
    return out


_FIRST_RENDER = """import time, torch
t0 = time.perf_counter()
from benchmarks.render_bench import make_scenes
from engine.batch import SceneBatch
from engine.rendering import render
batch = SceneBatch.from_scenes(make_scenes(20, 256, seed=20) * 4)
torch.zeros(1, device="cuda"); torch.cuda.synchronize()
t1 = time.perf_counter()
render(batch, 224, device="cuda"); torch.cuda.synchronize()
t2 = time.perf_counter()
render(batch, 224, device="cuda"); torch.cuda.synchronize()
print(round(t2 - t1, 2), round(time.perf_counter() - t2, 3), round(t1 - t0, 2))"""


_FIRST_DEFAULT = ("default_cold", "default_warm", "tiled")


def first_render_seconds(timeout: float = 150, only: tuple = ()) -> dict:
    """A fresh process's first render on CUDA (1,024 scenes of 20 primitives, 224 px, CUDA
    already initialised): ``(first, second)`` seconds of the default path (the fused pass where
    Triton is installed) with an empty kernel cache, then with the cache the first run left on
    disk, and of the tiled path; ``only`` names which to run, the tiled path compiled
    (``compiled_cold``, ``compiled_warm``: 22 and 11 s on an H100, kept out of the default
    run) among them."""
    import subprocess
    import sys
    import tempfile

    out = {}
    with tempfile.TemporaryDirectory() as cache:
        for name, extra in (("default_cold", {}), ("default_warm", {}), ("tiled", {FUSED_ENV: "0"}),
                            ("compiled_cold", {FUSED_ENV: "0", COMPILE_ENV: "1"}),
                            ("compiled_warm", {FUSED_ENV: "0", COMPILE_ENV: "1"})):
            if name not in (only or _FIRST_DEFAULT):
                continue
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, TRITON_CACHE_DIR=os.path.join(cache, "triton"))
            env.pop(COMPILE_ENV, None)
            env.pop(FUSED_ENV, None)
            env.update(extra)
            try:
                p = subprocess.run([sys.executable, "-c", _FIRST_RENDER], env=env, capture_output=True, text=True,
                                   timeout=timeout)
                first, second, _ = (float(v) for v in p.stdout.split()[-3:])
                out[name] = (first, second)
            except (subprocess.TimeoutExpired, ValueError) as e:
                out[name] = f"failed: {type(e).__name__}"
            print("first render", name, out[name], flush=True)
    return out


def render_profile(prims: int = 20, batch: int = 4096, top: int = 12) -> list[tuple[str, float]]:
    """The CUDA kernels taking most of the device time of one render of ``batch`` collated
    scenes of ``prims`` primitives at 224 px: ``(name, share of device time)``."""
    from torch.profiler import ProfilerActivity, profile

    scenes = SceneBatch.from_scenes(make_scenes(prims, 256, seed=prims) * (batch // 256))
    render(scenes, SIZE, device="cuda")
    _sync()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        render(scenes, SIZE, device="cuda")
        _sync()
    events = [e for e in prof.key_averages() if e.device_time_total > 0 and e.device_type.name == "CUDA"]
    total = sum(e.device_time_total for e in events) or 1.0
    events.sort(key=lambda e: -e.device_time_total)
    rows = [(e.key[:90], e.device_time_total / total) for e in events[:top]]
    print(f"profile: {total / 1e3:.1f} ms of device time for {batch} images;",
          "; ".join(f"{n} {s:.0%}" for n, s in rows), flush=True)
    return rows


def stream_rates(quick: bool) -> dict:
    """Images/s of ``stream('elvis/*')`` at 224 px, batch 256, read to the end of a bounded
    stream: rendered on CUDA in the main process, and rendered by the CPU in DataLoader
    workers (one per core) then copied to the GPU; and sampled by those workers, rendered on
    CUDA in the main process (``defer=True``)."""
    from torch.utils.data import DataLoader

    from engine.streams import stream

    batches = 8 if quick else 40
    out = {"batch": 256, "images": 256 * batches}

    def main_process():
        for b in stream("elvis/*", seed=0, batch_size=256, size=SIZE, device="cuda", count=256 * batches):
            b["images"].float().mean()
        _sync()
    out["cuda_main"] = rate(256 * batches, main_process, 1)
    workers = max(1, (os.cpu_count() or 2) - 1)
    ds = stream("elvis/*", seed=1, batch_size=256, size=SIZE, count=256 * batches, threads=1)
    loader = DataLoader(ds, batch_size=None, num_workers=workers, pin_memory=True, prefetch_factor=4,
                        persistent_workers=True)        # started by the warm-up pass, not timed

    def cpu_workers():
        for b in loader:
            b["images"].to("cuda", non_blocking=True).float().mean()
        _sync()
    out["workers"] = workers
    out["cpu_workers_to_cuda"] = rate(256 * batches, cpu_workers, 2)
    deferred = DataLoader(stream("elvis/*", seed=1, batch_size=256, size=SIZE, count=256 * batches, threads=1,
                                 defer=True), batch_size=None, num_workers=workers, pin_memory=True,
                          prefetch_factor=4, persistent_workers=True)

    def frames_to_cuda():
        for b in deferred:
            b["frames"].render("cuda").float().mean()
        _sync()
    out["frames_to_cuda"] = rate(256 * batches, frames_to_cuda, 2)
    print("stream", {k: (round(v[0]) if isinstance(v, tuple) else v) for k, v in out.items()}, flush=True)
    return out



class _Blank(torch.utils.data.IterableDataset):
    """``n`` ready-made ``[256,3,224,224]`` uint8 batches in all, shared among the workers:
    what a DataLoader alone can hand over (no sampling, no drawing)."""

    def __init__(self, n: int):
        self.n = n

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        share = self.n // (info.num_workers if info else 1)
        for _ in range(share):
            yield {"images": torch.full((256, 3, SIZE, SIZE), 7, dtype=torch.uint8)}


def stream_limits(device: str = "cuda", workers=(1, 2, 4, 8, 15), per_worker: int = 8) -> dict:
    """What bounds ``stream('elvis/*')`` into ``device`` memory with DataLoader workers, in
    images/s: one process sampling only (``defer=True``, no render) and sampling + drawing on
    the CPU; the DataLoader handing over ready-made image batches (receipt alone); and the stream with
    each count of ``workers`` (CPU drawing, then copied), ``per_worker`` batches of 256 each;
    and with the most workers only sampling (``defer=True``) in batches of 256 and 1,024 that the main
    process renders on ``device`` (the fastest path for a GPU)."""
    from engine.streams import stream

    out: dict = {"cores": os.cpu_count()}
    n = 8 * 256
    it = iter(stream("elvis/*", seed=2, batch_size=256, size=SIZE, defer=True, threads=1))
    next(it)
    t = time.perf_counter()
    for _ in range(8):
        next(it)
    out["sample_only_1proc"] = n / (time.perf_counter() - t)
    it = iter(stream("elvis/*", seed=3, batch_size=256, size=SIZE, threads=1))
    next(it)
    t = time.perf_counter()
    for _ in range(8):
        next(it)
    out["sample_draw_1proc_1thread"] = n / (time.perf_counter() - t)
    top = max(workers)
    for pin in (True, False):
        out[f"receipt_pin{int(pin)}"] = _receipt_rate(device, top, pin)
    for w in workers:
        out[f"workers_{w}"] = _workers_rate(device, w, per_worker)
        print("limits", w, round(out[f"workers_{w}"]), flush=True)
    out["deferred_256"] = _deferred_rate(device, top, per_worker * 3, 256)
    out["deferred_1024"] = _deferred_rate(device, top, max(2, per_worker * 3 // 4), 1024)
    print("limits", {k: round(v) for k, v in out.items()}, flush=True)
    return out


def _timed_pass(loader, device: str, key: str, first_wave: int) -> float:
    """Images/s of one pass over ``loader`` (items carry ``key``: images, moved to ``device``,
    or frames, rendered there): the items after the ``first_wave`` (one per worker, which
    the workers draw at once when the pass starts) over the time from the first item to the
    last, so that neither start-up nor prefetched items count."""
    t, got = None, 0
    for i, b in enumerate(loader):
        v = b[key]
        (v.to(device, non_blocking=True) if key == "images" else v.render(device)).float().mean()
        if t is None:
            if device == "cuda":
                torch.cuda.synchronize()
            t = time.perf_counter()
        if i >= first_wave:
            got += len(v)
    if device == "cuda":
        torch.cuda.synchronize()
    return got / (time.perf_counter() - t)


def _receipt_rate(device: str, workers: int, pin: bool) -> float:
    """Images/s a DataLoader hands over from ``workers`` workers yielding ready-made batches."""
    from torch.utils.data import DataLoader

    loader = DataLoader(_Blank(workers * 8), batch_size=None, num_workers=workers,
                        pin_memory=pin and device == "cuda", prefetch_factor=4)
    return _timed_pass(loader, device, "images", workers)


def _workers_rate(device: str, workers: int, per_worker: int) -> float:
    """Images/s of the ELVIS stream drawn on the CPU by ``workers`` workers, then moved."""
    from torch.utils.data import DataLoader

    from engine.streams import stream

    count = 256 * per_worker * workers
    loader = DataLoader(stream("elvis/*", seed=4, batch_size=256, size=SIZE, count=count, threads=1),
                        batch_size=None, num_workers=workers, pin_memory=device == "cuda", prefetch_factor=2)
    return _timed_pass(loader, device, "images", workers)


def _deferred_rate(device: str, workers: int, per_worker: int, batch: int) -> float:
    """Images/s of the deferred ELVIS stream in batches of ``batch`` from ``workers`` DataLoader
    workers (``per_worker`` batches each), rendered in the main process on ``device``."""
    from torch.utils.data import DataLoader

    from engine.streams import stream

    batches = per_worker * workers
    loader = DataLoader(stream("elvis/*", seed=6, batch_size=batch, size=SIZE, count=batch * batches, threads=1,
                               defer=True), batch_size=None, num_workers=workers,
                        pin_memory=device == "cuda", prefetch_factor=2)
    render(make_scenes(20, 8), SIZE, device=device)       # the device path compiled before the pass
    return _timed_pass(loader, device, "frames", workers)


def held_frames(device: str = "cuda", batches=(256, 1024), images: int = 2048, tiled: bool = True,
                compiled: bool = False) -> dict:
    """The GPU side of a deferred ELVIS stream alone: images/s of rendering frames the main
    process already holds (sampled beforehand, pinned on CUDA), per batch size, on the default
    path (the fused pass where Triton is installed), on the tiled path (``tiled``) and on the
    tiled path compiled (``compiled``: its warm-up compiles for many seconds); and a profile
    of one default render of the first batch size (kernel launches, device time, the kernels
    taking most of it)."""
    from torch.profiler import ProfilerActivity, profile

    from engine.streams import stream

    out: dict = {}
    held = {}
    for bs in batches:
        it = iter(stream("elvis/*", seed=5, batch_size=bs, size=SIZE, defer=True))
        held[bs] = [next(it)["frames"] for _ in range(max(1, images // bs))]
        if device == "cuda":                   # as a DataLoader with pin_memory=True hands them over
            held[bs] = [f.pin_memory() for f in held[bs]]

    def draw(bs):
        for f in held[bs]:
            f.render(device).float().mean()
        if device == "cuda":
            torch.cuda.synchronize()
    for bs in batches:
        out[f"default_{bs}"] = rate(len(held[bs]) * bs, lambda bs=bs: draw(bs), 3)[0]
    bs = batches[0]
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=acts) as prof:
        t = time.perf_counter()
        held[bs][0].render(device).float().mean()
        if device == "cuda":
            torch.cuda.synchronize()
        out["one_render_ms"] = (time.perf_counter() - t) * 1e3
    ev = prof.key_averages()
    kern = [e for e in ev if e.device_type.name == "CUDA" and e.device_time_total > 0]
    out["launches"] = sum(e.count for e in kern)
    out["device_ms"] = sum(e.device_time_total for e in kern) / 1e3
    kern.sort(key=lambda e: -e.device_time_total)
    out["top"] = [(e.key[:70], e.count, round(e.device_time_total / 1e3, 2)) for e in kern[:10]]
    ops = sorted((e for e in ev if e.device_type.name == "CPU"), key=lambda e: -e.self_cpu_time_total)
    out["cpu_top"] = [(e.key[:50], e.count, round(e.self_cpu_time_total / 1e3, 2)) for e in ops[:10]]
    if tiled and device == "cuda":
        os.environ[FUSED_ENV] = "0"
        try:
            for name, env in (("tiled", "0"), ("tiled_compiled", "1"))[:2 if compiled else 1]:
                os.environ[COMPILE_ENV] = env
                for bs in batches:
                    out[f"{name}_{bs}"] = rate(len(held[bs]) * bs, lambda bs=bs: draw(bs), 3)[0]
        finally:
            os.environ.pop(COMPILE_ENV, None)
            os.environ.pop(FUSED_ENV)
    for k, v in out.items():
        print("held", k, v if isinstance(v, list) else round(v, 2), flush=True)
    return out


def eval_rates(quick: bool) -> dict:
    """Samples/s of in-process evaluation (render, a tiny random checkpoint answers, replies
    read) with rendering and the model on the CPU, and on CUDA."""
    import tempfile
    from pathlib import Path

    from engine.replies import parse_reply
    from evals.hf_runner import HFRunner
    from evals.tiny_model import build_tiny_model

    from .eval_bench import PATTERN, _requests

    n = 32 if quick else 128
    tasks = [get_task(t) for t in list_tasks(PATTERN)]
    ss = [tasks[i % len(tasks)].sample(0, i // len(tasks)) for i in range(n)]
    out = {"n": n}
    with tempfile.TemporaryDirectory() as tmp:
        path = build_tiny_model(Path(tmp) / "tiny")
        replies = {}
        for dev in ("cpu", "cuda"):
            runner = HFRunner(path, device=dev, batch_size=32, max_new_tokens=8)

            def once(dev=dev, runner=runner):
                got = runner.generate(_requests(ss, render_samples(ss, SIZE, device=dev)))
                replies[dev] = [parse_reply(r, s.answer_type, s.options).value for r, s in zip(got, ss)]
            out[dev] = rate(n, once, 2 if quick else 3)
    out["same_answers"] = replies["cpu"] == replies["cuda"]
    print("eval", out, flush=True)
    return out


def run(quick: bool = False) -> dict:
    if not torch.cuda.is_available():
        raise UserError("procvis bench gpu needs a CUDA device; this torch build sees none")
    t0 = time.perf_counter()
    res = {"parity": parity(2 if quick else int(os.environ.get("PROCVIS_PARITY_TASKS", 12))),
           "render": render_rates(quick), "upload": upload_ms(), "first": first_render_seconds(),
           "stream": stream_rates(quick), "limits": stream_limits(per_worker=3 if quick else 8),
           "held": held_frames(images=512 if quick else 2048), "eval": eval_rates(quick)}
    res["meta"] = run_meta(gpu=torch.cuda.get_device_name(0), seconds=round(time.perf_counter() - t0))
    return res


_PATHS = {"cuda": "", "tiled": ", tiled", "compiled": ", tiled compiled"}


def _f(v) -> str:
    return f"{v[0]:,.0f}" if isinstance(v, tuple) else str(v)


def to_markdown(r: dict) -> str:
    m = r["meta"]
    lines = [f"{m['gpu']}, {m.get('cores')} CPU cores, torch {m.get('torch')}, commit {m.get('commit')}, "
             f"{m['date']} ({m['seconds']} s).", "",
             "Parity, CUDA (torch renderer) against the CPU (numba), the same samples at 224 px:", "",
             "| family | tasks | panels | largest difference (levels) | values > 2 apart | worst task |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    for p in r["parity"]:
        lines.append(f"| `{p['family']}` | {p['tasks']} | {p['panels']} | {p['max']} | "
                     f"{p['over2']} of {p['values']:,} | {p['worst'] or '-'} |")
    cols = [k for k in r["render"][0] if k.startswith(("cuda_", "tiled_", "compiled_"))]
    lines += ["", "Rendering a collated batch at 224 px, images/s (median; CUDA includes copying the "
              "primitives to the device; numba uses every CPU core of the same machine):", "",
              "| primitives | numba (CPU) | " + " | ".join(f"CUDA{_PATHS[c.split('_')[0]]}, batch {c.split('_')[1]}" for c in cols) + " |",
              "| ---: | ---: | " + " | ".join("---:" for _ in cols) + " |"]
    for row in r["render"]:
        lines.append(f"| {row['prims']} | {_f(row['numba'])} | " + " | ".join(_f(row[c]) for c in cols) + " |")
    u, f = r["upload"], r["first"]
    lines += ["", f"Putting one batch's primitives on the GPU ({u['batch']} scenes of {u['prims']} primitives, "
              f"{u['bytes'] / 1e6:.1f} MB), waited for: one pageable copy per tensor {u['per_tensor']:.2f} ms, "
              f"packed into pinned buffers {u['packed']:.2f} ms.", "",
              "A fresh process's first and second render on CUDA (1,024 scenes, 20 primitives, 224 px), seconds: "
              + "; ".join(f"{k.replace('_', ' ')} " + (f"{v[0]:.2f} then {v[1]:.3f}" if isinstance(v, tuple) else v)
                          for k, v in f.items()) + "."]
    s, e = r["stream"], r["eval"]
    lines += _limits_lines(r["limits"], r["held"])
    lines += ["", f"`stream('elvis/*')` at 224 px, batch {s['batch']}, {s['images']} images into GPU memory: "
              f"rendered on CUDA in the main process {_f(s['cuda_main'])} images/s; rendered on the CPU by "
              f"{s['workers']} DataLoader workers and copied {_f(s['cpu_workers_to_cuda'])} images/s; sampled by those "
              f"workers (`defer=True`) and rendered on CUDA in the main process {_f(s['frames_to_cuda'])} images/s.",
              "",
              f"In-process evaluation ({e['n']} `shapes/*` samples, tiny random checkpoint, 8 new tokens): "
              f"CPU {_f(e['cpu'])} samples/s, CUDA {_f(e['cuda'])} samples/s; same answers: {e['same_answers']}.", ""]
    return "\n".join(lines)


def _limits_lines(lim: dict, held: dict) -> list[str]:
    """The markdown of :func:`stream_limits` and :func:`held_frames`."""
    ws = sorted(int(k.split("_")[1]) for k in lim if k.startswith("workers_"))
    return ["", f"What bounds `stream('elvis/*')` into GPU memory ({lim['cores']} cores), images/s: one process "
            f"sampling and collating only {lim['sample_only_1proc']:,.0f}, also drawing on the CPU (one thread) "
            f"{lim['sample_draw_1proc_1thread']:,.0f}; the DataLoader alone handing over ready-made batches of 256 "
            f"images from {ws[-1]} workers {lim['receipt_pin1']:,.0f} pinned, {lim['receipt_pin0']:,.0f} not; the "
            "stream drawn on the CPU by " + ", ".join(f"{w}: {lim[f'workers_{w}']:,.0f}" for w in ws)
            + " workers; the main process rendering ELVIS frames it already holds: "
            + "; ".join(f"{name} " + ", ".join(f"{held[k]:,.0f} (batch {k.rsplit('_', 1)[1]})" for k in held
                                               if k.rsplit("_", 1)[0] == key)
                        for name, key in (("default", "default"), ("tiled", "tiled"),
                                          ("tiled compiled", "tiled_compiled")) if f"{key}_256" in held)
            + f"; {ws[-1]} workers only sampling (`defer=True`), the main process rendering their batches: "
            f"{lim['deferred_256']:,.0f} (batch 256), {lim['deferred_1024']:,.0f} (batch 1,024); "
            f"one default batch of 256: "
            f"{held['launches']} kernel launches, {held['device_ms']:.1f} ms of device time."]


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "gpu-bench", "The CUDA path on a GPU (`procvis bench gpu`)")
