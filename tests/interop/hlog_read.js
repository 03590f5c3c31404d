// Reading interval logs with hdr-histogram-js, shared by the interop checks: the interval lines
// decoded per tag, and their merge.
'use strict';

const hdr = require('hdr-histogram-js');

// Interval lines are "[Tag=T,]start,length,max,base64"; everything else is header. Returns
// Map(tag -> [histogram]), the untagged intervals under null. `fail(message)` reports a
// malformed line and does not return.
function intervalsByTag(text, fail) {
  const byTag = new Map();
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (line === '' || line.startsWith('#') || line.startsWith('"StartTimestamp"')) return;
    const fields = line.split(',');
    let tag = null;
    if (fields[0].startsWith('Tag=')) tag = fields.shift().slice(4);
    if (fields.length !== 4) fail(`line ${index + 1}: expected 4 fields, found ${fields.length}`);
    // 64-bit counts: the default 32-bit decode would wrap large counts.
    const h = hdr.decodeFromCompressedBase64(fields[3], 64);
    if (!byTag.has(tag)) byTag.set(tag, []);
    byTag.get(tag).push(h);
  });
  return byTag;
}

// One histogram wide enough for all of them, holding their sum.
function mergeAll(histograms) {
  const merged = hdr.build({
    bitBucketSize: 64,
    autoResize: true,
    lowestDiscernibleValue: Math.min(...histograms.map((h) => h.lowestDiscernibleValue)),
    highestTrackableValue: Math.max(...histograms.map((h) => h.highestTrackableValue)),
    numberOfSignificantValueDigits: Math.max(
      ...histograms.map((h) => h.numberOfSignificantValueDigits)),
  });
  histograms.forEach((h) => merged.add(h));
  return merged;
}

module.exports = { intervalsByTag, mergeAll };
