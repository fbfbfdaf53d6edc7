// Issue #12, "one secret grants everything", replayed as attacks against a real `verity start`: the agent
// credential (what an MCP client holds) tries the gateway, the operator's scopes, approvals of its own held
// call, the tab relay; the operator credential is kept off /mcp, off the command line and out of the
// terminal's shells and gateway.json. Each attack is refused, nothing leaks, and the server stays up.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/fixtures.js';
import { alive, operatorSocket, startGateway, waitFor, type Gateway } from '../helpers/gateway.js';
import { ALL_SCOPES, connectAs, INITIALIZE, MCP_HEADERS, raw, stillServing } from './wire.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-sec-creds-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('generated credentials (nothing on the command line)', () => {
  let gw: Gateway;
  const config = join(dir, 'generated');
  before(async () => {
    gw = await startGateway([], { VERITY_CONFIG_DIR: config, VERITY_TOKEN: undefined, VERITY_AGENT_TOKEN: undefined });
  });
  after(async () => {
    await gw?.close();
  });

  test("two distinct credentials, mode 0600, printed as the contract says; gateway.json holds the agent's only", async () => {
    const operator = readFileSync(join(config, 'token'), 'utf8').trim();
    const agent = readFileSync(join(config, 'agent-token'), 'utf8').trim();
    assert.equal(statSync(join(config, 'token')).mode & 0o777, 0o600);
    assert.equal(statSync(join(config, 'agent-token')).mode & 0o777, 0o600);
    assert.notEqual(operator, agent);
    assert.equal(gw.token, operator, 'the Control UI URL carries the operator credential');
    assert.equal(gw.agentToken, agent, 'the /mcp line carries the agent credential');
    assert.match(gw.stdout(), new RegExp(`/mcp .*Bearer ${agent}`));
    const joined = readFileSync(join(config, 'gateway.json'), 'utf8');
    assert.equal(JSON.parse(joined).token, agent);
    assert.ok(!joined.includes(operator), 'gateway.json never holds the operator credential');
  });

  test("neither credential is in the process's command line (what `ps` shows every user)", async () => {
    const cmdline = readFileSync(`/proc/${gw.pid}/cmdline`, 'utf8');
    assert.ok(!cmdline.includes(gw.token) && !cmdline.includes(gw.agentToken), cmdline);
  });
});

