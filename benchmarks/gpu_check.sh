#!/usr/bin/env bash
# The GPU check, prepared for a machine with an NVIDIA GPU and JAX's CUDA plugin installed in
# .venv (for example: .venv/bin/uv pip install "jax[cuda12]==<the locked jax version>").
# It runs the numeric tests, the practice output, the turnaround table and the throughput
# benchmark on the GPU, and saves everything, with the date and the hardware, to one file:
#
#   benchmarks/gpu_check.sh [results file]    default: benchmarks/results/gpu-<UTC time>.txt
#
# Every step runs even if one before it fails; the script exits non-zero if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-.venv/bin/python}
OUT=${1:-benchmarks/results/gpu-$(date -u +%Y%m%dT%H%M%SZ).txt}
mkdir -p "$(dirname "$OUT")"

# On GPUs, float32 matmul defaults to reduced (TF32-like) precision; the tests compare the
# batched scores with float64 and the practice with the manuscript, so ask for full float32.
# (score_batch also sets Precision.HIGHEST on its own dot.)
export JAX_DEFAULT_MATMUL_PRECISION=highest
# Refuse to fall back to the CPU quietly: a GPU check that ran on the CPU would be a lie.
export JAX_PLATFORMS=cuda
export NO_MKDOCS_2_WARNING=1

failed=0
step() {
  local name=$1
  shift
  echo
  echo "## $name"
  echo "\$ $*"
  "$@"
  local status=$?
  echo "(exit status $status)"
  [ "$status" -eq 0 ] || failed=1
}

{
  echo "# GPU check: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  step "GPU" nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  step "GPU, full report" nvidia-smi
  step "host" sh -c "uname -srm; grep -m1 'model name' /proc/cpuinfo; nproc"
  step "jax" "$PY" -c "import jax; print(jax.__version__, jax.default_backend(), jax.devices()); assert jax.default_backend() == 'gpu'"
  step "numeric tests" "$PY" -m pytest -q -p no:cacheprovider \
    tests/test_scoring.py tests/test_counting.py tests/test_practice.py tests/test_sharding.py
  step "practice output" "$PY" -m examples
  step "turnaround table" "$PY" -c "from examples import measure_turnaround, turnaround_markdown as md
t = measure_turnaround()
print(t.label); print(md(t)); print(f'measured in {t.cost_s:.2f} s')"
  step "throughput benchmark" "$PY" benchmarks/throughput.py
  echo
  echo "# done: $([ "$failed" -eq 0 ] && echo 'every step passed' || echo 'SOME STEPS FAILED')"
  exit "$failed"
} 2>&1 | tee "$OUT"
status=${PIPESTATUS[0]}

echo "results saved to $OUT"
exit "$status"
