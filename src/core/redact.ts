/**
 * Secrets never reach disk or a log: API keys, secret policy options, passwords and secret query
 * parameters (`?token=…`) in policy URLs.
 * What counts as secret is decided here once; the manifest (command line), the runner (plan and
 * episode errors) and the served clients (their messages) call these functions.
 */
import type { PolicyOptions } from "./types.js";

/** What a secret is replaced with. */
export const REDACTED = "[redacted]";

/** Words that make an option or flag name secret (compared without case, `-` or `_`). */
const SECRET_NAME =
  /(apikey|token|secret|passw(or)?d|passphrase|credential|auth|privatekey|accesskey|bearer|cookie)/;

/**
 * Whether an option or flag named `key` holds a secret: `apiKey`, `api_key`, `--api-key`,
 * `hfToken`, `password`; not `unnormKey` or `layout`.
 *
 * @example
 *   isSecretKey("api-key"); // true
 */
export function isSecretKey(key: string): boolean {
  return SECRET_NAME.test(key.toLowerCase().replace(/[^a-z0-9]/g, ""));
}

/**
 * Query parameters that carry a secret whatever else the name says: signed URLs (`sig`,
 * `X-Amz-Signature`, `X-Goog-Credential`) and bare API keys (`key=`), besides every name
 * `isSecretKey` calls secret (`token`, `api_key`, `access_token`, …).
 */
const SECRET_PARAM = /^(key|sig|code)$|(signature|credential|key)$/;

/** Whether a URL query parameter named `name` holds a secret. */
export function isSecretParam(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    // Not percent-encoded text: judged as written.
  }
  const plain = decoded.toLowerCase().replace(/[^a-z0-9]/g, "");
  return isSecretKey(plain) || SECRET_PARAM.test(plain);
}

/** `?name=value` / `&name=value` (`;` too): the query parameters anywhere in a text. */
const QUERY_PARAM = /([?&;])([^=&#?;\s"'<>]+)=([^&#;\s"'<>]*)/g;

/**
 * A URL with its password (and user name) and the values of secret query parameters
 * (`?token=…`, `&sig=…`) replaced; anything that is not a URL with credentials comes back
 * unchanged.
 *
 * @example
 *   redactUrl("ws://bob:hunter2@10.0.0.5:8000"); // "ws://[redacted]@10.0.0.5:8000"
 *   redactUrl("wss://h/ws?token=abc&model=pi0"); // "wss://h/ws?token=[redacted]&model=pi0"
 */
export function redactUrl(text: string): string {
  // scheme://userinfo@ : userinfo has no '/', '?', '#' or '@' (RFC 3986 §3.2.1).
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]+@/gi, `$1${REDACTED}@`)
    .replace(QUERY_PARAM, (whole, sep: string, name: string, value: string) =>
      value.length > 0 && value !== REDACTED && isSecretParam(name)
        ? `${sep}${name}=${REDACTED}`
        : whole,
    );
}

