#!/usr/bin/env bash
# The GPU check, prepared for a machine with an NVIDIA GPU: the reader's path, on that GPU.
#
# 1. The site: site/ as `make build` left it (built first where missing), served on 127.0.0.1.
# 2. A fresh virtual environment with only the served wheel, installed by the install box's
#    NVIDIA GPU line exactly as a reader copies it from the section page (its host swapped for
#    the local server); or, given as the first argument, a line as copied from the published
#    site, run as it is.
# 3. There, outside the checkout: `python -m examples verify` (every compared block should say
#    "same"), `turnaround` and `sweep`, which also save their tables as recordings, with the
#    date and the hardware (package data: the next wheel ships them, the page shows the newest):
#      examples/recordings/gpu-<UTC time>.json            the turnaround table
#      examples/recordings/settings-gpu-<UTC time>.json   the settings sweep
#      examples/recordings/gpu-<UTC time>.txt             everything this script printed
# 4. Then, in the same environment with pytest added, the numeric tests and the throughput
#    benchmarks of this checkout, on the GPU.
#
#   benchmarks/gpu_check.sh ['python -m pip install "dl-course[cuda12] @ https://…"']
#
# GPU_CHECK_REHEARSAL=1 runs it on the CPU, to try the script on a machine with no GPU (its files
# then go to /tmp). It still installs the GPU line (the CUDA wheels are about 3 GB) unless
# GPU_CHECK_TAB=CPU takes the install box's CPU line instead. PYTHON: the reader's Python
# (default python3); the venv goes to a temporary folder (GPU_CHECK_VENV: another), removed at
# the end unless GPU_CHECK_KEEP=1.
#
# GPU_CHECK_OFFLINE=1 is for a GPU machine that reaches no package registry (the lent one): the
# venv also sees the packages of that machine's python3 (a .pth file naming its site-packages:
# its jax with CUDA, numpy, pytest, hypothesis), and the served wheel goes in from site/ with
# --no-deps, its #sha256= the one the section page's line names (pip checks it). Its jax is the machine's, not the wheel's pin: the
# "jax" step and verify's environment lines say which. site/ must be built (make build) first.
#
# Every step runs even if one before it fails; the script exits non-zero if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
if [ -n "${GPU_CHECK_REHEARSAL:-}" ]; then
  STEM=/tmp/gpu-check-rehearsal-$STAMP
  export JAX_PLATFORMS=cpu
else
  STEM=$ROOT/examples/recordings/gpu-$STAMP
  # Refuse to fall back to the CPU quietly: a GPU check that ran on the CPU would be a lie.
  export JAX_PLATFORMS=cuda
fi
LOG=$STEM.txt
SWEEP=$(dirname "$STEM")/settings-$(basename "$STEM").json
WORK=$(mktemp -d /tmp/gpu-check-XXXXXX)
VENV=${GPU_CHECK_VENV:-$WORK/venv}
TAB=${GPU_CHECK_TAB:-NVIDIA GPU}
mkdir -p "$(dirname "$LOG")"

# On GPUs, float32 matmul defaults to reduced (TF32-like) precision; the numbers are compared
# with the book's, so ask for full float32 (score_batch also sets Precision.HIGHEST on its dot).
export JAX_DEFAULT_MATMUL_PRECISION=highest
# Each JAX process would otherwise take 75 % of the GPU's memory at start, and verify starts one
# per block.
export XLA_PYTHON_CLIENT_PREALLOCATE=false

