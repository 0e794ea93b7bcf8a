import { readFileSync, writeFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import type { Config } from '../config.js';
import type { Container } from '../container.js';
import type { ApiKeyPrincipal } from '../modules/keys/service.js';
import { INTERVALS, type Interval } from '../modules/monitors/schedule.js';
import { BULK_LIMIT, type MonitorInput, type MonitorView } from '../modules/monitors/service.js';
import { counted } from './counts.js';
import { openExistingDatabase } from './database.js';
import { checkInputFile, checkOutputFile, spreadsheetSafe } from './input-file.js';
import { UsageError } from './usage-error.js';

const EXPORT_COLUMNS = [
  'vat_number',
  'interval',
  'reference',
  'status',
  'stale',
  'company_name',
  'company_address',
  'last_checked_at',
  'last_change_at',
  'next_check_at',
  'id',
  'metadata',
] as const;

function interval(value: string): Interval {
  if (!(INTERVALS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`expected ${INTERVALS.join(', ')}`);
  return value as Interval;
}

/** The key's monitors, page by page. */
async function* allMonitors(
  container: Container,
  principal: ApiKeyPrincipal,
  filter: { status?: MonitorView['status']; stale?: boolean } = {},
): AsyncGenerator<MonitorView> {
  let after: string | undefined;
  for (;;) {
    const page = await container.monitors.list(principal, {
      limit: 500,
      ...filter,
      ...(after ? { after } : {}),
    });
    yield* page.monitors;
    if (!page.next) return;
    after = page.next;
  }
}

/**
 * Rows of an import file: a header row naming `vat_number` (required), and optionally `interval`,
 * `reference` and `metadata` (a JSON object, as `export` writes it). Without a `vat_number` header
 * the first column is the number and every row is data.
 */
export function importRows(
  text: string,
  fallback: Interval,
): { rows: MonitorInput[]; lines: number[]; errors: string[] } {
  const records = parse(text, {
    bom: true,
    skip_empty_lines: true,
    relax_column_count: true,
    trim: true,
    delimiter: [',', ';', '\t'],
  }) as string[][];
  const header = (records[0] ?? []).map((h) => h.toLowerCase());
  const hasHeader = header.includes('vat_number');
  const col = (name: string) => (hasHeader ? header.indexOf(name) : name === 'vat_number' ? 0 : -1);
  const [number, intervalCol, reference, metadata] = ['vat_number', 'interval', 'reference', 'metadata'].map(
    col,
  );
  const rows: MonitorInput[] = [];
  /** The file line of each row, for the refusals the service reports later. */
  const lines: number[] = [];
  const errors: string[] = [];
  records.slice(hasHeader ? 1 : 0).forEach((record, i) => {
    const line = i + (hasHeader ? 2 : 1);
    const vat = record[number ?? 0] ?? '';
    const row: MonitorInput = { vat_number: vat, interval: fallback };
    const rowInterval = intervalCol !== undefined && intervalCol >= 0 ? record[intervalCol] : '';
    if (rowInterval) {
      if (!(INTERVALS as readonly string[]).includes(rowInterval)) {
        errors.push(`line ${line}: interval "${rowInterval}" is not one of ${INTERVALS.join(', ')}`);
        return;
      }
      row.interval = rowInterval as Interval;
    }
    const ref = reference !== undefined && reference >= 0 ? record[reference] : '';
    if (ref) row.reference = ref;
    const meta = metadata !== undefined && metadata >= 0 ? record[metadata] : '';
    if (meta) {
      try {
        const value = JSON.parse(meta) as unknown;
        if (typeof value !== 'object' || value === null || Array.isArray(value))
          throw new Error('not an object');
        row.metadata = value as Record<string, unknown>;
      } catch {
        errors.push(`line ${line}: metadata is not a JSON object`);
        return;
      }
    }
    rows.push(row);
    lines.push(line);
  });
  return { rows, lines, errors };
}

/** The rows of an import file, or why the file cannot be read (missing, a directory, malformed CSV). */
function readImportFile(file: string, fallback: Interval): ReturnType<typeof importRows> {
  checkInputFile(file);
  try {
    return importRows(readFileSync(file, 'utf8'), fallback);
  } catch (error) {
    throw new Error(`${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function createMonitorsCommands(config: () => Config): Command {
  const command = new Command('monitors').description(
    "a key's monitored VAT numbers, in-process on DATABASE_URL (the running service's scheduler checks them)",
  );
  const keyOption = new Option(
    '--key <key>',
    'the API key the monitors belong to (Pro or Business)',
  ).makeOptionMandatory();

  async function open(key: string): Promise<{ container: Container; principal: ApiKeyPrincipal }> {
    const c = config();
    // Reads the key from the database: a missing SQLite file is refused, not created empty.
    await openExistingDatabase(c.databaseUrl).close();
    const { createContainer } = await import('../container.js');
    const container = await createContainer(c);
    const principal = await container.keys.authenticate(key);
    if (!principal) {
      await container.close();
      throw new UsageError('--key is not an active API key of this database');
    }
    if (principal.plan !== 'pro' && principal.plan !== 'business') {
      await container.close();
      throw new UsageError(`monitoring needs the Pro or Business plan; this key is on ${principal.plan}`);
    }
    return { container, principal };
  }

  command
    .command('import')
    .description(
      `monitor the VAT numbers of a CSV file (column vat_number; interval, reference, metadata optional)`,
    )
    .argument('<file>', 'CSV file')
    .addOption(keyOption)
    .addOption(
      new Option('--interval <interval>', 'for rows without one').default('daily').argParser(interval),
    )
    .addHelpText(
      'after',
      '\nRefused rows are listed by their line in the file. Exit status: 0 when every row was imported, 1 when a\nrow was refused, 2 when the file could not be read (missing, a directory, malformed CSV).',
    )
    .action(async (file: string, options: { key: string; interval: Interval }) => {
      let parsed: ReturnType<typeof importRows>;
      try {
        parsed = readImportFile(file, options.interval);
      } catch (error) {
        console.error(`openvat: ${error instanceof Error ? error.message : String(error)}`);
        process.exitCode = 2;
        return;
      }
      const { rows, lines, errors } = parsed;
      const { container, principal } = await open(options.key);
      const totals = { created: 0, existing: 0, failed: errors.length };
      try {
        for (let i = 0; i < rows.length; i += BULK_LIMIT) {
          const chunk = rows.slice(i, i + BULK_LIMIT);
          const result = await container.monitors.createMany(principal, chunk);
          totals.created += result.summary.created;
          totals.existing += result.summary.existing;
          totals.failed += result.summary.failed;
          result.results.forEach((r, j) => {
            if (!r.ok)
              errors.push(`line ${lines[i + j]} (${r.vat_number}): ${r.error.code}: ${r.error.message}`);
          });
        }
      } finally {
        await container.close();
      }
      for (const line of errors) console.error(line);
      console.log(
        `${counted(totals.created, 'monitor', 'monitors')} created, ${totals.existing.toLocaleString('en')} already monitored, ${counted(totals.failed, 'row', 'rows')} refused`,
      );
      if (totals.failed > 0) process.exitCode = 1;
    });

  command
    .command('export')
    .description('write the monitors with their state as CSV (re-importable)')
    .addOption(keyOption)
    .option('--out <file>', 'output file (default: standard output)')
    .action(async (options: { key: string; out?: string }) => {
      if (options.out) checkOutputFile(options.out);
      const { container, principal } = await open(options.key);
      const records: string[][] = [];
      try {
        for await (const m of allMonitors(container, principal)) {
          records.push([
            m.vat_number,
            m.interval,
            m.reference ?? '',
            m.status,
            m.stale ? 'true' : 'false',
            // Registry text, guarded against being taken for a spreadsheet formula.
            spreadsheetSafe(m.company?.name ?? ''),
            spreadsheetSafe(m.company?.address ?? ''),
            m.last_checked_at ?? '',
            m.last_change_at ?? '',
            m.next_check_at,
            m.id,
            m.metadata ? JSON.stringify(m.metadata) : '',
          ]);
        }
      } finally {
        await container.close();
      }
      const csv = stringify(records, { header: true, columns: [...EXPORT_COLUMNS] });
      if (options.out) writeFileSync(options.out, csv);
      else process.stdout.write(csv);
    });

  command
    .command('list')
    .description('print the monitors, one a line: number, status, stale, last change, reference')
    .addOption(keyOption)
    .addOption(new Option('--status <status>', 'only this status').choices(['valid', 'invalid', 'unknown']))
    .option('--stale', 'only monitors flagged stale')
    .action(async (options: { key: string; status?: MonitorView['status']; stale?: boolean }) => {
      const { container, principal } = await open(options.key);
      let n = 0;
      try {
        for await (const m of allMonitors(container, principal, {
          ...(options.status ? { status: options.status } : {}),
          ...(options.stale ? { stale: true } : {}),
        })) {
          n += 1;
          console.log(
            [
              m.vat_number,
              m.status,
              m.stale ? 'stale' : '-',
              m.last_change_at ?? '-',
              m.reference ?? '',
            ].join('\t'),
          );
        }
      } finally {
        await container.close();
      }
      console.error(counted(n, 'monitor', 'monitors'));
    });

  return command;
}
