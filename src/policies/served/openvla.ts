/**
 * `openvla`: a policy behind OpenVLA's REST deploy server (`vla-scripts/deploy.py`, PROTOCOLS.md
 * §3) or `provael serve-policy --protocol openvla`. One `POST /act` per step with a json-numpy
 * body; the reply is one 7-D action. The bare JSON string `"error"` with HTTP 200 is the server's
 * failure signal. One instance serves every concurrent episode; each body carries
 * `provael/episode`, which OpenVLA ignores and our server keys its policy state on.
 */
import { ProvaelError } from "../../core/errors.js";
import { definePolicy } from "../../core/registry.js";
import type {
  Action,
  EpisodeInfo,
  Observation,
  PolicyCapabilities,
  PolicyInstance,
  PolicyOptions,
  ServedModel,
} from "../../core/types.js";
import { decodeJsonNumpy, encodeJsonNumpy } from "./codec/json-numpy.js";
import type { WireValue } from "./codec/tree.js";
import {
  EpisodeSessions,
  newEpisodeId,
  refineCapabilities,
  servedCapabilities,
  servedModelOf,
} from "./common.js";
import {
  decodeActions,
  type EpisodeTag,
  encodeObservation,
  type Layout,
  layoutCameras,
  resolveLayout,
} from "./layouts.js";
import {
  authHeaders,
  markRetryable,
  markServerError,
  SERVED_OPTIONS,
  type ServedOptions,
  servedOptions,
  withRetries,
} from "./options.js";

/** A URL without its credentials: fetch refuses them; authHeaders sends them as Basic. */
function bare(base: string): URL {
  const u = new URL(base);
  u.username = "";
  u.password = "";
  return u;
}

/** The `/act` address for a base URL (a URL already ending in /act is used as is). */
export function actUrl(base: string): string {
  const u = bare(base);
  if (!u.pathname.endsWith("/act")) u.pathname = `${u.pathname.replace(/\/$/, "")}/act`;
  return u.toString();
}

function infoUrl(base: string): string {
  const u = bare(base);
  u.pathname = `${u.pathname.replace(/\/act$/, "").replace(/\/$/, "")}/provael/info`;
  return u.toString();
}

/** Reads a response body, refusing more than `max` bytes. */
async function readCapped(res: Response, max: number, url: string): Promise<string> {
  const tooBig = () =>
    new ProvaelError("policy/protocol", `${url} sent a body larger than ${max} bytes`, {
      hint: "raise --max-frame if the server's replies are legitimately this large",
    });
  if (Number(res.headers.get("content-length") ?? "0") > max) {
    await res.body?.cancel();
    throw tooBig();
  }
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel();
      throw tooBig();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** One HTTP exchange with a timeout; network failures and timeouts are retryable. */
export async function httpCall(
  o: ServedOptions,
  url: string,
  init: { method: string; body?: string; timeoutMs: number },
): Promise<{ status: number; text: string }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), init.timeoutMs);
  try {
    const res = await fetch(url, {
      method: init.method,
      headers: { "content-type": "application/json", ...authHeaders(o) },
      ...(init.body === undefined ? {} : { body: init.body }),
      signal: controller.signal,
    });
    return { status: res.status, text: await readCapped(res, o.maxFrameBytes, url) };
  } catch (e) {
    if (e instanceof ProvaelError) throw e;
    if (controller.signal.aborted) {
      throw markRetryable(
        new ProvaelError("policy/timeout", `${url} did not answer within ${init.timeoutMs} ms`, {
          hint: "the server may be overloaded or stuck; raise --timeout for slow first inferences",
        }),
      );
    }
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw markRetryable(
      new ProvaelError(
        "policy/unavailable",
        `cannot reach ${url}: ${cause?.code ?? cause?.message ?? (e as Error).message}`,
        { cause: e, hint: "is the policy server running? Check --policy-url" },
      ),
    );
  } finally {
    clearTimeout(timer);
  }
}

class OpenvlaInstance implements PolicyInstance {
  private readonly sessions = new EpisodeSessions<EpisodeTag>();
  private readonly url: string;
  /** OpenVLA answers one action per request: every call reaches the model. */
  private queries = 0;

