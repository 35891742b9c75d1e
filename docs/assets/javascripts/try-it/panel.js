/**
 * The "Try it here" panel on the page's main thread: reads and checks the reader's sizes, runs
 * worker.js (where jax-js and the computation live), shows what it sends back, and Stop ends it.
 * Loaded by the panel's own small script only when the reader opens the panel, so a page that
 * is only read fetches none of it, nor jax-js.
 */

/** Bounds the panel states and keeps: a batch of float32 values within 64 MiB. */
export const LIMITS = { rows: 4_000_000, features: 4_096, settings: 1_024, elements: 2 ** 24 };

const fmt = (n) => n.toLocaleString("en-US");

/** A positive whole number from `text`, or a sentence saying what is wrong with it. */
export function readCount(text, label, max) {
  const value = text.trim();
  if (value === "") return { error: `${label}: enter a whole number from 1 to ${fmt(max)}.` };
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(value)) {
    return { error: `${label}: “${value}” is not a number; enter a whole number from 1 to ${fmt(max)}.` };
  }
  const number = Number(value);
  if (!Number.isInteger(number)) return { error: `${label}: ${value} is not a whole number.` };
  if (number < 1) return { error: `${label}: ${value} is too small; it must be at least 1.` };
  if (number > max) return { error: `${label}: ${value} is larger than this panel's bound of ${fmt(max)}.` };
  return { value: number };
}

/** The three sizes, or the sentences saying what is wrong (nothing is run then). */
export function readSizes(form) {
  const rows = readCount(form.rows.value, "Batch size", LIMITS.rows);
  const features = readCount(form.features.value, "Feature count", LIMITS.features);
  const settings = readCount(form.settings.value, "Weight settings", LIMITS.settings);
  const errors = [rows, features, settings].filter((r) => r.error).map((r) => r.error);
  if (errors.length) return { errors };
  const sizes = { rows: rows.value, features: features.value, settings: settings.value };
  for (const [a, b, what] of [
    ["rows", "features", "batch size × feature count"],
    ["rows", "settings", "batch size × weight settings"],
    ["settings", "features", "weight settings × feature count"],
  ]) {
    if (sizes[a] * sizes[b] > LIMITS.elements) {
      errors.push(`${what} is ${fmt(sizes[a] * sizes[b])}, larger than this panel's bound of ${fmt(LIMITS.elements)}.`);
    }
  }
  return errors.length ? { errors } : { sizes };
}

