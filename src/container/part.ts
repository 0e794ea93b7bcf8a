import type { Logger } from 'pino';

/** One part of the container, made the first time something asks for it. */
export interface Part<T> {
  /** The part, made now if nothing asked for it before. */
  get(): T;
  /** The part if it was made, else `undefined` (nothing is made). */
  peek(): T | undefined;
}

/** How a part is declared: its name and how it is made. */
export type MakePart = <T>(name: string, build: () => T) => Part<T>;

/**
 * Makes parts on first use: a command that never asks for the webhooks, batch or monitors parts
 * never makes them. Each part made is logged at `debug` ("part built", with its name), which is
 * how a run shows what it made.
 */
export function createParts(log: Pick<Logger, 'debug'>) {
  const made: string[] = [];

  function part<T>(name: string, build: () => T): Part<T> {
    let value: { part: T } | undefined;
    let building = false;
    function get(): T {
      if (value) return value.part;
      if (building) throw new Error(`container part "${name}" needs itself while it is made`);
      building = true;
      try {
        value = { part: build() };
      } finally {
        building = false;
      }
      made.push(name);
      log.debug({ part: name }, 'part built');
      return value.part;
    }
    function peek(): T | undefined {
      return value?.part;
    }
    return { get, peek };
  }

  /** The names of the parts made so far, in the order they were made. */
  function built(): readonly string[] {
    return [...made];
  }

  return { part, built };
}