  constructor(
    readonly capabilities: PolicyCapabilities,
    private readonly o: ServedOptions,
    private readonly layout: Layout,
    readonly servedModel: ServedModel,
  ) {
    this.url = actUrl(o.url);
  }

  reset(episode: EpisodeInfo): void {
    this.sessions.begin({ id: newEpisodeId(), episode });
  }

  async act(obs: Observation): Promise<Action> {
    const action = await this.predict(obs);
    this.queries += 1;
    return action;
  }

  /** OpenVLA's server answers each request on its own: a query (search attacks) is one more. */
  query(obs: Observation): Promise<Action> {
    return this.predict(obs);
  }

  private async predict(obs: Observation): Promise<Action> {
    const tag = this.sessions.current("openvla");
    const body = encodeObservation(this.layout, obs, tag);
    if (this.o.unnormKey) body.unnorm_key = this.o.unnormKey;
    const text = encodeJsonNumpy(body);
    const { status, text: reply } = await withRetries(this.o, async () => {
      const r = await httpCall(this.o, this.url, {
        method: "POST",
        body: text,
        timeoutMs: this.o.callTimeoutMs,
      });
      // Gateways in front of a restarting server answer 502-504: worth another try.
      if (r.status >= 502 && r.status <= 504) {
        throw markRetryable(
          new ProvaelError("policy/unavailable", `${this.url} answered HTTP ${r.status}`),
        );
      }
      return r;
    });
    return this.parse(status, reply);
  }

  modelCalls(): { queries: number; actions: number } {
    return { queries: this.queries, actions: this.queries };
  }

  private parse(status: number, text: string): Action {
    if (status === 401 || status === 403) {
      throw new ProvaelError("policy/load", `${this.url} refused the request (HTTP ${status})`, {
        hint: "the server wants credentials: pass --api-key or set PROVAEL_API_KEY",
      });
    }
    if (status !== 200) {
      throw new ProvaelError(
        "policy/protocol",
        `${this.url} answered HTTP ${status}: ${text.slice(0, 300)}`,
        {
          details: { status },
          hint:
            status === 422
              ? "the server rejected the body; check --layout and the server version"
              : "check --policy-url",
        },
      );
    }
    const value: WireValue = decodeJsonNumpy(text);
    if (value === "error") {
      throw markServerError(
        new ProvaelError(
          "policy/error",
          'the OpenVLA server failed on this request (it answered "error")',
          {
            hint: "read the server's log for the exception; a wrong --unnorm-key is a common cause",
          },
        ),
      );
    }
    return decodeActions(this.layout, value, true)[0] as Action;
  }

  close(): void {}
}

export const openvlaPolicy = definePolicy({
  options: SERVED_OPTIONS,
  id: "openvla",
  evidence: "served-model",
  description:
    "A policy behind OpenVLA's REST deploy server (POST /act, json-numpy): --policy-url http://HOST:PORT",
  capabilities: servedCapabilities(["agentview"], 1),
  suites: [],
  concurrent: true,
  ioBound: true,
  async load(options: PolicyOptions): Promise<PolicyInstance> {
    const o = servedOptions(options, ["http:", "https:"], "openvla");
    const layout = resolveLayout(o.layout ?? "openvla");
    let info: WireValue | undefined;
    try {
      // Only our server answers this; OpenVLA's own says 404 and the defaults stand.
      const r = await withRetries(o, () =>
        httpCall(o, infoUrl(o.url), { method: "GET", timeoutMs: o.connectTimeoutMs }),
      );
      if (r.status === 200) {
        try {
          info = decodeJsonNumpy(r.text);
        } catch {
          info = undefined;
        }
      }
    } catch (e) {
      throw new ProvaelError(
        "policy/load",
        `cannot reach the OpenVLA server at ${o.shownUrl}: ${(e as Error).message}`,
        { cause: e, hint: "start the server first (see docs/served-policies.md), then rerun" },
      );
    }
    const caps = refineCapabilities(
      servedCapabilities(layoutCameras(layout), 1),
      info,
      layout.context !== null,
    );
    // Our server's /provael/info is its `provael` map itself; OpenVLA's own reports nothing.
    return new OpenvlaInstance(caps, o, layout, servedModelOf("openvla", info, info));
  },
});
