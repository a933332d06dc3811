#!/bin/bash
# Prepare, on this machine, what benchmarks/gpu_check.sh needs on a lent GPU machine that has
# no package registry: .gpu/ (the glyph atlas, every KiVA sprite, the font) and .whl/ (wheels
# for Python 3.12 of the packages that machine lacks). Both folders are ignored by git. Then:
#   device run, carry [".gpu", ".whl"], timeout 540 s:  DEADLINE=490 bash benchmarks/gpu_check.sh
set -e
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo '/.gpu/' >> .git/info/exclude; }
mkdir -p .gpu/cache .whl
cp "${FONT:-/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf}" .gpu/DejaVuSans.ttf
# render a few samples of every task that draws sprites, at the sizes the CUDA tests and the bench use
# (Jigsaw's photos are not kept: 54 MB would break the 64 MiB carry limit, and the digest differs there)
PROCVIS_CACHE=$PWD/.gpu/cache PROCVIS_PHOTO_CACHE=off $PY - <<'PYEOF'
import sys
sys.path.insert(0, ".")
from engine.outputs import render_samples
from engine.registry import get_task, list_tasks
from kernels.glyphs import load_atlas
load_atlas()                                  # the glyph atlas, built into the cache
for pattern in ("kiva/*", "kiva_adults/*", "kiva_compositional/*", "bongard/*", "jigsaw/*"):
    for task in list_tasks(pattern):
        samples = get_task(task).samples(0, range(4))
        for size in (160, 224):
            render_samples(samples, size, device="cpu")
    print("cached", pattern, flush=True)
PYEOF
cp -n "${PROCVIS_CACHE:-$HOME/.cache/procvis}"/kiva/* .gpu/cache/kiva/ 2>/dev/null || true   # sprites tests made here
# the versions this checkout's environment runs
PINS=$($PY -c "import importlib.metadata as m; print(' '.join(f'{p}=={m.version(p)}' for p in
    ('kornia', 'kornia_rs', 'datasets', 'dill', 'multiprocess', 'pyglet', 'pyrender', 'trimesh')))")
(cd .whl && python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d . $PINS)
du -sh .gpu .whl
