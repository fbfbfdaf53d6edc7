// The gateway's wire protocol against a real `verity start`: handshake, scopes, origins, frame limits,
// event scoping, per-socket sequence numbers and reconnects.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import type { z } from 'zod';
import { startGateway, type Gateway } from '../helpers/gateway.js';
import { EVENT_SCHEMAS, eventFrame, helloOk, METHOD_SCHEMAS, responseFrame } from '../../server/gateway/protocol.js';

let gw: Gateway;
before(async () => {
  gw = await startGateway([]);
});
after(async () => {
  await gw?.close();
});

interface Socket {
  ws: WebSocket;
  frames: any[];
  request(method: string, params?: unknown): Promise<any>;
  closed: Promise<{ code: number; reason: string }>;
}

function open(options: { origin?: string } = {}): Promise<Socket> {
  const url = gw.base.replace('http', 'ws') + '/gateway';
  const ws = new WebSocket(url, { headers: options.origin ? { origin: options.origin } : {} });
  const frames: any[] = [];
  let nextId = 1;
  const waiters = new Map<number, (frame: any) => void>();
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data));
    frames.push(frame);
    if (frame.type === 'res' && waiters.has(frame.id)) {
      waiters.get(frame.id)!(frame);
      waiters.delete(frame.id);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((r) =>
    ws.on('close', (code, reason) => r({ code, reason: String(reason) })),
  );
  return new Promise((resolve, reject) => {
    ws.on('open', () =>
      resolve({
        ws,
        frames,
        closed,
        request: (method, params) =>
          new Promise((res) => {
            const id = nextId++;
            waiters.set(id, res);
            ws.send(JSON.stringify({ type: 'req', id, method, params }));
          }),
      }),
    );
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => reject(Object.assign(new Error(body), { status: res.statusCode })));
    });
    ws.on('error', reject);
  });
}

const hello = (scopes: string[], caps: string[] = [], token = gw.token) => ({
  client: { id: 'protocol-test', version: '1', mode: 'test' },
  caps,
  role: 'operator',
  scopes,
  auth: { token },
});

async function connected(scopes: string[], caps: string[] = []): Promise<Socket> {
  const s = await open();
  const res = await s.request('connect', hello(scopes, caps));
  assert.equal(res.ok, true, JSON.stringify(res));
  return s;
}

describe('handshake', () => {
  test('connect with the token gets hello-ok with connId, methods, events and scopes', async () => {
    const s = await open();
    const res = await s.request('connect', hello(['operator.read']));
    assert.equal(res.ok, true);
    assert.equal(res.payload.type, 'hello-ok');
    assert.match(res.payload.connId, /\w{8}-/);
    assert.deepEqual(res.payload.scopes, ['operator.read']);
    assert.ok(res.payload.methods.includes('sessions.list'));
    assert.ok(!res.payload.methods.includes('ui.command'), 'a read-only connection is not offered write methods');
    assert.ok(res.payload.events.includes('action'));
    s.ws.close();
  });

  test('a wrong token is refused with a message saying where the token is, and the socket closes', async () => {
    const s = await open();
    const res = await s.request('connect', hello(['operator.read'], [], 'not-the-token'));
    assert.equal(res.ok, false);
    assert.equal(res.error.code, 'UNAUTHORIZED');
    assert.match(res.error.message, /token/);
    assert.match(res.error.message, /verity start/);
    const { code } = await s.closed;
    assert.equal(code, 4001);
  });

  test('the first request must be connect', async () => {
    const s = await open();
    const res = await s.request('sessions.list');
    assert.equal(res.ok, false);
    assert.equal(res.error.code, 'INVALID_REQUEST');
    assert.match(res.error.message, /connect/);
    s.ws.close();
  });

  test('a malformed connect names the bad field', async () => {
    const s = await open();
    const res = await s.request('connect', { ...hello(['operator.read']), role: 'admin' });
    assert.equal(res.error.code, 'INVALID_REQUEST');
    assert.match(res.error.message, /role/);
    s.ws.close();
  });

  test('a foreign origin is refused before the upgrade, with what to do', async () => {
    await assert.rejects(
      open({ origin: 'http://evil.example' }),
      (e: any) => e.status === 403 && /not allowed/.test(e.message) && /Control UI/.test(e.message),
    );
    await assert.rejects(
      open({ origin: 'chrome-extension://abcdefghijklmnopabcdefghijklmnop' }),
      (e: any) => e.status === 403,
    );
    const own = await open({ origin: gw.base });
    assert.equal((await own.request('connect', hello(['operator.read']))).ok, true);
    own.ws.close();
  });

  test('reconnecting gets a fresh connection with its own id and sequence', async () => {
    const a = await connected(['operator.read']);
    const idA = a.frames[0].payload.connId;
    a.ws.close();
    await a.closed;
    const b = await connected(['operator.read']);
    assert.notEqual(b.frames[0].payload.connId, idA);
    b.ws.close();
  });
});