/** The secrets a URL (or any text holding one) carries: user, password, secret query values. */
export function urlSecrets(text: string): string[] {
  const out: string[] = [];
  const add = (v: string) => {
    out.push(v);
    try {
      out.push(decodeURIComponent(v.replace(/\+/g, " ")));
    } catch {
      // Not percent-encoded: the text as written is enough.
    }
  };
  for (const m of text.matchAll(/[a-z][a-z0-9+.-]*:\/\/([^/?#@\s]+)@/gi)) {
    const userinfo = m[1] as string;
    const colon = userinfo.indexOf(":");
    if (colon >= 0) {
      add(userinfo.slice(0, colon));
      add(userinfo.slice(colon + 1));
    } else add(userinfo);
  }
  for (const m of text.matchAll(QUERY_PARAM))
    if (isSecretParam(m[2] as string) && (m[3] as string).length > 0) add(m[3] as string);
  // Values shorter than four characters would redact ordinary words and digits.
  return [...new Set(out)].filter((v) => v.length >= 4 && v !== REDACTED);
}

/** Every secret value among policy options: the URL's user and password, secret-named extras. */
export function secretValues(
  options: PolicyOptions | Record<string, unknown> | undefined,
  env: Record<string, string | undefined>,
): string[] {
  const out = new Set<string>();
  const add = (v: unknown) => {
    // Values shorter than four characters would redact ordinary words and digits.
    if (typeof v === "string" && v.length >= 4) out.add(v);
  };
  if (typeof options?.url === "string") for (const v of urlSecrets(options.url)) add(v);
  const extra = (options?.extra ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(extra)) if (isSecretKey(k)) add(String(v));
  add(env.PROVAEL_API_KEY);
  return [...out];
}

/** `text` with every URL credential and every one of `secrets` replaced. */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = redactUrl(text);
  // Longest first, so a secret that contains another is replaced whole.
  for (const s of [...secrets].sort((a, b) => b.length - a.length))
    if (s.length > 0) out = out.split(s).join(REDACTED);
  return out;
}

/** Option values whose names are secret, replaced (the keys stay, so a reader sees one was set). */
export function redactOptions<T extends Record<string, unknown>>(options: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) out[k] = isSecretKey(k) ? REDACTED : v;
  return out as T;
}

/**
 * Policy options (`{path, url, extra}`, or a plan's record of them) as they may be recorded: URL
 * credentials and secret-named values, at the top level and in `extra`, replaced.
 */
export function redactPolicyOptions<T extends PolicyOptions | Record<string, unknown>>(
  options: T,
): T {
  const out: Record<string, unknown> = redactOptions(options as Record<string, unknown>);
  if (typeof out.url === "string") out.url = redactUrl(out.url);
  const extra = out.extra;
  if (typeof extra === "object" && extra !== null && !Array.isArray(extra))
    out.extra = redactOptions(extra as Record<string, unknown>);
  return out as T;
}

/**
 * A command line as it may be recorded: values of secret flags (`--api-key K`, `--token=K`),
 * secret `key=value` options (`--policy-option apiKey=K`), URL credentials, and any of
 * `secrets` wherever they appear.
 *
 * @example
 *   redactArgv(["attack", "--api-key", "K", "--policy-option", "token=T"]);
 *   // ["attack", "--api-key", "[redacted]", "--policy-option", "token=[redacted]"]
 */
export function redactArgv(argv: readonly string[], secrets: readonly string[] = []): string[] {
  const out: string[] = [];
  let secretNext = false;
  let keyValueNext = false;
  for (const arg of argv) {
    if (secretNext) {
      out.push(REDACTED);
      secretNext = false;
      continue;
    }
    if (keyValueNext) {
      out.push(redactKeyValue(arg, secrets));
      keyValueNext = false;
      continue;
    }
    const flag = /^(--?[A-Za-z0-9][A-Za-z0-9-]*)(=(.*))?$/s.exec(arg);
    if (flag) {
      const name = flag[1] as string;
      const inline = flag[3];
      if (isSecretKey(name)) {
        if (inline === undefined) secretNext = true;
        out.push(inline === undefined ? arg : `${name}=${REDACTED}`);
        continue;
      }
      if (/option|param|^--?set$/.test(name)) {
        if (inline === undefined) keyValueNext = true;
        out.push(inline === undefined ? arg : `${name}=${redactKeyValue(inline, secrets)}`);
        continue;
      }
    }
    out.push(redactText(arg, secrets));
  }
  return out;
}

function redactKeyValue(kv: string, secrets: readonly string[]): string {
  const at = kv.indexOf("=");
  if (at > 0 && isSecretKey(kv.slice(0, at))) return `${kv.slice(0, at)}=${REDACTED}`;
  return redactText(kv, secrets);
}

/** The secret values a command line carries (what `redactArgv` replaces), for scrubbing text. */
export function secretsInArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  redactArgv(argv).forEach((arg, i) => {
    const given = argv[i] as string;
    if (arg === given) return;
    if (arg === REDACTED) out.push(given);
    else {
      // `--flag=VALUE` or `key=VALUE`: what follows the last '=' that precedes the redaction.
      const at = arg.indexOf(REDACTED);
      if (at > 0 && arg.slice(at) === REDACTED && given.startsWith(arg.slice(0, at)))
        out.push(given.slice(at));
    }
  });
  // What a URL carries (its password, a `?token=`), wherever on the command line it is.
  for (const arg of argv) out.push(...urlSecrets(arg));
  return [...new Set(out)].filter((s) => s.length >= 4);
}
