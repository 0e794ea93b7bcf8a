import { writeFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { stringify } from 'csv-stringify/sync';
import type { Config } from '../config.js';
import type { Container } from '../container.js';
import type { ApiKeyPrincipal } from '../modules/keys/service.js';
import { INTERVALS, type Interval } from '../modules/monitors/schedule.js';
import { BULK_LIMIT, type MonitorInput, type MonitorView } from '../modules/monitors/service.js';
import { counted, grouped } from './counts.js';
import { openCsvInput } from './csv.js';
import { openExistingDatabase } from './database.js';
import { checkOutputFile, spreadsheetSafe } from './input-file.js';
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
 * The rows of an import file, read as validate-file reads a file (`openCsvInput`: comma, semicolon
 * or tab, a header row or a plain list, the VAT column named like `vat_number`, else the first);
 * optional columns `interval`, `reference` and `metadata` (a JSON object, as `export` writes it).
 * Throws, naming the file and line, when the file cannot be read or breaks a rule of every input
 * file; rows with a bad interval or metadata are listed in `errors` with their line.
 */
async function readImportFile(
  file: string,
  fallback: Interval,
): Promise<{ rows: MonitorInput[]; lines: number[]; errors: string[] }> {
  const csv = await openCsvInput(file);
  const named = (name: string) =>
    csv.hasHeader ? csv.header.findIndex((h) => h.toLowerCase() === name) : -1;
  const [intervalCol, referenceCol, metadataCol] = ['interval', 'reference', 'metadata'].map(named);
  const field = (record: string[], index: number | undefined) =>
    index === undefined || index < 0 ? '' : (record[index] ?? '').trim();
  const rows: MonitorInput[] = [];
  /** The file line of each row, for the refusals the service reports later. */
  const lines: number[] = [];
  const errors: string[] = [];
  for await (const { record, line } of csv.rows) {
    const row: MonitorInput = { vat_number: field(record, csv.column), interval: fallback };
    const rowInterval = field(record, intervalCol);
    if (rowInterval) {
      if (!(INTERVALS as readonly string[]).includes(rowInterval)) {
        errors.push(`line ${line}: interval "${rowInterval}" is not one of ${INTERVALS.join(', ')}`);
        continue;
      }
      row.interval = rowInterval as Interval;
    }
    const reference = field(record, referenceCol);
    if (reference) row.reference = reference;
    const meta = field(record, metadataCol);
    if (meta) {
      try {
        const value = JSON.parse(meta) as unknown;
        if (typeof value !== 'object' || value === null || Array.isArray(value))
          throw new Error('not an object');
        row.metadata = value as Record<string, unknown>;
      } catch {
        errors.push(`line ${line}: metadata is not a JSON object`);
        continue;
      }
    }
    rows.push(row);
    lines.push(line);
  }
  return { rows, lines, errors };
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
    const db = openExistingDatabase(c.databaseUrl);
    const { createCoreContainer } = await import('../container.js');
    // The monitors and keys parts alone: the running service's scheduler runs the checks.
    const container = await createCoreContainer(c, { db }).catch(async (error: unknown) => {
      await db.close();
      throw error;
    });
    const found = await container.keys.authenticate(key);
    if (found.kind === 'refused') {
      await container.close();
      throw new UsageError('--key is not an active API key of this database');
    }
    const { principal } = found;
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
      '\nRefused rows are listed by their line in the file. Exit status: 0 when every row was imported, 1 when a\nrow was refused, 2 when the file could not be read (missing, a directory, malformed CSV, a row with more fields than\nthe header or over 1 MiB).',
    )
    .action(async (file: string, options: { key: string; interval: Interval }) => {
      let parsed: Awaited<ReturnType<typeof readImportFile>>;
      try {
        parsed = await readImportFile(file, options.interval);
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
        `${counted(totals.created, 'monitor', 'monitors')} created, ${grouped(totals.existing)} already monitored, ${counted(totals.failed, 'row', 'rows')} refused`,
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