describe('methods and scopes', () => {
  test('unknown methods are refused', async () => {
    const s = await connected(['operator.admin']);
    const res = await s.request('no.such.method');
    assert.equal(res.error.code, 'INVALID_REQUEST');
    assert.match(res.error.message, /unknown method/);
    s.ws.close();
  });

  test('every method checks its scope and names the missing one', async () => {
    const s = await connected(['operator.read']);
    const cases: Array<[string, unknown, string]> = [
      ['ui.command', { command: { kind: 'sidebar', visible: false } }, 'operator.write'],
      ['agent.link', undefined, 'operator.write'],
      ['terminal.open', { cols: 80, rows: 24 }, 'operator.admin'],
      ['approvals.list', undefined, 'operator.approvals'],
      ['approvals.resolve', { id: 'x', approve: true }, 'operator.approvals'],
      ['browser.input', { tab_id: 'x', type: 'click' }, 'operator.write'],
    ];
    for (const [method, params, scope] of cases) {
      const res = await s.request(method, params);
      assert.equal(res.error?.code, 'FORBIDDEN', `${method}: ${JSON.stringify(res)}`);
      assert.equal(res.error.details.missingScope, scope, method);
      assert.match(res.error.message, new RegExp(scope.replace('.', '\\.')));
    }
    assert.equal((await s.request('sessions.list')).ok, true, 'read methods still work');
    s.ws.close();
  });

  test('write implies read; admin implies everything', async () => {
    const w = await connected(['operator.write']);
    assert.equal((await w.request('sessions.list')).ok, true);
    assert.equal((await w.request('approvals.list')).error.code, 'FORBIDDEN');
    w.ws.close();
    const a = await connected(['operator.admin']);
    assert.equal((await a.request('approvals.list')).ok, true);
    a.ws.close();
  });

  test('bad params are refused naming the field', async () => {
    const s = await connected(['operator.write'], ['ui-commands']);
    const res = await s.request('ui.command', { command: { kind: 'split', direction: 'sideways' } });
    assert.equal(res.error.code, 'INVALID_REQUEST');
    assert.match(res.error.message, /command/);
    s.ws.close();
  });
});

describe('frames', () => {
  test('a frame that is not JSON gets a clear error and the socket stays usable', async () => {
    const s = await connected(['operator.read']);
    s.ws.send('this is not json');
    await waitUntil(() =>
      s.frames.some((f) => f.type === 'res' && f.id === null && f.error?.code === 'INVALID_REQUEST'),
    );
    assert.equal((await s.request('sessions.list')).ok, true);
    s.ws.close();
  });

  test('an oversized frame closes the socket (1009)', async () => {
    const s = await connected(['operator.read']);
    s.ws.send(
      JSON.stringify({ type: 'req', id: 9, method: 'sessions.list', params: { pad: 'x'.repeat(2 * 1024 * 1024) } }),
    );
    const { code } = await s.closed;
    assert.equal(code, 1009);
  });

  test('an oversized frame before connect closes the socket', async () => {
    const s = await open();
    s.ws.send(JSON.stringify({ type: 'req', id: 1, method: 'connect', params: { pad: 'x'.repeat(100 * 1024) } }));
    const { code } = await s.closed;
    assert.equal(code, 1009);
  });
});

describe('events', () => {
  test('events reach only connections whose scopes allow them, with per-socket increasing seq', async () => {
    const reader = await connected(['operator.read']);
    const approver = await connected(['operator.approvals']);
    const agent = await gw.connect();
    await agent.call('start_session', { session: 'evented' });
    await agent.call('page', { action: 'navigate', url: 'data:text/html,<input>' });
    await agent.call('press_key', { key: 'Tab' });
    await waitUntil(() => reader.frames.some((f) => f.type === 'event' && f.event === 'action'));
    assert.ok(!approver.frames.some((f) => f.event === 'action'), 'operator.approvals alone does not hear actions');
    assert.ok(reader.frames.some((f) => f.event === 'sessions.changed'));
    const seqs = reader.frames.filter((f) => f.type === 'event').map((f) => f.seq);
    assert.deepEqual(
      seqs,
      seqs.slice().sort((x, y) => x - y),
    );
    assert.equal(seqs[0], 1);
    assert.equal(new Set(seqs).size, seqs.length);
    await agent.disconnect();
    reader.ws.close();
    approver.ws.close();
  });

  test('ui.command sent by a connection comes back to it alone', async () => {
    const a = await connected(['operator.write'], ['ui-commands']);
    const b = await connected(['operator.write'], ['ui-commands']);
    const res = await a.request('ui.command', { command: { kind: 'sidebar', visible: false } });
    assert.deepEqual(res.payload, { ok: true });
    await waitUntil(() => a.frames.some((f) => f.event === 'ui.command'));
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(!b.frames.some((f) => f.event === 'ui.command'), 'never broadcast');
    a.ws.close();
    b.ws.close();
  });
});

