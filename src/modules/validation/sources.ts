/** Which registry answered a validation, and how: asked now, a stored answer, or a stale one served while it is down. */
export type ValidationSource = 'vies' | 'hmrc' | 'bfs' | 'brreg';
export type SourceStatus = 'live' | 'cached' | 'degraded';