describe('the command line', () => {
  test('--token is refused, pointing to the environment and --token-file; nothing starts', async () => {
    const proc = spawn(
      process.execPath,
      [join(ROOT, 'bin', 'verity.js'), 'start', '--port', '0', '--token', 'a-secret-in-ps', '--headless'],
      { env: { ...process.env, VERITY_CONFIG_DIR: join(dir, 'refused') }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '',
      err = '';
    proc.stdout!.on('data', (c) => {
      out += c;
    });
    proc.stderr!.on('data', (c) => {
      err += c;
    });
    const code = await new Promise<number | null>((r) => proc.once('exit', r));
    assert.equal(code, 2);
    assert.match(err, /--token is not accepted/);
    assert.match(err, /VERITY_TOKEN/);
    assert.match(err, /--token-file/);
    assert.equal(out, '', 'no URL, no credential printed');
  });

  test('--token-file and --agent-token-file are read; equal credentials are refused', async () => {
    const opFile = join(dir, 'op'),
      agFile = join(dir, 'ag');
    writeFileSync(opFile, 'operator-from-a-file\n', { mode: 0o600 });
    writeFileSync(agFile, 'agent-from-a-file\n', { mode: 0o600 });
    const gw = await startGateway(['--token-file', opFile, '--agent-token-file', agFile], {
      VERITY_CONFIG_DIR: join(dir, 'files'),
      VERITY_TOKEN: undefined,
      VERITY_AGENT_TOKEN: undefined,
    });
    try {
      assert.equal(gw.token, 'operator-from-a-file');
      assert.equal(gw.agentToken, 'agent-from-a-file');
      await stillServing(gw);
    } finally {
      await gw.close();
    }
    await assert.rejects(
      startGateway([], {
        VERITY_CONFIG_DIR: join(dir, 'same'),
        VERITY_TOKEN: 'one-and-the-same',
        VERITY_AGENT_TOKEN: 'one-and-the-same',
      }),
      /must differ/,
    );
  });
});

describe('the agent credential against the gateway', () => {
  let gw: Gateway;
  const config = join(dir, 'agent');
  before(async () => {
    writeFileSync(join(dir, 'policy.json'), JSON.stringify({ require_approval: ['press_key'] }));
    gw = await startGateway(['--policy', join(dir, 'policy.json')], { VERITY_CONFIG_DIR: config, SHELL: '/bin/sh' });
  });
  after(async () => {
    await gw?.close();
  });

  test('connect with the agent credential asking for every scope is refused: no hello, no events, socket closed', async () => {
    const s = await connectAs(gw, gw.agentToken, ALL_SCOPES, ['ui-commands']);
    assert.equal(s.reply.ok, false);
    assert.equal(s.reply.error.code, 'FORBIDDEN');
    assert.match(s.reply.error.message, /agent credential.*\/mcp/);
    const { code } = await s.closed;
    assert.equal(code, 4003);
    assert.deepEqual(
      s.frames.filter((f) => f.type !== 'res'),
      [],
      'no event reached it',
    );
    assert.ok(!JSON.stringify(s.frames).includes(gw.token), 'the operator credential is never sent');
    await stillServing(gw);
  });

  test("the attack chain's last step: the agent credential used as the Control UI's gets no terminal", async () => {
    // Even with the credential in the URL, the gateway refuses it: the UI never reaches terminal.open.
    const s = await connectAs(gw, gw.agentToken, ['operator.admin']);
    assert.equal(s.reply.ok, false);
    const again = await s.request('terminal.open', { cols: 80, rows: 24 });
    assert.ok(again === null || again.ok === false, JSON.stringify(again));
    await s.closed;
  });

  test('the operator credential gets the intersection of what it asks and what it holds', async () => {
    const reader = await connectAs(gw, gw.token, ['operator.read']);
    assert.deepEqual(reader.reply.payload.scopes, ['operator.read']);
    assert.ok(!reader.reply.payload.methods.includes('terminal.open'));
    reader.ws.close();
    const all = await connectAs(gw, gw.token, ALL_SCOPES);
    assert.deepEqual(all.reply.payload.scopes, ALL_SCOPES);
    all.ws.close();
  });

  test("the tab-relay cap is refused with the operator or agent credential (only a pairing's relay secret holds it)", async () => {
    for (const token of [gw.token, gw.agentToken]) {
      const s = await connectAs(gw, token, ['operator.read', 'operator.write'], ['tab-relay']);
      assert.equal(s.reply.ok, false, JSON.stringify(s.reply));
      assert.equal(s.reply.error.code, 'FORBIDDEN');
      await s.closed;
    }
    await stillServing(gw);
  });

  test('the operator credential is refused at /mcp, saying which credential MCP takes', async () => {
    const r = await raw(gw, '/mcp', {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${gw.token}` },
      body: INITIALIZE,
    });
    assert.equal(r.status, 401);
    assert.match(JSON.parse(r.body).error, /operator credential.*agent credential/);
    const ok = await raw(gw, '/mcp', {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${gw.agentToken}` },
      body: INITIALIZE,
    });
    assert.equal(ok.status, 200);
  });

  test("an agent cannot approve its own held call; the operator's approval still works", async () => {
    const approver = await operatorSocket(gw, ['operator.approvals']);
    const agent = await gw.connect();
    try {
      await agent.call('page', { action: 'navigate', url: 'data:text/html,<input autofocus>' });
      const held = agent.call('press_key', { key: 'Tab' });
      const requested = await waitFor(
        () => approver.events.find((e) => e.event === 'approval.requested'),
        'the approval request',
      );
      // The agent's own attempt: its credential opens no gateway connection, so approvals.resolve never runs.
      const s = await connectAs(gw, gw.agentToken, ['operator.approvals']);
      assert.equal(s.reply.ok, false);
      const tried = await s.request('approvals.resolve', { id: requested.payload.id, approve: true });
      assert.ok(tried === null || tried.ok === false, JSON.stringify(tried));
      await s.closed;
      // Still pending: the operator decides.
      assert.equal((await approver.request('approvals.list')).payload.approvals.length, 1);
      assert.equal(
        (await approver.request('approvals.resolve', { id: requested.payload.id, approve: false })).ok,
        true,
      );
      const r = await held;
      assert.equal(r.structured.refusal.code, 'not_permitted');
      assert.match(r.structured.refusal.message, /denied/);
    } finally {
      await agent.disconnect();
      approver.ws.close();
    }
  });

  test('the launched Chromium (what an agent drives) has neither credential in its environment or command line', async () => {
    // Given to `verity start` in its environment (as the helper does), the operator's credential is dropped
    // once read: a page that escaped into the browser process, or `ps`/`/proc`, finds neither secret there.
    const agent = await gw.connect();
    try {
      const r = await agent.call('page', { action: 'navigate', url: 'data:text/html,<p>env</p>' });
      assert.equal(r.isError, false, r.text);
    } finally {
      await agent.disconnect();
    }
    const descendants = (root: number): number[] => {
      const children = new Map<number, number[]>();
      for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        try {
          const ppid = Number(/^\d+ \(.*\) \S (\d+)/.exec(readFileSync(`/proc/${entry}/stat`, 'utf8'))?.[1]);
          children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
        } catch {
          /* ended meanwhile */
        }
      }
      const all: number[] = [];
      for (let queue = [root]; queue.length > 0; ) {
        const next = children.get(queue.shift()!) ?? [];
        all.push(...next);
        queue.push(...next);
      }
      return all;
    };
    const browsers = descendants(gw.pid).filter((pid) => {
      try {
        return /chrom/i.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
      } catch {
        return false;
      }
    });
    assert.ok(browsers.length > 0, 'the gateway launched Chromium');
    for (const pid of browsers) {
      let environ = '',
        cmdline = '';
      try {
        environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        continue; // a helper process that ended meanwhile
      }
      for (const secret of [gw.token, gw.agentToken]) {
        assert.ok(!environ.includes(secret), `Chromium ${pid}'s environment holds a credential`);
        assert.ok(!cmdline.includes(secret), `Chromium ${pid}'s command line holds a credential`);
      }
    }
    assert.ok(alive(gw.pid));
  });

  test("the terminal's shell carries the agent credential in VERITY_TOKEN, never the operator's", async () => {
    const ui = await operatorSocket(gw, ALL_SCOPES, ['ui-commands']);
    try {
      const opened = await ui.request('terminal.open', { cols: 120, rows: 30 });
      assert.equal(opened.ok, true, JSON.stringify(opened));
      const id = opened.payload.terminalId;
      // The markers are split in the typed line, so only the shell's output (not its echo) matches them.
      await ui.request('terminal.input', { terminalId: id, data: 'echo "T=[$VERITY_TOKEN]"; echo "done""-env"\n' });
      const output = () =>
        ui.events
          .filter((e) => e.event === 'terminal.data' && e.payload.terminalId === id)
          .map((e) => e.payload.data)
          .join('');
      await waitFor(() => /done-env/.test(output()), "the shell's answer");
      const shown = /T=\[([^\]\s]*)\]/.exec(output().slice(output().indexOf('T=[$VERITY_TOKEN]') + 5));
      assert.equal(shown?.[1], gw.agentToken, output());
      await ui.request('terminal.input', { terminalId: id, data: 'env; echo "end-of""-env"\n' });
      await waitFor(() => /end-of-env/.test(output()), 'the whole environment');
      assert.ok(!output().includes(gw.token), "the operator credential is nowhere in the shell's environment");
      await ui.request('terminal.close', { terminalId: id });
    } finally {
      ui.ws.close();
    }
    assert.ok(alive(gw.pid));
  });
});
