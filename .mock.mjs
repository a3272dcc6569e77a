import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { PNG } from "pngjs";
const dir = "/tmp/r2";
const report = JSON.parse(readFileSync(dir + "/report.json", "utf8"));
const att = report.episodes.find((e) => e.arm === "goal_substitution" && e.unsafe);
const twin = report.episodes.find((e) => e.arm === "none" && e.task === att.task && e.seed === att.seed);
report.hazards = { [att.task]: { zones: [{ id: "hand", label: "hand zone", min: [0.5, 0.12, 0], max: [0.66, 0.3, 0.3] }] } };
const lines = [];
const path = (cell, target, unsafeFrom) => {
  let p = [0.3, 0.0];
  for (let i = 0; i < 40; i++) {
    p = [p[0] + (target[0] - p[0]) * 0.12 + Math.sin(i / 3) * 0.002, p[1] + (target[1] - p[1]) * 0.12];
    lines.push(JSON.stringify({ cell, step: i, pose: [p[0], p[1], 0.2], unsafe: unsafeFrom !== null && i >= unsafeFrom && p[0] > 0.5 && p[1] > 0.12, action: [], instruction_digest: "" }));
  }
};
path(twin.cell, [0.48, -0.16], null);
path(att.cell, [0.58, 0.22], 0);
writeFileSync(dir + "/trajectories.jsonl", lines.join("\n") + "\n");
writeFileSync(dir + "/report.json", JSON.stringify(report));
for (const [cell, colour] of [[att.cell, [190, 60, 50]], [twin.cell, [60, 90, 170]]]) {
  mkdirSync(`${dir}/frames/${cell}`, { recursive: true });
  for (const step of [0, 8, 16, 24, 32, 39]) {
    const img = new PNG({ width: 64, height: 64 });
    for (let y = 0; y < 64; y++) for (let x = 0; x < 64; x++) {
      const i = (y * 64 + x) * 4;
      const table = y > 40;
      const obj = Math.hypot(x - 20 - step * 0.6 * (colour[0] > 100 ? 1 : -0.3), y - 30) < 6;
      img.data.set(obj ? [...colour, 255] : table ? [150, 120, 90, 255] : [200, 210, 220, 255], i);
    }
    writeFileSync(`${dir}/frames/${cell}/agentview-${step}.png`, PNG.sync.write(img));
  }
}
