// Renders the rows as the markdown table the bench prints and writes to bench/latest.md.
import type { Cell, Check, Column, Row } from './types.js';

const SHORT_NAME: Record<Column, string> = { verity: 'Verity', floor: 'floor', playwright: 'PW' };

const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function valueOf(cell: Cell): number | undefined {
  return cell && 'value' in cell && Number.isFinite(cell.value) ? cell.value : undefined;
}

function fmt(cell: Cell, unit: Row['unit']): string {
  if (!cell) return '—';
  if ('error' in cell) return 'error';
  if (unit === 'calls') return `${cell.value} calls`;
  return unit === 'ms' ? `${cell.value.toFixed(1)} ms` : `${Math.round(cell.value).toLocaleString('en-US')} B`;
}

function ratio(row: Row, of: Column, over: Column): number | undefined {
  const a = valueOf(row.cells[of]);
  const b = valueOf(row.cells[over]);
  return a !== undefined && b !== undefined && b > 0 ? a / b : undefined;
}

function ratios(row: Row): string {
  const pairs: Array<[Column, Column]> = [
    ['verity', 'floor'],
    ['verity', 'playwright'],
  ];
  const parts = pairs
    .map(([of, over]) => {
      const r = ratio(row, of, over);
      return r === undefined ? null : `${SHORT_NAME[of]}/${SHORT_NAME[over]} ${r.toFixed(2)}×`;
    })
    .filter((x): x is string => x !== null);
  return parts.length ? parts.join('; ') : '—';
}

function target(checks: Check[]): string {
  return checks.length
    ? checks.map((c) => `${SHORT_NAME[c.of]} ≤ ${c.max}× ${SHORT_NAME[c.over]}`).join('; ')
    : '— (info)';
}

export type Verdict = 'PASS' | 'FAIL' | 'NO DATA' | 'info';

export function verdict(row: Row): Verdict {
  if (!row.checks.length) return 'info';
  const rs = row.checks.map((c) => ({ c, r: ratio(row, c.of, c.over) }));
  if (rs.some(({ c, r }) => r !== undefined && r > c.max)) return 'FAIL';
  if (rs.some(({ r }) => r === undefined)) return 'NO DATA';
  return 'PASS';
}

export function cellErrors(rows: Row[]): string[] {
  const out: string[] = [];
  for (const row of rows) {
    for (const [col, cell] of Object.entries(row.cells) as Array<[Column, Cell]>) {
      if (cell && 'error' in cell) out.push(`${row.metric} / ${SHORT_NAME[col]}: ${cell.error}`);
    }
  }
  return [...new Set(out)];
}

export function renderMarkdown(
  rows: Row[],
  header: string[],
  notes: string[],
  sectionErrors: string[],
  tables: string[] = [],
): string {
  const lines: string[] = [...header, ''];
  lines.push('| metric | Verity | floor | Playwright MCP | ratio(s) | target | pass/fail |');
  lines.push('| --- | ---: | ---: | ---: | --- | --- | --- |');
  for (const row of rows) {
    lines.push(
      `| ${esc(row.metric)} | ${fmt(row.cells.verity, row.unit)} | ${fmt(row.cells.floor, row.unit)} | ` +
        `${fmt(row.cells.playwright, row.unit)} | ${ratios(row)} | ${target(row.checks)} | ${verdict(row)} |`,
    );
  }
  for (const table of tables) lines.push('', table);
  const rowNotes = rows.filter((r) => r.note).map((r) => `${r.metric}: ${r.note}`);
  const allNotes = [...new Set([...rowNotes, ...notes])];
  if (allNotes.length) lines.push('', 'Notes:', ...allNotes.map((n) => `- ${n}`));
  const details = rows.flatMap((r) =>
    (Object.entries(r.cells) as Array<[Column, Cell]>)
      .filter(([, c]) => c && 'value' in c && c.detail)
      .map(([col, c]) => `${r.metric} / ${SHORT_NAME[col]}: ${(c as { detail: string }).detail}`),
  );
  if (details.length) lines.push('', 'Spread:', ...[...new Set(details)].map((d) => `- ${d}`));
  const errors = [...sectionErrors, ...cellErrors(rows)];
  if (errors.length) lines.push('', 'Errors:', ...errors.map((e) => `- ${esc(e)}`));
  return lines.join('\n') + '\n';
}

/**
 * An `--only` run's report merged into the last whole one: its rows replace the rows of the same metric,
 * its tables the tables under the same heading (the text before the heading's colon), and a line under the
 * header says which sections were run again and when; the rest of the last run stays as it was.
 */
export function mergeReport(previous: string, fresh: string, sections: string[], when: Date): string {
  const rowOf = (line: string) => (line.startsWith('| ') ? line.split(' | ')[0] : null);
  const headingOf = (line: string) => (line.startsWith('### ') ? line.split(':')[0] : null);
  const freshLines = fresh.split('\n');
  // Rows are the main table's, before the first table of its own: a table's lines (its header, its `| ---`
  // line) are replaced with the table, never matched by their first cell into another table.
  const mainOf = (lines: string[]) => {
    const at = lines.findIndex((l) => headingOf(l) || /^(Notes|Spread|Errors):$/.test(l));
    return at < 0 ? lines.length : at;
  };
  const freshRows = new Map(
    freshLines
      .slice(0, mainOf(freshLines))
      .filter((l) => rowOf(l) && !l.startsWith('| metric') && !l.startsWith('| ---'))
      .map((l) => [rowOf(l)!, l]),
  );
  // A table runs from its heading to the next heading or to the notes.
  const blocks = (lines: string[]) => {
    const out = new Map<string, string[]>();
    for (let i = 0; i < lines.length; i++) {
      const heading = headingOf(lines[i]);
      if (!heading) continue;
      let end = i + 1;
      while (end < lines.length && !headingOf(lines[end]) && !/^(Notes|Spread|Errors):$/.test(lines[end])) end++;
      out.set(heading, lines.slice(i, end));
    }
    return out;
  };
  const freshTables = blocks(freshLines);
  const lines = previous.split('\n');
  const oldTables = blocks(lines);
  const oldMain = mainOf(lines);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const heading = headingOf(lines[i]);
    if (heading && freshTables.has(heading)) {
      out.push(...freshTables.get(heading)!);
      freshTables.delete(heading);
      i += oldTables.get(heading)!.length - 1;
      continue;
    }
    // A section run again no longer stands in the errors for having crashed before.
    if (sections.some((name) => lines[i].startsWith(`- section "${name}" crashed`))) continue;
    const metric = rowOf(lines[i]);
    out.push(metric && i < oldMain && freshRows.has(metric) ? freshRows.get(metric)! : lines[i]);
    if (i === 0)
      out.push('', `Re-run with --only ${sections.join(',')} at ${when.toISOString()}: its rows and tables below.`);
  }
  // Tables the last run did not have go before its notes.
  const notesAt = out.findIndex((l) => /^(Notes|Spread|Errors):$/.test(l));
  const added = [...freshTables.values()].flat();
  if (added.length) out.splice(notesAt < 0 ? out.length : notesAt, 0, ...added);
  const errorsAt = out.indexOf('Errors:');
  if (errorsAt >= 0 && !out[errorsAt + 1]?.startsWith('- ')) out.splice(errorsAt - 1, 2);
  return out.join('\n');
}
