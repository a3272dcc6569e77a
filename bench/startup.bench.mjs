// Startup cost of the CLI as a ratio to a bare `node -e 0`, measured in one run, interleaved so
// that machine load affects both sides alike. Goal: `provael version`, `provael --help` and the
// `list-*` commands within 3x of bare node: only the command being run is loaded (cli/commands.ts),
// and commands that play no episode load neither TensorFlow.js nor MuJoCo.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = process.env.PROVAEL_BIN ?? join(root, "dist", "cli", "bin.js");
const runs = Number(process.argv[2] ?? 15);

function wall(args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: "ignore" });
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited with ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

const cases = {
  "node -e 0": ["-e", "0"],
  "provael version": [bin, "version"],
  "provael --help": [bin, "--help"],
  "provael list-attacks": [bin, "list-attacks"],
  "provael list-policies": [bin, "list-policies"],
  "provael list-suites": [bin, "list-suites"],
};
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let i = 0; i < runs; i++)
  for (const [k, args] of Object.entries(cases)) times[k].push(wall(args));
const bare = median(times["node -e 0"]);
for (const [k, xs] of Object.entries(times)) {
  const m = median(xs);
  console.log(
    `${k.padEnd(22)} median ${m.toFixed(0).padStart(5)} ms  ratio ${(m / bare).toFixed(2)}x`,
  );
}
