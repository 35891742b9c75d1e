/**
 * How the panel times a path: examples/timing.py's median_seconds, for a browser's clock.
 *
 * Browsers coarsen performance.now() (to 100 µs or more), so a call quicker than that reads as
 * 0 ms. Calls are timed in groups long enough to measure: at least `minSampleMs`. The group's
 * size is checked on the timed samples themselves, not only on the warm-up, because the first
 * timings of a JavaScript loop include its compile: a group that looked long enough then can
 * take under one tick of the clock once the loop is compiled (the panel printed "0 s").
 */

/** The smallest step `now()` takes here, in ms (sampled for `forMs`). */
export function timerStepMs(now = () => performance.now(), forMs = 20) {
  let smallest = Infinity;
  let last = now();
  const end = last + forMs;
  while (last < end) {
    const next = now();
    if (next > last) smallest = Math.min(smallest, next - last);
    last = next;
  }
  return smallest;
}

/**
 * Median seconds of one call of `once` (it waits for its own result), after one untimed call.
 * Returns {seconds, runs, calls}: `runs` samples of `calls` calls each. A path whose samples
 * would pass `budgetMs` is timed fewer times (at least once).
 */
export async function medianSeconds(
  once,
  { minSampleMs, repeats = 5, budgetMs = 4000, now = () => performance.now() },
) {
  if (!(minSampleMs > 0)) throw new RangeError(`minSampleMs must be above 0, not ${minSampleMs}`);
  await once(); // the warm-up: compiles, and is not counted
  let [calls, sampleMs] = await callsPerSample(once, minSampleMs, now);
  for (;;) {
    const runs = Math.max(1, Math.min(repeats, Math.floor(budgetMs / Math.max(sampleMs, 1e-3))));
    const totals = [];
    for (let i = 0; i < runs; i++) totals.push(await timeCalls(once, calls, now));
    totals.sort((a, b) => a - b);
    sampleMs = totals[Math.floor(totals.length / 2)];
    if (sampleMs >= minSampleMs / 2 || calls >= MAX_CALLS) {
      return { seconds: sampleMs / calls / 1000, runs, calls };
    }
    // Quicker than the warm-up said: group as many more calls as the samples show are needed.
    calls = Math.min(MAX_CALLS, calls * Math.ceil(minSampleMs / Math.max(sampleMs, minSampleMs / 1024)));
  }
}

const MAX_CALLS = 2 ** 20;

/** The fewest calls (doubling) whose time reaches `minSampleMs`, and that time. */
async function callsPerSample(once, minSampleMs, now) {
  let calls = 1;
  let took = await timeCalls(once, calls, now);
  while (took < minSampleMs && calls < MAX_CALLS) {
    calls *= 2;
    took = await timeCalls(once, calls, now);
  }
  return [calls, took];
}

async function timeCalls(once, calls, now) {
  const start = now();
  for (let i = 0; i < calls; i++) await once();
  return now() - start;
}
