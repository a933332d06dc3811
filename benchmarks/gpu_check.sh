#!/bin/bash
# The GPU checks of one lent device session, as one time-boxed script (`procvis bench gpu`,
# tests/test_cuda.py and the whole suite on a machine with CUDA). Prepare here first:
#   mkdir -p .gpu && cp -r ~/.cache/procvis .gpu/cache && cp "$FONT" .gpu/DejaVuSans.ttf
#   (FONT: /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf; the cache holds the glyph atlas
#   and the KiVA sprites, since open3d is too large to carry), then download wheels of the
#   packages that machine lacks into .whl/ (kornia, kornia_rs, datasets, dill, multiprocess;
#   see the device tool's README), and run with carry [".gpu", ".whl"]:
#   bash benchmarks/gpu_check.sh      (T1, T2, T3: seconds for tests, bench and suite)
export PYTHONUNBUFFERED=1 PROCVIS_CACHE=$PWD/.gpu/cache PROCVIS_FONT=$PWD/.gpu/DejaVuSans.ttf HF_HUB_OFFLINE=1
OUT=${OUT:-/tmp/gpu-check}; mkdir -p "$OUT"
T0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >"$OUT/pip.log" 2>&1 || echo "editable install failed"
timeout "${T1:-120}" python3 -m pytest -q -p no:cacheprovider tests/test_cuda.py tests/test_render.py tests/test_tiles.py \
    tests/test_stream.py -k "cuda or device" 2>&1 | tee "$OUT/tests_cuda.log" | tail -8
echo "tests $(( $(date +%s) - T0 )) s"
timeout "${T2:-240}" python3 -c "from benchmarks.gpu_bench import main; main(out='$OUT/gpu.md')" 2>&1 \
    | grep -v "Loading weights\|Writing model" > "$OUT/bench.log"; grep -E "^render|^stream|^eval|^parity" "$OUT/bench.log"
echo "bench $(( $(date +%s) - T0 )) s"
timeout "${T3:-200}" python3 -m pytest -q -p no:cacheprovider -n 15 --timeout 120 tests --ignore tests/test_openai_runner.py \
    --ignore tests/test_kiva_validity.py > "$OUT/suite.log" 2>&1; grep -E "FAILED|ERROR|passed|failed" "$OUT/suite.log" | tail -20
echo "suite $(( $(date +%s) - T0 )) s"
