#!/usr/bin/env node
// Checks an interval log written by `punctual run --hlog` against the JSON report of the same run
// (--json), decoding the log with hdr-histogram-js rather than punctual's own reader, so that a
// writer bug that punctual's reader mirrors still shows up here.
//
// usage: node check_run_log.js RUN.hlog RUN.json
// Prints one "ok   ..." or "FAIL ..." line per check on stdout; exit status 0 when all pass,
// 1 when one fails, 2 when the files cannot be read at all.
// Needs hdr-histogram-js on NODE_PATH (run.sh installs it).
'use strict';

const fs = require('fs');
const { intervalsByTag, mergeAll } = require('./hlog_read');

// The untagged intervals carry response_time; every other logged view is Tag=<view name>.
const UNTAGGED_VIEW = 'response_time';
// A name's response time in a --requests mix: Tag=response_time.NAME, counted in by_name.
const NAMED_PREFIX = 'response_time.';
// Views the report computes after the run from other views; the log holds only measured samples.
const DERIVED_VIEWS = new Set(['reconstructed']);

function fail(message) {
  process.stderr.write(`check_run_log: ${message}\n`);
  process.exit(2);
}

function readOrFail(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    return fail(`cannot read ${file}: ${e.message}`);
  }
}

// Map(view name -> [histogram]): the untagged intervals are UNTAGGED_VIEW's.
function intervalsByView(text) {
  const byView = new Map();
  for (const [tag, histograms] of intervalsByTag(text, fail)) {
    byView.set(tag === null ? UNTAGGED_VIEW : tag, histograms);
  }
  return byView;
}

function logName(view) {
  return view === UNTAGGED_VIEW ? 'untagged' : `Tag=${view}`;
}

function main() {
  const [hlogFile, jsonFile, ...rest] = process.argv.slice(2);
  if (jsonFile === undefined || rest.length > 0) fail('usage: check_run_log.js RUN.hlog RUN.json');
  const byView = intervalsByView(readOrFail(hlogFile));
  let report;
  try {
    report = JSON.parse(readOrFail(jsonFile));
  } catch (e) {
    fail(`${jsonFile}: ${e.message}`);
  }
  const latency = report.latency;
  if (latency === null || typeof latency !== 'object') fail(`${jsonFile}: no "latency" object`);

  const results = [];
  const check = (ok, name, detail) => results.push(ok ? `ok   ${name}` : `FAIL ${name}: ${detail}`);

  const measured = Object.keys(latency).filter((v) => !DERIVED_VIEWS.has(v));
  const missing = measured.filter((v) => !byView.has(v));
  check(missing.length === 0,
        `run log has every measured view of the JSON (${measured.length})`,
        `no ${missing.map(logName).join(', ')} intervals in the log`);

  // A --requests mix logs each name's response time as Tag=response_time.NAME.
  const byName = report.by_name || {};
  const names = Object.keys(byName);
  const unlogged = names.filter((n) => !byView.has(`${NAMED_PREFIX}${n}`));
  if (names.length > 0) {
    check(unlogged.length === 0, `run log has every name of by_name (${names.length})`,
          `no ${unlogged.map((n) => `Tag=${NAMED_PREFIX}${n}`).join(', ')} intervals in the log`);
  }

  for (const [view, histograms] of byView) {
    const name = `run log ${logName(view)} count`;
    const counted = histograms.reduce((sum, h) => sum + h.totalCount, 0);
    const named = view.startsWith(NAMED_PREFIX) ? byName[view.slice(NAMED_PREFIX.length)] : undefined;
    const source = named ? named.response_time : latency[view];
    const expected = source ? source.count : undefined;
    if (typeof expected !== 'number') {
      check(false, name, `latency.${view}.count missing from the JSON`);
    } else {
      const field = named ? `by_name.${view.slice(NAMED_PREFIX.length)}.response_time.count`
                          : `latency.${view}.count`;
      check(counted === expected, `${name} == ${field} (${expected})`,
            `${histograms.length} intervals sum to ${counted}`);
    }
  }

  const untagged = byView.get(UNTAGGED_VIEW);
  const jsonP99 = latency[UNTAGGED_VIEW] && latency[UNTAGGED_VIEW].percentiles_ns
    ? latency[UNTAGGED_VIEW].percentiles_ns['99'] : undefined;
  const p99Name = `run log untagged p99 == latency.${UNTAGGED_VIEW}.percentiles_ns["99"]`;
  if (untagged === undefined || typeof jsonP99 !== 'number') {
    check(false, p99Name, untagged === undefined ? 'no untagged intervals' : 'p99 missing from the JSON');
  } else {
    const merged = mergeAll(untagged);
    const ours = merged.getValueAtPercentile(99);
    // Reporting a bucket by its lowest, highest or median value is a convention, so the two
    // readers agree when both values fall in one bucket, or in neighbouring ones.
    const width = merged.sizeOfEquivalentValueRange(Math.max(ours, jsonP99));
    const same = merged.lowestEquivalentValue(ours) === merged.lowestEquivalentValue(jsonP99);
    check(same || Math.abs(ours - jsonP99) <= width,
          `${p99Name} (${jsonP99} ns, ${same ? 'same bucket' : 'neighbouring bucket'})`,
          `hdr-histogram-js gives ${ours} ns, the JSON ${jsonP99} ns, bucket width ${width} ns`);
  }

  process.stdout.write(results.map((r) => `${r}\n`).join(''));
  process.exitCode = results.some((r) => r.startsWith('FAIL')) ? 1 : 0;
}

main();
