#!/usr/bin/env node
// Compute ONNX Runtime reference outputs for cuvil's test models.
//
//   node tests/reference/run_ort.js MODEL_DIR...
//
// Each MODEL_DIR holds model.onnx, manifest.json and input_<i>.bin (raw
// little-endian, C order, of the manifest's dtype) as written by
// tests/models/gen_models.py. This writes ref_<i>.bin (raw little-endian
// float32, C order) for the i-th output named in the manifest.
//
// An input the manifest marks "absent": true (an ONNX optional input the
// caller leaves out; its input_<i>.bin is empty) is not fed: ORT's feeds
// cannot leave out an input of the graph, so the manifest names a
// "reference_model" instead, the same model with that input replaced by an
// empty value of the ONNX `Optional` op, which ORT runs as the absence.
//
// Session settings: CPU provider, one thread, sequential execution and graph
// optimisations disabled, so the reference is ORT's plain kernel for every
// ONNX node: no ORT-side fusion (Conv+BN folding, Gemm+activation...) changes
// the rounding we compare against, and results do not depend on the machine's
// core count.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');

const SESSION_OPTIONS = {
  executionProviders: ['cpu'],
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'disabled',
};

class UsageError extends Error {}

function readManifest(modelDir) {
  const file = path.join(modelDir, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!Array.isArray(manifest.inputs) || !Array.isArray(manifest.outputs)) {
    throw new Error(`${file}: expected "inputs" and "outputs" arrays`);
  }
  return manifest;
}

// The manifest's input dtypes and the typed arrays ORT takes them in.
const INPUT_TYPES = {
  float32: Float32Array,
  int64: BigInt64Array,
  int32: Int32Array,
  int8: Int8Array,
  uint8: Uint8Array,
  bool: Uint8Array,
};

function readInput(modelDir, index, spec) {
  const Typed = INPUT_TYPES[spec.dtype];
  if (!Typed) {
    throw new Error(`input '${spec.name}': unsupported dtype '${spec.dtype}' ` +
                    `(supported: ${Object.keys(INPUT_TYPES).join(', ')})`);
  }
  const file = path.join(modelDir, `input_${index}.bin`);
  const bytes = fs.readFileSync(file);
  const count = spec.shape.reduce((a, b) => a * b, 1);
  if (bytes.length !== count * Typed.BYTES_PER_ELEMENT) {
    throw new Error(`${file}: ${bytes.length} bytes, expected ` +
                    `${count * Typed.BYTES_PER_ELEMENT} for ${spec.dtype} ` +
                    `[${spec.shape.join(', ')}]`);
  }
  // Copy into a fresh, aligned ArrayBuffer: a Buffer may sit at any offset of
  // a shared pool.
  const data = new Typed(new Uint8Array(bytes).buffer);
  return new ort.Tensor(spec.dtype, data, spec.shape);
}

async function runModel(modelDir) {
  const manifest = readManifest(modelDir);
  const absent = manifest.inputs.filter((spec) => spec.absent);
  if (absent.length && !manifest.reference_model) {
    throw new Error(`inputs [${absent.map((spec) => spec.name)}] are absent: the manifest ` +
                    'must name a "reference_model" without them');
  }
  const modelFile = manifest.reference_model || 'model.onnx';
  const session = await ort.InferenceSession.create(path.join(modelDir, modelFile),
                                                    SESSION_OPTIONS);
  const expectedInputs = manifest.inputs.filter((spec) => !spec.absent).map((spec) => spec.name);
  if (JSON.stringify(expectedInputs) !== JSON.stringify(session.inputNames)) {
    throw new Error(`model inputs [${session.inputNames}] do not match the manifest's ` +
                    `[${expectedInputs}]`);
  }
  const feeds = {};
  manifest.inputs.forEach((spec, i) => {
    if (!spec.absent) feeds[spec.name] = readInput(modelDir, i, spec);
  });

  const results = await session.run(feeds, manifest.outputs);
  manifest.outputs.forEach((name, i) => {
    const tensor = results[name];
    if (tensor.type !== 'float32') {
      throw new Error(`output '${name}': ORT returned ${tensor.type}, expected float32`);
    }
    const data = tensor.data;
    fs.writeFileSync(path.join(modelDir, `ref_${i}.bin`),
                     Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  });
  await session.release();
  return manifest.outputs.length;
}

async function main(args) {
  if (args.length === 0 || args.includes('-h') || args.includes('--help')) {
    throw new UsageError('usage: node run_ort.js MODEL_DIR...');
  }
  // Float32Array uses the machine's byte order; the files are little-endian.
  if (os.endianness() !== 'LE') {
    throw new Error('reference files are little-endian; this machine is big-endian');
  }
  let failed = 0;
  for (const modelDir of args) {
    try {
      const n = await runModel(modelDir);
      console.log(`run_ort: ${modelDir}: wrote ${n} reference output(s)`);
    } catch (err) {
      console.error(`run_ort: error: ${modelDir}: ${err.message}`);
      failed += 1;
    }
  }
  return failed === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => {
    console.error(`run_ort: ${err.message}`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  });
