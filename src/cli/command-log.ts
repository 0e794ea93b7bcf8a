import { createRequire } from 'node:module';
import type { LogFn, Logger } from 'pino';

/** What a command's parts log through: pino's level functions. */
export type CommandLog = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

const LEVELS = { debug: 20, info: 30, warn: 40, error: 50 } as const;
const RANKS: Record<string, number> = { trace: 10, ...LEVELS, fatal: 60 };

/**
 * The log of a command on standard error at `level` (`LOG_LEVEL`), as pino writes it, with pino
 * loaded when the first line at that level is written: a command that logs nothing (`keys list`
 * without Redis trouble) never loads it. Loading pino was 17 ms of an 80 ms `keys list` on Node 24
 * (hyperfine, a bare `import('pino')` against an empty module).
 */
export function logOnFirstLine(level: string): CommandLog {
  const threshold = RANKS[level] ?? Number.POSITIVE_INFINITY;
  let logger: Logger | undefined;
  function made(): Logger {
    if (!logger) {
      const { pino } = createRequire(import.meta.url)('pino') as typeof import('pino');
      logger = pino({ level }, pino.destination(2));
    }
    return logger;
  }
  const quiet: LogFn = () => {};
  const at = (name: keyof typeof LEVELS): LogFn =>
    LEVELS[name] < threshold
      ? quiet
      : (((...args: unknown[]) => (made()[name] as (...line: unknown[]) => void)(...args)) as LogFn);
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
