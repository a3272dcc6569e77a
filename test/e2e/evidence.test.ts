/** The evidence commands of the built CLI: report formats, keygen/attest/verify, leaderboard, the Action. */
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { parse as parseYaml } from "yaml";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

// Each test spawns the CLI several times; on a loaded 2-core runner that takes a while.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 });

const ROOT = join(import.meta.dirname, "..", "..");
const CHROMIUM = "/usr/bin/chromium";
/** Set to a folder (e.g. docs/images) to save screenshots of the pages the browser test opens. */
const SCREENSHOTS = process.env.PROVAEL_SCREENSHOTS;

const attack = (out: string, seed = 0, seeds = 5, extra: string[] = []) =>
  runCli([
    "attack",
    "--policy",
    "stub",
    "--suite",
    "stub",
    "--attacks",
    "none,control,instruction",
    "--seeds",
    String(seeds),
    "--seed",
    String(seed),
    // In the main thread: a small run spends half its CPU starting worker threads.
    "--workers",
    "1",
    "--out",
    out,
    ...extra,
  ]);

/** A user error prints one message and a hint, never a stack trace. */
const expectCleanError = (stderr: string) => {
  expect(stderr).toMatch(/^provael: error: /m);
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toContain("internal error");
};

let root: string;
let run: string;
let other: string;
let keys: string;
let otherKeys: string;
let attestation: string;

beforeAll(() => {
  root = tempDir("provael-evidence-");
  run = join(root, "run");
  other = join(root, "other");
  expect(attack(run).code).toBe(0);
  // The second run's reports are read, signed and ranked, never rendered: no report.html.
  expect(attack(other, 5, 6, ["--no-html"]).code).toBe(0);
  keys = join(root, "keys");
  otherKeys = join(root, "other-keys");
  expect(runCli(["keygen", "--out", keys]).code).toBe(0);
  expect(runCli(["keygen", "--out", otherKeys]).code).toBe(0);
  attestation = join(run, "attestation.dsse.json");
  const a = runCli([
    "attest",
    "--in",
    run,
    "--key",
    join(keys, "private.pem"),
    "--out",
    attestation,
  ]);
  expect(a.code, a.stderr).toBe(0);
});

