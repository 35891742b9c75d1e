/**
 * The "Try it here" panel's Web Worker: runs practice.js off the page's main thread, so the page
 * scrolls and answers during a run; the panel's Stop ends it (worker.terminate()).
 *
 * Messages in: {rows, features, settings}, or {table: [[rows, features], ...]} (the measured
 * page's turnaround sizes, timed here). Messages out: {kind: "backend" | "lines" | "row" | "done" | "fallback" | "failed", ...}. A backend that fails mid-run is named, and the run is done again on Wasm.
 */
import * as practice from "./practice.js";
import * as timing from "./timing.js";

const REPEATS = 5; // timed runs after the warm-up; the median is shown
const BUDGET_MS = 4000; // a path whose one run takes longer is timed fewer times
const MIN_SAMPLE_S = 0.005; // a timed sample lasts at least this long: quicker calls are grouped
let step = 0.001; // the timer's step, measured when a run starts
let book = null;
let started = null; // the backends jax-js started here

self.onmessage = async ({ data }) => {
  try {
    book ??= await (await fetch(new URL("book.json", import.meta.url))).json();
    started ??= await practice.startBackends();
    const preferred = practice.PREFERRED.filter((name) => started.includes(name));
    await runOn(preferred, data, data.table ? timeTable : run);
  } catch (error) {
    self.postMessage({ kind: "failed", message: describe(error) });
  }
};

/** Run on the first of `devices`; where it fails, say so and run on Wasm (if not tried). */
async function runOn(devices, request, task) {
  const [device] = devices;
  try {
    self.postMessage({ kind: "backend", device, name: practice.BACKEND_NAMES[device], adapter: device === "webgpu" ? practice.adapterName() : "", timerStep: (step = timing.timerStepMs() / 1000) });
    await task(device, request);
  } catch (error) {
    const fallback = device !== "wasm" && devices.includes("wasm") ? "wasm" : null;
    if (isMemory(error) || !fallback) throw error;
    self.postMessage({ kind: "fallback", from: practice.BACKEND_NAMES[device], to: "Wasm", message: describe(error) });
    await runOn(["wasm"], request, task);
  }
}

function describe(error) {
  const text = error?.message ?? String(error);
  return isMemory(error) ? `the browser refused the memory for it (${text})` : text;
}

function isMemory(error) {
  return error instanceof RangeError || /out of memory|allocation|memory/i.test(String(error?.message));
}

/** Median seconds of one call of `once`, timed in groups of at least MIN_SAMPLE_S (or 50 of the
 * timer's steps): timing.js, examples/timing.py's median_seconds for a browser's clock. */
function medianSeconds(once) {
  return timing.medianSeconds(once, { minSampleMs: Math.max(MIN_SAMPLE_S, 50 * step) * 1000, repeats: REPEATS, budgetMs: BUDGET_MS });
}

/** A reproducible batch of float32 values in [-1, 1) (mulberry32, seeded). */
function drawn(count, seed) {
  const values = new Float32Array(count);
  let state = seed >>> 0;
  for (let i = 0; i < count; i++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    values[i] = ((t ^ (t >>> 14)) >>> 0) / 2 ** 31 - 1;
  }
  return values;
}

async function run(device, { rows, features, settings }) {
  const isBook = rows === book.batch.length && features === book.batch[0].length && settings === 1;
  if (isBook) {
    self.postMessage({ kind: "lines", lines: await practice.practiceLines(book, device) });
  }
  const batch = isBook ? book.batch.flat() : drawn(rows * features, 1);
  const weightSets = isBook ? book.weights : drawn(settings * features, 2);
  const weights = weightSets.slice(0, features);

  // One by one: the plain loop, as score_one_by_one.
  let loopScores = null;
  const loop = await medianSeconds(() => {
    loopScores = practice.scoreOneByOne(batch, rows, features, weights);
  });

  // Batched: jit(vmap(row score)), the arrays put on the device once, as score_batch's callers.
  const scorer = practice.batchedScorer();
  const x = practice.onDevice(batch, [rows, features], device);
  const w = practice.onDevice(weights, [features], device);
  let batchScores = null;
  const batched = await medianSeconds(async () => {
    const scores = scorer(x.ref, w.ref);
    await scores.blockUntilReady();
    batchScores?.dispose();
    batchScores = scores;
  });
  const scores = await batchScores.data();
  const sums = practice.absoluteSums(batch, rows, features, weights);
  const same = Array.from(loopScores).every((s, r) => practice.withinFloat32(s, scores[r], features, sums[r]));
  scorer.dispose();
  w.dispose();

  let atOnce = null;
  if (settings > 1) {
    const settingsScore = practice.settingsScorer();
    const all = practice.onDevice(weightSets, [settings, features], device);
    let allScores = null;
    atOnce = await medianSeconds(async () => {
      const out = settingsScore(x.ref, all.ref);
      await out.blockUntilReady();
      allScores?.dispose();
      allScores = out;
    });
    const table = await allScores.data();
    // K settings one by one: the loop, once per setting (examples' "one by one" for settings).
    let loopTables = [];
    atOnce.loop = await medianSeconds(() => {
      loopTables = [];
      for (let k = 0; k < settings; k++) {
        const wk = weightSets.slice(k * features, (k + 1) * features);
        loopTables.push(practice.scoreOneByOne(batch, rows, features, wk));
      }
    });
    atOnce.same = loopTables.every((loopK, k) => {
      const sumsK = practice.absoluteSums(batch, rows, features, weightSets.slice(k * features, (k + 1) * features));
      return loopK.every((s, r) => practice.withinFloat32(s, table[r * settings + k], features, sumsK[r]));
    });
    settingsScore.dispose();
    all.dispose();
  }
  x.dispose();
  self.postMessage({ kind: "done", ...report(device, { rows, features, settings, same, loop, batched, atOnce }) });
}

