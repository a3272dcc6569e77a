import { execFileSync } from "node:child_process";

/** The e2e tests run the built CLI: build once before any test file runs. */
export default function setup(): void {
  try {
    execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { stdio: "pipe" });
  } catch (e) {
    const out = (e as { stdout?: Buffer }).stdout?.toString() ?? "";
    throw new Error(`build failed before tests:\n${out}`);
  }
}
