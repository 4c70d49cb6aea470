// The per-check time limit, bounded: at most an hour, and always a number Node's timers hold (setTimeout
// fires at once for anything above 2^31 - 1 ms, which would turn a huge `timeout` into an instant timeout).

export const MAX_CHECK_TIMEOUT_S = 3600;

/** `requested` seconds when it is a positive finite number, else `fallback`; never above MAX_CHECK_TIMEOUT_S. */
export function clampTimeoutS(requested: number | undefined, fallback: number): number {
  const pick = (n: number | undefined): number | undefined =>
    typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
  return Math.min(MAX_CHECK_TIMEOUT_S, pick(requested) ?? pick(fallback) ?? 60);
}
