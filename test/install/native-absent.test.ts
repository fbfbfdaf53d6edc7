// The native route is loaded only where it can run. `verity mcp` with DISPLAY unset starts and lists its
// tools without importing anything of server/native (a module loader hook records every import), and a
// native call says `unavailable` with the reason, still without loading it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from '../helpers/fixtures.js';
import { wrap } from '../helpers/gateway.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-native-absent-'));
const record = join(dir, 'imported.txt');
let client: Client;
let transport: StdioClientTransport;

before(async () => {
  // A resolve hook (node:module register) that appends every module URL the server process imports.
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(record)}, resolved.url + '\\n');
  return resolved;
}\n`,
  );
  writeFileSync(
    join(dir, 'register.mjs'),
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`,
  );
  const env = { ...(process.env as Record<string, string>) };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      '--import',
      pathToFileURL(join(dir, 'register.mjs')).href,
      join(ROOT, 'bin', 'verity.js'),
      'mcp',
      '--standalone',
      '--headless',
    ],
    env: { ...env, VERITY_CONFIG_DIR: join(dir, 'config') },
    stderr: 'pipe',
  });
  client = new Client({ name: 'native-absent-test', version: '1' });
  await client.connect(transport);
});

after(async () => {
  const pid = transport?.pid;
  await client?.close().catch(() => {});
  if (pid)
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* exited */
    }
  rmSync(dir, { recursive: true, force: true });
});

const nativeImports = () =>
  (existsSync(record) ? readFileSync(record, 'utf8') : '').split('\n').filter((url) => url.includes('/server/native/'));

test('with DISPLAY unset, verity mcp starts and lists its tools without loading the native route', async () => {
  assert.ok(
    readFileSync(record, 'utf8').includes('/dist/server/cli/parse.js'),
    "the hook saw the server's own imports",
  );
  const tools = (await client.listTools()).tools.map((t) => t.name);
  for (const name of ['list_apps', 'list_windows', 'get_window_state', 'type_text'])
    assert.ok(tools.includes(name), name);
  assert.deepEqual(nativeImports(), []);
});

test('a native call says unavailable with the reason, and still nothing native is loaded', async () => {
  const call = wrap(client);
  const desktop = await call('get_window_state', { target: { kind: 'desktop' } });
  assert.equal(desktop.structured.refusal?.code, 'unavailable', desktop.text);
  assert.match(
    desktop.structured.refusal.message,
    /native route needs an X display or a Wayland session: DISPLAY is not set, nor WAYLAND_DISPLAY/,
  );
  const typed = await call('type_text', { target: { kind: 'window', pid: 1, window_id: 1 }, text: 'x' });
  assert.equal(typed.structured.refusal?.code, 'unavailable', typed.text);
  const windows = await call('list_windows');
  assert.equal(windows.isError, false, windows.text);
  assert.match(windows.structured.native, /DISPLAY is not set/);
  const apps = await call('list_apps');
  assert.match(apps.structured.native, /DISPLAY is not set/);
  assert.deepEqual(nativeImports(), []);
});
