/**
 * Runs the site's try-it/practice.js in Node on Wasm (tests/test_try_it_differential.py):
 * `node --experimental-detect-module tests/try_it_node.mjs <built site>` with the request as JSON
 * on stdin; prints tests/try_it_harness.mjs's answer as JSON.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { answer } from "./try_it_harness.mjs";

const site = process.argv[2];
const practice = await import(pathToFileURL(`${site}/assets/javascripts/try-it/practice.js`).href);
const request = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(await answer(practice, request, "wasm")));
