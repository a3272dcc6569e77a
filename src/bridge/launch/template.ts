/**
 * The benchmark command template of `provael attack --suite vla-eval`: one shell command per
 * arm address (and shard), with `{config}`, `{url}`, `{arm}`, `{shard}` and `{num_shards}`
 * replaced by shell-quoted values, so a path with spaces stays one argument and a template may
 * still use the shell (`cd`, environment variables, `conda run …`).
 *
 * @example
 *   expandCommand(DEFAULT_BENCHMARK_COMMAND, { config: "spatial.yaml", url: "ws://127.0.0.1:9/arms/none",
 *     arm: "none", shard: 0, num_shards: 1 });
 *   // vla-eval run --config spatial.yaml --server-url ws://127.0.0.1:9/arms/none --yes
 */
import { ProvaelError } from "../../core/errors.js";

/** vla-eval's own command line; sharded launches add its `--shard-id`/`--num-shards`. */
export const DEFAULT_BENCHMARK_COMMAND = "vla-eval run --config {config} --server-url {url} --yes";

export const PLACEHOLDERS = ["config", "url", "arm", "shard", "num_shards"] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

export interface CommandValues {
  /** The `--benchmark` file; absent when the template does not use `{config}`. */
  config?: string;
  url: string;
  arm: string;
  shard: number;
  num_shards: number;
}

const PLACEHOLDER = /\{([A-Za-z_]+)\}/g;

/** A value as one shell word. */
export function shellQuote(v: string): string {
  return /^[A-Za-z0-9_./:=,@%+-]+$/.test(v) ? v : `'${v.replace(/'/g, "'\\''")}'`;
}

/** The placeholders a template uses, refusing unknown ones (checked before anything starts). */
export function templatePlaceholders(template: string): Set<Placeholder> {
  const used = new Set<Placeholder>();
  for (const m of template.matchAll(PLACEHOLDER)) {
    const name = m[1] as string;
    if (!(PLACEHOLDERS as readonly string[]).includes(name)) {
      throw new ProvaelError(
        "config/invalid",
        `--benchmark-command uses an unknown placeholder {${name}}`,
        { hint: `placeholders: ${PLACEHOLDERS.map((p) => `{${p}}`).join(", ")}` },
      );
    }
    used.add(name as Placeholder);
  }
  if (!used.has("url")) {
    throw new ProvaelError(
      "config/invalid",
      "--benchmark-command never passes the arm's address: it needs {url}",
      { hint: `e.g. ${DEFAULT_BENCHMARK_COMMAND}` },
    );
  }
  return used;
}

/**
 * The command for one launch. With several shards and a template that does not place them, the
 * shard flags vla-eval reads are appended, so `--benchmark-shards` works with the default.
 */
export function expandCommand(template: string, v: CommandValues): string {
  const used = templatePlaceholders(template);
  if (used.has("config") && v.config === undefined) {
    throw new ProvaelError(
      "config/invalid",
      "--benchmark-command uses {config} but no --benchmark file was given",
      { hint: "pass --benchmark <vla-eval config.yaml>, or a command without {config}" },
    );
  }
  const text = template.replace(PLACEHOLDER, (_, name: Placeholder) => shellQuote(String(v[name])));
  const sharded = v.num_shards > 1 && !used.has("shard") && !used.has("num_shards");
  return sharded ? `${text} --shard-id ${v.shard} --num-shards ${v.num_shards}` : text;
}