const plural = (count, word) => `${count.toLocaleString("en-US")} ${word}${count === 1 ? "" : "s"}`;
const timed = ({ seconds, runs, calls }) =>
  `${practice.formatSeconds(seconds)} (median of ${plural(runs, "run")}` +
  `${calls > 1 ? ` of ${plural(calls, "call")} each` : ""}, after a warm-up)`;

/** The run in lines, and one sentence for the live region; "faster" only as the times say. */
function report(device, { rows, features, settings, same, loop, batched, atOnce }) {
  const name = practice.BACKEND_NAMES[device];
  const count = practice.multiplyCount(rows, features).toLocaleString("en-US");
  const lines = [
    `batch = ${rows.toLocaleString("en-US")} rows × ${plural(features, "feature")}`,
    `scalar multiply count = ${count}`,
    `same result = ${same ? "True" : "False"}  (each batched score within features × 2⁻²³ × Σ|x·w| of the loop's)`,
    `one by one (plain JS loop): ${timed(loop)}`,
    `batched (jit(vmap), ${name}): ${timed(batched)}`,
    `batched was ${practice.verdict(batched.seconds, loop.seconds)} one by one`,
  ];
  if (atOnce) {
    lines.push(
      `${plural(settings, "weight setting")}: scalar multiply count = ${practice.multiplyCount(rows, features, settings).toLocaleString("en-US")}`,
      `same result = ${atOnce.same ? "True" : "False"}  (every setting's column against the loop)`,
      `${plural(settings, "setting")} one by one (the loop, once per setting): ${timed(atOnce.loop)}`,
      `${plural(settings, "setting")} at once (score_settings, ${name}): ${timed(atOnce)}`,
      `at once was ${practice.verdict(atOnce.seconds, atOnce.loop.seconds)} one by one`,
    );
  }
  const summary =
    `Done on ${name}: same result = ${same ? "True" : "False"}; one by one ${practice.formatSeconds(loop.seconds)}, ` +
    `batched ${practice.formatSeconds(batched.seconds)}` +
    (atOnce ? `; ${plural(settings, "setting")} at once ${practice.formatSeconds(atOnce.seconds)}.` : ".");
  return { lines, summary };
}

/** The measured page's turnaround sizes, each timed here: the loop and jit(vmap). */
async function timeTable(device, { table: sizes }) {
  const name = practice.BACKEND_NAMES[device];
  for (const [index, [rows, features]] of sizes.entries()) {
    const batch = drawn(rows * features, 1);
    const weights = drawn(features, 2);
    const loop = await medianSeconds(() => practice.scoreOneByOne(batch, rows, features, weights));
    const scorer = practice.batchedScorer();
    const x = practice.onDevice(batch, [rows, features], device);
    const w = practice.onDevice(weights, [features], device);
    const batched = await medianSeconds(async () => (await scorer(x.ref, w.ref).blockUntilReady()).dispose());
    scorer.dispose();
    x.dispose();
    w.dispose();
    self.postMessage({ kind: "row", index, loop: practice.formatSeconds(loop.seconds), batched: practice.formatSeconds(batched.seconds) });
  }
  self.postMessage({ kind: "done", lines: [], summary: `Timed the book's ${sizes.length} sizes on ${name}: the table shows them beside the book's.` });
}