/** Wire the panel inside `root` (a <details>): called once, when it is first opened. */
export async function start(root) {
  const panel = root.querySelector(".try-it__panel");
  const form = root.querySelector("form");
  const stop = root.querySelector(".try-it__stop");
  const run = form.querySelector("button[type=submit]");
  const tableButton = root.querySelector(".try-it__table-button");
  const message = root.querySelector(".try-it__message");
  const status = root.querySelector(".try-it__status");
  const output = root.querySelector(".try-it__output");
  const [book, figures] = await Promise.all(
    ["book.json", "figures.json"].map(async (name) => (await fetch(new URL(name, import.meta.url))).json()),
  );
  form.rows.value = book.batch.length;
  form.features.value = book.batch[0].length;
  form.settings.value = 1;
  root.querySelector(".try-it__limits").textContent =
    `Bounds: batch size up to ${fmt(LIMITS.rows)}, feature count up to ${fmt(LIMITS.features)}, ` +
    `weight settings up to ${fmt(LIMITS.settings)}, and any two of them multiplied up to ` +
    `${fmt(LIMITS.elements)} (64 MiB of float32 numbers).`;
  panel.hidden = false;

  let worker = null;
  // A disabled button loses the keyboard's focus: hand it to the control that stays usable.
  const running = (on) => {
    const focused = document.activeElement;
    run.disabled = on;
    tableButton.disabled = on;
    stop.disabled = !on;
    if (on && (focused === run || focused === tableButton)) stop.focus();
    if (!on && focused === stop) run.focus();
  };
  const finish = (text) => {
    status.textContent = text;
    running(false);
  };

  const launch = (request) => {
    output.textContent = "";
    status.textContent = "Running… (the first run loads jax-js and compiles)";
    running(true);
    worker ??= new Worker(new URL("worker.js", import.meta.url), { type: "module" });
    worker.onmessage = ({ data }) => {
      if (data.kind === "backend") {
        const adapter = data.adapter ? ` (${data.adapter})` : "";
        const step = data.timerStep >= 1e-5 ? `; this browser's timer moves in steps of ${Math.round(data.timerStep * 1e6)} µs` : "";
        output.textContent += `backend = ${data.name}${adapter}${step}\n`;
        backend = data.name;
      } else if (data.kind === "lines") {
        output.textContent += data.lines.join("\n") + "\n";
      } else if (data.kind === "row") {
        const cells = tableBody.rows[data.index].cells;
        cells[cells.length - 2].textContent = data.loop;
        cells[cells.length - 1].textContent = data.batched;
      } else if (data.kind === "fallback") {
        output.textContent += `${data.from} failed during the run (${data.message}); running on ${data.to} instead.\n`;
      } else if (data.kind === "done") {
        if (data.lines.length) output.textContent += data.lines.join("\n") + "\n";
        finish(data.summary);
      } else if (data.kind === "failed") {
        output.textContent += `The run stopped: ${data.message}\n`;
        finish(`The run failed: ${data.message}`);
        worker.terminate();
        worker = null;
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      finish(`The run failed: ${event.message || "the worker could not start"}`);
      worker?.terminate();
      worker = null;
    };
    worker.postMessage(request);
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const { sizes, errors } = readSizes(form);
    message.textContent = errors ? `Nothing was run. ${errors.join(" ")}` : "";
    if (!errors) launch(sizes);
  });

  let backend = "this browser";
  const tableBody = figuresTable(root.querySelector(".try-it__table"), figures);
  tableButton.addEventListener("click", () => {
    message.textContent = "";
    for (const row of tableBody.rows) for (const cell of [...row.cells].slice(-2)) cell.textContent = "…";
    launch({ table: figures.cpu.rows.map(([rows, features]) => [rows, features].map((t) => Number(t.replaceAll(",", "")))) });
  });

  stop.addEventListener("click", () => {
    worker?.terminate();
    worker = null;
    output.textContent += "Stopped.\n";
    finish("Stopped: the run was ended and nothing more is computed.");
  });
}

/** The book's turnaround sizes and times (the measured page's tables, as printed), with two
 *  empty columns for this browser's; returns the table's body. */
function figuresTable(holder, figures) {
  const table = document.createElement("table");
  table.createCaption().textContent = "The book's times and this browser's, at the measured page's sizes";
  const head = table.createTHead().insertRow();
  for (const title of ["rows", "features", "book CPU: Python loop", "book CPU: score_batch", "book GPU: score_batch", "here: JS loop", "here: jit(vmap)"]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = title;
    head.append(th);
  }
  const body = table.createTBody();
  figures.cpu.rows.forEach((cpu, index) => {
    const gpu = figures.gpu.rows[index] ?? [];
    const same = gpu[0] === cpu[0] && gpu[1] === cpu[1];
    const row = body.insertRow();
    for (const text of [cpu[0], cpu[1], cpu[2], cpu[4], same ? gpu[4] : "–", "", ""]) row.insertCell().textContent = text;
  });
  // In Material's wrapper, the table does not scroll itself: its region (tabindex 0) does.
  const wrapper = document.createElement("div");
  wrapper.className = "md-typeset__table";
  wrapper.append(table);
  const sources = document.createElement("ul");
  for (const [name, figure] of [["Book CPU", figures.cpu], ["Book GPU", figures.gpu]]) {
    sources.appendChild(document.createElement("li")).textContent = `${name}: ${figure.caption}`;
  }
  sources.appendChild(document.createElement("li")).textContent =
    "Here: this browser, now, each time the median of several runs after a warm-up.";
  holder.replaceChildren(wrapper, sources);
  return body;
}
