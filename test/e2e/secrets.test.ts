/**
 * Secrets never reach disk: a run given an API key, a secret policy option, a password and
 * secret query parameters (`?token=…&sig=…`) in its policy URL, against a server that drops every request (so every episode errors with the
 * server's address in its message), leaves none of them in any file of its run directory, nor
 * in what it prints.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { CLI } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const SECRETS = {
  password: "pw-3f9a1c7e",
  user: "alice-7d21",
  apiKey: "key-b84e02d9",
  token: "tok-51c6aa03",
  env: "env-90e1f4b2",
  queryToken: "qtok-2e8b61d4",
  querySig: "qsig-c03f57aa",
};

/** Every file under `dir`, recursively. */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

function runAsync(args: string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("secrets on disk", () => {
  it("no output of a run holds the API key, a secret option or the URL's credentials", async () => {
    // An openpi peer that sends its metadata, then drops the connection on every request.
    const http = createServer();
    const wss = new WebSocketServer({ server: http });
    wss.on("connection", (ws) => {
      ws.send(Uint8Array.of(0x80));
      ws.on("message", () => ws.terminate());
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    const port = (http.address() as AddressInfo).port;
    const dir = join(tempDir(), "run");
    try {
      const r = await runAsync(
        [
          "attack",
          "--policy",
          "openpi",
          "--policy-url",
          `ws://${SECRETS.user}:${SECRETS.password}@127.0.0.1:${port}/?token=${SECRETS.queryToken}&model=pi0&sig=${SECRETS.querySig}`,
          "--api-key",
          SECRETS.apiKey,
          // A secret the policy reads as an option (it is refused if the policy does not read it).
          "--policy-option",
          `apiKey=${SECRETS.token}`,
          "--suite",
          "stub",
          "--tasks",
          "fetch_cup",
          "--attacks",
          "none,instruction",
          "--seeds",
          "1",
          "--horizon",
          "4",
          "--retries",
          "0",
          "--out",
          dir,
          "--sarif-out",
          join(dir, "run.sarif"),
        ],
        { PROVAEL_API_KEY: SECRETS.env },
      );
      // Every episode errors against a server that drops every request: the run exits 4.
      expect(r.code, r.stderr).toBe(4);
      const written = files(dir);
      expect(written.map((f) => f.slice(dir.length + 1)).sort()).toEqual(
        expect.arrayContaining([
          "execution-manifest.json",
          "journal.jsonl",
          "report.html",
          "report.json",
          "report.md",
          "run.sarif",
        ]),
      );
      for (const f of written) {
        const text = readFileSync(f).toString("latin1");
        for (const [what, secret] of Object.entries(SECRETS))
          expect(text.includes(secret), `${what} in ${f}`).toBe(false);
      }
      for (const secret of Object.values(SECRETS)) {
        expect(r.stdout).not.toContain(secret);
        expect(r.stderr).not.toContain(secret);
      }
      // The episodes did error with the server's address, shown without its credentials.
      const report = readFileSync(join(dir, "report.json"), "utf8");
      expect(report).toContain(`[redacted]@127.0.0.1:${port}`);
      const manifest = JSON.parse(readFileSync(join(dir, "execution-manifest.json"), "utf8"));
      expect(manifest.command_line).toEqual(
        expect.arrayContaining(["--api-key", "[redacted]", "apiKey=[redacted]"]),
      );
      expect(manifest.command_line).toContain(
        `ws://[redacted]@127.0.0.1:${port}/?token=[redacted]&model=pi0&sig=[redacted]`,
      );
    } finally {
      for (const c of wss.clients) c.terminate();
      await new Promise((r) => http.close(r));
    }
  }, 120_000);
});
