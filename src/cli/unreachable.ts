/** `fetch failed` says nothing: name the server and the reason (connection refused, unknown host, …). */
export function unreachable(base: string, error: unknown): Error {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'unknown host',
    EAI_AGAIN: 'host name not resolved',
    ETIMEDOUT: 'timed out',
    ECONNRESET: 'connection reset',
  };
  const reason =
    (cause?.code && reasons[cause.code]) ??
    cause?.message ??
    (error instanceof Error ? error.message : String(error));
  return new Error(`cannot reach ${base} (${reason}); is the service running and --url right?`);
}
