/**
 * The only place Provael reads the wall clock. Everything that needs time takes a Clock, so tests
 * can inject a fixed one and nothing time-dependent can leak into `report.json`.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Monotonic milliseconds, for durations. */
  monotonic(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
};

/** A clock frozen at `t` (ms since epoch), advancing only when told. */
export function fixedClock(t = 0): Clock & { advance(ms: number): void } {
  let current = t;
  return {
    now: () => current,
    monotonic: () => current,
    advance(ms: number) {
      current += ms;
    },
  };
}
