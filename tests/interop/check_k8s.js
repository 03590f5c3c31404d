#!/usr/bin/env node
// Validates Kubernetes manifests with kubernetes-models, whose classes validate an object against
// the Kubernetes API's own OpenAPI schemas: every YAML document of every file given (what
// `punctual k8s-manifest` prints, and deploy/kubernetes/*.yaml).
//
// usage: node check_k8s.js [--shards N] FILE...
//   --shards N: the documents hold an Indexed Job, and every Indexed Job has
//   parallelism == completions == N, backoffLimit 0 and restartPolicy Never.
// The schemas leave a container's image optional (a controller may default it) and do not check
// that a volumeMount names a volume of its pod; both are checked here too, as the API server
// would refuse the pod.
// Silent when every document is valid (exit 0); otherwise one line per problem on stderr, exit 1.
// Needs kubernetes-models and js-yaml on NODE_PATH (run.sh installs them).
'use strict';

const fs = require('fs');
const yaml = require('js-yaml');
const { Job } = require('kubernetes-models/batch/v1/Job');
const { PersistentVolumeClaim } = require('kubernetes-models/v1/PersistentVolumeClaim');
const { Pod } = require('kubernetes-models/v1/Pod');

const MODELS = {
  'batch/v1 Job': Job,
  'v1 PersistentVolumeClaim': PersistentVolumeClaim,
  'v1 Pod': Pod,
};

function parseArgs(argv) {
  const args = { shards: null, files: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--shards') {
      args.shards = Number(argv[++i]);
      if (!Number.isInteger(args.shards) || args.shards < 1) usage();
    } else {
      args.files.push(argv[i]);
    }
  }
  if (args.files.length === 0) usage();
  return args;
}

function usage() {
  process.stderr.write('usage: node check_k8s.js [--shards N] FILE...\n');
  process.exit(2);
}

function podSpec(doc) {
  if (doc.kind === 'Pod') return doc.spec;
  return doc.spec && doc.spec.template ? doc.spec.template.spec : undefined;
}

// What the schemas let through but the API server would refuse.
function podProblems(spec) {
  if (!spec) return [];
  const problems = [];
  const volumes = new Set((spec.volumes || []).map((v) => v.name));
  for (const c of [...(spec.initContainers || []), ...(spec.containers || [])]) {
    if (typeof c.image !== 'string' || c.image === '') {
      problems.push(`container ${c.name} has no image`);
    }
    for (const m of c.volumeMounts || []) {
      if (!volumes.has(m.name)) {
        problems.push(`container ${c.name} mounts ${m.name}, which is no volume of the pod`);
      }
    }
  }
  return problems;
}

function shardProblems(doc, shards) {
  const s = doc.spec || {};
  const problems = [];
  if (s.parallelism !== shards || s.completions !== shards) {
    problems.push(`Indexed Job: parallelism ${s.parallelism} and completions ${s.completions}, ` +
                  `expected ${shards}`);
  }
  if (s.backoffLimit !== 0) problems.push(`Indexed Job: backoffLimit ${s.backoffLimit}, expected 0`);
  const restart = podSpec(doc) && podSpec(doc).restartPolicy;
  if (restart !== 'Never') problems.push(`Indexed Job: restartPolicy ${restart}, expected Never`);
  return problems;
}

function documentProblems(doc, shards) {
  const key = `${doc.apiVersion} ${doc.kind}`;
  const Model = MODELS[key];
  if (!Model) return [`${key}: not a kind this check knows (${Object.keys(MODELS).join(', ')})`];
  const problems = [];
  try {
    new Model(doc).validate();
  } catch (e) {
    problems.push(`${key}: ${e.message}`);
  }
  problems.push(...podProblems(podSpec(doc)));
  if (shards !== null && doc.kind === 'Job' && doc.spec && doc.spec.completionMode === 'Indexed') {
    problems.push(...shardProblems(doc, shards));
  }
  return problems;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const problems = [];
  let indexedJobs = 0;
  for (const file of args.files) {
    let docs;
    try {
      docs = yaml.loadAll(fs.readFileSync(file, 'utf8')).filter((d) => d != null);
    } catch (e) {
      problems.push(`${file}: ${e.message.split('\n')[0]}`);
      continue;
    }
    if (docs.length === 0) problems.push(`${file}: no document`);
    docs.forEach((doc, i) => {
      const name = doc && doc.metadata ? doc.metadata.name : undefined;
      for (const p of documentProblems(doc, args.shards)) {
        problems.push(`${file} document ${i + 1} (${name}): ${p}`);
      }
      if (doc.kind === 'Job' && doc.spec && doc.spec.completionMode === 'Indexed') indexedJobs++;
    });
  }
  if (args.shards !== null && indexedJobs === 0) {
    problems.push(`--shards ${args.shards}: no Job has completionMode Indexed`);
  }
  for (const p of problems) process.stderr.write(`check_k8s: ${p}\n`);
  process.exit(problems.length === 0 ? 0 : 1);
}

main();
