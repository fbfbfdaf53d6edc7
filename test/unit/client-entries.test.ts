// The README's client entries (issue #14): one for each of Claude Code, Claude Desktop, Cursor, VS Code and
// Codex, each running the published package with `npx -y <name> mcp`, and the absolute-path form for a
// clone. `npx -y <name>` runs the package's bin of the same name (without one it fails with "could not
// determine executable to run"), so that bin must exist and be the CLI. Whether the name is still free on
// the registry needs the network: `npm view <name>` (404) before a publish.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/fixtures.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
/** The "Client entries" section: from its heading to the next heading of the same or a higher level. */
const section = /^### Client entries\n([\s\S]*?)(?=^#{1,3} )/m.exec(readme)?.[1] ?? '';
/** Each fenced block of the section with the prose line just above it (which names the client). */
const blocks = [...section.matchAll(/([^\n]*)\n\n```(\w*)\n([\s\S]*?)```/g)].map((m) => ({
  caption: m[1],
  lang: m[2],
  body: m[3],
}));

const NPX = ['-y', pkg.name, 'mcp'];

test('`npx -y <name>` finds an executable: the package has a bin of its own name, the CLI', () => {
  assert.equal(typeof pkg.bin?.[pkg.name], 'string', `package.json bin has "${pkg.name}"`);
  assert.equal(pkg.bin[pkg.name], pkg.bin.verity, 'the same CLI as `verity`');
  assert.ok(
    pkg.files.some((f: string) => pkg.bin[pkg.name].startsWith(f)),
    'the bin is in the files list',
  );
});

test('the README has a working entry for Claude Code, Claude Desktop, Cursor, VS Code and Codex', () => {
  assert.ok(section, 'README.md has a "### Client entries" section');
  const entryOf = (client: RegExp) => {
    const block = blocks.find((b) => client.test(b.caption));
    assert.ok(block, `an entry under a line naming ${client}: ${blocks.map((b) => b.caption).join(' | ')}`);
    return block;
  };
  // Claude Code: a command line.
  assert.match(entryOf(/^Claude Code/).body, new RegExp(`^claude mcp add verity -- npx ${NPX.join(' ')}$`, 'm'));
  // Claude Desktop and Cursor share the mcpServers form.
  for (const client of [/Claude Desktop/, /Cursor/]) {
    const json = JSON.parse(entryOf(client).body);
    assert.deepEqual(json.mcpServers.verity, { command: 'npx', args: NPX });
  }
  // VS Code: "servers", with its type; its one-line install names the same command.
  const vscode = entryOf(/^VS Code/);
  assert.deepEqual(JSON.parse(vscode.body).servers.verity, { type: 'stdio', command: 'npx', args: NPX });
  const addMcp = /code --add-mcp '([^']+)'/.exec(vscode.caption)?.[1];
  assert.ok(addMcp, vscode.caption);
  assert.deepEqual(JSON.parse(addMcp), { name: 'verity', command: 'npx', args: NPX });
  // Codex: TOML under [mcp_servers.verity], and its one-line install.
  const codex = entryOf(/^Codex/);
  assert.equal(codex.lang, 'toml');
  assert.match(codex.body, /^\[mcp_servers\.verity\]$/m);
  assert.match(codex.body, /^command = "npx"$/m);
  // A TOML array of plain strings reads as JSON.
  assert.deepEqual(JSON.parse(/^args = (.*)$/m.exec(codex.body)?.[1] ?? 'null'), NPX);
  assert.match(codex.caption, new RegExp(`codex mcp add verity -- npx ${NPX.join(' ')}`));
});

test('for a clone, the same entries with node and the absolute path of bin/verity.js', () => {
  const clone = blocks.filter((b) => b.body.includes('/bin/verity.js'));
  assert.ok(clone.length >= 2, 'a JSON and a command-line form');
  const json = JSON.parse(clone.find((b) => b.lang === 'json')!.body);
  const { command, args } = json.mcpServers.verity;
  assert.equal(command, 'node');
  assert.match(args[0], /^\/.*\/bin\/verity\.js$/, 'an absolute path');
  assert.equal(args[1], 'mcp');
  assert.match(clone.find((b) => b.lang === 'sh')!.body, /^claude mcp add verity -- node \/\S+\/bin\/verity\.js mcp$/m);
});

test('until the package is published: the README installs the tarball, and every client has that form too', () => {
  const tarball = `${pkg.name}-${pkg.version}.tgz`;
  assert.match(readme, /npm pack/, 'the README says how to build the tarball');
  assert.match(readme, new RegExp(`npm install -g \\./${tarball.replaceAll('.', '\\.')}`), `it installs ./${tarball}`);
  const installed = blocks.filter(
    (b) => /installed from the tarball/i.test(b.caption) || b.body.includes(`-- ${pkg.name} mcp`),
  );
  const json = installed.find((b) => b.lang === 'json');
  assert.ok(json, 'a JSON entry for the installed command');
  assert.deepEqual(JSON.parse(json.body).mcpServers.verity, { command: pkg.name, args: ['mcp'] });
  assert.ok(pkg.bin[pkg.name], `npm install -g puts ${pkg.name} on PATH`);
  assert.ok(installed.some((b) => new RegExp(`^claude mcp add verity -- ${pkg.name} mcp$`, 'm').test(b.body)));
});
