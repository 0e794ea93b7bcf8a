import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * One simulated upstream protocol, mounted by `openvat simulate` under its own path prefix
 * (for example `/vies`, `/hmrc`, `/bfs`, `/brreg`, `/evatr`).
 */
export interface SimulatorModule {
  /** Path prefix without a trailing slash, e.g. `/evatr`. */
  readonly prefix: string;
  /**
   * Handles a request whose path starts with `prefix`. `path` is the remainder after the prefix
   * (starting with `/`, query string included); `body` is the full request body.
   */
  handle(req: IncomingMessage, res: ServerResponse, path: string, body: Buffer): Promise<void> | void;
  /** Applies a control command (latency, outages, error rates, limits); returns the new settings. */
  control?(command: Record<string, unknown>): Record<string, unknown>;
  /** Counters for tests and benchmarks (calls made, rejections, …). */
  stats?(): Record<string, unknown>;
}
