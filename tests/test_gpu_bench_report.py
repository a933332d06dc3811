"""The GPU bench's report is written after minutes of lent device time: its markdown must
come out of the result dict the bench's functions build (checked here without a GPU)."""
from benchmarks.gpu_bench import to_markdown


def result() -> dict:
    r = (1000.0, 10.0)
    parity = [{"family": "elvis/*", "tasks": 3, "panels": 6, "max": 0, "over2": 0, "values": 903168, "worst": None},
              {"family": "kiva/*", "tasks": 3, "panels": 42, "max": 1, "over2": 0, "values": 1171980,
               "worst": "kiva/colour/blue"}]
    render = [{"prims": p, "numba": r, "cuda_1024": r, "tiled_1024": r, "cuda_4096": (151770.0, 1.0),
               "tiled_4096": r, "compiled_4096": r} for p in (5, 20)]
    limits = {"cores": 16, "sample_only_1proc": 4021.0, "sample_draw_1proc_1thread": 2502.0, "receipt_pin1": 12271.0,
              "receipt_pin0": 14015.0, "workers_1": 1440.0, "workers_15": 10240.0, "deferred_256": 8246.0,
              "deferred_1024": 9535.0}
    held = {"default_256": 26904.0, "default_1024": 32026.0, "one_render_ms": 13.2, "launches": 367,
            "device_ms": 2.37, "top": [], "cpu_top": [], "tiled_256": 6721.0, "tiled_1024": 8270.0}
    return {"parity": parity, "render": render,
            "upload": {"prims": 20, "batch": 4096, "bytes": 65699840, "per_tensor": 9.29, "packed": 3.02},
            "first": {"default_cold": (2.47, 0.013), "default_warm": (1.03, 0.01), "tiled": "failed: TimeoutExpired"},
            "stream": {"batch": 256, "images": 10240, "cuda_main": r, "workers": 15, "cpu_workers_to_cuda": r,
                       "frames_to_cuda": r},
            "limits": limits, "held": held,
            "eval": {"n": 128, "cpu": r, "cuda": r, "same_answers": True},
            "meta": {"gpu": "NVIDIA H100 80GB HBM3", "cores": 16, "torch": "2.11.0+cu130", "commit": "abc1234",
                     "date": "2026-11-27 06:40 UTC", "seconds": 300}}


def test_the_report_holds_every_measured_row():
    md = to_markdown(result())
    assert md.startswith("NVIDIA H100 80GB HBM3, 16 CPU cores")
    assert "| `kiva/*` | 3 | 42 | 1 | 0 of 1,171,980 | kiva/colour/blue |" in md
    assert "| 20 | 1,000 | 1,000 | 1,000 | 151,770 | 1,000 | 1,000 |" in md
    assert "8,246 (batch 256), 9,535 (batch 1,024)" in md
    assert "367 kernel launches, 2.4 ms of device time" in md
    assert "default cold 2.47 then 0.013" in md and "tiled failed: TimeoutExpired" in md
