"""Throughput of ``score_settings`` (K weight settings at once) against numpy and the loop.

Prints medians measured in this one run, each target marked met or missed (float32, F = 16):
- at B = 4,000, K = 1,000: at least 80 % of the rate of numpy's ``batch @ settings.T``;
- at that size, at least 50x faster than the one-by-one loop of ``score_batch`` calls;
- at K = 1, within 1.2x of ``score_batch``'s time;
- at B = 50,000, K = 1,000 (200 MB of scores a pass): the ratio to numpy, and the achieved
  bandwidth of writing the scores against the machine's write bandwidth measured here, into
  a buffer that exists, into fresh memory (each call returns a new array), and by XLA into a
  new output of its own; which one limits
  (printed at B = 4,000 too, where it explains the speed-up over the loop).

    python benchmarks/settings_throughput.py [--repeats 7] [--rows 4000] [--large-rows 50000]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # see benchmarks/throughput.py

import jax
import jax.numpy as jnp
import numpy as np

from examples import machine_label, score_batch, score_settings
from examples.settings import score_settings_first_unchecked
from examples.timing import format_seconds, interleaved_medians

FEATURES = 16
SETTINGS = 1_000
ROWS = 4_000
LARGE_ROWS = 50_000
MIN_SHARE_OF_NUMPY = 0.80
MIN_LOOP_SPEEDUP = 50.0
MAX_K1_RATIO = 1.2
LIMIT_SHARE = 0.80  # a bandwidth "limits" when the scores are written at this share of it


def mark(met: bool) -> str:
    return "met" if met else "MISSED"


def arrays(rows: int, settings: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    batch = rng.random((rows, FEATURES), dtype=np.float32)
    weights = rng.standard_normal((settings, FEATURES), dtype=np.float32)
    return batch, weights, jax.device_put(batch), jax.device_put(weights)


def at_size(rows: int, repeats: int, with_loops: bool) -> dict[str, float]:
    batch, settings, batch_d, settings_d = arrays(rows, SETTINGS)
    each_d = jax.device_put(list(settings))  # every setting on the device, as on the page
    runs = {
        "numpy batch @ settings.T": lambda: batch @ settings.T,
        "score_settings (settings last)": lambda: score_settings(
            batch_d, settings_d
        ).block_until_ready(),
        "settings first (out_axes=0)": lambda: score_settings_first_unchecked(
            batch_d, settings_d
        ).block_until_ready(),
        "loop of score_batch (page's loop)": lambda: jax.block_until_ready(
            [score_batch(batch_d, w) for w in each_d]
        ),
        "loop, indexing settings[k]": lambda: jax.block_until_ready(
            [score_batch(batch_d, settings_d[k]) for k in range(SETTINGS)]
        ),
    }
    if not with_loops:  # the loops only at the target's size
        runs = {name: run for name, run in runs.items() if "loop" not in name}
    times = interleaved_medians(runs, repeats=repeats)
    print(f"\n## B = {rows:,}, F = {FEATURES}, K = {SETTINGS:,} (float32)\n")
    at_once = times["score_settings (settings last)"]
    for name, seconds in times.items():
        print(f"{name:>36}: {format_seconds(seconds):>9}  ({seconds / at_once:6.2f}x at once)")
    return times


def targets_at_size(times: dict[str, float]) -> list[bool]:
    at_once = times["score_settings (settings last)"]
    share = times["numpy batch @ settings.T"] / at_once
    speedup = times["loop of score_batch (page's loop)"] / at_once
    print(f"\nrate vs numpy: {share:.0%} (target >= {MIN_SHARE_OF_NUMPY:.0%}): ", end="")
    print(mark(share >= MIN_SHARE_OF_NUMPY))
    print(f"speed-up over the loop: {speedup:,.0f}x (target >= {MIN_LOOP_SPEEDUP:.0f}x): ", end="")
    print(mark(speedup >= MIN_LOOP_SPEEDUP))
    indexed = times["loop, indexing settings[k]"] / at_once
    print(f"(over a loop that indexes a device array per setting: {indexed:,.0f}x; not a target)")
    return [share >= MIN_SHARE_OF_NUMPY, speedup >= MIN_LOOP_SPEEDUP]


def one_setting(sizes: tuple[int, ...], repeats: int) -> list[bool]:
    print(f"\n## K = 1: score_settings against score_batch (F = {FEATURES})\n")
    results = []
    for rows in sizes:
        _, _, batch_d, settings_d = arrays(rows, 1)
        weights_d = settings_d[0]
        times = interleaved_medians(
            {
                "score_batch": lambda b=batch_d, w=weights_d: score_batch(b, w).block_until_ready(),
                "score_settings": lambda b=batch_d, s=settings_d: score_settings(
                    b, s
                ).block_until_ready(),
            },
            repeats=repeats,
        )
        ratio = times["score_settings"] / times["score_batch"]
        met = ratio <= MAX_K1_RATIO
        results.append(met)
        print(
            f"B = {rows:>6,}: score_batch {format_seconds(times['score_batch']):>9}, "
            f"score_settings {format_seconds(times['score_settings']):>9}: {ratio:.2f}x "
            f"(target <= {MAX_K1_RATIO}x): {mark(met)}"
        )
    return results


def write_bandwidths(shape: tuple[int, int], repeats: int) -> dict[str, float]:
    """GB/s of writing an array of ``shape`` (float32): into a buffer that exists, into fresh
    memory, and by XLA into a new output of its own (a jitted fill, nothing read)."""
    nbytes = shape[0] * shape[1] * 4
    existing = np.empty(shape, np.float32)
    existing.fill(0)  # touch every page once
    one = np.float32(1)
    xla_fill = jax.jit(lambda x: jnp.broadcast_to(x, shape) + 1.0)
    scalar = jax.device_put(np.float32(0))
    times = interleaved_medians(
        {
            "into a buffer that exists (numpy)": lambda: existing.fill(one),
            "into fresh memory (numpy, new array)": lambda: np.empty(shape, np.float32).fill(one),
            "into a new output (XLA, jitted fill)": lambda: xla_fill(scalar).block_until_ready(),
        },
        repeats=repeats,
    )
    return {name: nbytes / seconds / 1e9 for name, seconds in times.items()}


def bandwidth_report(times: dict[str, float], rows: int, repeats: int) -> None:
    """The scores' write bandwidth against the machine's, and which limit binds."""
    at_once = times["score_settings (settings last)"]
    nbytes = rows * SETTINGS * 4
    achieved = nbytes / at_once / 1e9
    print(f"\nratio to numpy's rate: {times['numpy batch @ settings.T'] / at_once:.0%}")
    print(f"scores written: {nbytes / 1e6:,.0f} MB a pass, at {achieved:.2f} GB/s")
    bandwidths = write_bandwidths((rows, SETTINGS), repeats)
    for name, gbs in bandwidths.items():
        print(f"machine's write bandwidth {name}: {gbs:.2f} GB/s ({achieved / gbs:.0%} reached)")
    closest = max(bandwidths, key=lambda name: achieved / bandwidths[name])
    share = achieved / bandwidths[closest]
    if share >= LIMIT_SHARE:
        print(f"limit: writing the scores, {closest} ({share:.0%} of it reached)")
    else:
        flops = 2 * rows * SETTINGS * FEATURES / at_once / 1e9
        print(
            f"limit: not a write bandwidth alone; the closest is {closest}, {share:.0%} reached "
            f"(< {LIMIT_SHARE:.0%}); the product itself ran at {flops:.1f} GFLOP/s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rows", type=int, default=ROWS, help="the targets' batch size")
    parser.add_argument("--large-rows", type=int, default=LARGE_ROWS, help="the large batch")
    args = parser.parse_args()
    print(f"# benchmarks/settings_throughput.py: {machine_label()}")
    if hasattr(os, "getloadavg"):
        print(f"load average over the last minute: {os.getloadavg()[0]:.2f}")
    if (args.rows, args.large_rows) != (ROWS, LARGE_ROWS):
        print(f"(sizes changed from the targets' B = {ROWS:,} and {LARGE_ROWS:,}: a trial run)")
    times = at_size(args.rows, args.repeats, with_loops=True)
    results = targets_at_size(times)
    bandwidth_report(times, args.rows, args.repeats)
    results += one_setting((4, args.rows, args.large_rows), args.repeats)
    large = at_size(args.large_rows, args.repeats, with_loops=False)
    bandwidth_report(large, args.large_rows, args.repeats)
    print(f"\ntargets: {results.count(True)} met, {results.count(False)} missed")


if __name__ == "__main__":
    main()
