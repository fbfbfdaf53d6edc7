// A user reads the README and docs/ without the files around the repository: every relative link in them
// names a file inside the repository that exists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ROOT } from '../helpers/fixtures.js';

const pages = [
  'README.md',
  'extension/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

test('every relative link of the README and docs/ stays inside the repository and names a file that exists', () => {
  const broken: string[] = [];
  for (const page of pages) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // a URL
      const file = resolve(dirname(join(ROOT, page)), target);
      if (relative(ROOT, file).startsWith('..') || !existsSync(file)) broken.push(`${page}: ${target}`);
    }
    for (const [mention] of text.matchAll(/\.\.\/shared\/\S*/g)) broken.push(`${page}: ${mention}`);
  }
  assert.deepEqual(broken, []);
});
