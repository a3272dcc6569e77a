// Speed of the MuJoCo suites: physics steps per second without rendering, milliseconds per
// 128x128 ray-cast frame of the tabletop scene, and 200-step tabletop episodes per second with
// and without the two cameras. Run after `npm run build`: node bench/physics.bench.mjs
import { scriptedPolicy } from "../dist/policies/scripted.js";
import { createTabletopSuite } from "../dist/suites/mujoco/tabletop.js";

const TASK = "kitchen_red_block";
const EPISODE_STEPS = 200;

/** Wall and CPU time of `fn` in milliseconds (the CPU figure is robust to a busy machine). */
function timed(fn) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  fn();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Physics steps per second on a settled tabletop scene, the arm holding still (no rendering). */
async function physicsSteps() {
  const sim = await createTabletopSuite({ render: { enabled: false } }).open();
  await sim.reset({ task: TASK, scene: 0, seed: 0 });
  const engine = sim.current().engine;
  engine.step(2000); // warm up the WASM tiers
  const wall = [];
  const cpu = [];
  for (let k = 0; k < 5; k++) {
    const t = timed(() => engine.step(2000));
    wall.push(2000 / (t.wall / 1000));
    cpu.push(2000 / (t.cpu / 1000));
  }
  await sim.close();
  return { wall: median(wall), cpu: median(cpu) };
}

/** Milliseconds per 128x128 frame, per camera, on the tabletop scene. */
async function frameMs() {
  const sim = await createTabletopSuite({
    render: { enabled: true, width: 128, height: 128, cameras: ["agentview"] },
  }).open();
  const wrist = await createTabletopSuite({
    render: { enabled: true, width: 128, height: 128, cameras: ["wrist"] },
  }).open();
  await sim.reset({ task: TASK, scene: 0, seed: 0 });
  await wrist.reset({ task: TASK, scene: 0, seed: 0 });
  const out = {};
  for (const [name, instance] of [
    ["agentview", sim],
    ["wrist", wrist],
  ]) {
    const world = instance.current();
    for (let i = 0; i < 5; i++) world.render();
    const wall = [];
    const cpu = [];
    for (let i = 0; i < 40; i++) {
      const t = timed(() => world.render());
      wall.push(t.wall);
      cpu.push(t.cpu);
    }
    out[name] = { wall: median(wall), cpu: median(cpu) };
  }
  await sim.close();
  await wrist.close();
  return out;
}

/** 200-step episodes of the scripted expert per second (reset included). */
async function episodes(render) {
  const sim = await createTabletopSuite({
    render: { enabled: render, width: 128, height: 128 },
  }).open();
  const expert = await scriptedPolicy.load({});
  const run = async (scene) => {
    expert.reset({ task: TASK, seed: scene, policySeed: 0 });
    let r = await sim.reset({ task: TASK, scene, seed: 0 });
    for (let t = 0; t < EPISODE_STEPS; t++) r = sim.step(expert.act(r.obs));
  };
  await run(0);
  const n = render ? 3 : 8;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 1; i <= n; i++) await run(i);
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  await sim.close();
  return { wall: n / wall, cpu: n / ((c.user + c.system) / 1e6) };
}

// Each line gives wall-clock and, in brackets, CPU-time figures (one thread).
const steps = await physicsSteps();
console.log(
  `physics: ${Math.round(steps.wall)} steps/s [cpu ${Math.round(steps.cpu)}] (tabletop scene, 5 ms steps, 10 per 20 Hz tick, no rendering)`,
);
const f = await frameMs();
console.log(
  `camera: ${f.agentview.wall.toFixed(2)} ms [cpu ${f.agentview.cpu.toFixed(2)}] per 128x128 agentview frame, ${f.wrist.wall.toFixed(2)} ms [cpu ${f.wrist.cpu.toFixed(2)}] per wrist frame`,
);
const fast = await episodes(false);
console.log(
  `episodes: ${fast.wall.toFixed(2)}/s [cpu ${fast.cpu.toFixed(2)}] (${EPISODE_STEPS} steps, scripted expert, no rendering)`,
);
const slow = await episodes(true);
console.log(
  `episodes: ${slow.wall.toFixed(3)}/s [cpu ${slow.cpu.toFixed(3)}] (${EPISODE_STEPS} steps, scripted expert, two 128x128 cameras)`,
);
