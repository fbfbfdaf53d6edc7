// A platform without a prebuilt PTY (issue #14): @lydell/node-pty finds its binary in an optional
// dependency per platform (@lydell/node-pty-<platform>-<arch>); where none exists, or an install left it
// out (--omit=optional), only the terminal panel is off, saying why, and everything else works.
// That platform cannot be had here, so the gateway is started with a preload that makes the binary
// package unresolvable, exactly as a missing folder in node_modules would (MODULE_NOT_FOUND).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { operatorSocket, startGateway, type Gateway } from '../helpers/gateway.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-pty-absent-'));
const BINARY_PACKAGE = `@lydell/node-pty-${process.platform}-${process.arch}`;
let gw: Gateway;

before(async () => {
  const preload = join(dir, 'no-pty-binary.cjs');
  writeFileSync(
    preload,
    `const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request.startsWith(${JSON.stringify(BINARY_PACKAGE)})) {
    const e = new Error("Cannot find module '" + request + "'");
    e.code = 'MODULE_NOT_FOUND';
    throw e;
  }
  return resolve.call(this, request, ...rest);
};\n`,
  );
  gw = await startGateway([], { VERITY_CONFIG_DIR: join(dir, 'config'), NODE_OPTIONS: `--require ${preload}` });
});

after(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('without the PTY binary, terminal.open says the terminal panel is off and why; MCP still answers', async () => {
  const ui = await operatorSocket(gw, ['operator.admin', 'operator.approvals'], ['ui-commands']);
  try {
    const opened = await ui.request('terminal.open', { cols: 80, rows: 24 });
    assert.equal(opened.ok, false, JSON.stringify(opened));
    assert.equal(opened.error?.code, 'UNAVAILABLE', JSON.stringify(opened));
    assert.match(opened.error.message, /the terminal panel is off: its PTY \(@lydell\/node-pty\) does not load on/);
    assert.match(opened.error.message, new RegExp(BINARY_PACKAGE.replace(/[/.-]/g, '\\$&')));
    assert.match(opened.error.message, /everything else works/);
    // Asked again, it says the same (nothing half-loaded), and the gateway is still there.
    const again = await ui.request('terminal.open', { cols: 80, rows: 24 });
    assert.equal(again.error?.code, 'UNAVAILABLE', JSON.stringify(again));
  } finally {
    ui.ws.close();
  }
  const agent = await gw.connect();
  try {
    const tools = await agent.client.listTools();
    assert.ok(
      tools.tools.some((t) => t.name === 'type_text'),
      tools.tools.map((t) => t.name).join(', '),
    );
  } finally {
    await agent.disconnect();
  }
});
