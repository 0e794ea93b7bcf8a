/**
 * The trusted timestamps' settings: the authorities (`OPENVAT_TSA_URLS`), the roots their tokens
 * are verified against (`OPENVAT_TSA_ROOTS`), the interval and the timeout. An authority is only
 * asked when its roots are pinned: a token is never trusted for certificates it carries itself.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, duration, type Env, int, optional, tsaUrls } from './readers.js';
import type { Config } from './types.js';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The certificates (PEM blocks, in file order) of a roots file; `setting` names where the path came
 * from (`OPENVAT_TSA_ROOTS`, `--tsa-roots`) in the one-line error of a file that is missing,
 * unreadable, holds no certificate or a block that is not one.
 */
export function readTsaRoots(setting: string, path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ConfigError(`${setting}: no file at ${path}`);
    throw new ConfigError(`${setting}: ${path} cannot be read (${code ?? (error as Error).message})`);
  }
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    throw new ConfigError(
      `${setting}: ${path} holds no certificate (expected PEM, "-----BEGIN CERTIFICATE-----")`,
    );
  }
  return blocks.map((block, index) => {
    try {
      new X509Certificate(block);
    } catch {
      throw new ConfigError(
        `${setting}: certificate ${index + 1} in ${path} is not a valid X.509 certificate`,
      );
    }
    return `${block}\n`;
  });
}

export function timestamps(env: Env): Config['timestamps'] {
  const urls = tsaUrls(env);
  const path = optional(env, 'OPENVAT_TSA_ROOTS');
  if (urls.length > 0 && path === null) {
    throw new ConfigError(
      'OPENVAT_TSA_ROOTS is not set: OPENVAT_TSA_URLS needs the root certificates of its authorities (a PEM file), the only ones their tokens are verified against (docs/evidence.md#trusted-roots)',
    );
  }
  return {
    urls,
    roots: path === null ? null : { path: resolve(path), pems: readTsaRoots('OPENVAT_TSA_ROOTS', path) },
    intervalMs: duration(env, 'OPENVAT_TSA_INTERVAL', 3_600_000, 60_000, 30 * 86_400_000),
    timeoutMs: int(env, 'OPENVAT_TSA_TIMEOUT_MS', 10_000, 100, 120_000),
  };
}
