import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { LOCK_FILE, lockRunDir } from "./lock.js";

/** The id of a process that has exited (so no process of this host has it, for now). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  return child.pid as number;
}

/**
 * A zombie: `sleep 0` exits while its parent (the shell, which became `sleep 30`) never reaps
 * it. Returns its id and the parent, to kill afterwards.
 */
async function zombie(): Promise<{ pid: number; parent: number }> {
  const parent = spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 30"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const pid = await new Promise<number>((resolve) =>
    parent.stdout.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))),
  );
  // Wait for the child to have exited (a zombie), reading its state from /proc.
  for (let i = 0; i < 500 && state(pid) !== "Z"; i++) await new Promise((r) => setTimeout(r, 10));
  return { pid, parent: parent.pid as number };
}

/** A process's state letter (R, S, Z, …) from /proc. */
function state(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
}

const holderOf = (dir: string) => {
  const { nonce: _n, ...rest } = JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8"));
  return rest;
};

describe("lockRunDir", () => {
  it("lets one holder in, tells a second who holds it, and is free again once let go", () => {
    const dir = tempDir();
    const lock = lockRunDir(dir, "--out", "provael attack");
    expect(holderOf(dir)).toEqual({ pid: process.pid, host: hostname(), what: "provael attack" });
    let err: unknown;
    try {
      lockRunDir(dir, "--out");
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: "run/out-exists" });
    expect((err as Error).message).toBe(
      `${dir} is in use by provael attack (process ${process.pid} on ${hostname()})`,
    );
    lock.release();
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
    lockRunDir(dir, "--out").release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("takes over the lock of a process that no longer runs", () => {
    const dir = tempDir();
    const path = join(dir, LOCK_FILE);
    writeFileSync(path, JSON.stringify({ pid: deadPid(), host: hostname(), what: "provael" }));
    const lock = lockRunDir(dir, "--out");
    expect(holderOf(dir).pid).toBe(process.pid);
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("takes over at once the lock of a zombie (killed, not yet reaped by its parent)", async () => {
    if (process.platform !== "linux") return;
    const dir = tempDir();
    const { pid, parent } = await zombie();
    try {
      expect(state(pid)).toBe("Z");
      writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid, host: hostname(), what: "x" }));
      const lock = lockRunDir(dir, "--out");
      expect(holderOf(dir).pid).toBe(process.pid);
      lock.release();
    } finally {
      process.kill(parent, "SIGKILL");
    }
  });

  it("never takes an empty or unreadable lock file for a stale one (it may be being written)", () => {
    const dir = tempDir();
    const path = join(dir, LOCK_FILE);
    for (const text of ["", "{"]) {
      writeFileSync(path, text);
      expect(() => lockRunDir(dir, "--out")).toThrow(
        expect.objectContaining({
          code: "run/out-exists",
          message: `${dir} is in use by another process (its lock file cannot be read)`,
        }),
      );
      expect(readFileSync(path, "utf8")).toBe(text);
    }
  });

  it("leaves another host's lock alone (a shared disk), and never removes a lock it lost", () => {
    const dir = tempDir();
    const path = join(dir, LOCK_FILE);
    const other = { pid: deadPid(), host: `${hostname()}-elsewhere`, what: "provael bridge" };
    writeFileSync(path, JSON.stringify(other));
    expect(() => lockRunDir(dir, "--out")).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/in use by provael bridge \(process \d+ on .*-elsewhere\)$/),
        hint: `wait for it to finish or stop it, or choose another --out; if no such process runs, delete ${path}`,
      }),
    );
    writeFileSync(path, JSON.stringify({ pid: deadPid(), host: hostname() }));
    const lock = lockRunDir(dir, "--out");
    // Someone deleted it and another writer took it: letting go must not remove theirs.
    writeFileSync(path, JSON.stringify(other));
    lock.release();
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(other);
  });
});

/**
 * Processes started together on one directory (empty, or holding a stale lock): whoever gets the
 * lock marks itself inside, looks for another mark, waits, looks again and lets go. No two may
 * ever be inside at once, and at least one gets in.
 */
const CONTENDER = `
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
const [lockModule, dir, go] = process.argv.slice(2);
const { lockRunDir } = await import(lockModule);
while (!existsSync(go)) await new Promise((r) => setTimeout(r, 2));
let lock;
try { lock = lockRunDir(dir, "--out"); } catch (e) {
  if (e.code !== "run/out-exists") throw e;
  console.log(JSON.stringify({ got: false })); process.exit(0);
}
const inside = join(dir, "inside");
const others = () => readdirSync(inside).filter((f) => f !== String(process.pid));
const before = others();
writeFileSync(join(inside, String(process.pid)), "");
await new Promise((r) => setTimeout(r, 50));
const after = others();
rmSync(join(inside, String(process.pid)));
lock.release();
console.log(JSON.stringify({ got: true, overlap: [...before, ...after] }));
`;

describe("lockRunDir under contention", () => {
  const lockModule = pathToFileURL(
    join(import.meta.dirname, "..", "..", "dist", "rundir", "lock.js"),
  ).href;

  it("lets at most one process hold it at a time, from a free or a stale lock", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 6 }),
        fc.constantFrom("free", "stale"),
        async (n, start) => {
          const dir = tempDir();
          const inside = join(dir, "inside");
          spawnSync("mkdir", [inside]);
          const script = join(dir, "contender.mjs");
          writeFileSync(script, CONTENDER);
          if (start === "stale")
            writeFileSync(
              join(dir, LOCK_FILE),
              JSON.stringify({ pid: deadPid(), host: hostname(), what: "provael" }),
            );
          const go = join(dir, "go");
          const runs = Array.from({ length: n }, () => {
            const child = spawn(process.execPath, [script, lockModule, dir, go], {
              stdio: ["ignore", "pipe", "pipe"],
            });
            let out = "";
            let err = "";
            child.stdout.on("data", (d) => (out += d));
            child.stderr.on("data", (d) => (err += d));
            return new Promise<{ got: boolean; overlap?: string[] }>((resolve, reject) =>
              child.on("close", (code) =>
                code === 0 ? resolve(JSON.parse(out)) : reject(new Error(err)),
              ),
            );
          });
          await new Promise((r) => setTimeout(r, 300));
          writeFileSync(go, "");
          const results = await Promise.all(runs);
          expect(results.flatMap((r) => r.overlap ?? [])).toEqual([]);
          expect(results.some((r) => r.got)).toBe(true);
          expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
          expect(readdirSync(dir).filter((f) => f.startsWith(LOCK_FILE))).toEqual([]);
        },
      ),
      { numRuns: 6, seed: 59 },
    );
  }, 120_000);
});
