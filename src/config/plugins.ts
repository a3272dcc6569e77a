/**
 * Plugins without forking: a module that exports objects made with `defineAttack`,
 * `defineDefense`, `definePolicy` or `defineSuite` is imported, checked against the same static contract as the
 * built-ins, and registered beside them. The worker threads load the same files, so a plugin
 * plays wherever a built-in would. Each file is recorded by name and digest, never by path: a
 * report holds no machine-specific value.
 */
import { readFileSync } from "node:fs";
import { register } from "node:module";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { attacks } from "../attacks/index.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { PACKAGE_ROOT } from "../core/package-root.js";
import { type PluginKind, pluginKind } from "../core/registry.js";
import type { Attack, Defense, Policy, Suite } from "../core/types.js";
import { defenses } from "../defenses/index.js";
import { policies } from "../policies/index.js";
import { suites } from "../suites/index.js";
import {
  attackProblems,
  defenseProblems,
  policyProblems,
  suiteProblems,
} from "./plugin-contract.js";

/** What a run records of one plugin file. */
export interface PluginRecord {
  /** The file's name (no directory). */
  file: string;
  /** SHA-256 of the file's bytes. */
  digest: string;
  /** The plugins it registered, in export order. */
  provides: { kind: PluginKind; id: string }[];
}

/** A plugin file to load: where it is (absolute) and, once read, its digest. */
export interface PluginSource {
  path: string;
  digest: string;
}

const loaded = new Map<string, PluginRecord>();

function pluginError(file: string, message: string, hint: string, details = {}): ProvaelError {
  return new ProvaelError("config/plugin", `plugin ${file}: ${message}`, {
    details: { file, ...details },
    hint,
  });
}

