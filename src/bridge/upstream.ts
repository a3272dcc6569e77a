/**
 * The user's real policy behind the bridge, reached through our existing clients (or loaded in
 * process). One instance per benchmark connection: served clients keep per-episode state on
 * their connection, and a connection plays its episodes in turn. An instance that failed is
 * closed, never reused, so the next episode reconnects (and recovers once the server is back).
 * Several upstream servers of one policy (`--policy-url` repeated) share the connections: each
 * new instance goes to the server with the fewest live instances, a server whose instance
 * failed last only when no other is left. The benchmark drives the episodes, so an episode lost
 * with its server is the benchmark's to replay, not the bridge's.
 */
import { connect } from "node:net";
import type { Policy, PolicyInstance, PolicyOptions } from "../core/types.js";

export class UpstreamPool {
  private readonly idle: PolicyInstance[] = [];
  private readonly live = new Set<PolicyInstance>();
  /** Which server (index in `urls`) each live instance talks to. */
  private readonly serverOf = new Map<PolicyInstance, number>();
  /** Servers whose last instance failed (set aside while another is left). */
  private readonly failed = new Set<number>();
  private readonly urls: readonly (string | undefined)[];

  constructor(
    readonly policy: Policy,
    private readonly options: PolicyOptions,
    urls: readonly string[] = [],
  ) {
    this.urls = urls.length > 0 ? urls : [options.url];
  }

  async acquire(): Promise<PolicyInstance> {
    const inst = this.idle.pop();
    if (inst) return inst;
    const server = this.leastLoaded();
    const url = this.urls[server];
    const loaded = await this.policy.load(
      url === undefined ? this.options : { ...this.options, url },
    );
    this.live.add(loaded);
    this.serverOf.set(loaded, server);
    this.failed.delete(server);
    return loaded;
  }

  private leastLoaded(): number {
    const load = this.urls.map(() => 0);
    for (const i of this.serverOf.values()) load[i] = (load[i] ?? 0) + 1;
    const ok = load.map((_, i) => i).filter((i) => !this.failed.has(i));
    const candidates = ok.length > 0 ? ok : load.map((_, i) => i);
    return candidates.reduce((a, b) => ((load[b] ?? 0) < (load[a] ?? 0) ? b : a));
  }

  release(inst: PolicyInstance): void {
    if (this.live.has(inst)) this.idle.push(inst);
  }

  /** Closes an instance that failed (its connection may be half-dead). */
  async discard(inst: PolicyInstance): Promise<void> {
    const server = this.serverOf.get(inst);
    if (server !== undefined && this.urls.length > 1) this.failed.add(server);
    this.serverOf.delete(inst);
    this.live.delete(inst);
    const i = this.idle.indexOf(inst);
    if (i >= 0) this.idle.splice(i, 1);
    try {
      await inst.close();
    } catch {
      // Already broken: closing is best effort.
    }
  }

  async close(): Promise<void> {
    for (const inst of [...this.live]) await this.discard(inst);
  }
}

/** What the bridge's own HTTP routes learn from the upstream (PROTOCOLS.md §4.5). */
export interface UpstreamControl {
  /** Whether the upstream answers now (`GET /health` is 200 only then), and if not, why. */
  health(): Promise<{ ok: boolean; detail: string }>;
  /** The upstream's `GET /config` (query included), or null when it has none to forward to. */
  config(query: string): Promise<{ status: number; body: string } | null>;
}

const CONTROL_TIMEOUT_MS = 2000;

/**
 * The upstream's HTTP control plane: a vla-eval model server's `/health` and `/config`, at the
 * websocket address's host and port (vla-eval serves both on the same port); any other served
 * policy answers when its port accepts a connection; an in-process policy always answers.
 */
export function upstreamControl(policyId: string, options: PolicyOptions): UpstreamControl {
  const url = options.url ? safeUrl(options.url) : null;
  if (!url)
    return { health: async () => ({ ok: true, detail: "in process" }), config: async () => null };
  const http = `${url.protocol === "wss:" || url.protocol === "https:" ? "https" : "http"}://${url.host}`;
  if (policyId === "vla-eval") {
    return {
      async health() {
        try {
          const res = await fetch(`${http}/health`, {
            signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS),
          });
          await res.arrayBuffer();
          return res.ok
            ? { ok: true, detail: "the upstream answers" }
            : { ok: false, detail: `the upstream's /health answered ${res.status}` };
        } catch (e) {
          return { ok: false, detail: `the upstream at ${http} does not answer (${reason(e)})` };
        }
      },
      async config(query) {
        try {
          const res = await fetch(`${http}/config${query}`, {
            signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS),
          });
          return { status: res.status, body: await res.text() };
        } catch (e) {
          return {
            status: 502,
            body: JSON.stringify({ error: `the upstream's /config did not answer (${reason(e)})` }),
          };
        }
      },
    };
  }
  const port = Number(
    url.port || (url.protocol === "https:" || url.protocol === "wss:" ? 443 : 80),
  );
  return {
    health: () =>
      new Promise((resolve) => {
        const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ""), port });
        const done = (ok: boolean, detail: string) => {
          socket.destroy();
          resolve({ ok, detail });
        };
        socket.setTimeout(CONTROL_TIMEOUT_MS, () => done(false, `${url.host} did not answer`));
        socket.once("connect", () => done(true, "the upstream accepts connections"));
        socket.once("error", (e) => done(false, `${url.host} does not answer (${reason(e)})`));
      }),
    config: async () => null,
  };
}

function safeUrl(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

const reason = (e: unknown) =>
  e instanceof Error ? ((e.cause as { code?: string } | undefined)?.code ?? e.message) : String(e);
