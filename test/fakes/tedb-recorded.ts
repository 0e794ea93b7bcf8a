import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

const FIXTURES = new URL('../fixtures/registries/tedb/', import.meta.url);

/** A recorded TEDB answer (`test/fixtures/registries/tedb/`, gzipped), as text. */
export function recordedTedbAnswer(name: string): string {
  return gunzipSync(readFileSync(new URL(name, FIXTURES))).toString('utf8');
}

interface RecordedRow {
  state: string;
  /** The day its member state's situation began (`situationOn` without the offset). */
  day: string;
  xml: string;
}

/**
 * TEDB answering `retrieveVatRates` from a recorded answer as the real service does: the recording's
 * rows come in situations (every row dated from the day its member state's situation began), so a
 * `situationOn=D` query is answered, per member state asked, with the situation in force on D, and a
 * `from`/`to` query with each situation in force at some day of the range. The envelope (with its
 * empty `<additionalInformation/>`) and every row are the recording's own text.
 */
export function recordedTedb(recording: string) {
  const open = recording.indexOf('<vatRateResults>');
  const close = recording.lastIndexOf('</vatRateResults>') + '</vatRateResults>'.length;
  if (open < 0 || close < open) throw new Error('the recording has no vatRateResults');
  const head = recording.slice(0, open);
  const tail = recording.slice(close);
  const rows: RecordedRow[] = [...recording.matchAll(/<vatRateResults>[\s\S]*?<\/vatRateResults>/g)].map(
    ([xml]) => ({
      state: /<memberState>\s*([A-Z]{2})\s*</.exec(xml)?.[1] ?? '',
      day: /<situationOn>\s*(\d{4}-\d{2}-\d{2})/.exec(xml)?.[1] ?? '',
      xml,
    }),
  );
  const starts = new Map<string, string[]>();
  for (const row of rows) starts.set(row.state, [...new Set([...(starts.get(row.state) ?? []), row.day])]);
  for (const days of starts.values()) days.sort();

  /** The situations of `state` in force at some day from `from` to `to`. */
  function situations(state: string, from: string, to: string): string[] {
    const days = starts.get(state) ?? [];
    const first = days.filter((d) => d <= from).at(-1);
    return [...(first ? [first] : []), ...days.filter((d) => d > from && d <= to)];
  }

  return {
    /** The answer to a request body, as the service would send it. */
    answer(request: string): string {
      const child = (name: string) =>
        new RegExp(`<(?:\\w+:)?${name}>\\s*(\\d{4}-\\d{2}-\\d{2})`).exec(request)?.[1];
      const states = [...request.matchAll(/<(?:\w+:)?isoCode>\s*([A-Z]{2})\s*</g)].map((m) => m[1] as string);
      const on = child('situationOn');
      const from = on ?? child('from') ?? '';
      const to = on ?? child('to') ?? '';
      const picked = rows.filter(
        (row) => states.includes(row.state) && situations(row.state, from, to).includes(row.day),
      );
      return head + picked.map((row) => row.xml).join('') + tail;
    },
  };
}
