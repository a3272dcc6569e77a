// Episode throughput of the default run's pair (tabletop × tiny-vla): CPU seconds per 300-step
// episode (physics, both cameras at every replan, the network), and what the camera shortcuts
// save, as the ratio of frame times with and without them, measured interleaved on the same
// frames. Run after `npm run build`: node bench/episode.bench.mjs
import { tinyVlaPolicy } from "../dist/policies/tiny-vla/index.js";
import { RayCamera } from "../dist/suites/mujoco/camera.js";
import { createTabletopSuite } from "../dist/suites/mujoco/tabletop.js";

const TASK = "kitchen_red_block_by_knife";
const STEPS = 300;
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const sim = await createTabletopSuite({}).open();
const policy = await tinyVlaPolicy.load({});

/** One episode as the runner plays it (reset, act, step), CPU seconds. */
async function episode(scene) {
  const c0 = cpu();
  let r = await sim.reset({ task: TASK, scene, seed: 0 });
  await policy.reset({ task: TASK, seed: scene, policySeed: 0 });
  for (let t = 0; t < STEPS; t++) r = await sim.step(await policy.act(r.obs));
  return cpu() - c0;
}

await episode(0);
const times = [];
for (const scene of [1, 2]) times.push(await episode(scene));
const perEpisode = times.reduce((a, b) => a + b, 0) / times.length;
console.log(
  `episodes: ${perEpisode.toFixed(2)} CPU s per ${STEPS}-step tabletop × tiny-vla episode (${(1 / perEpisode).toFixed(3)}/CPU s)`,
);

// Frames with and without the camera shortcuts (static hits of a still camera, unblockable
// shadow rays skipped), both cameras, the same states for both.
const { engine } = sim.current();
const cameras = ["agentview", "wrist"];
const cams = cameras.map((camera) =>
  [true, false].map(
    (shortcuts) => new RayCamera(engine.mj, engine.model, { camera, shadows: true, shortcuts }),
  ),
);
const spent = cameras.map(() => [0, 0]);
let r = await sim.reset({ task: TASK, scene: 3, seed: 0 });
await policy.reset({ task: TASK, seed: 3, policySeed: 0 });
for (let t = 0; t < STEPS; t++) {
  if (t % 4 === 0) {
    cams.forEach((pair, c) => {
      pair.forEach((cam, i) => {
        const c0 = cpu();
        cam.render(engine.data);
        spent[c][i] += cpu() - c0;
      });
    });
  }
  r = await sim.step(await policy.act(r.obs));
}
cameras.forEach((camera, c) => {
  const [on, off] = spent[c];
  const ms = (s) => ((s / (STEPS / 4)) * 1000).toFixed(1);
  console.log(
    `camera: ${camera} frames with the shortcuts take ${(on / off).toFixed(2)}x the time of full casts (${ms(on)} vs ${ms(off)} CPU ms)`,
  );
});
for (const pair of cams) for (const c of pair) c.dispose();
await policy.close();
await sim.close();
