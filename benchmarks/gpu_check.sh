#!/usr/bin/env bash
# One prepared run on a CUDA host (the device tool; README, Development): install the carried wheels, time the
# hearing front end on cuda and on the same host's CPU side by side, then run the GPU code paths.
#   prepare here: wheels in .whl/ (scripts/gpu_wheels.sh), clips via
#   `python benchmarks/hearing_bench.py --skip verification diarization --clips .gpu/clips`
#   run there:    bash benchmarks/gpu_check.sh   (writes JSON under $OUT)
set -uo pipefail
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || exit 1
export PYTHONPATH=/tmp/site:$PWD PYANNOTE_METRICS_ENABLED=0 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"
rc=0
for dev in cuda cpu; do
  echo "== hearing speed on $dev"
  python3 benchmarks/hearing_bench.py --skip verification diarization --device $dev --clips .gpu/clips $([ $dev = cpu ] && echo --no-pyannote) \
    --out "$OUT/hearing_$dev.json" 2>"$OUT/hearing_$dev.err" || { rc=1; tail -20 "$OUT/hearing_$dev.err"; }
done
echo "== GPU code paths"
python3 benchmarks/gpu_paths.py --device cuda --out "$OUT" 2>"$OUT/gpu_paths.err" || { rc=1; tail -20 "$OUT/gpu_paths.err"; }
echo "== the 7B-width thinker on this host's CPU, beside cuda"
python3 benchmarks/gpu_paths.py --device cpu --only omni_7b_widths --out "$OUT/cpu" 2>"$OUT/cpu.err" \
  || { rc=1; tail -20 "$OUT/cpu.err"; }
exit $rc
