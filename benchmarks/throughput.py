"""Throughput of ``score_batch`` against numpy's ``@`` and a memory read-bandwidth probe.

Prints medians and ratios measured in this one run, with each target marked met or missed:
- at every large size, ``score_batch`` within 1.1x numpy's time;
- at large sizes with 64 or more features, at least 80 % of the probe's read bandwidth.
Then the costs the design avoids (numpy input to a jitted function, a new shape) and the
per-call cost of small batches. Scoring reads each float32 once and does 2 FLOPs per 4 bytes:
a large batch is bound by memory bandwidth, which the probe measures.

    python benchmarks/throughput.py [--rows 4096 4194304] [--features 3 256]
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time

# OpenBLAS's worker threads spin for up to ~0.1 s after each numpy call before they sleep.
# Timed in turns, that spinning takes both cores from whichever contender runs next (measured
# here: score_batch 76 ms after numpy's turn, 50 ms alone, at 4,194,304 x 64). Let them sleep
# at once: numpy's own time per call does not change (45.9 ms alone either way). This must
# be set before numpy is imported.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import jax
import jax.numpy as jnp
import numpy as np

from examples import machine_label, score_batch
from examples.scoring import score_rows_unchecked
from examples.timing import format_seconds, interleaved_medians

ROWS = (4_096, 65_536, 1_048_576, 4_194_304)
FEATURES = (3, 6, 64, 256)
LARGE_ROWS = 1_048_576  # sizes from here up are "large": the targets apply to them
MAX_TIME_VS_NUMPY = 1.1
MIN_SHARE_OF_PROBE = 0.80
WIDE_FEATURES = 64  # the bandwidth target applies from this many features up


def cpu_threads() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def read_probe(flat: np.ndarray, threads: int):
    """A run that reads every byte of ``flat`` once: BLAS dots over pairs of chunks, one a thread.

    A dot reads two arrays and writes nothing; BLAS streams them near the memory's limit,
    where numpy's own ``sum`` reaches only part of it.
    """
    pairs = np.array_split(flat, 2 * threads)
    work = [(pairs[2 * i], pairs[2 * i + 1]) for i in range(threads)]
    work = [(a[: min(a.size, b.size)], b[: min(a.size, b.size)]) for a, b in work]

    def run():
        workers = [threading.Thread(target=np.dot, args=pair) for pair in work]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    return run


def device_probe(batch: jax.Array):
    """On an accelerator: a jitted dot of the two halves of the batch, read on the device."""
    flat = batch.reshape(-1)
    half = flat.size // 2
    dot = jax.jit(lambda x: jnp.vdot(x[:half], x[half : 2 * half]))
    return lambda: dot(flat).block_until_ready()


def load_line() -> str:
    """Other work on the machine slows some runs: say how busy it was."""
    if not hasattr(os, "getloadavg"):
        return "load average: not available"
    one_minute = os.getloadavg()[0]
    return f"load average over the last minute: {one_minute:.2f} on {os.cpu_count()} CPUs"


def mark(met: bool) -> str:
    return "met" if met else "MISSED"


def throughput_table(rows_list, features_list, repeats: int) -> list[bool]:
    threads = cpu_threads()
    on_cpu = jax.default_backend() == "cpu"
    probe_name = f"{threads}-thread BLAS dot" if on_cpu else "jitted vdot on the device"
    print(f"\n## Throughput: score_batch, numpy @ and a read probe ({probe_name})\n")
    header = (
        f"{'F':>4} {'B':>10} {'MiB':>7} | {'probe':>10} {'numpy @':>10} {'score_batch':>11}"
        f" | {'probe':>7} {'numpy':>7} {'JAX':>7} | {'JAX/np':>6} {'JAX/probe':>9}  targets"
    )
    print(" " * 26 + "| median time per pass            | read bandwidth, GB/s    | ratios")
    print(header)
    print("-" * len(header))
    results = []
    key = jax.random.key(0)
    for features in features_list:
        for rows in rows_list:
            batch = jax.random.uniform(key, (rows, features), jnp.float32).block_until_ready()
            weights = jax.random.uniform(key, (features,), jnp.float32) - 0.5
            host_batch, host_weights = np.asarray(batch), np.asarray(weights)  # CPU: no copy
            probe = read_probe(host_batch.reshape(-1), threads) if on_cpu else device_probe(batch)
            times = interleaved_medians(
                {
                    "probe": probe,
                    "numpy": lambda b=host_batch, w=host_weights: b @ w,
                    "jax": lambda b=batch, w=weights: score_batch(b, w).block_until_ready(),
                },
                repeats=repeats,
            )
            gb = host_batch.nbytes / 1e9
            vs_numpy = times["jax"] / times["numpy"]
            share = times["probe"] / times["jax"]
            targets = []
            if rows >= LARGE_ROWS:
                met = vs_numpy <= MAX_TIME_VS_NUMPY
                targets.append(f"<= {MAX_TIME_VS_NUMPY}x numpy: {mark(met)}")
                results.append(met)
                if features >= WIDE_FEATURES and on_cpu:
                    met = share >= MIN_SHARE_OF_PROBE
                    targets.append(f">= {MIN_SHARE_OF_PROBE:.0%} of probe: {mark(met)}")
                    results.append(met)
            print(
                f"{features:>4} {rows:>10,} {host_batch.nbytes / 2**20:>7.1f} |"
                f" {format_seconds(times['probe']):>10} {format_seconds(times['numpy']):>10}"
                f" {format_seconds(times['jax']):>11} |"
                f" {gb / times['probe']:>7.1f} {gb / times['numpy']:>7.1f}"
                f" {gb / times['jax']:>7.1f} | {vs_numpy:>6.2f} {share:>8.0%}  "
                + "; ".join(targets),
                flush=True,
            )
            del batch, host_batch, probe
    return results


def numpy_input_cost(rows: int = 1_048_576, features: int = 64) -> None:
    print(f"\n## Passing numpy arrays into a jitted function ({rows:,} x {features} float32)\n")
    host = np.random.default_rng(0).random((rows, features), dtype=np.float32)
    weights = np.ones(features, np.float32)
    on_device = jax.device_put(host)
    times = interleaved_medians(
        {
            "numpy in": lambda: score_batch(host, weights).block_until_ready(),
            "on device": lambda: score_batch(on_device, weights).block_until_ready(),
        },
        repeats=5,
    )
    extra = times["numpy in"] - times["on device"]
    print(f"numpy batch, copied in on every call: {format_seconds(times['numpy in'])}")
    print(f"batch put on the device once:        {format_seconds(times['on device'])}")
    print(
        f"ratio {times['numpy in'] / times['on device']:.1f}x; the copy costs "
        f"{format_seconds(extra)} a call ({host.nbytes / 1e9 / max(extra, 1e-12):.1f} GB/s)"
    )


def recompile_cost(shapes: int = 5) -> None:
    print("\n## A new batch shape compiles again\n")
    weights = jnp.ones(3)
    costs = []
    for extra_rows in range(shapes):
        batch = jnp.ones((10_007 + extra_rows, 3))
        start = time.perf_counter()
        score_batch(batch, weights).block_until_ready()
        first = time.perf_counter() - start
        steady = interleaved_medians({"again": lambda b=batch: score_batch(b, weights)}, 3)
        costs.append(first - steady["again"])
    median, low, high = (format_seconds(f(costs)) for f in (statistics.median, min, max))
    print(f"first call at a new shape, minus a warm call: median {median} over {shapes} shapes")
    print(f"(min {low}, max {high})")


def small_batches(features: int = 3, rows_list=(4, 64, 1_024, 16_384, 262_144)) -> None:
    print(f"\n## Small batches: the cost of one call ({features} features)\n")
    print(f"{'B':>8} | {'numpy @':>9} {'score_batch':>11} {'jitted, unchecked':>17} | JAX/numpy")
    for rows in rows_list:
        host = np.random.default_rng(rows).random((rows, features), dtype=np.float32)
        weights = np.ones(features, np.float32)
        batch, device_weights = jax.device_put(host), jax.device_put(weights)
        times = interleaved_medians(
            {
                "numpy": lambda h=host, w=weights: h @ w,
                "jax": lambda b=batch, w=device_weights: score_batch(b, w).block_until_ready(),
                "raw": lambda b=batch, w=device_weights: score_rows_unchecked(
                    b, w
                ).block_until_ready(),
            },
            repeats=7,
        )
        print(
            f"{rows:>8,} | {format_seconds(times['numpy']):>9} {format_seconds(times['jax']):>11}"
            f" {format_seconds(times['raw']):>17} | {times['jax'] / times['numpy']:>8.1f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=ROWS)
    parser.add_argument("--features", type=int, nargs="+", default=FEATURES)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--table-only", action="store_true", help="skip the cost sections")
    args = parser.parse_args()

    print(f"# benchmarks/throughput.py: {machine_label()}")
    print(load_line())
    results = throughput_table(args.rows, args.features, args.repeats)
    if not args.table_only:
        numpy_input_cost()
        recompile_cost()
        small_batches()
    print(f"\ntargets: {results.count(True)} met, {results.count(False)} missed")
    print(f"at the end of the run, {load_line()}")


if __name__ == "__main__":
    main()
