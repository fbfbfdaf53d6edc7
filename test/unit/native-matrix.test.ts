// The native route's matrix (docs/native-matrix.md, issue #23 item 5) is measured, not claimed: each
// desktop/toolkit section names the test files that prove it, those files exist and drive that desktop and
// toolkit, and the section says each of the five columns (list, read, type, click, pixels). docs/native.md's
// table has one row per section, linked to it, and says what the section says wherever a cell is yes, no or
// refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/fixtures.js';

const COLUMNS = ['list', 'read', 'type', 'click', 'pixels'] as const;
const matrix = readFileSync(join(ROOT, 'docs', 'native-matrix.md'), 'utf8');
const sections = matrix
  .split(/^## /m)
  .slice(1)
  .filter((s) => !s.startsWith('What each missing cell needs'))
  .map((text) => ({ title: text.split('\n')[0]!.trim(), text }));

/** GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen. */
const anchor = (title: string) =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
/** A column's line in a section: `- list: ...`, its continuation lines left out. */
const line = (section: string, column: string) => section.match(new RegExp(`^- ${column}:(.*)$`, 'm'))?.[1]?.trim();
const verdict = (cell: string | undefined) => cell?.match(/^(yes|no|refused)\b/i)?.[1]?.toLowerCase();

/** The test files a section names: `test/native/x.test.ts`, `test/unit/x.test.ts`, or `x-cases.ts` (native). */
const filesOf = (section: string) =>
  [...section.matchAll(/(?:test\/(native|unit)\/)?([a-z0-9-]+(?:\.test|-cases)\.ts)/g)].map((m) =>
    join(ROOT, 'test', m[1] ?? 'native', m[2]!),
  );

// What a section's title names, and what one of its test files must say to be driving it.
const DRIVES: Array<[RegExp, RegExp]> = [
  [/\bGTK 3\b/, /'gtk3'|startApp\(d, '[^']*'\)/], // startApp's toolkit defaults to GTK 3 (app.py)
  [/\bGTK 4\b/, /'gtk4'/],
  [/\bQt\b/, /'qt'/],
  [/\bTk\b/, /'tk'/],
  [/\bSwing\b/, /'swing'/],
  [/\bLibreOffice\b/, /officeCases|startOffice/],
  [/\bGNOME\b/, /'gnome'/],
  [/\bKDE\b/, /'kde'/],
];
const DESKTOPS: Array<[RegExp, RegExp]> = [
  [/\bX11\b/, /startDesktop\(|'x11'/],
  [/\bWayland\b|\bsway\b/, /startWaylandDesktop|'wayland'/],
  [/\bXWayland\b/, /xwayland: true/],
];

const native = readFileSync(join(ROOT, 'docs', 'native.md'), 'utf8');
const tableAt = native.indexOf('| desktop / toolkit');
const lines = native.slice(tableAt).split('\n');
const cellsOf = (row: string) =>
  row
    .split('|')
    .slice(1, -1)
    .map((c) => c.trim());
const header = cellsOf(lines[0]!);
// The rows: after the header and its --- line, up to the first line that is not a table row.
const rows = lines
  .slice(
    2,
    lines.findIndex((l) => !l.startsWith('|')),
  )
  .map(cellsOf);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

test('every section of the native matrix names test files that exist', () => {
  assert.ok(sections.length >= 11, `${sections.length} sections`);
  for (const { title, text } of sections) {
    const files = filesOf(text);
    assert.ok(files.length > 0, `"${title}" names the test that proves it`);
    for (const file of files) assert.ok(existsSync(file), `${title}: ${file}`);
  }
});

test("each section's test files drive the desktop and the toolkit its title names", () => {
  for (const { title, text } of sections) {
    const source = filesOf(text)
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const toolkits = DRIVES.filter(([named]) => named.test(title));
    assert.ok(toolkits.length > 0, `"${title}" names a toolkit or desktop the test knows`);
    for (const [named, drives] of [...toolkits, ...DESKTOPS.filter(([n]) => n.test(title))])
      assert.match(source, drives, `"${title}": no test file of it drives ${named.source}`);
  }
});

test('every section says each of the five columns', () => {
  for (const { title, text } of sections)
    for (const column of COLUMNS) assert.ok(line(text, column), `"${title}" says ${column}`);
});

test("docs/native.md's table: one row per section, linked to it, and each section has its row", () => {
  assert.ok(tableAt >= 0, 'the table starting "| desktop / toolkit"');
  assert.deepEqual(header, ['desktop / toolkit', ...COLUMNS, 'needs']);
  const linked = rows.map((cells) => {
    const label = cells[0]!.match(/^\[([^\]]+)\]$/)?.[1];
    assert.ok(label, `"${cells[0]}" links its section ([title], defined below the table)`);
    const target = native.match(new RegExp(`^\\[${escape(label)}\\]: (\\S+)$`, 'm'))?.[1];
    assert.equal(target, `native-matrix.md#${anchor(label)}`, `[${label}]'s link`);
    assert.ok(
      sections.some((s) => s.title === label),
      `"${label}" is a section of docs/native-matrix.md`,
    );
    return label;
  });
  assert.deepEqual([...linked].sort(), sections.map((s) => s.title).sort(), 'one row per section, each once');
});

test("docs/native.md's cells say what their section says: yes, no and refused alike, and a needs where not yes", () => {
  for (const cells of rows) {
    const title = cells[0]!.slice(1, -1);
    const section = sections.find((s) => s.title === title);
    if (!section) continue; // the test above says so
    assert.equal(cells.length, COLUMNS.length + 2, `"${title}": ${cells.length} cells`);
    COLUMNS.forEach((column, i) => {
      const cell = cells[i + 1]!;
      const doc = line(section.text, column);
      assert.equal(verdict(cell), verdict(doc), `"${title}" ${column}: docs/native.md "${cell}", section "${doc}"`);
    });
    const missing = COLUMNS.filter((_, i) => verdict(cells[i + 1]) !== 'yes');
    const needs = cells.at(-1)!;
    assert.equal(needs !== '', missing.length > 0, `"${title}": needs "${needs}", not yes: ${missing.join(', ')}`);
    assert.equal(!!line(section.text, 'needs'), missing.length > 0, `"${title}": the section's needs line`);
  }
});
