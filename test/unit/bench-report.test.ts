// An `--only` bench run merged into the last whole run's report (bench/report.ts mergeReport): its rows
// and tables replace theirs, a new table goes before the notes, a section run again leaves the errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeReport } from '../../bench/report.js';

const previous = [
  '# Verity bench — 2026-12-06T05:44:00.000Z',
  '',
  'header text',
  '',
  '| metric | Verity | floor | Playwright MCP | ratio(s) | target | pass/fail |',
  '| --- | ---: | ---: | ---: | --- | --- | --- |',
  '| a row | 1 ms | 2 ms | — | 0.5× | — | info |',
  '| b row | 3 ms | 4 ms | — | 0.7× | — | info |',
  '',
  '### Concurrency: old',
  '',
  '| x | y |',
  '| 1 | 2 |',
  '',
  'Notes:',
  '- a note',
  '',
  'Errors:',
  '- section "fuzz" crashed: URIError',
  '',
].join('\n');

test('an --only run replaces its rows and tables, adds new tables before the notes, and clears its old crash', () => {
  const fresh = [
    '# Verity bench — 2026-12-06T06:20:00.000Z',
    '',
    '| metric | Verity | floor | Playwright MCP | ratio(s) | target | pass/fail |',
    '| --- | ---: | ---: | ---: | --- | --- | --- |',
    '| b row | 5 ms | 6 ms | — | 0.8× | — | info |',
    '',
    '### Trust fuzz: 120 sequences',
    '',
    '| what | count |',
    '| calls | 900 |',
    '',
  ].join('\n');
  const merged = mergeReport(previous, fresh, ['fuzz'], new Date('2026-12-06T06:20:00Z')).split('\n');
  assert.equal(merged[0], '# Verity bench — 2026-12-06T05:44:00.000Z', 'the whole run stays the report');
  assert.match(merged[2], /Re-run with --only fuzz at 2026-12-06T06:20:00.000Z/);
  assert.ok(merged.includes('| a row | 1 ms | 2 ms | — | 0.5× | — | info |'), 'a row not run again stays');
  assert.ok(merged.includes('| b row | 5 ms | 6 ms | — | 0.8× | — | info |'), 'a row run again is replaced');
  assert.ok(!merged.includes('| b row | 3 ms | 4 ms | — | 0.7× | — | info |'));
  assert.ok(merged.indexOf('### Trust fuzz: 120 sequences') < merged.indexOf('Notes:'), 'a new table before the notes');
  assert.ok(merged.includes('### Concurrency: old'), "another section's table stays");
  assert.ok(!merged.some((l) => l.includes('crashed')) && !merged.includes('Errors:'), 'the old crash is gone');
});

test('a table run again replaces the one under the same heading, whatever its title says after the colon', () => {
  const fresh = ['# x', '', '### Concurrency: new', '', '| x | y |', '| 3 | 4 |', ''].join('\n');
  const merged = mergeReport(previous, fresh, ['concurrency'], new Date()).split('\n');
  assert.ok(merged.includes('### Concurrency: new') && !merged.includes('### Concurrency: old'));
  assert.ok(merged.includes('| 3 | 4 |') && !merged.includes('| 1 | 2 |'));
  assert.ok(merged.includes('- section "fuzz" crashed: URIError'), "another section's error stays");
});

test("a fresh table's header and `| ---` lines leave other tables' lines as they were", () => {
  const fresh = [
    '# x',
    '',
    '| metric | Verity | floor | Playwright MCP | ratio(s) | target | pass/fail |',
    '| --- | ---: | ---: | ---: | --- | --- | --- |',
    '',
    '### Audit write cost: new',
    '',
    '| x | entries |',
    '| --- | ---: |',
    '| 1 | 9 |',
    '',
  ].join('\n');
  const merged = mergeReport(previous, fresh, ['audit'], new Date()).split('\n');
  assert.ok(merged.includes('### Concurrency: old') && merged.includes('| x | y |'), "the other table's header stays");
  assert.ok(merged.includes('| 1 | 2 |'), "the other table's row stays");
  assert.ok(merged.includes('| --- | ---: | ---: | ---: | --- | --- | --- |'), "the main table's `| ---` line stays");
  assert.ok(merged.includes('### Audit write cost: new') && merged.includes('| 1 | 9 |'));
});