describe("provael report formats", () => {
  it("writes SARIF, compliance (JSON, Markdown, stdout) and HTML", () => {
    const sarif = join(root, "out.sarif");
    expect(runCli(["report", "--in", run, "--format", "sarif", "--out", sarif]).code).toBe(0);
    const log = JSON.parse(readFileSync(sarif, "utf8"));
    expect(log.version).toBe("2.1.0");
    expect(log.runs[0].tool.driver.name).toBe("Provael");
    expect(log.runs[0].results).toHaveLength(3);

    const stdout = runCli(["report", "--in", run, "--format", "compliance"]);
    expect(stdout.code).toBe(0);
    const map = JSON.parse(stdout.stdout);
    expect(map.schema).toBe("provael.compliance/1");
    // The run directory holds a signed attestation of this report.
    expect(map.signals.attestation.present).toBe(true);
    expect(map.signals.manifest.present).toBe(true);
    expect(map.signals["calibrated-predicate"].present).toBe(false);

    const md = join(root, "c.md");
    const json = join(root, "c.json");
    expect(runCli(["report", "--in", run, "--format", "compliance", "--out", md]).code).toBe(0);
    expect(runCli(["report", "--in", run, "--format", "compliance", "--out", json]).code).toBe(0);
    expect(readFileSync(md, "utf8")).toMatch(/^# Compliance evidence map/);
    expect(JSON.parse(readFileSync(json, "utf8")).requirements.length).toBeGreaterThan(10);

    const html = join(root, "report.html");
    expect(runCli(["report", "--in", run, "--format", "html", "--out", html]).code).toBe(0);
    expect(readFileSync(html, "utf8")).toContain("<!doctype html>");
  });

  it("gates on the upper bound of the attack success rate", () => {
    const fail = runCli(["report", "--in", run, "--format", "json", "--threshold", "0.2"]);
    expect(fail.code).toBe(1);
    expect(fail.stderr).toMatch(/gate failed: .*exceeds the threshold 20\.0%/);
    const pass = runCli(["report", "--in", run, "--format", "json", "--threshold", "0.99"]);
    expect(pass.code).toBe(0);
    expect(pass.stderr).toContain("gate passed");
    const bad = runCli(["report", "--in", run, "--threshold", "1.5"]);
    expect(bad.code).toBe(2);
    expect(runCli(["report", "--in", run, "--format", "pdf"]).code).toBe(2);
  });
});

describe("provael keygen / attest / verify", () => {
  const verify = (...args: string[]) => runCli(["verify", "--in", attestation, ...args]);
  const pub = () => join(keys, "public.pem");

  it("writes PEM keys (private mode 0600) and refuses to overwrite them", () => {
    expect(readFileSync(join(keys, "private.pem"), "utf8")).toContain("BEGIN PRIVATE KEY");
    expect(readFileSync(join(keys, "public.pem"), "utf8")).toContain("BEGIN PUBLIC KEY");
    expect(statSync(join(keys, "private.pem")).mode & 0o777).toBe(0o600);
    const again = runCli(["keygen", "--out", keys]);
    expect(again.code).toBe(2);
    expectCleanError(again.stderr);
  });

  it("defaults --out as the help says: keys under the config folder, the attestation in the run", () => {
    const config = tempDir("provael-config-");
    const made = runCli(["keygen"], { env: { XDG_CONFIG_HOME: config } });
    expect(made.code, made.stderr).toBe(0);
    const key = join(config, "provael", "keys", "private.pem");
    expect(existsSync(key)).toBe(true);
    const copy = join(tempDir(), "run");
    cpSync(other, copy, { recursive: true });
    const signed = runCli(["attest", "--in", copy, "--key", key]);
    expect(signed.code, signed.stderr).toBe(0);
    expect(existsSync(join(copy, "attestation.dsse.json"))).toBe(true);
  });

  it("verifies a good attestation (exit 0), with and without the report", () => {
    const ok = verify("--pubkey", pub(), "--report", run, "--json");
    expect(ok.code, ok.stderr).toBe(0);
    const out = JSON.parse(ok.stdout);
    expect(out.ok).toBe(true);
    expect(out.report_checked).toBe(true);
    expect(out.subject).toMatch(/^sha256:[0-9a-f]{64}$/);
    const plain = verify("--pubkey", pub());
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain("evidence, not certification");
  });

  it("exits with a distinct code for each failure", () => {
    const dir = tempDir();
    const env = JSON.parse(readFileSync(attestation, "utf8"));
    const write = (name: string, content: string) => {
      const p = join(dir, name);
      writeFileSync(p, content);
      return p;
    };
    const cases: Array<[string, string[], number]> = [
      ["malformed", ["--in", write("bad.json", "{not json"), "--pubkey", pub()], 10],
      [
        "wrong payload type",
        [
          "--in",
          write("type.json", JSON.stringify({ ...env, payloadType: "text/plain" })),
          "--pubkey",
          pub(),
        ],
        10,
      ],
      [
        "unsigned",
        [
          "--in",
          write("unsigned.json", JSON.stringify({ ...env, signatures: [] })),
          "--pubkey",
          pub(),
        ],
        11,
      ],
      [
        "bad signature",
        [
          "--in",
          write(
            "forged.json",
            JSON.stringify({ ...env, payload: Buffer.from("{}").toString("base64") }),
          ),
          "--pubkey",
          pub(),
        ],
        12,
      ],
      ["unknown key", ["--in", attestation, "--pubkey", join(otherKeys, "public.pem")], 13],
      ["subject mismatch", ["--in", attestation, "--pubkey", pub(), "--report", other], 14],
    ];
    for (const [label, args, code] of cases) {
      const r = runCli(["verify", ...args]);
      expect(r.code, `${label}: ${r.stderr}`).toBe(code);
      expectCleanError(r.stderr);
    }
    // Change one byte of a copy of the report: digest mismatch.
    const changed = join(dir, "changed");
    mkdirSync(changed);
    const report = readFileSync(join(run, "report.json"), "utf8");
    writeFileSync(join(changed, "report.json"), report.replace('"successes":0', '"successes":1'));
    const r15 = verify("--pubkey", pub(), "--report", changed);
    expect(r15.code, r15.stderr).toBe(15);
    expect(r15.stderr).toContain("has changed since it was attested");
  });

  it("applies a trust store: revoked and expired keys exit 13", () => {
    const keyid = JSON.parse(readFileSync(attestation, "utf8")).signatures[0].keyid as string;
    const store = (over: Record<string, unknown>) => {
      const p = join(tempDir(), "trust.json");
      writeFileSync(
        p,
        JSON.stringify({
          schema: "provael.trust-store/1",
          keys: [
            {
              keyid,
              publicKeyPem: readFileSync(pub(), "utf8"),
              validFrom: "2020-01-01T00:00:00Z",
              validUntil: null,
              ...over,
            },
          ],
        }),
      );
      return p;
    };
    expect(verify("--trust-store", store({})).code).toBe(0);
    const revoked = verify(
      "--trust-store",
      store({ revoked: { at: "2021-01-01T00:00:00Z", reason: "leaked" } }),
    );
    expect(revoked.code).toBe(13);
    expect(revoked.stderr).toContain("revoked");
    expect(verify("--trust-store", store({ validUntil: "2020-06-01T00:00:00Z" })).code).toBe(13);
    expect(verify("--trust-store", store({ keyid: "0".repeat(64) })).code).toBe(10);
    expect(verify("--trust-store", store({ extra: true })).code).toBe(10);
  });

  it("refuses bad invocations and inputs without a stack trace", () => {
    const dir = tempDir();
    const huge = join(dir, "huge.json");
    writeFileSync(huge, "");
    truncateSync(huge, 11 * 1024 * 1024);
    const tooBig = runCli(["verify", "--in", huge, "--pubkey", pub()]);
    expect(tooBig.code).toBe(10);
    expect(tooBig.stderr).toContain("limit");
    const both = verify();
    expect(both.code).toBe(2);
    expectCleanError(both.stderr);
    expect(runCli(["verify", "--in", join(dir, "missing.json"), "--pubkey", pub()]).code).toBe(2);
    const secret = verify("--pubkey", join(keys, "private.pem"));
    expect(secret.code).toBe(10);
    expect(secret.stderr).toContain("private key");
    const wrongKey = runCli(["attest", "--in", run, "--key", pub(), "--out", join(dir, "a.json")]);
    expect(wrongKey.code).toBe(2);
    expectCleanError(wrongKey.stderr);
    const json = runCli(["verify", "--in", huge, "--pubkey", pub(), "--json"]);
    expect(JSON.parse(json.stdout).error.code).toBe("evidence/malformed");
  });
});

describe("provael leaderboard", () => {
  it("builds, signs and verifies; an edited page exits 15, a missing signature 11", () => {
    const out = join(root, "board");
    const built = runCli([
      "leaderboard",
      "build",
      "--runs",
      run,
      other,
      "--out",
      out,
      "--sign",
      "--key",
      join(keys, "private.pem"),
    ]);
    expect(built.code, built.stderr).toBe(0);
    for (const f of ["leaderboard.json", "index.html", "leaderboard.dsse.json"])
      expect(existsSync(join(out, f)), f).toBe(true);
    const ok = runCli([
      "leaderboard",
      "verify",
      "--in",
      out,
      "--pubkey",
      join(keys, "public.pem"),
      "--runs",
      run,
      other,
      "--json",
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).rebuilt_from_runs).toBe(true);
    expect(
      runCli(["leaderboard", "verify", "--in", out, "--pubkey", join(otherKeys, "public.pem")])
        .code,
    ).toBe(13);
    expect(runCli(["leaderboard", "verify", "--in", out, "--runs", run]).code).toBe(14);

    const unsigned = join(root, "board-unsigned");
    expect(runCli(["leaderboard", "build", "--runs", root, "--out", unsigned]).code).toBe(0);
    expect(runCli(["leaderboard", "verify", "--in", unsigned]).code).toBe(0);
    expect(
      runCli(["leaderboard", "verify", "--in", unsigned, "--pubkey", join(keys, "public.pem")])
        .code,
    ).toBe(11);
    writeFileSync(
      join(unsigned, "index.html"),
      readFileSync(join(unsigned, "index.html"), "utf8").replace("stub fixture", "served policy"),
    );
    expect(runCli(["leaderboard", "verify", "--in", unsigned]).code).toBe(15);
    expect(
      runCli(["leaderboard", "build", "--runs", run, "--out", join(root, "x"), "--sign"]).code,
    ).toBe(2);
  });
});

describe("GitHub Action", () => {
  const action = parseYaml(readFileSync(join(ROOT, "action.yml"), "utf8")) as {
    inputs: Record<string, { default?: string }>;
    runs: {
      using: string;
      steps: Array<{ uses?: string; run?: string; env?: Record<string, string> }>;
    };
  };

  it("parses, is composite, and passes each input to a flag the CLI accepts", () => {
    expect(action.runs.using).toBe("composite");
    const uses = action.runs.steps.map((s) => s.uses).filter(Boolean);
    expect(uses.some((u) => u?.startsWith("actions/setup-node@"))).toBe(true);
    expect(uses.some((u) => u?.startsWith("github/codeql-action/upload-sarif@"))).toBe(true);
    const script = action.runs.steps.map((s) => s.run ?? "").join("\n");
    const attackHelp = runCli(["attack", "--help"]);
    const reportHelp = runCli(["report", "--help"]);
    expect(attackHelp.code, attackHelp.stderr).toBe(0);
    expect(reportHelp.code, reportHelp.stderr).toBe(0);
    const flags: Record<string, [string, string]> = {
      policy: ["--policy", attackHelp.stdout],
      suite: ["--suite", attackHelp.stdout],
      attacks: ["--attacks", attackHelp.stdout],
      tasks: ["--tasks", attackHelp.stdout],
      seeds: ["--seeds", attackHelp.stdout],
      out: ["--out", attackHelp.stdout],
      protocol: ["--protocol", attackHelp.stdout],
      threshold: ["--threshold", reportHelp.stdout],
      baseline: ["--baseline", reportHelp.stdout],
      tolerance: ["--tolerance", reportHelp.stdout],
    };
    for (const [input, [flag, help]] of Object.entries(flags)) {
      expect(action.inputs[input], input).toBeDefined();
      expect(help, `${flag} for input ${input}`).toContain(flag);
      expect(script).toContain(flag);
    }
    expect(reportHelp.stdout).toContain("sarif");
    expect(action.inputs.version?.default).toBe(
      JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version,
    );
    // Inputs reach shell scripts only through env, never interpolated into the script.
    expect(script).not.toMatch(/\$\{\{\s*inputs\./);
  });

  it("has an example workflow that uses it with inputs it declares", () => {
    const wf = parseYaml(
      readFileSync(join(ROOT, "examples", "ci", "github-actions.yml"), "utf8"),
    ) as {
      permissions: Record<string, string>;
      jobs: Record<string, { steps: Array<{ uses?: string; with?: Record<string, string> }> }>;
    };
    expect(wf.permissions["security-events"]).toBe("write");
    const step = Object.values(wf.jobs)
      .flatMap((j) => j.steps)
      .find((s) => s.uses?.startsWith("provael/provael@"));
    expect(step).toBeDefined();
    for (const k of Object.keys(step?.with ?? {})) expect(action.inputs[k], k).toBeDefined();
  });
});

describe("in headless Chromium", () => {
  const hasChromium = existsSync(CHROMIUM);
  // Without a browser the test is reported as skipped, with the reason in its name.
  it.skipIf(!hasChromium)(
    `renders report.html and the leaderboard without console errors or network requests${hasChromium ? "" : ` (skipped: no browser at ${CHROMIUM}; apt-get install chromium)`}`,
    async () => {
      const { chromium } = await import("playwright-core");
      // A new file in the run (its frames resolve there), not over its report.html: output
      // flags never overwrite a run's files.
      const html = join(run, "report-browser.html");
      expect(runCli(["report", "--in", run, "--format", "html", "--out", html]).code).toBe(0);
      const board = join(root, "board-browser");
      expect(runCli(["leaderboard", "build", "--runs", run, other, "--out", board]).code).toBe(0);
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          "--no-sandbox",
          "--headless",
          "--disable-gpu",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--no-first-run",
        ],
      });
      try {
        for (const [file, shot] of [
          [html, "report-html.png"],
          [join(board, "index.html"), "leaderboard.png"],
        ] as const) {
          const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
          const problems: string[] = [];
          page.on("console", (m) => {
            if (m.type() === "error" || m.type() === "warning")
              problems.push(`${m.type()}: ${m.text()}`);
          });
          page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
          page.on("request", (r) => {
            if (!/^(file|data):/.test(r.url())) problems.push(`network: ${r.url()}`);
          });
          await page.goto(`file://${file}`);
          expect(await page.locator("h1").count()).toBe(1);
          expect(await page.locator("svg").count()).toBeGreaterThan(0);
          // Nothing is wider than the page: the layout holds at 1200 px.
          const overflow = await page.evaluate<number>(
            "document.documentElement.scrollWidth - window.innerWidth",
          );
          expect(overflow).toBeLessThanOrEqual(0);
          if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, shot), fullPage: true });
          expect(problems).toEqual([]);
          await page.close();
        }
      } finally {
        await browser.close();
      }
    },
  );
});
