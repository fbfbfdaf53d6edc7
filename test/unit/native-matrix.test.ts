// The native route's matrix (docs/native-matrix.md, issue #23 item 5) is measured, not claimed: each
// desktop/toolkit section names the test files that prove it, those files exist and are in the suite, and
// the section says each of the five columns (list, read, type, click, pixels).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/fixtures.js';

const matrix = readFileSync(join(ROOT, 'docs', 'native-matrix.md'), 'utf8');
const sections = matrix
  .split(/^## /m)
  .slice(1)
  .filter((s) => !s.startsWith('What each missing cell needs'));

test('every section of the native matrix names a test file of test/native that exists', () => {
  assert.ok(sections.length >= 8, `${sections.length} sections`);
  for (const section of sections) {
    const title = section.split('\n')[0]!;
    const files = [...section.matchAll(/(?:test\/native\/)?([a-z0-9-]+(?:\.test|-cases)\.ts)/g)].map((m) => m[1]!);
    assert.ok(files.length > 0, `"${title}" names the test that proves it`);
    for (const file of files) assert.ok(existsSync(join(ROOT, 'test', 'native', file)), `${title}: ${file}`);
  }
});

test('every section says each of the five columns', () => {
  for (const section of sections) {
    const title = section.split('\n')[0]!;
    for (const column of ['list', 'read', 'type', 'click', 'pixels'])
      assert.match(section, new RegExp(`^- ${column}:`, 'm'), `"${title}" says ${column}`);
  }
});
