// Parser throughput: 100,000 mixed inputs (valid numbers of every supported country in several
// written forms, and invalid ones), parsed several times after a warm-up.
// Run directly with `npx tsx bench/parser.ts`; prints the result as JSON.
import { pathToFileURL } from 'node:url';
import { getVatNumberRule, parseVatNumber, SUPPORTED_PREFIXES } from '../src/modules/vat-numbers/index.js';

const INPUTS = 100_000;
const ROUNDS = 5;

/** Mulberry32: deterministic PRNG so that every run parses the same inputs. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BASE: readonly string[] = [
  ...SUPPORTED_PREFIXES.map((p) => getVatNumberRule(p).example),
  'ATU 142 43 102',
  'BE (0)468.561.072',
  'CZ 736028/5163',
  'ES X-5253868-R',
  'FR K 7399859412',
  'IE8D79739I',
  'NL.8143.26.584.B.01',
  'CHE-116.046.681 MWST',
  'NO 965 920 358 MVA',
  'GR 094501040',
  'GB 242 3380 87 388',
  'XI 980 7806 84',
  'GBGD100',
];

const INVALID: readonly string[] = [
  'DE136308784',
  'DE13630878',
  'DE13630878X',
  'US123456789',
  '123456789',
  'XX123',
  '',
  'FR 04409414264',
  'NL123456789B01',
  'SK 2020457679',
  'CHE-107.787.578 MWST',
];

function variant(s: string, rnd: () => number): string {
  switch (Math.floor(rnd() * 5)) {
    case 0:
      return s;
    case 1:
      return s.toLowerCase();
    case 2:
      return ` ${s.slice(0, 2)} ${s.slice(2)} `;
    case 3:
      return s.slice(0, 2) + '-' + s.slice(2).replace(/(\d{3})(?=\d)/g, '$1.');
    default:
      return s.slice(0, 2) + '\u00a0' + s.slice(2);
  }
}

export function buildInputs(count = INPUTS): string[] {
  const rnd = prng(7);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const pool = rnd() < 0.8 ? BASE : INVALID;
    out.push(variant(pool[Math.floor(rnd() * pool.length)] ?? '', rnd));
  }
  return out;
}

export async function benchParser(): Promise<{ inputs: number; seconds: number; perSecond: number }> {
  const inputs = buildInputs();
  let sink = 0;
  for (let i = 0; i < 3; i++) for (const s of inputs) if (parseVatNumber(s).ok) sink++;
  const start = process.hrtime.bigint();
  for (let r = 0; r < ROUNDS; r++) for (const s of inputs) if (parseVatNumber(s).ok) sink++;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (sink < 0) throw new Error('unreachable');
  const parsed = inputs.length * ROUNDS;
  return {
    inputs: parsed,
    seconds: Math.round(seconds * 1e4) / 1e4,
    perSecond: Math.round(parsed / seconds),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchParser().then((r) => console.log(JSON.stringify(r)));
}
