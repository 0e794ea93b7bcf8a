/** Full-jitter exponential backoff: a random delay in [0, min(cap, base·2^attempt)]. */
export function backoffDelay(attempt: number, baseMs: number, capMs: number, random: () => number): number {
  return Math.floor(random() * Math.min(capMs, baseMs * 2 ** attempt));
}
