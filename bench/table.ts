/**
 * The rows of one benchmark in the results table of docs/performance.md carry its marker at the end
 * of their last cell (`… <!-- bench:NAME --> |`): an inline comment, which renders as nothing, where
 * a comment on a line of its own would end the table in GitHub's Markdown.
 */
export function benchMarker(name: string): string {
  return `<!-- bench:${name} -->`;
}

/** `row` (`| … |`) with the benchmark's marker put at the end of its last cell. */
export function markRow(row: string, name: string): string {
  const trimmed = row.trimEnd();
  if (!trimmed.startsWith('|') || !trimmed.endsWith('|')) throw new Error(`not a table row: ${row}`);
  return `${trimmed.slice(0, -1).trimEnd()} ${benchMarker(name)} |`;
}

/**
 * The page with the benchmark's rows replaced by the rows of `markdown` (marked). Its rows must be
 * one run of lines; a benchmark without rows yet is added at the end of the table.
 */
export function replaceBenchRows(page: string, name: string, markdown: string): string {
  const marker = benchMarker(name);
  const rows = markdown
    .trim()
    .split('\n')
    .map((row) => markRow(row, name));
  const lines = page.split('\n');
  const mine = lines.flatMap((line, i) => (line.includes(marker) ? [i] : []));
  if (mine.length > 0) {
    const first = mine[0] as number;
    const last = mine.at(-1) as number;
    if (last - first + 1 !== mine.length) throw new Error(`the rows of ${marker} are not one run of lines`);
    lines.splice(first, mine.length, ...rows);
    return lines.join('\n');
  }
  const tagged = lines.flatMap((line, i) => (/<!-- bench:[a-z0-9-]+ --> \|$/.test(line) ? [i] : []));
  if (tagged.length === 0) throw new Error('docs/performance.md has no results table with benchmark rows');
  lines.splice((tagged.at(-1) as number) + 1, 0, ...rows);
  return lines.join('\n');
}
