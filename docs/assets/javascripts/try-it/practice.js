/**
 * The section's practice in the browser, with jax-js: what the "Try it here" panel computes.
 *
 * A second implementation of the book's numbers, kept next to the Python it mirrors:
 * scoreOneByOne is examples/scoring.py's score_one_by_one (a plain loop, float64), batchedScorer
 * is score_batch (jit(vmap(row score)), float32), settingsScorer is examples/settings.py's
 * score_settings (K weight settings in one call), practiceLines is examples/practice.py's nine
 * lines, formatSeconds / verdict are examples/timing.py's rules. The panel's worker runs it; the
 * tests run this very file in Node (Wasm) and in headless Chromium on every backend
 * (tests/test_try_it_differential.py) and compare it with the `examples` package.
 */
import * as jax from "../../vendor/jax-js/index.js";

const np = jax.numpy;

/** Backends in the order the panel prefers them; jax-js says WebGL is slower than Wasm. */
export const PREFERRED = ["webgpu", "wasm", "webgl", "cpu"];
export const BACKEND_NAMES = { webgpu: "WebGPU", webgl: "WebGL", wasm: "Wasm", cpu: "JS (cpu)" };

/** Start jax-js's backends (only `wanted`, where given) and return those that started. */
export async function startBackends(wanted) {
  return wanted ? jax.init(...wanted) : jax.init();
}

/** The WebGPU adapter's name, where the browser gives one (else ""). */
export function adapterName() {
  try {
    const info = jax.getWebGPUDevice().adapterInfo ?? {};
    return [info.vendor, info.architecture, info.device, info.description]
      .filter(Boolean)
      .join(" ");
  } catch {
    return "";
  }
}

// --------------------------------------------------------------- the two paths

/** score_one_by_one: each row's score as a loop of multiply-adds, in float64 (Python floats). */
export function scoreOneByOne(batch, rows, features, weights) {
  const scores = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let score = 0.0;
    for (let f = 0; f < features; f++) score += batch[r * features + f] * weights[f];
    scores[r] = score;
  }
  return scores;
}

/** One row's score, sum(row * weights): what both batched scorers map (row score). */
const rowScore = (row, weights) => np.dot(row, weights);

/** score_batch: jit(vmap(row score)) over the rows, the weights shared (null). */
export function batchedScorer() {
  return jax.jit(jax.vmap(rowScore, [0, null]));
}

/** score_settings: every row under every setting in one call, rows x settings. */
export function settingsScorer() {
  const byRows = jax.vmap(rowScore, [0, null]);
  const bySettings = jax.vmap(byRows, [null, 0]); // settings x rows
  return jax.jit((batch, settings) => bySettings(batch, settings).transpose());
}

/** A float32 jax array of `shape` on `device`, from numbers (rounded to float32). */
export function onDevice(values, shape, device) {
  return np.array(Float32Array.from(values), { shape, device });
}

/** Scores of `batch` (rows x features) under `weights` with the batched path, as numbers. */
export async function scoreBatch(batch, rows, features, weights, device) {
  const scorer = batchedScorer();
  try {
    const scores = scorer(onDevice(batch, [rows, features], device), onDevice(weights, [features], device));
    return Array.from(await scores.data());
  } finally {
    scorer.dispose();
  }
}

/** Scores of `batch` under each of `settings` (K x features) at once: rows x K, flat. */
export async function scoreSettings(batch, rows, features, settings, count, device) {
  const scorer = settingsScorer();
  try {
    const scores = scorer(
      onDevice(batch, [rows, features], device),
      onDevice(settings, [count, features], device),
    );
    return Array.from(await scores.data());
  } finally {
    scorer.dispose();
  }
}

// --------------------------------------------------------------- counts and comparisons

/** scalar_multiply_count: rows x features (x settings), exact at any size (BigInt). */
export function multiplyCount(...sizes) {
  return sizes.reduce((product, size) => product * BigInt(size), 1n);
}

/** numpy.allclose(a, b) with its defaults (rtol 1e-5, atol 1e-8; NaN is never close). */
export function allclose(a, b) {
  return a.every((x, i) => {
    const y = b[i];
    if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y;
    return Math.abs(x - y) <= 1e-8 + 1e-5 * Math.abs(y);
  });
}

/** How far a float32 score may be from the float64 loop's: features x 2^-23 x sum |x w|
 *  (the bound on rounding in a float32 sum of that many products), or both NaN, or equal. */
export function withinFloat32(loopScore, batchedScore, features, absoluteSum) {
  if (Number.isNaN(loopScore) || Number.isNaN(batchedScore)) {
    return Number.isNaN(loopScore) && Number.isNaN(batchedScore);
  }
  if (!Number.isFinite(loopScore) || !Number.isFinite(batchedScore)) {
    return loopScore === batchedScore;
  }
  const tolerance = features * 2 ** -23 * absoluteSum + 2 ** -126;
  return Math.abs(loopScore - batchedScore) <= tolerance;
}

/** sum |x w| of each row: the scale withinFloat32 measures a difference against. */
export function absoluteSums(batch, rows, features, weights) {
  const sums = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let f = 0; f < features; f++) sum += Math.abs(batch[r * features + f] * weights[f]);
    sums[r] = sum;
  }
  return sums;
}

// --------------------------------------------------------------- Python's way of printing

