#!/usr/bin/env bash
# The GPU check, prepared for a machine with an NVIDIA GPU and JAX's CUDA plugin. It needs
# only jax, numpy, pytest and hypothesis (not the docs stack): by default .venv's python (add
# the plugin there: .venv/bin/uv pip install "jax[cuda12]==<the locked jax version>"), or any
# python with those packages: PYTHON=python3 benchmarks/gpu_check.sh.
# It runs the numeric tests, the practice output, the turnaround table, the settings sweep and
# the throughput benchmarks on the GPU, and the multi-process test (score_sharded across local processes
# joined by jax.distributed; those processes use forced CPU devices, so that it runs wherever
# jax does), and saves, with the date and the hardware:
#   examples/recordings/gpu-<UTC time>.txt    everything it printed
#   examples/recordings/gpu-<UTC time>.json   the turnaround table, which the page shows as
#                                             "recorded on <GPU>, <date>" (examples/recorded.py)
#   examples/recordings/settings-gpu-<UTC time>.json   the settings sweep (K weight settings one
#                                             by one and at once, examples/sweep.py), shown the same way
# (package data: the recordings ship inside the wheel the site serves)
#
#   benchmarks/gpu_check.sh [results stem]    default: examples/recordings/gpu-<UTC time>
#
# GPU_CHECK_REHEARSAL=1 runs it on the CPU, to try the script on a machine with no GPU
# (its files then go to /tmp unless a stem is given).
#
# Every step runs even if one before it fails; the script exits non-zero if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-.venv/bin/python}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
if [ -n "${GPU_CHECK_REHEARSAL:-}" ]; then
  STEM=${1:-/tmp/gpu-check-rehearsal-$STAMP}
  export JAX_PLATFORMS=cpu
else
  STEM=${1:-examples/recordings/gpu-$STAMP}
  # Refuse to fall back to the CPU quietly: a GPU check that ran on the CPU would be a lie.
  export JAX_PLATFORMS=cuda
fi
LOG=$STEM.txt
SWEEP=$(dirname "$STEM")/settings-$(basename "$STEM").json
mkdir -p "$(dirname "$LOG")"
# The examples package and the tests run from this checkout, installed or not.
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}

# On GPUs, float32 matmul defaults to reduced (TF32-like) precision; the tests compare the
# batched scores with float64 and the practice with the manuscript, so ask for full float32.
# (score_batch also sets Precision.HIGHEST on its own dot.)
export JAX_DEFAULT_MATMUL_PRECISION=highest
# Each JAX process would otherwise take 75 % of the GPU's memory at start, and the tests start
# more than one (python -m examples in a subprocess).
export XLA_PYTHON_CLIENT_PREALLOCATE=false
export OPENBLAS_THREAD_TIMEOUT=4

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
  # A copy of the tree without .git can name its commit in GPU_CHECK_COMMIT.
  commit=${GPU_CHECK_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
  echo "# GPU check: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $commit"
  [ -n "${GPU_CHECK_REHEARSAL:-}" ] && echo "# REHEARSAL on the CPU: no GPU was used"
  if [ -z "${GPU_CHECK_REHEARSAL:-}" ]; then
    step "GPU" nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    step "GPU, full report" nvidia-smi
  fi
  step "host" sh -c "uname -srm; grep -m1 'model name' /proc/cpuinfo; nproc"
  step "jax" "$PY" -c "import os, sys, jax, jaxlib, numpy
print('python', sys.version.split()[0], '| jax', jax.__version__, '| jaxlib', jaxlib.__version__, '| numpy', numpy.__version__)
print(jax.default_backend(), jax.devices())
assert jax.default_backend() == 'gpu' or os.environ.get('GPU_CHECK_REHEARSAL'), 'no GPU'"
  step "numeric tests" "$PY" -m pytest -q -p no:cacheprovider \
    tests/test_scoring.py tests/test_settings.py tests/test_counting.py tests/test_practice.py \
    tests/test_sharding.py
  step "multi-process test" "$PY" -m pytest -q -p no:cacheprovider tests/test_multiprocess.py
  step "practice output" "$PY" -m examples
  step "turnaround table" "$PY" -m examples.recorded "$STEM.json"
  step "settings sweep" "$PY" -m examples.recorded --sweep "$SWEEP"
  step "throughput benchmark" "$PY" benchmarks/throughput.py ${THROUGHPUT_ARGS:-}
  step "settings throughput benchmark" "$PY" benchmarks/settings_throughput.py
  echo
  echo "# done: $([ "$failed" -eq 0 ] && echo 'every step passed' || echo 'SOME STEPS FAILED')"
  exit "$failed"
} 2>&1 | tee "$LOG"
status=${PIPESTATUS[0]}

echo "results saved to $LOG, $STEM.json and $SWEEP"
exit "$status"
