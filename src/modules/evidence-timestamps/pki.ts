import { createRequire } from 'node:module';
import type * as Asn1js from 'asn1js';
import type * as Pkijs from 'pkijs';

const load = createRequire(import.meta.url);
let pkijs: typeof Pkijs | undefined;
let asn1js: typeof Asn1js | undefined;

/**
 * PKI.js and asn1js, loaded when a timestamp is first requested, read or checked, or a certificate
 * parsed: a service that makes and checks no timestamp never holds them (about 11 MB resident on
 * Node 24, measured). Loaded with `require` (their ES modules, one instance with any `import` of
 * them), so the functions using them stay synchronous.
 */
export function loadPkijs(): typeof Pkijs {
  pkijs ??= load('pkijs') as typeof Pkijs;
  return pkijs;
}

export function loadAsn1js(): typeof Asn1js {
  asn1js ??= load('asn1js') as typeof Asn1js;
  return asn1js;
}
