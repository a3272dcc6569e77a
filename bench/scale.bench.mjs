// Scale figures (issue: scale): harness overhead against a bare loop, worker scaling, and the
// peak memory of a 10,000-episode stub run. Imports the build (npm run bench builds first).
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dist = new URL("../dist/", import.meta.url);
const { runAttack } = await import(new URL("runner/run.js", dist));
const { resolveAttacks } = await import(new URL("attacks/index.js", dist));
const { suites } = await import(new URL("suites/index.js", dist));
const { policies } = await import(new URL("policies/index.js", dist));
const tmp = () => mkdtempSync(join(tmpdir(), "provael-bench-"));

const plan = (over) => ({
  policy: "stub",
  suite: "stub",
  tasks: ["fetch_cup", "wipe_plate", "grab_sponge"],
  arms: resolveAttacks(["none", "control", "instruction"]),
  seed: 0,
  seeds: 10,
  repeats: 1,
  horizon: null,
  termination: "fixed-horizon",
  scene_pin: 0,
  policy_options: {},
  attack_params: {},
  calibration: {},
  ...over,
});

// 1. Peak RSS of a 10,000-episode stub run, in a fresh process.
{
  const script = `
    const { runAttack } = await import(${JSON.stringify(new URL("runner/run.js", dist).href)});
    const { resolveAttacks } = await import(${JSON.stringify(new URL("attacks/index.js", dist).href)});
    const arms = resolveAttacks(["none", "control", "instruction"]);
    const seeds = Math.ceil(10000 / (3 * arms.length));
    const t0 = performance.now();
    const r = await runAttack({ plan: { policy: "stub", suite: "stub", tasks: ["fetch_cup", "wipe_plate", "grab_sponge"], arms, seed: 0, seeds, repeats: 1, horizon: null, termination: "fixed-horizon", scene_pin: 0, policy_options: {}, attack_params: {}, calibration: {} }, out: ${JSON.stringify(join(tmp(), "run"))}, resume: false, concurrency: 1, policyOptions: {}, commandLine: [], finish: { html: false } });
    console.log(JSON.stringify({ episodes: r.total, seconds: (performance.now() - t0) / 1000, maxRssMb: process.resourceUsage().maxRSS / 1024 }));`;
  const out = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  if (out.status !== 0) throw new Error(out.stderr);
  const m = JSON.parse(out.stdout.trim().split("\n").pop());
  console.log(
    `scale: memory: ${m.episodes} stub episodes, peak RSS ${m.maxRssMb.toFixed(0)} MB (goal < 300 MB), ${m.seconds.toFixed(1)} s`,
  );
}

// 2 and 3 on the physics suite with the learned policy, or with the scripted expert (state only,
// no rendering) while tiny-vla's weights do not ship; the line says which.
const subject = policies.has("tiny-vla") ? "tiny-vla" : "scripted";
{
  const tasks = suites
    .get("tabletop")
    .tasks()
    .slice(0, 4)
    .map((t) => t.id);
  const arms = ["none"];
  const seeds = 3;
  const suite = suites.get("tabletop");
  // Bare loop: the same simulator, policy and episodes, without the harness.
  const bareLoop = async () => {
    const policy = await policies.get(subject).load({});
    const env = await suite.open({ cameras: policies.get(subject).capabilities.cameras });
    const t0 = performance.now();
    let steps = 0;
    for (const task of tasks) {
      const spec = suite.tasks().find((t) => t.id === task);
      for (let s = 0; s < seeds; s++) {
        let r = await env.reset({ task, scene: s % spec.scenes, seed: s });
        await policy.reset({ task, seed: s, policySeed: s });
        for (let i = 0; i < spec.horizon; i++) {
          const { privileged, ...plain } = r.obs;
          const obs = policy.capabilities.privileged ? r.obs : plain;
          r = await env.step(await policy.act(obs));
          steps += 1;
        }
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    await env.close();
    await policy.close();
    return { seconds, steps };
  };
  const harnessRun = async () => {
    const t1 = performance.now();
    await runAttack({
      plan: plan({ policy: subject, suite: "tabletop", tasks, arms, seeds }),
      out: join(tmp(), "h"),
      resume: false,
      concurrency: 1,
      policyOptions: {},
      commandLine: [],
      finish: { html: false },
      workers: 1,
    });
    return (performance.now() - t1) / 1000;
  };
  // Alternate the two, after a warm-up of each, and compare the sums: a shared machine's noise
  // then hits both sides alike.
  await bareLoop();
  await harnessRun();
  let bare = 0;
  let harness = 0;
  let steps = 0;
  for (let i = 0; i < 2; i++) {
    const b = await bareLoop();
    bare += b.seconds;
    steps = b.steps;
    harness += await harnessRun();
  }
  console.log(
    `scale: overhead (tabletop × ${subject}): harness ${harness.toFixed(2)} s vs bare loop ${bare.toFixed(2)} s for 2 × ${tasks.length * seeds} episodes (${steps} steps each time): ${(((harness - bare) / bare) * 100).toFixed(1)}% overhead (goal ≤ 5%)`,
  );

  const eps = async (workers) => {
    const t = performance.now();
    const r = await runAttack({
      plan: plan({
        policy: subject,
        suite: "tabletop",
        tasks,
        arms: ["none", "goal_substitution"],
        seeds: 4,
      }),
      out: join(tmp(), `w${workers}`),
      resume: false,
      concurrency: 1,
      policyOptions: {},
      commandLine: [],
      finish: { html: false },
      workers,
    });
    return r.total / ((performance.now() - t) / 1000);
  };
  const one = await eps(1);
  const two = await eps(2);
  console.log(
    `scale: workers (tabletop × ${subject}): ${one.toFixed(2)} episodes/s with 1 worker, ${two.toFixed(2)} with 2: ${(two / one).toFixed(2)}x (goal ≥ 1.7x on 2 cores)`,
  );
}