/** Reads a plugin file's bytes and digest (so a change between runs is visible). */
export function pluginSource(path: string, cwd = process.cwd()): PluginSource {
  const abs = resolve(cwd, path);
  let bytes: Buffer;
  try {
    bytes = readFileSync(abs);
  } catch (e) {
    throw pluginError(
      path,
      `cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
      "pass the path of an ES module (.mjs or .js) that exports plugin objects",
    );
  }
  return { path: abs, digest: sha256(bytes) };
}

function candidates(mod: Record<string, unknown>): unknown[] {
  const out: unknown[] = [];
  for (const [name, value] of Object.entries(mod)) {
    // `export default [a, b]` and `export const plugins = [...]` are both common shapes.
    if (Array.isArray(value) && (name === "default" || name === "plugins")) out.push(...value);
    else out.push(value);
  }
  return [...new Set(out)];
}

function check(file: string, kind: PluginKind, item: { id?: unknown }): void {
  const problems =
    kind === "attack"
      ? attackProblems(item as Attack<unknown>)
      : kind === "policy"
        ? policyProblems(item as Policy)
        : kind === "defense"
          ? defenseProblems(item as Defense<unknown>)
          : suiteProblems(item as Suite);
  if (problems.length > 0) {
    throw pluginError(
      file,
      `${kind} '${String(item.id)}' does not meet the plugin contract:\n  - ${problems.join("\n  - ")}`,
      "fix the listed fields; docs/plugins.md describes each",
      { kind, id: item.id, problems },
    );
  }
}

/**
 * A resolve hook (Node's module customisation hooks, run on the loader thread): `provael` and
 * `provael/<subpath>` are resolved as a self-reference from the running package's own
 * package.json, wherever the importing file sits. So a one-file plugin in a folder with no
 * node_modules loads, and every plugin registers into the registries of the Provael that runs
 * it, never into a second copy installed beside the plugin. Inline (a data: URL) so that it
 * needs no file of its own beside the compiled code.
 */
const RESOLVE_HOOK = `
let parentURL;
export function initialize(data) { parentURL = data.parentURL; }
export async function resolve(specifier, context, next) {
  if (specifier === "provael" || specifier.startsWith("provael/")) {
    return next(specifier, { ...context, parentURL });
  }
  return next(specifier, context);
}`;

let hookRegistered = false;

/** Registers the resolve hook once per thread (each worker loads the plugins itself). */
export function registerProvaelResolution(): void {
  if (hookRegistered) return;
  hookRegistered = true;
  register(`data:text/javascript,${encodeURIComponent(RESOLVE_HOOK)}`, {
    data: { parentURL: pathToFileURL(join(PACKAGE_ROOT, "package.json")).href },
  });
}

/**
 * Imports plugin files and registers what they export. Loading the same file twice is a no-op
 * (the workers and the main thread may both ask); a file whose bytes changed since it was
 * loaded in this process is refused, since the registered objects would no longer match it.
 */
export async function loadPlugins(sources: readonly PluginSource[]): Promise<PluginRecord[]> {
  const records: PluginRecord[] = [];
  for (const source of sources) {
    const file = basename(source.path);
    const previous = loaded.get(source.path);
    if (previous) {
      if (previous.digest !== source.digest) {
        throw pluginError(file, "changed since it was loaded", "restart the run");
      }
      records.push(previous);
      continue;
    }
    const current = pluginSource(source.path);
    if (current.digest !== source.digest) {
      throw pluginError(
        file,
        `its bytes changed (recorded ${source.digest}, now ${current.digest})`,
        "a resumed or replayed run must load the same plugin file; restore it or start a new run",
      );
    }
    registerProvaelResolution();
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(source.path).href)) as Record<string, unknown>;
    } catch (e) {
      throw pluginError(
        file,
        `failed to import: ${(e as Error).message}`,
        "a plugin is an ES module; `node FILE` should load it without error",
      );
    }
    const found = candidates(mod).flatMap((v) => {
      const kind = pluginKind(v);
      return kind ? [{ kind, item: v as { id: string } }] : [];
    });
    if (found.length === 0) {
      throw pluginError(
        file,
        "exports no plugin",
        "export objects made with defineAttack, defineDefense, definePolicy or defineSuite from 'provael'",
      );
    }
    for (const { kind, item } of found) check(file, kind, item);
    for (const { kind, item } of found) {
      if (kind === "attack") attacks.register(item as Attack<never>);
      else if (kind === "policy") policies.register(item as Policy);
      else if (kind === "defense") defenses.register(item as Defense<never>);
      else suites.register(item as Suite);
    }
    for (const { kind, item } of found) {
      if (kind !== "attack") continue;
      const matches = (item as Attack<unknown>).matches;
      if (matches !== undefined && !attacks.has(matches) && !familyExists(matches)) {
        throw pluginError(
          file,
          `attack '${item.id}' matches '${matches}', which is neither an attack nor a family`,
          "name the attack (or family) this control is matched to",
        );
      }
      const adaptiveTo = (item as Attack<unknown>).adaptiveTo;
      if (adaptiveTo !== undefined && !defenses.has(adaptiveTo)) {
        throw pluginError(
          file,
          `attack '${item.id}' is adaptive to '${adaptiveTo}', which is not a registered defense`,
          "name a defense from `provael list-defenses` (or load its plugin first)",
        );
      }
    }
    const record: PluginRecord = {
      file,
      digest: source.digest,
      provides: found.map(({ kind, item }) => ({ kind, id: item.id })),
    };
    loaded.set(source.path, record);
    records.push(record);
  }
  return records;
}

function familyExists(name: string): boolean {
  return attacks.items.some((a) => a.family === name);
}

/**
 * Each policy's and suite's own `evidence` fact, by id, among those registered (plugins
 * included): what the leaderboard classifies rows by. An id not registered answers undefined.
 */
export const registeredEvidence = {
  policy: (id: string): Policy["evidence"] =>
    policies.has(id) ? policies.get(id).evidence : undefined,
  suite: (id: string): Suite["evidence"] => (suites.has(id) ? suites.get(id).evidence : undefined),
};
