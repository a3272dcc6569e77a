// PNG decoding, the bulk of loading a recorded training set: decodePng (zlib's inflate and a
// direct unfilter) against pngjs alone on the same bytes, 128x128 RGB frames encoded as a
// recording encodes them. Run after `npm run build`: node bench/png.bench.mjs
import pngjs from "pngjs";
import { decodePng, encodePng } from "../dist/core/png.js";

const SIDE = 128;
const FRAMES = 400;

/** A frame like a tabletop view: a shaded floor, a table, coloured blocks, a little noise. */
function frame(k) {
  const data = new Uint8Array(SIDE * SIDE * 3);
  let seed = 2166136261 ^ k;
  const noise = () => {
    seed = Math.imul(seed ^ (seed >>> 15), 2246822507) >>> 0;
    return seed & 3;
  };
  for (let y = 0; y < SIDE; y++) {
    for (let x = 0; x < SIDE; x++) {
      const i = 3 * (y * SIDE + x);
      const table = y > 40 && y < 110 && x > 10 && x < 118;
      const block = table && (x + k) % 40 < 12 && (y + 2 * k) % 30 < 10;
      const base = block
        ? [200, 40 + (k % 5) * 30, 50]
        : table
          ? [140, 100, 64]
          : [90 + (y >> 2), 90 + (y >> 2), 95];
      for (let c = 0; c < 3; c++) data[i + c] = Math.min(255, (base[c] ?? 0) + noise());
    }
  }
  return { width: SIDE, height: SIDE, channels: 3, data };
}

const bytes = Array.from({ length: FRAMES }, (_, k) => encodePng(frame(k)));
function viaPngjs(b) {
  const png = pngjs.PNG.sync.read(b);
  const out = new Uint8Array(SIDE * SIDE * 3);
  for (let i = 0; i < SIDE * SIDE; i++) {
    out[3 * i] = png.data[4 * i];
    out[3 * i + 1] = png.data[4 * i + 1];
    out[3 * i + 2] = png.data[4 * i + 2];
  }
  return out;
}
function time(f) {
  for (const b of bytes.slice(0, 40)) f(b); // warm-up
  const t = performance.now();
  for (const b of bytes) f(b);
  return (performance.now() - t) / FRAMES;
}
for (const b of bytes)
  if (Buffer.compare(Buffer.from(viaPngjs(b)), Buffer.from(decodePng(b, 3).data)) !== 0)
    throw new Error("decodePng and pngjs disagree");
const ref = time(viaPngjs);
const direct = time((b) => decodePng(b, 3));
console.log(
  `png decode ${SIDE}x${SIDE} RGB: pngjs ${ref.toFixed(3)} ms/frame, decodePng ${direct.toFixed(3)} ms/frame, ${(ref / direct).toFixed(2)}x faster (same pixels)`,
);