/** Python's round(x, 3) on a float: the nearest of 3 places, exact ties to even. */
export function round3(x) {
  if (!Number.isFinite(x) || x === 0) return x; // -0.0 stays -0.0, as in Python
  // An exact tie at the 4th place is x = odd / 16 (1000 = 8 x 125): Python rounds it to even.
  const sixteenths = x * 16; // exact: a power of two
  if (Number.isInteger(sixteenths) && sixteenths % 2 !== 0 && Math.abs(x) < 2 ** 40) {
    const thousandths = sixteenths * 62.5; // exact, ends in .5
    const down = Math.floor(thousandths);
    return (down % 2 === 0 ? down : down + 1) / 1000;
  }
  return Number(x.toFixed(3)); // the nearest of 3 places to the exact value, as Python
}

/** repr() of a Python float: 0.2, 1.0, 1e-05, 1.5e+16, nan, inf, -0.0. */
export function pythonFloat(x) {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  // toExponential() without digits gives the shortest that reads back, as Python's repr.
  const [digits, power] = x.toExponential().split("e");
  const exponent = Number(power);
  if (exponent < -4 || exponent >= 16) {
    const sign = exponent < 0 ? "-" : "+";
    return `${digits}e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  const plain = String(x); // plain decimals in this range, as Python
  return plain.includes(".") ? plain : `${plain}.0`;
}

const pythonList = (items) => `[${items.join(", ")}]`;
const pythonTuple = (items) => (items.length === 1 ? `(${items[0]},)` : `(${items.join(", ")})`);

/** examples/practice.py's nine lines, computed here: `book` is examples/data.py's data. */
export async function practiceLines(book, device) {
  const rows = book.batch.length;
  const features = book.batch[0].length;
  const flat = book.batch.flat();
  const oneByOne = Array.from(scoreOneByOne(flat, rows, features, book.weights)).map(round3);
  const batched = (await scoreBatch(flat, rows, features, book.weights, device)).map(round3);
  return [
    `batch shape = ${pythonTuple([rows, features])}`,
    `weights shape = ${pythonTuple([book.weights.length])}`,
    `scores_one_by_one = ${pythonList(oneByOne.map(pythonFloat))}`,
    `scores_batch = ${pythonList(batched.map(pythonFloat))}`,
    `scalar multiply count = ${multiplyCount(rows, features)}`,
    `same result = ${allclose(oneByOne, batched) ? "True" : "False"}`,
    `probe batch sizes = ${pythonList(book.probe_batch_sizes)}`,
    ...book.probe_feature_sizes.map(
      (f) =>
        `estimated scalar multiplies when feature count = ${f} = ` +
        pythonList(book.probe_batch_sizes.map((b) => multiplyCount(b, f))),
    ),
  ];
}

// --------------------------------------------------------------- times, as examples/timing.py

/** Python's round() to a whole number: exact halves to even (f"{1234.5:,.0f}" is 1,234). */
const wholeEven = (x) => {
  const nearest = Math.round(x);
  return nearest - x === 0.5 && nearest % 2 !== 0 ? nearest - 1 : nearest;
};
const withCommas = (x) => wholeEven(x).toLocaleString("en-US");

const UNITS = [["ns", 1e-9], ["µs", 1e-6], ["ms", 1e-3], ["s", 1]];
/** Python's float(f"{v:.{p}g}") for v > 0. toPrecision breaks an exact tie (the double's
 * exact value halfway, as 1.25 is) upward; Python, correctly rounded, to even. The exact
 * digits: toExponential(99), exact for every double a time or a ratio of two can be here. */
export function significant(v, p) {
  const [mantissa, exponent] = v.toExponential(99).split("e");
  const digits = mantissa.replace(".", "");
  const tie = digits[p] === "5" && /^0*$/.test(digits.slice(p + 1));
  if (tie && Number(digits[p - 1]) % 2 === 0) {
    return Number(`${digits[0]}.${digits.slice(1, p)}e${exponent}`); // down, to the even digit
  }
  return Number(v.toPrecision(p));
}
const threeDigits = (v) => significant(v, 3);

/** format_seconds: three significant digits in the unit that fits (12.3 µs, 1.00 s). */
export function formatSeconds(seconds) {
  if (!(seconds >= 0) || !Number.isFinite(seconds)) throw new RangeError(`bad time ${seconds}`);
  if (seconds === 0) return "0 s";
  if (threeDigits(seconds) >= 1000) return `${withCommas(seconds)} s`;
  let [unit, scale] = UNITS[0];
  for (const [name, size] of UNITS) if (threeDigits(seconds / size) >= 1) [unit, scale] = [name, size];
  const rounded = threeDigits(seconds / scale);
  const decimals = Math.max(0, 2 - Math.floor(Math.log10(rounded)));
  return `${rounded.toFixed(decimals)} ${unit}`;
}

/** shown_seconds: the time formatSeconds prints, read back. */
export function shownSeconds(seconds) {
  const [number, unit] = formatSeconds(seconds).split(" ");
  return Number(number.replaceAll(",", "")) * Object.fromEntries(UNITS)[unit];
}

/** faster_or_slower on the times as printed: "3.1× faster than", "about as fast as", ... */
export function verdict(thisSeconds, otherSeconds) {
  const ratio = shownSeconds(otherSeconds) / shownSeconds(thisSeconds);
  const band = 1.05 * (1 + 1e-9);
  if (1 / band <= ratio && ratio <= band) return "about as fast as";
  const times = (v) => (v >= 10 ? `${withCommas(v)}×` : `${significant(v, 2)}×`);
  return ratio > 1 ? `${times(ratio)} faster than` : `${times(1 / ratio)} slower than`;
}
