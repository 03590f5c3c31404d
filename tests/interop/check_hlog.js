#!/usr/bin/env node
// Reads an HdrHistogram interval log with hdr-histogram-js (an independent implementation),
// merges the untagged intervals (or those of --tag T) and prints the figures as JSON, so that
// run.sh can compare them with `punctual report --json`.
//
// usage: node check_hlog.js FILE.hlog [--tag T]
// Needs hdr-histogram-js on NODE_PATH (run.sh installs it).
'use strict';

const fs = require('fs');
const { intervalsByTag, mergeAll } = require('./hlog_read');

function fail(message) {
  process.stderr.write(`check_hlog: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const args = { file: null, tag: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--tag') {
      args.tag = argv[++i];
      if (args.tag === undefined) fail('--tag needs a value');
    } else if (args.file === null) {
      args.file = argv[i];
    } else {
      fail(`unexpected argument ${argv[i]}`);
    }
  }
  if (args.file === null) fail('usage: check_hlog.js FILE.hlog [--tag T]');
  return args;
}

// hdr-histogram-js keeps raw recorded extremes, so take min and max from the counts instead.
function extremes(h) {
  let first = -1;
  let last = -1;
  for (let i = 0; i < h.countsArrayLength; i++) {
    if (h.getCountAtIndex(i) > 0) {
      if (first < 0) first = i;
      last = i;
    }
  }
  if (first < 0) return { min: 0, max: 0 };
  const min = first === 0 ? 0 : h.lowestEquivalentValue(h.valueFromIndex(first));
  return { min, max: h.highestEquivalentValue(h.valueFromIndex(last)) };
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  let text;
  try {
    text = fs.readFileSync(args.file, 'utf8');
  } catch (e) {
    fail(`cannot read ${args.file}: ${e.message}`);
  }
  const histograms = intervalsByTag(text, fail).get(args.tag) || [];
  if (histograms.length === 0) fail(`no ${args.tag === null ? 'untagged' : `Tag=${args.tag}`} intervals`);
  const merged = mergeAll(histograms);
  const percentiles = {};
  for (const p of ['50', '90', '99', '99.9', '99.99', '100']) {
    percentiles[p] = merged.getValueAtPercentile(Number(p));
  }
  const { min, max } = extremes(merged);
  const out = {
    count: merged.totalCount,
    min,
    max,
    mean: merged.mean,
    percentiles,
    intervals: histograms.length,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main();
