// A user reads the README and docs/ without the files around the repository: every relative link in them
// names a file inside the repository that exists, and a link to a heading (`file.md#heading`, `#heading`)
// names a heading that file has, so moving a section between files cannot leave a link behind.
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

/** GitHub's heading anchor: lower case, punctuation dropped (letters, digits, `_` and `-` kept), spaces hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .replace(/`/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a markdown file's headings make (fenced code left out; a repeated one gets -1, -2, …). */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of withoutCode(markdown).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = anchorOf(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

/** The text with fenced code blocks blanked: a `# comment` there is no heading, a `](x)` there no link. */
const withoutCode = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, '');

/** Every link target of a page: inline `[text](target)` and images, and reference definitions `[label]: target`. */
export function linksOf(markdown: string): string[] {
  const text = withoutCode(markdown);
  return [
    ...[...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!),
    ...[...text.matchAll(/^ {0,3}\[[^\]]+\]: +(\S+)/gm)].map((m) => m[1]!),
  ];
}

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

test('every relative link of the README and docs/, reference definitions too, names a file and heading that exist', () => {
  const broken: string[] = [];
  for (const page of pages) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const link of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // a URL (http:, mailto:, chrome:)
      const [path, fragment] = link.split('#', 2) as [string, string | undefined];
      const file = path ? resolve(dirname(join(ROOT, page)), decodeURI(path)) : join(ROOT, page);
      if (relative(ROOT, file).startsWith('..') || !existsSync(file)) {
        broken.push(`${page}: ${link} (no such file)`);
        continue;
      }
      if (fragment === undefined || !file.endsWith('.md')) continue;
      if (!anchorsOf(readFileSync(file, 'utf8')).has(decodeURIComponent(fragment)))
        broken.push(`${page}: ${link} (no such heading in ${relative(ROOT, file)})`);
    }
  }
  assert.deepEqual(broken, []);
});

test('anchors are made as GitHub makes them', () => {
  assert.equal(anchorOf('Mixed (sway + XWayland), GTK 3'), 'mixed-sway--xwayland-gtk-3');
  assert.equal(
    anchorOf('What an agent can reach (and the options that widen it)'),
    'what-an-agent-can-reach-and-the-options-that-widen-it',
  );
  assert.equal(anchorOf("One call's path"), 'one-calls-path');
  assert.equal(anchorOf('`verity start`'), 'verity-start');
  assert.deepEqual([...anchorsOf('# A\n\n```sh\n# not a heading\n```\n## A\n')], ['a', 'a-1']);
  assert.deepEqual(linksOf('[x](a.md#b) ![i](c.png)\n[Ref]: d.md#e\n```\n[y](z.md)\n```\n'), [
    'a.md#b',
    'c.png',
    'd.md#e',
  ]);
});

test("the README stays a user's page: at most 500 lines, the two commands in its first block (issue 43)", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const lines = readme.split('\n').length;
  assert.ok(lines <= 500, `README.md has ${lines} lines: move the detail to docs/ and link it`);
  const firstBlock = /^```sh\n([\s\S]*?)^```/m.exec(readme)?.[1] ?? '';
  assert.match(firstBlock, /^npm start\b/m, 'the first code block runs npm start');
  assert.match(firstBlock, /^npm test\b/m, 'and npm test');
  assert.ok(readme.indexOf('```sh') < readme.indexOf('\n## '), 'before the first section');
});