server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  # The venv holds the CUDA wheels (about 5 GB installed): kept only where GPU_CHECK_KEEP is set.
  [ -n "${GPU_CHECK_KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

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

# The install line the section page's box shows in tab $TAB, with its host swapped for $1 (its
# #sha256= kept: pip checks the served wheel).
page_line() {
  .venv/bin/python - "$1" "$TAB" <<'EOF'
import sys
from pathlib import Path
from urllib.parse import urlsplit

from testkit.site import install_box_lines

local, tab = sys.argv[1], sys.argv[2]
line = next(code for label, code in install_box_lines(Path("site")).items() if label.startswith(tab))
url = line.rsplit(" ", 1)[1].strip('"')
parts = urlsplit(url)
print(line.replace(f"{parts.scheme}://{parts.netloc}{parts.path.rsplit('/', 1)[0]}/", local))
EOF
}

# GPU_CHECK_OFFLINE: the served wheel from site/, with the SHA-256 the section page's line names.
offline_line() {
  python3 - "$ROOT/site" <<'EOF'
import re
import sys
from pathlib import Path

site = Path(sys.argv[1])
page = (site / "p5-9-1-gpus-and-parallel-processing" / "index.html").read_text()
name, sha = re.search(r"/([\w.+-]+\.whl)#sha256=([0-9a-f]{64})", page).groups()
print(f"python -m pip install --no-deps --no-index {(site / name).resolve().as_uri()}#sha256={sha}")
EOF
}

# The reader's shell: the fresh venv first on PATH, nothing of this checkout's Python settings.
in_venv() {
  (cd "$WORK" && env -u PYTHONPATH -u VIRTUAL_ENV PATH="$VENV/bin:$PATH" "$@")
}

{
  commit=${GPU_CHECK_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
  echo "# GPU check: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $commit"
  [ -n "${GPU_CHECK_REHEARSAL:-}" ] && echo "# REHEARSAL on the CPU: no GPU was used"
  if [ -z "${GPU_CHECK_REHEARSAL:-}" ]; then
    step "GPU" nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  fi
  step "host" sh -c "uname -srm; grep -m1 'model name' /proc/cpuinfo; nproc"

  if [ $# -ge 1 ]; then
    LINE=$1
  elif [ -n "${GPU_CHECK_OFFLINE:-}" ]; then
    LINE=$(offline_line)
  else
    [ -f site/index.html ] || step "site" make build
    PORT=$(.venv/bin/python -c "from examples.processes import free_port; print(free_port())")
    .venv/bin/python -m http.server "$PORT" --bind 127.0.0.1 --directory site >/dev/null 2>&1 &
    server=$!
    sleep 1
    LINE=$(page_line "http://127.0.0.1:$PORT/")
  fi
  echo
  echo "# the install line, as the reader copies it: $LINE"
  step "fresh venv" "${PYTHON:-python3}" -m venv "$VENV"
  if [ -n "${GPU_CHECK_OFFLINE:-}" ]; then
    step "the machine's packages" sh -c "${PYTHON:-python3} -c 'import site; print(*site.getsitepackages(), sep=chr(10))' > \"\$($VENV/bin/python -c 'import sysconfig; print(sysconfig.get_path(\"purelib\"))')/machine.pth\""
  fi
  step "install" in_venv bash -c "$LINE"
  step "jax" in_venv python -c "import sys, jax, jaxlib, numpy
print('python', sys.version.split()[0], '| jax', jax.__version__, '| jaxlib', jaxlib.__version__, '| numpy', numpy.__version__)
print(jax.default_backend(), jax.devices())"
  step "verify" in_venv python -m examples verify
  step "turnaround" in_venv python -m examples turnaround
  step "sweep" in_venv python -m examples sweep
  step "turnaround recording" in_venv python -m examples.recorded "$STEM.json"
  step "settings sweep recording" in_venv python -m examples.recorded --sweep "$SWEEP"

  # The checkout's numeric tests and throughput benchmarks, in the same environment.
  [ -n "${GPU_CHECK_OFFLINE:-}" ] || step "pytest" in_venv python -m pip install --quiet pytest hypothesis
  step "numeric tests" in_venv env PYTHONPATH="$ROOT" python -m pytest -q -p no:cacheprovider \
    "$ROOT/tests/test_scoring.py" "$ROOT/tests/test_settings.py" "$ROOT/tests/test_practice.py"
  step "throughput benchmark" in_venv env PYTHONPATH="$ROOT" python "$ROOT/benchmarks/throughput.py"
  echo
  echo "# done: $([ "$failed" -eq 0 ] && echo 'every step passed' || echo 'SOME STEPS FAILED')"
  exit "$failed"
} 2>&1 | tee "$LOG"
status=${PIPESTATUS[0]}

echo "results saved to $LOG, $STEM.json and $SWEEP"
exit "$status"
