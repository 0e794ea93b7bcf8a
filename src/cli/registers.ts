import { Command, Option } from 'commander';
import type { Config } from '../config.js';
import type { NationalFileSyncRun } from '../container/national-files.js';
import type { Container } from '../container.js';
import { type FileSource, fileCopyView, type NationalFileCopyStatus } from '../modules/national/index.js';
import { counted } from './counts.js';
import { withQuietContainer } from './quiet-container.js';
import { UsageError } from './usage-error.js';

const FILE_SOURCES: Readonly<Record<string, FileSource>> = {
  si: 'si_furs',
  si_furs: 'si_furs',
  lv: 'lv_vid',
  lv_vid: 'lv_vid',
};

/** The file registers named on the command line (`si`, `lv_vid`, …), all the chosen ones without. */
function chosen(container: Container, names: string[]): FileSource[] {
  const on = container.national.fileSources;
  if (on.length === 0) {
    throw new UsageError(
      'no file register is on: OPENVAT_NATIONAL_FALLBACKS names neither si_furs nor lv_vid',
    );
  }
  if (names.length === 0) return [...on];
  return names.map((name) => {
    const source = FILE_SOURCES[name.trim().toLowerCase()];
    if (!source) throw new UsageError(`unknown file register "${name}" (si_furs, lv_vid, or si, lv)`);
    if (!on.includes(source)) throw new UsageError(`${source} is off (OPENVAT_NATIONAL_FALLBACKS)`);
    return source;
  });
}

/** One line per part: register, part, what the sync did, and the copy answering now. */
function syncLines(result: NationalFileSyncRun): string[] {
  if (result.busy)
    return [`${result.source}\t*\tbusy\tanother instance is syncing it now; try again in a minute`];
  return result.parts.map((part) => {
    if (part.outcome === 'replaced') {
      return `${result.source}\t${part.part}\treplaced\t${counted(part.rows, 'row', 'rows')}, file of ${part.dataDate}`;
    }
    if (part.outcome === 'unchanged') {
      return `${result.source}\t${part.part}\tunchanged\tfile of ${part.dataDate} (304 Not Modified)`;
    }
    return `${result.source}\t${part.part}\tfailed\t${part.reason}: ${part.message}; the copy held keeps answering`;
  });
}

function statusLines(copy: NationalFileCopyStatus): string[] {
  const head = `${copy.source}\t${copy.state}\t${copy.dataDate ? `data of ${copy.dataDate}` : 'no data'}`;
  const parts = copy.expected.map((name) => {
    const part = copy.parts.find((held) => held.part === name);
    if (!part) return `  ${name}\tnot synced yet`;
    return `  ${name}\tfile of ${part.dataDate}\t${counted(part.rows, 'row', 'rows')}\tdownloaded ${part.fetchedAt.toISOString()}\tchecked ${part.checkedAt.toISOString()}`;
  });
  const last = copy.lastSync;
  const sync = last?.lastRunAt
    ? `  last sync ${last.lastRunAt}: ${last.lastError === null ? 'every file synced' : `failed (${last.lastError})`}`
    : '  last sync: none yet';
  const next = last?.nextRunAt ? `; next ${last.nextRunAt}` : '';
  return [head, ...parts, sync + next];
}

/** `openvat registers …`: the national registers' published files (SI FURS, LV VID) in DATABASE_URL. */
export function createRegistersCommands(config: () => Config): Command {
  const command = new Command('registers').description(
    "the national registers' published files (SI FURS, LV VID) answered from a local copy (see docs/validation.md)",
  );

  command
    .command('sync')
    .argument('[registers...]', 'si_furs, lv_vid (or si, lv); default: every file register that is on')
    .description(
      "download the registers' files now (a conditional GET) and swap each in whole; a file that fails or looks cut short keeps the copy held",
    )
    .action((names: string[]) =>
      withQuietContainer(config, async (container) => {
        const results = await container.national.syncFiles(chosen(container, names));
        for (const result of results) for (const line of syncLines(result)) console.log(line);
        if (results.some((result) => !result.ok)) process.exitCode = 1;
      }),
    );

  command
    .command('status')
    .argument('[registers...]', 'si_furs, lv_vid (or si, lv); default: every file register that is on')
    .addOption(new Option('--json', 'print the copies as JSON'))
    .description("print each file register's local copy: its state, data date, and each file's date and rows")
    .action((names: string[], options: { json?: boolean }) =>
      withQuietContainer(config, async (container) => {
        const sources = chosen(container, names);
        const copies = (await container.national.files()).filter((copy) => sources.includes(copy.source));
        if (options.json) console.log(JSON.stringify(copies.map(fileCopyView), null, 2));
        else for (const copy of copies) for (const line of statusLines(copy)) console.log(line);
        // A copy that cannot answer is worth a non-zero exit for a monitoring script.
        if (copies.some((copy) => copy.state !== 'current')) process.exitCode = 1;
      }),
    );

  return command;
}
