/**
 * `npm run bench [-- name…]`: runs the benchmarks, writes bench/results/*.json and the README's
 * performance section. Benchmarks measure; the test suite never asserts on time.
 */
import { benchRates } from './rates.js';

type Bench = () => Promise<unknown>;

const benches: Record<string, Bench> = {
  rates: () => benchRates(),
};

const wanted = process.argv.slice(2);
const names = wanted.length ? wanted : Object.keys(benches);
for (const name of names) {
  const bench = benches[name];
  if (!bench) {
    console.error(`unknown benchmark "${name}"; known: ${Object.keys(benches).join(', ')}`);
    process.exit(2);
  }
  console.log(`\n== ${name}`);
  console.log(JSON.stringify(await bench(), null, 2));
}
