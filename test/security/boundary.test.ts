// Issue #22, "one 10 KB call kills the whole gateway", replayed against a real `verity start` with default
// settings and a fresh HOME: a run_actions step whose args nest 5,000 levels deep (the exact finding), the
// same nesting in a gateway frame, and a request line Node's URL parser rejects. Each is refused naming
// what was wrong, the process stays up, and the next call works. Every process is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { alive, sleep, startGateway, type Gateway } from '../helpers/gateway.js';
import { connectAs, rawMcpSession, stillServing } from './wire.js';

/** `{"a":{"a":...1...}}` as text, `levels` deep: built as a string, so no serializer's own limits interfere. */
const nestedJson = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

describe('a call or frame nested 5,000 levels deep (issue 22)', () => {
  let home: string;
  let gw: Gateway;
  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'verity-sec-boundary-'));
    // Default settings: the credentials and config are generated under the fresh HOME.
    gw = await startGateway([], {
      HOME: home,
      XDG_CONFIG_HOME: undefined,
      VERITY_CONFIG_DIR: undefined,
      VERITY_TOKEN: undefined,
      VERITY_AGENT_TOKEN: undefined,
    });
  });
  after(async () => {
    await gw?.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** Up after a moment (the old crash came after the refusal was sent), and a fresh agent's call works. */
  async function stillUp(): Promise<void> {
    await sleep(500);
    assert.ok(alive(gw.pid), `verity start died:\n${gw.stderr().slice(-2000)}`);
    await stillServing(gw);
    const agent = await gw.connect();
    const r = await agent.call('list_sessions', {});
    await agent.disconnect();
    assert.equal(r.isError, false, r.text);
  }

  test('run_actions whose step args nest 5,000 deep: refused invalid_arguments naming the field; the server stays up', async () => {
    const mcp = await rawMcpSession(gw);
    const body = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_actions","arguments":{"steps":[{"tool":"click","args":${nestedJson(5000)}}]}}}`;
    assert.ok(body.length > 10_000 && body.length < 40_000, `${body.length} bytes`);
    const answer = await mcp.post(body);
    const result = answer.result;
    assert.ok(result, JSON.stringify(answer).slice(0, 500));
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent.status, 'refused');
    assert.equal(result.structuredContent.refusal.code, 'invalid_arguments');
    assert.equal(result.structuredContent.refusal.field, 'steps[0].args');
    assert.match(result.content.at(-1).text, /steps\[0\]\.args: nested deeper than 64 levels/);
    // The same session's next call works too.
    const next = await mcp.post(
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}',
    );
    assert.equal(next.result?.isError, undefined, JSON.stringify(next));
    await stillUp();
  });

  test('every tool: the same nesting in any argument is refused naming it', async () => {
    const mcp = await rawMcpSession(gw);
    for (const [name, field] of [
      ['click', 'target'],
      ['page', 'action'],
      ['start_session', 'session'],
      ['get_window_state', 'target'],
    ]) {
      const answer = await mcp.post(
        `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${name}","arguments":{"${field}":${nestedJson(5000)}}}}`,
      );
      const refusal = answer.result?.structuredContent?.refusal;
      assert.equal(refusal?.code, 'invalid_arguments', `${name}: ${JSON.stringify(answer).slice(0, 300)}`);
      assert.match(refusal.message, new RegExp(`^${field}\\.a\\.a: nested deeper than 64 levels$`));
    }
    await stillUp();
  });

  test('a gateway frame whose params nest 5,000 deep: refused INVALID_REQUEST naming the field; the server stays up', async () => {
    const ui = await connectAs(gw, gw.token);
    assert.equal(ui.reply.ok, true, JSON.stringify(ui.reply));
    const answered = new Promise<any>((resolve) => {
      ui.ws.on('message', (d) => {
        const f = JSON.parse(String(d));
        if (f.type === 'res' && f.id === 99) resolve(f);
      });
    });
    ui.ws.send(`{"type":"req","id":99,"method":"audit.query","params":{"text":${nestedJson(5000)}}}`);
    const reply = await answered;
    assert.equal(reply.ok, false);
    assert.equal(reply.error.code, 'INVALID_REQUEST');
    assert.equal(reply.error.message, 'frame params.text.a: nested deeper than 64 levels');
    // The connection itself carries on.
    const list = await ui.request('sessions.list', {});
    assert.equal(list?.ok, true, JSON.stringify(list));
    ui.ws.close();
    await stillUp();
  });

  test('a request line the URL parser rejects (GET //[) is answered, not an uncaught exception', async () => {
    const host = new URL(gw.base).host;
    for (const path of ['//[', '//[::1']) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(gw.base).port), '127.0.0.1', () =>
          socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
        );
        let text = '';
        socket.on('data', (c) => {
          text += c;
        });
        socket.on('end', () => resolve(text));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      assert.match(answer, /^HTTP\/1\.1 (4|5)\d\d /, `${path}: ${answer.slice(0, 200)}`);
    }
    await stillUp();
  });
});
