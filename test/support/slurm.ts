/**
 * A single-node Slurm cluster of its own in a temporary directory: munged, slurmctld and slurmd on
 * localhost, a slurm.conf generated for this machine's cores and memory (`slurmd -C`), private
 * state, spool, log and socket paths and free ports, so that it touches nothing of a Slurm the
 * machine may already run and two test runs do not meet. Debian's `slurm-wlm` and `munge`; the
 * daemons run as root (a root-only SlurmUser keeps the configuration to one user).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

export interface Cluster {
  /** The environment every Slurm command and job of this cluster needs (SLURM_CONF). */
  env: NodeJS.ProcessEnv;
  dir: string;
  /** Cancels this cluster's jobs, then stops the daemons by their PIDs and waits for them. */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function onPath(cmd: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function readPid(file: string): number | null {
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, "utf8").trim());
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** SIGTERM, up to 10 s for it to exit, then SIGKILL. */
async function stopPid(pid: number): Promise<void> {
  if (!alive(pid)) return;
  process.kill(pid, "SIGTERM");
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(100);
  if (alive(pid)) process.kill(pid, "SIGKILL");
}

/** Why this machine cannot run the cluster, or null when it can try. */
export function slurmUnavailable(): string | null {
  for (const cmd of ["munged", "mungekey", "slurmctld", "slurmd", "sbatch", "scontrol", "squeue"])
    if (!onPath(cmd)) return `${cmd} is not installed (Debian: apt-get install slurm-wlm munge)`;
  if (process.getuid?.() !== 0) return "the Slurm daemons of the test cluster run as root";
  return null;
}

/**
 * Starts the cluster in `dir` (a directory of its own, made traversable by all) and waits (bounded) for its node to be idle. Returns the reason
 * when it cannot start, having stopped whatever it had started.
 */
export async function startCluster(dir: string): Promise<Cluster | { unavailable: string }> {
  const why = slurmUnavailable();
  if (why) return { unavailable: why };
  // munged refuses a socket in a directory others cannot traverse, and a key others can read.
  chmodSync(dir, 0o755);
  const run = join(dir, "run");
  const key = join(dir, "munge");
  for (const d of [run, key, join(dir, "state"), join(dir, "spool"), join(dir, "log")])
    mkdirSync(d, { recursive: true });
  chmodSync(run, 0o755);
  chmodSync(key, 0o700);
  const socket = join(run, "munge.sock");
  const pidFiles = {
    munged: join(run, "munged.pid"),
    slurmctld: join(run, "slurmctld.pid"),
    slurmd: join(run, "slurmd.pid"),
  };
  const conf = join(dir, "slurm.conf");
  const env = { ...process.env, SLURM_CONF: conf };
  const cluster: Cluster = {
    env,
    dir,
    async stop() {
      if (readPid(pidFiles.slurmctld) !== null)
        spawnSync("scancel", ["--user", "root"], { env, timeout: 10_000 });
      // slurmd first (it ends the job steps it runs), then the controller, then munge.
      for (const name of ["slurmd", "slurmctld", "munged"] as const) {
        const pid = readPid(pidFiles[name]);
        if (pid !== null) await stopPid(pid);
      }
    },
  };
  const log = (name: string) => {
    const file = join(dir, "log", `${name}.log`);
    return existsSync(file) ? readFileSync(file, "utf8").slice(-1500) : "(no log)";
  };
  try {
    execFileSync("mungekey", ["--create", `--keyfile=${join(key, "munge.key")}`], {
      stdio: "pipe",
    });
    execFileSync(
      "munged",
      [
        `--socket=${socket}`,
        `--key-file=${join(key, "munge.key")}`,
        `--pid-file=${pidFiles.munged}`,
        `--seed-file=${join(key, "munged.seed")}`,
        `--log-file=${join(dir, "log", "munged.log")}`,
      ],
      { stdio: "pipe" },
    );
    // This machine's node line as slurmd sees it (CPUs, sockets, cores, memory); a node
    // configured larger than it is would be drained.
    const hardware = execFileSync("slurmd", ["-C"], { encoding: "utf8" }).split("\n")[0] ?? "";
    const node = hardware.match(/^NodeName=(\S+)/)?.[1];
    if (!node) throw new Error(`slurmd -C printed no node line: ${hardware}`);
    const [ctldPort, dPort] = [await freePort(), await freePort()];
    writeFileSync(
      conf,
      [
        "ClusterName=provaeltest",
        `SlurmctldHost=${node}(127.0.0.1)`,
        "SlurmUser=root",
        "SlurmdUser=root",
        `SlurmctldPort=${ctldPort}`,
        `SlurmdPort=${dPort}`,
        "AuthType=auth/munge",
        "CredType=cred/munge",
        `AuthInfo=socket=${socket}`,
        `StateSaveLocation=${join(dir, "state")}`,
        `SlurmdSpoolDir=${join(dir, "spool")}`,
        `SlurmctldPidFile=${pidFiles.slurmctld}`,
        `SlurmdPidFile=${pidFiles.slurmd}`,
        `SlurmctldLogFile=${join(dir, "log", "slurmctld.log")}`,
        `SlurmdLogFile=${join(dir, "log", "slurmd.log")}`,
        // No cgroups (containers rarely delegate them), no accounting daemon (so no sacct: jobs
        // are followed with squeue and scontrol).
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "SchedulerType=sched/backfill",
        // Look at the queue every second (default: every 30 to 60 s), so that a test waits for
        // its jobs, not for the scheduler's next pass.
        "SchedulerParameters=sched_interval=1,bf_interval=1,sched_min_interval=100000",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "ReturnToService=2",
        "MpiDefault=none",
        "SwitchType=switch/none",
        `${hardware.trim().replace(/ UpTime=\S+$/, "")} NodeAddr=127.0.0.1 State=UNKNOWN`,
        `PartitionName=main Nodes=${node} Default=YES MaxTime=INFINITE State=UP`,
        "",
      ].join("\n"),
    );
    execFileSync("slurmctld", ["-f", conf], { env, stdio: "pipe" });
    execFileSync("slurmd", ["-f", conf, "-N", node], { env, stdio: "pipe" });
    for (let i = 0; i < 150; i++) {
      const state = spawnSync("sinfo", ["-h", "-N", "-o", "%T"], { env, encoding: "utf8" });
      if (state.stdout?.trim() === "idle") return cluster;
      await sleep(200);
    }
    throw new Error("the node did not become idle within 30 s");
  } catch (err) {
    await cluster.stop();
    return {
      unavailable: `${(err as Error).message.split("\n")[0]}\nslurmctld.log: ${log("slurmctld")}\nslurmd.log: ${log("slurmd")}`,
    };
  }
}
