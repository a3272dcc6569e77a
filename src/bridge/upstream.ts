/**
 * The user's real policy behind the bridge, reached through our existing clients (or loaded in
 * process). One instance per benchmark connection: served clients keep per-episode state on
 * their connection, and a connection plays its episodes in turn. An instance that failed is
 * closed, never reused, so the next episode reconnects (and recovers once the server is back).
 */
import type { Policy, PolicyInstance, PolicyOptions } from "../core/types.js";

export class UpstreamPool {
  private readonly idle: PolicyInstance[] = [];
  private readonly live = new Set<PolicyInstance>();

  constructor(
    readonly policy: Policy,
    private readonly options: PolicyOptions,
  ) {}

  async acquire(): Promise<PolicyInstance> {
    const inst = this.idle.pop();
    if (inst) return inst;
    const loaded = await this.policy.load(this.options);
    this.live.add(loaded);
    return loaded;
  }

  release(inst: PolicyInstance): void {
    if (this.live.has(inst)) this.idle.push(inst);
  }

  /** Closes an instance that failed (its connection may be half-dead). */
  async discard(inst: PolicyInstance): Promise<void> {
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
