// Milliseconds per RayCamera frame on a tabletop-sized scene (a table, ~20 objects, a 6-link arm).
// Run after `npm run build`: node bench/camera.bench.mjs
import loadMujoco from "mujoco-js";
import { RayCamera } from "../dist/suites/mujoco/camera.js";

const FRAMES = 100;
const WARMUP = 10;

/** A scene of the size the tabletop suite renders: table, objects, an arm, a light, two cameras. */
function scene() {
  const kinds = ["box", "sphere", "cylinder", "capsule", "ellipsoid"];
  let objects = "";
  for (let i = 0; i < 20; i++) {
    const x = -0.25 + (i % 5) * 0.12;
    const y = -0.2 + Math.floor(i / 5) * 0.12;
    const rgb = `${(i % 3) / 2} ${((i + 1) % 3) / 2} ${((i + 2) % 3) / 2}`;
    objects += `<geom type="${kinds[i % 5]}" pos="${x} ${y} 0.44" size="0.025 0.02 0.03" rgba="${rgb} 1"/>\n`;
  }
  let arm = "";
  let close = "";
  for (let j = 0; j < 6; j++) {
    arm += `<body name="link${j}" pos="0 0 ${j === 0 ? 0.42 : 0.12}">
      <joint type="hinge" axis="${j % 2 ? "0 1 0" : "0 0 1"}"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.12" size="0.03" rgba=".8 .8 .82 1"/>\n`;
    close += "</body>\n";
  }
  return `<mujoco>
  <asset>
    <texture name="grid" type="2d" builtin="checker" rgb1=".7 .7 .7" rgb2=".55 .55 .55" width="64" height="64"/>
    <material name="grid" texture="grid" texrepeat="4 4" texuniform="true"/>
  </asset>
  <worldbody>
    <light pos="0.5 -0.5 2" dir="-0.3 0.3 -1"/>
    <geom type="plane" size="2 2 0.05" material="grid"/>
    <geom type="box" pos="0 0 0.4" size="0.45 0.35 0.02" rgba=".55 .4 .25 1"/>
    <geom type="box" pos="0 0.45 0.6" size="0.4 0.005 0.2" rgba=".3 .35 .6 0.4"/>
    ${objects}
    <body pos="-0.5 0 0">${arm}<camera name="wrist" pos="0 0 0.1" xyaxes="1 0 0 0 1 0"/>${close}</body>
    <camera name="agentview" pos="0 -1.1 1.1" xyaxes="1 0 0 0 0.6 0.8" fovy="45"/>
  </worldbody>
</mujoco>`;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const mujoco = await loadMujoco();
mujoco.FS.mkdir("/bench");
mujoco.FS.writeFile("/bench/scene.xml", scene());
const model = mujoco.MjModel.loadFromXML("/bench/scene.xml");
const data = new mujoco.MjData(model);
mujoco.mj_forward(model, data);

for (const size of [128, 64]) {
  for (const shadows of [false, true]) {
    const cam = new RayCamera(mujoco, model, {
      camera: "agentview",
      width: size,
      height: size,
      shadows,
    });
    const times = [];
    const cpu = [];
    for (let i = 0; i < WARMUP + FRAMES; i++) {
      // Move the arm a little each frame, as an episode would.
      data.qpos[i % 6] = 0.01 * i;
      mujoco.mj_forward(model, data);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      cam.render(data);
      const t = performance.now() - t0;
      const c = process.cpuUsage(c0);
      if (i >= WARMUP) {
        times.push(t);
        cpu.push((c.user + c.system) / 1000);
      }
    }
    cam.dispose();
    const note = shadows ? " [shadows: true]" : "";
    // CPU time too: on a busy machine wall time includes waiting for a core.
    const cpuNote = `, cpu ${median(cpu).toFixed(2)} ms`;
    console.log(
      `camera: ${size}x${size} frame: ${median(times).toFixed(2)} ms (median of ${FRAMES})${cpuNote}${note}`,
    );
  }
}

data.delete();
model.delete();
