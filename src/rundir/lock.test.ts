import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { LOCK_FILE, lockRunDir } from "./lock.js";

/** The id of a process that has exited (so no process of this host has it, for now). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  return child.pid as number;
}

describe("lockRunDir", () => {
  it("lets one holder in, tells a second who holds it, and is free again once let go", () => {
    const dir = tempDir();
    const lock = lockRunDir(dir, "--out", "provael attack");
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8"))).toEqual({
      pid: process.pid,
      host: hostname(),
      what: "provael attack",
    });
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
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    lockRunDir(dir, "--out").release();
  });

  it("takes over the lock of a process that no longer runs, and of an unreadable lock file", () => {
    const dir = tempDir();
    const path = join(dir, LOCK_FILE);
    writeFileSync(path, JSON.stringify({ pid: deadPid(), host: hostname(), what: "provael" }));
    const lock = lockRunDir(dir, "--out");
    expect(JSON.parse(readFileSync(path, "utf8")).pid).toBe(process.pid);
    lock.release();
    writeFileSync(path, "{");
    lockRunDir(dir, "--out").release();
    expect(existsSync(path)).toBe(false);
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
    writeFileSync(path, "{}");
    const lock = lockRunDir(dir, "--out");
    // Someone deleted it and another writer took it: letting go must not remove theirs.
    writeFileSync(path, JSON.stringify(other));
    lock.release();
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(other);
  });
});
