/**
 * What tests/test_try_it_differential.py asks of the panel's module (the very practice.js the site
 * serves), in Node and in headless Chromium alike: the practice's lines, the scores of batches
 * drawn in Python, multiply counts, and how times and floats are printed.
 *
 * Numbers travel as strings (JSON has no NaN): "NaN", "Infinity", or a decimal.
 */
const numbers = (texts) => texts.map(Number);
const texts = (values) => Array.from(values, (v) => String(v));

export async function answer(practice, request, device) {
  const started = await practice.startBackends([device]);
  if (!started.includes(device)) return { absent: `jax-js did not start ${device} here (started: ${started})` };
  const cases = [];
  for (const c of request.cases) {
    const batch = numbers(c.batch);
    const settings = numbers(c.settings);
    const first = settings.slice(0, c.features);
    cases.push({
      batch: texts(await practice.scoreBatch(batch, c.rows, c.features, first, device)),
      settings: texts(await practice.scoreSettings(batch, c.rows, c.features, settings, c.count, device)),
      loop: texts(practice.scoreOneByOne(batch, c.rows, c.features, first)),
      multiplies: practice.multiplyCount(c.rows, c.features, c.count).toString(),
    });
  }
  return {
    device,
    adapter: device === "webgpu" ? practice.adapterName() : "",
    lines: await practice.practiceLines(request.book, device),
    cases,
    multiplies: request.counts.map(([r, f]) => practice.multiplyCount(r, f).toString()),
    seconds: numbers(request.seconds).map(practice.formatSeconds),
    verdicts: request.pairs.map(([a, b]) => practice.verdict(Number(a), Number(b))),
    rounded: numbers(request.floats).map((x) => practice.pythonFloat(practice.round3(x))),
  };
}