describe('every frame the gateway sends matches protocol.ts', () => {
  // Each answer by its method's result schema, each event by its payload schema: the schemas are the
  // types the Control UI and the extension are built against, so a frame that does not match is a bug.
  const results: Record<string, z.ZodType> = Object.fromEntries(
    Object.entries(METHOD_SCHEMAS).map(([name, m]) => [name, m.result]),
  );
  const payloads: Record<string, z.ZodType> = Object.fromEntries(
    Object.entries(EVENT_SCHEMAS).map(([name, e]) => [name, e.payload]),
  );

  /** What is wrong with one frame (empty: nothing); `methodOf` names the method a response answers. */
  function problems(frame: any, methodOf: (id: unknown) => string | undefined): string[] {
    const issues = (what: string, r: { success: boolean; error?: z.ZodError }) =>
      r.success ? [] : [`${what}: ${r.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`];
    if (frame.type === 'event') {
      const schema = payloads[frame.event];
      if (!schema) return [`event ${frame.event}: not in EVENT_SCHEMAS`];
      return [
        ...issues(`event frame ${frame.event}`, eventFrame.safeParse(frame)),
        ...issues(`event ${frame.event} payload`, schema.safeParse(frame.payload)),
      ];
    }
    const method = methodOf(frame.id);
    const framing = issues(`response to ${method}`, responseFrame.safeParse(frame));
    if (!frame.ok) return framing;
    if (method === 'connect') return [...framing, ...issues('connect result', helloOk.safeParse(frame.payload))];
    const schema = method ? results[method] : undefined;
    if (!schema) return [...framing, `response ${JSON.stringify(frame.id)}: no method with a result schema`];
    return [...framing, ...issues(`${method} result`, schema.safeParse(frame.payload))];
  }

  test('a real session (connect, an MCP session, an action, the brake, the audit trail): every frame is valid', async () => {
    const s = await connected(
      ['operator.read', 'operator.write', 'operator.admin', 'operator.approvals'],
      ['ui-commands'],
    );
    // The socket helper numbers requests 1, 2, 3, ... (connect was 1): the method of id n is sent[n - 1].
    const sent = ['connect'];
    const call = async (method: string, params?: unknown) => {
      sent.push(method);
      const res = await s.request(method, params);
      assert.equal(res.ok, true, `${method}: ${JSON.stringify(res)}`);
      return res.payload;
    };
    const agent = await gw.connect();
    try {
      assert.equal((await agent.call('start_session', { session: 'framed' })).isError, false);
      await agent.call('page', { action: 'navigate', url: 'data:text/html,<input aria-label=Name>' });
      await agent.call('press_key', { key: 'Tab' });
      await waitUntil(
        () => ['action', 'audit.entry', 'sessions.changed'].every((e) => s.frames.some((f) => f.event === e)),
        'the action, audit.entry and sessions.changed events',
      );
      const { sessions } = await call('sessions.list');
      const sessionKey = sessions.find((row: any) => row.session === 'framed')?.sessionKey;
      assert.ok(sessionKey, JSON.stringify(sessions));
      await call('actions.list', { sessionKey });
      await call('approvals.list');
      await call('pairings.list');
      await call('browser.tabs', { sessionKey });
      await call('agent.link');
      assert.equal((await call('sessions.pause', { sessionKey })).state, 'paused');
      assert.equal((await call('sessions.resume', { sessionKey })).state, 'running');
      assert.equal((await call('sessions.stop', { sessionKey })).state, 'stopped');
      const page = await call('audit.query', { sessionKey });
      const kinds = new Set(page.entries.map((e: any) => e.kind));
      assert.ok(kinds.has('call') && kinds.has('brake'), `the trail holds the calls and the brake: ${[...kinds]}`);
      await call('audit.sessions');
      await call('audit.export', { sessionKey, format: 'jsonl' });
      await call('sessions.end', { sessionKey });
      await waitUntil(() => s.frames.some((f) => f.event === 'audit.entry' && f.payload.verdict === 'ended'));

      const wrong = s.frames.flatMap((f) => problems(f, (id) => (typeof id === 'number' ? sent[id - 1] : undefined)));
      assert.deepEqual(wrong, [], 'frames that do not match protocol.ts');
      const answered = new Set(s.frames.filter((f) => f.type === 'res' && f.ok).map((f) => sent[f.id - 1]));
      for (const m of ['connect', 'sessions.stop', 'audit.query', 'audit.export']) assert.ok(answered.has(m), m);

      // The check itself can fail: a frame off by one field or one value is caught.
      const byMethod = (m: string) => s.frames.find((f) => f.type === 'res' && sent[f.id - 1] === m);
      const stopped = byMethod('sessions.stop');
      const queried = byMethod('audit.query');
      const action = s.frames.find((f) => f.event === 'action');
      const tampered = [
        problems({ ...stopped, payload: { ...stopped.payload, state: 'braked' } }, () => 'sessions.stop'),
        problems(
          { ...queried, payload: { ...queried.payload, entries: [{ ...queried.payload.entries[0], extra: 1 }] } },
          () => 'audit.query',
        ),
        problems({ ...action, payload: { ...action.payload, evidence: [{ detail: 'no kind' }] } }, () => undefined),
        problems({ ...action, event: 'no.such.event' }, () => undefined),
      ];
      for (const found of tampered) assert.equal(found.length > 0, true, 'a tampered frame is caught');
    } finally {
      await agent.disconnect();
      s.ws.close();
    }
  });
});

async function waitUntil(check: () => boolean, what = 'the condition'): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}
