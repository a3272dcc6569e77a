#!/usr/bin/env node
/**
 * Writes the small ONNX models the `onnx` policy is tested on (test/fixtures/onnx/), with
 * onnx-proto. Weights come from a fixed linear congruential sequence, so the files are the same
 * bytes on every run. Regenerate with `node scripts/make-onnx-models.mjs`.
 *
 * - state-image.onnx: action[1,7] = Gemm(state[1,8], W, b) + ReduceMean(image[1,3,16,16]) * v
 * - chunk-text.onnx:  actions[1,4,7] = Reshape(Gemm(Concat(state[1,8], text[1,32]), W, b)) +
 *                     ReduceMean(image[1,16,16,3]) (a NHWC image), a 4-step chunk
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import onnxProto from "onnx-proto";

const { onnx } = onnxProto;
const OUT = join(dirname(fileURLToPath(import.meta.url)), "..", "test", "fixtures", "onnx");
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

/** A fixed pseudo-random sequence in [-scale, scale]. */
function weights(n, seed, scale) {
  let s = seed >>> 0;
  const out = [];
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out.push(Math.fround(((s / 2 ** 32) * 2 - 1) * scale));
  }
  return out;
}

const tensor = (name, dims, floats) =>
  onnx.TensorProto.create({ name, dims, dataType: FLOAT, floatData: floats });
const int64s = (name, values) =>
  onnx.TensorProto.create({ name, dims: [values.length], dataType: INT64, int64Data: values });
const valueInfo = (name, elemType, dims) =>
  onnx.ValueInfoProto.create({
    name,
    type: onnx.TypeProto.create({
      tensorType: onnx.TypeProto.Tensor.create({
        elemType,
        shape: onnx.TensorShapeProto.create({
          dim: dims.map((d) => onnx.TensorShapeProto.Dimension.create({ dimValue: d })),
        }),
      }),
    }),
  });
const node = (opType, input, output, attribute = []) =>
  onnx.NodeProto.create({ opType, input, output, attribute });
const ints = (name, values) =>
  onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INTS, ints: values });
const int = (name, value) =>
  onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INT, i: value });

function model(graph) {
  return onnx.ModelProto.encode(
    onnx.ModelProto.create({
      irVersion: 7,
      producerName: "provael scripts/make-onnx-models.mjs",
      opsetImport: [onnx.OperatorSetIdProto.create({ domain: "", version: 13 })],
      graph,
    }),
  ).finish();
}

/** A 1-step action from the state and the mean image brightness. */
function stateImage() {
  return model(
    onnx.GraphProto.create({
      name: "state_image",
      input: [valueInfo("state", FLOAT, [1, 8]), valueInfo("image", FLOAT, [1, 3, 16, 16])],
      output: [valueInfo("action", FLOAT, [1, 7])],
      initializer: [
        tensor("W", [8, 7], weights(56, 1, 0.5)),
        tensor("b", [7], weights(7, 2, 0.1)),
        tensor("v", [1, 7], weights(7, 3, 1)),
      ],
      node: [
        node("Gemm", ["state", "W", "b"], ["lin"]),
        // keepdims 0 leaves shape [1], which broadcasts against v [1, 7].
        node("ReduceMean", ["image"], ["mean"], [ints("axes", [1, 2, 3]), int("keepdims", 0)]),
        node("Mul", ["mean", "v"], ["bright"]),
        node("Add", ["lin", "bright"], ["action"]),
      ],
    }),
  );
}

/** A 4-step chunk from the state, a hashed bag of words and the mean of an NHWC image. */
function chunkText() {
  return model(
    onnx.GraphProto.create({
      name: "chunk_text",
      input: [
        valueInfo("state", FLOAT, [1, 8]),
        valueInfo("text", FLOAT, [1, 32]),
        valueInfo("pixels", FLOAT, [1, 16, 16, 3]),
      ],
      output: [valueInfo("actions", FLOAT, [1, 4, 7])],
      initializer: [
        tensor("W", [40, 28], weights(40 * 28, 4, 0.3)),
        tensor("b", [28], weights(28, 5, 0.1)),
        int64s("shape_147", [1, 4, 7]),
      ],
      node: [
        node("Concat", ["state", "text"], ["features"], [int("axis", 1)]),
        node("Gemm", ["features", "W", "b"], ["flat"]),
        node("Reshape", ["flat", "shape_147"], ["chunk"]),
        node("ReduceMean", ["pixels"], ["mean"], [ints("axes", [1, 2, 3]), int("keepdims", 0)]),
        node("Add", ["chunk", "mean"], ["actions"]),
      ],
    }),
  );
}

mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, "state-image.onnx"), stateImage());
writeFileSync(join(OUT, "chunk-text.onnx"), chunkText());
process.stdout.write(`wrote ${OUT}/state-image.onnx and chunk-text.onnx\n`);
