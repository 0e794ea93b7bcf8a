// The loader hooks of module-log.mjs (they run on the loader's own thread).
import { appendFileSync } from 'node:fs';

export async function load(url, context, nextLoad) {
  const file = process.env.OPENVAT_MODULE_LOG;
  if (file) appendFileSync(file, `${url}\n`);
  return nextLoad(url, context);
}
