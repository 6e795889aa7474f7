#!/usr/bin/env node
// ONNX Runtime side of cuvil's host benchmark.
//
//   node bench/ort_bench.js MODEL_DIR RUNS
//
// MODEL_DIR holds model.onnx, manifest.json and input_<i>.bin (float32) as
// bench/models.py writes them. Runs the model RUNS times after a warm-up on
// one intra-op thread with every graph optimisation enabled (ORT at its best
// on one core, the configuration cuvil's single-core targets compete with),
// writes the outputs to MODEL_DIR/ort_<i>.bin and prints one JSON line:
//   {"median_ns": N, "min_ns": N, "runs": RUNS}
// The onnxruntime-node package is the one scripts/install-deps.sh installs in
// tests/reference/.
'use strict';

const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

const requireRef = createRequire(path.join(__dirname, '..', 'tests', 'reference', 'package.json'));
const ort = requireRef('onnxruntime-node');

const SESSION_OPTIONS = {
  executionProviders: ['cpu'],
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
};

function readInputs(modelDir, manifest) {
  const feeds = {};
  manifest.inputs.forEach((spec, i) => {
    const bytes = fs.readFileSync(path.join(modelDir, `input_${i}.bin`));
    const count = spec.shape.reduce((a, b) => a * b, 1);
    if (spec.dtype !== 'float32' || bytes.length !== count * 4) {
      throw new Error(`input_${i}.bin: expected ${count} float32 values`);
    }
    feeds[spec.name] = new ort.Tensor('float32', new Float32Array(new Uint8Array(bytes).buffer),
                                      spec.shape);
  });
  return feeds;
}

async function main(args) {
  if (args.length !== 2 || !(Number(args[1]) > 0)) {
    throw new Error('usage: node bench/ort_bench.js MODEL_DIR RUNS');
  }
  const [modelDir, runsArg] = args;
  const runs = Number(runsArg);
  const manifest = JSON.parse(fs.readFileSync(path.join(modelDir, 'manifest.json'), 'utf8'));
  const session = await ort.InferenceSession.create(path.join(modelDir, 'model.onnx'),
                                                    SESSION_OPTIONS);
  const feeds = readInputs(modelDir, manifest);
  let results = await session.run(feeds); // warm-up: first-run allocations
  const times = [];
  for (let r = 0; r < runs; ++r) {
    const start = process.hrtime.bigint();
    results = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start));
  }
  manifest.outputs.forEach((name, i) => {
    const data = results[name].data;
    fs.writeFileSync(path.join(modelDir, `ort_${i}.bin`),
                     Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  });
  await session.release();
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ median_ns: times[Math.floor(runs / 2)], min_ns: times[0], runs }));
}

main(process.argv.slice(2)).catch((err) => {
  console.error(`ort_bench: error: ${err.message}`);
  process.exitCode = 1;
});
