/**
 * Options every served-policy client shares (timeouts, retries, the frame cap), read from
 * `PolicyOptions.extra`. Aborting a run whose server is gone is the runner's `--max-errors`.
 */
import { z } from "zod";
import { ProvaelError } from "../../core/errors.js";
import { redactUrl } from "../../core/redact.js";
import type { PolicyOptions } from "../../core/types.js";
import { describeIssues } from "../../core/zod-issues.js";

export interface ServedOptions {
  url: string;
  /** The URL as messages show it: credentials redacted (core/redact.ts). */
  shownUrl: string;
  apiKey: string | null;
  /** Layout preset or mapping file; null: the protocol's default. */
  layout: string | null;
  /** Actions executed from each chunk before asking again; null: the layout's default. */
  replan: number | null;
  connectTimeoutMs: number;
  callTimeoutMs: number;
  retries: number;
  backoffMs: number;
  maxFrameBytes: number;
  unnormKey: string | null;
}

export const SERVED_DEFAULTS = {
  connectTimeoutMs: 10_000,
  callTimeoutMs: 30_000,
  retries: 2,
  backoffMs: 250,
  maxFrameBytes: 64 * 1024 * 1024,
} as const;

const extraSchema = z
  .object({
    apiKey: z.string().min(1).optional(),
    layout: z.string().min(1).optional(),
    replan: z.number().int().positive().optional(),
    connectTimeoutMs: z.number().int().positive().optional(),
    timeoutMs: z.number().int().positive().optional(),
    retries: z.number().int().min(0).max(100).optional(),
    backoffMs: z.number().int().min(0).optional(),
    maxFrameBytes: z.number().int().positive().optional(),
    unnormKey: z.string().min(1).optional(),
  })
  .loose();

/** The `--policy-option` keys every served policy reads (its flags set the same ones). */
export const SERVED_OPTIONS: readonly string[] = Object.keys(extraSchema.shape);

/**
 * Reads the served options for a protocol whose URLs start with one of `schemes`.
 *
 * @example
 *   servedOptions({ url: "ws://127.0.0.1:8000", extra: { timeoutMs: 5000 } }, ["ws:", "wss:"], "openpi");
 */
export function servedOptions(
  options: PolicyOptions,
  schemes: readonly string[],
  policy: string,
): ServedOptions {
  const url = options.url;
  if (!url) {
    throw new ProvaelError("config/invalid", `policy '${policy}' needs --policy-url`, {
      hint: `pass --policy-url ${schemes[0]}//HOST:PORT`,
    });
  }
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw new ProvaelError("config/invalid", `--policy-url '${redactUrl(url)}' is not a URL`, {
      hint: `pass --policy-url ${schemes[0]}//HOST:PORT`,
    });
  }
  if (!schemes.includes(parsedUrl.protocol)) {
    throw new ProvaelError(
      "config/invalid",
      `policy '${policy}' needs a ${schemes.join(" or ")} URL, got '${redactUrl(url)}'`,
      { hint: `pass --policy-url ${schemes[0]}//HOST:PORT` },
    );
  }
  const parsed = extraSchema.safeParse(options.extra ?? {});
  if (!parsed.success) {
    throw new ProvaelError(
      "config/invalid",
      `bad served-policy options: ${describeIssues(parsed.error)}`,
    );
  }
  const x = parsed.data;
  const envKey = process.env.PROVAEL_API_KEY;
  return {
    url,
    shownUrl: redactUrl(url),
    apiKey: x.apiKey ?? (envKey && envKey.length > 0 ? envKey : null),
    layout: x.layout ?? null,
    replan: x.replan ?? null,
    connectTimeoutMs: x.connectTimeoutMs ?? SERVED_DEFAULTS.connectTimeoutMs,
    callTimeoutMs: x.timeoutMs ?? SERVED_DEFAULTS.callTimeoutMs,
    retries: x.retries ?? SERVED_DEFAULTS.retries,
    backoffMs: x.backoffMs ?? SERVED_DEFAULTS.backoffMs,
    maxFrameBytes: x.maxFrameBytes ?? SERVED_DEFAULTS.maxFrameBytes,
    unnormKey: x.unnormKey ?? null,
  };
}

/**
 * Headers for an authenticated request: the API key (openpi's hosted convention), else HTTP
 * Basic from credentials in an http(s) URL, which fetch refuses to send itself (ws does).
 */
export function authHeaders(o: Pick<ServedOptions, "apiKey" | "url">): Record<string, string> {
  if (o.apiKey) return { Authorization: `Api-Key ${o.apiKey}` };
  const u = URL.canParse(o.url) ? new URL(o.url) : null;
  if (u && (u.protocol === "http:" || u.protocol === "https:") && (u.username || u.password)) {
    const pair = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
    return { Authorization: `Basic ${Buffer.from(pair).toString("base64")}` };
  }
  return {};
}

/** Errors worth another try on a fresh connection (connection lost, refused, timed out). */
const retryable = new WeakSet<object>();

export function markRetryable<E extends object>(e: E): E {
  retryable.add(e);
  return e;
}

export function isRetryable(e: unknown): boolean {
  return typeof e === "object" && e !== null && retryable.has(e);
}

/**
 * Errors a server sent about itself (openpi's traceback frame, vla-eval's error envelope): the
 * episode failed for a reason of the server, so a pool of servers plays it again elsewhere.
 */
const serverErrors = new WeakSet<object>();

export function markServerError<E extends object>(e: E): E {
  serverErrors.add(e);
  return e;
}

export function isServerError(e: unknown): boolean {
  return typeof e === "object" && e !== null && serverErrors.has(e);
}

/** Waits `ms` (backoff between retries). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs `attempt` until it succeeds or fails with an error that is not retryable, backing off
 * exponentially between tries; `onRetry` drops whatever the failed try left behind.
 */
export async function withRetries<T>(
  o: Pick<ServedOptions, "retries" | "backoffMs">,
  attempt: (n: number) => Promise<T>,
  onRetry: (e: unknown) => void | Promise<void> = () => {},
): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (e) {
      if (!isRetryable(e) || n >= o.retries) throw e;
      await onRetry(e);
      await delay(o.backoffMs * 2 ** n);
    }
  }
}
