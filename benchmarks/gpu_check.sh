#!/bin/bash
# The GPU checks of one lent device session, as one time-boxed script: the CUDA tests and the
# fused pass's parity check, `procvis bench gpu`, then the whole suite on a machine with CUDA
# in whatever time is left before DEADLINE (seconds from the start; default 500). Prepare here
# with `bash benchmarks/gpu_prepare.sh` (.gpu: glyph atlas, KiVA sprites and font, since open3d
# is too large to carry; .whl: wheels of the packages that machine lacks), then run with
# carry [".gpu", ".whl"] and timeout_s 540:  DEADLINE=490 bash benchmarks/gpu_check.sh
# (T1, T2: the time boxes of the CUDA tests and of the bench, seconds)
export PYTHONUNBUFFERED=1 PROCVIS_CACHE=$PWD/.gpu/cache PROCVIS_FONT=$PWD/.gpu/DejaVuSans.ttf HF_HUB_OFFLINE=1
OUT=${OUT:-/tmp/gpu-check}; mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $(( ${DEADLINE:-500} - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >"$OUT/pip.log" 2>&1 || echo "editable install failed"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name(0))"
echo "setup $(( $(date +%s) - T0 )) s"
# the CUDA tests first (they also fill numba's on-disk cache for the suite's workers)
timeout "${T1:-200}" python3 -m pytest -q -p no:cacheprovider tests/test_cuda.py tests/test_raster_fused.py \
    tests/test_render.py tests/test_tiles.py tests/test_stream.py -k "cuda or device or fused" 2>&1 \
    | tee "$OUT/tests_cuda.log" | grep -E "FAILED|ERROR|passed|failed" | cut -c1-300
timeout 60 python3 tests/fused_check.py cuda 2>&1 | tail -2 | cut -c1-400
echo "tests $(( $(date +%s) - T0 )) s"
PROCVIS_PARITY_TASKS=${PARITY:-3} timeout "${T2:-260}" python3 -c "from benchmarks.gpu_bench import main; main(out='$OUT/gpu.md')" \
    2>&1 | grep -v "Loading weights\|Writing model" > "$OUT/bench.log"
grep -E "^render|^upload|^first|^stream|^limits \{|^eval|^parity|Error" "$OUT/bench.log" | cut -c1-600
echo "bench $(( $(date +%s) - T0 )) s"
# the whole suite, every device-parametrised test on cuda too; interrupted (summary kept) at the deadline
if [ "$(left)" -gt 60 ]; then
    OMP_NUM_THREADS=2 NUMBA_NUM_THREADS=4 timeout -s INT -k 15 "$(( $(left) - 20 ))" python3 -m pytest -q \
        -p no:cacheprovider -n 14 --timeout 150 tests --ignore tests/test_openai_runner.py > "$OUT/suite.log" 2>&1
    grep -E "FAILED|ERROR|passed|failed|Interrupted" "$OUT/suite.log" | tail -25 | cut -c1-300
fi
echo "suite $(( $(date +%s) - T0 )) s"
