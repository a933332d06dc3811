"""Compiling ahead (engine.warm) and the registry groups it draws from."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.registry import list_tasks, representatives
from engine.warm import warm

ROOT = Path(__file__).resolve().parents[1]


def test_representatives_are_the_first_task_of_each_group():
    ids = list_tasks()
    families = sorted({t.split("/")[0] for t in ids})
    one = representatives(1)
    assert [t.split("/")[0] for t in one] == families
    assert one == [min(t for t in ids if t.split("/")[0] == f) for f in families]
    kinds = representatives(2, "elvis/*")
    assert [t.split("/")[1] for t in kinds] == sorted({t.split("/")[1] for t in list_tasks("elvis/*")})
    assert representatives(9, "shapes/*") == list_tasks("shapes/*")     # groups of one: every task


def test_warm_draws_what_it_names_and_leaves_the_renderer_compiled_on_disk():
    from kernels import raster_numba

    assert warm("shapes/colours") == ["shapes/colours"]
    assert raster_numba.compiled_on_disk() is True


@pytest.mark.slow
def test_from_an_empty_cache_the_rasterizer_compiles_once_in_the_second_process(tmp_path):
    """With no compiled kernel on disk (a cache folder of its own), ``warm`` leaves the
    rasterizer to its second process and then loads it from the disk cache: no compile of
    its own, no note of a failed process (about two minutes on 2 cores)."""
    code = ("from engine.warm import warm; from kernels import raster_numba as r; "
            "assert r.compiled_on_disk() is False; warm('shapes/colours'); s = r._render.stats; "
            "assert s.cache_hits and not s.cache_misses, s")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "note" not in out.stderr, out.stderr[-2000:]


def test_after_warming_a_process_that_writes_no_bytecode_compiles_none_of_ours():
    # each worker of a run compiled about 150 modules (0.5 s of its start on 2 cores) where
    # PYTHONDONTWRITEBYTECODE is set and the sources were never compiled (an editable install)
    from engine.warm import compile_sources

    compile_sources()
    code = ("import sys, importlib._bootstrap_external as be\nmade = []\nold = be.SourceLoader.source_to_code\n"
            "def hook(self, data, path, *a, **k):\n    made.append(path)\n    return old(self, data, path, *a, **k)\n"
            "be.SourceLoader.source_to_code = hook\nfrom engine import outputs, registry\n"
            "registry.resolve('elvis/*')\nprint(len(sys.modules), [p for p in made if p.startswith(sys.argv[1])])\n")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code, str(ROOT)], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    loaded, compiled = out.stdout.split(" ", 1)
    assert int(loaded) > 300 and compiled.strip() == "[]"
