"""The CUDA path, where a GPU is present (skipped otherwise): every family's samples drawn on
CUDA match the CPU renderer within 2 levels, CUDA results do not depend on how a batch is
split, and the torch renderer waits for the device a bounded number of times per batch.
The device-parametrised tests elsewhere (render, tiles, streams) run on CUDA as well."""
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.batch import SceneBatch
from engine.outputs import render_samples
from engine.registry import get_task, list_tasks
from engine.rendering import render
from engine.scene import KINDS
from kernels.transfer import to_device

from .conftest import random_scene

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

FAMILIES = ("shapes/*", "elvis/*", "perceptv/*", "perceptv_fixed/*", "kiva/*", "kiva_adults/*",
            "kiva_compositional/*", "bongard/*", "jigsaw/*")


@pytest.mark.parametrize("pattern", FAMILIES)
def test_every_family_draws_the_same_on_cuda(pattern):
    ids = list_tasks(pattern)
    for t in [ids[k * len(ids) // 3] for k in range(min(3, len(ids)))]:
        ss = get_task(t).samples(0, range(2))
        for cpu, gpu in zip(render_samples(ss, 160, device="cpu"), render_samples(ss, 160, device="cuda")):
            for a, b in zip(cpu, gpu):
                assert b.device.type == "cuda"
                d = int((a.int() - b.cpu().int()).abs().max())
                assert d <= 2, (t, d)


def test_cuda_results_do_not_depend_on_the_batch_split():
    rng = np.random.default_rng(5)
    scenes = [random_scene(rng, n=25) for _ in range(10)]
    whole = render(scenes, 96, device="cuda")
    parts = torch.cat([render(scenes[:3], 96, device="cuda"), render(scenes[3:], 96, device="cuda")])
    assert torch.equal(whole, parts)
    assert torch.equal(whole, render(scenes, 96, device="cuda"))          # and run to run


@pytest.mark.parametrize("fused", ["1", "0"])
def test_the_torch_renderer_reads_the_device_at_most_once_per_batch_fused_twice_tiled(fused, monkeypatch):
    monkeypatch.setenv("PROCVIS_FUSED", fused)
    if fused == "1":
        from kernels import raster_torch
        if raster_torch._fused(torch.device("cuda")) is None:
            pytest.skip("the fused pass needs Triton")
    rng = np.random.default_rng(6)
    kinds = [k for k in KINDS if k not in ("text", "sprite", "image")]      # the fused pass draws these
    batch = SceneBatch.from_scenes([random_scene(rng, kinds, n=40) for _ in range(64)])
    render(batch, 128, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            render(batch, 128, device="cuda")
    finally:
        torch.cuda.set_sync_debug_mode("default")
    waits = [(Path(w.filename).name, w.lineno) for w in caught if "synchroniz" in str(w.message).lower()]
    inside = [w for w in waits if w[0] in ("raster_torch.py", "raster_triton.py", "raster.py")]
    # entries per scene (to cut the batch into chunks) and, on the tiled path, for the one
    # chunk, group sizes and depth counts; the per-geometry and per-depth reads this replaced
    # were dozens. Copying the scenes' tensors to the device is outside the renderer.
    assert len(inside) <= (1 if fused == "1" else 2), waits
    if fused == "1":
        assert len(inside) == 1, waits         # the one read is seen: the check can fail


def test_compiled_coverage_draws_what_the_eager_one_draws(monkeypatch):
    rng = np.random.default_rng(7)
    scenes = [random_scene(rng, n=20) for _ in range(12)]
    eager = render(scenes, 112, device="cuda")
    monkeypatch.setenv("PROCVIS_COMPILE", "1")
    compiled = render(scenes, 112, device="cuda")
    assert int((eager.int() - compiled.int()).abs().max()) <= 1


def test_packed_upload_gives_every_tensor_back_exactly_even_when_the_host_copies_change_at_once():
    first = [torch.arange(12.0).reshape(3, 4).t(), torch.tensor([True, False, True]), torch.empty(0, 2),
             torch.arange(5), torch.randint(0, 256, (2, 3, 4), dtype=torch.uint8), torch.ones(2, device="cuda")]
    kept = [t.clone() for t in first]
    a = to_device(first, "cuda")
    for t in first[:5]:
        t.zero_() if t.dtype != torch.bool else t.fill_(False)     # the host may reuse its tensors at once
    second = [t + 1 if t.dtype != torch.bool else ~t for t in kept[:5]]
    b = to_device(second, "cuda")                                  # the pinned staging memory is not reused early
    for want, got in list(zip(kept, a)) + list(zip(second, b)):
        assert got.device.type == "cuda" and got.dtype == want.dtype and got.shape == want.shape
        assert torch.equal(got.cpu(), want.cpu())


def test_deferred_frames_from_workers_render_on_cuda_as_on_the_cpu():
    from torch.utils.data import DataLoader

    from engine.streams import stream
    ds = stream("elvis/*", seed=1, batch_size=16, size=96, count=32, defer=True)
    for b in DataLoader(ds, batch_size=None, num_workers=2, pin_memory=True):
        frames = b["frames"]
        assert frames.groups[0][1].primitives.center.is_pinned()
        gpu, cpu = frames.render("cuda"), frames.render("cpu")
        assert gpu.device.type == "cuda" and gpu.shape == cpu.shape == (16, 3, 96, 96)
        assert int((gpu.cpu().int() - cpu.int()).abs().max()) <= 2


def test_8bit_atlases_are_premultiplied_on_cuda_to_the_cpus_bits():
    from engine.batch import premultiplied
    grid = torch.stack(torch.meshgrid(torch.arange(256), torch.arange(256), indexing="ij")).to(torch.uint8)
    rgba8 = torch.stack([grid[0], grid[1], 255 - grid[0], grid[1]])[None]
    assert torch.equal(premultiplied(rgba8.cuda()).cpu(), premultiplied(rgba8))
    from engine.batch import sprites_on
    from engine.scene import Scene
    batch = SceneBatch.from_scenes([Scene().sprite(rgba8[0, :, :64, :96].contiguous(), (0.5, 0.5), (0.5, 0.5))])
    sprites, hw = sprites_on(batch, "cuda")                 # the 8-bit source crosses, the floats come out
    assert sprites.device.type == "cuda" and torch.equal(sprites.cpu(), batch.sprites)
    assert torch.equal(hw.cpu(), batch.sprite_hw)


@pytest.mark.parametrize("pattern", ["kiva/*", "jigsaw/*"])
def test_deferred_sprite_frames_from_workers_render_on_cuda_as_on_the_cpu(pattern):
    from torch.utils.data import DataLoader

    from engine.parcel import unpack
    from engine.streams import stream
    ds = stream(pattern, seed=1, batch_size=8, size=96, count=16, defer=True)
    for b in DataLoader(ds, batch_size=None, num_workers=2, pin_memory=True):
        frames = b["frames"]
        on_gpu = unpack(frames._packed(), "cuda")
        for (_, g, _), (_, c, _) in zip(on_gpu, frames.groups):
            assert g.sprites.device.type == "cuda" and torch.equal(g.sprites.cpu(), c.sprites)
        gpu, cpu = frames.render("cuda"), frames.render("cpu")
        assert int((gpu.cpu().int() - cpu.int()).abs().max()) <= 2
