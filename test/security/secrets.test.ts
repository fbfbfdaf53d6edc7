// Issue #22 item 8, replayed against a real `verity start` and its own Chromium: text typed or set into a
// password field, a one-time-code field or a card field (blank and pre-filled) never shows in plaintext:
// not in the MCP result, not in the activity events a Control UI connection hears, not in the audit JSONL
// in the config dir, not in a recording folder. The verdicts are still reached on the full text: a field
// that rewrites what it is given is still a mismatch, and a value cut short is not confirmed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import {
  operatorSocket,
  startGateway,
  waitFor,
  type Connection,
  type Gateway,
  type OperatorSocket,
} from '../helpers/gateway.js';
import type { ToolResult } from '../helpers/mcp.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-sec-secrets-'));
/** Every secret the test hands over or the page holds; none may be written anywhere in plaintext. */
const SECRETS = [
  'hunter2#pw',
  'HUNTER2#PW',
  'old#Pass77',
  'otp#000111',
  'otp#424242',
  'card#4929-0000',
  'card#5555-1234',
  'csc#93',
  'csc#93xyz',
  'nl#secret',
];
let fx: FixtureServer;
let gw: Gateway;
let agent: Connection;
let op: OperatorSocket;

before(async () => {
  fx = await serveFixtures();
  gw = await startGateway([], { VERITY_CONFIG_DIR: dir });
  agent = await gw.connect();
  op = await operatorSocket(gw, ['operator.read']);
  const started = await agent.call('start_session', { session: 'pay', recording_dir: 'pay-run' });
  assert.equal(started.isError, false, started.text);
  const opened = await agent.call('page', { action: 'navigate', url: fx.url('secrets.html'), session: 'pay' });
  assert.equal(opened.isError, false, opened.text);
});
after(async () => {
  op?.ws.close();
  await agent?.disconnect();
  await gw?.close();
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function tokens(): Promise<(label: string) => string> {
  const snap = await agent.call('get_window_state', { format: 'full', include_screenshot: false, session: 'pay' });
  assert.equal(snap.isError, false, snap.text);
  noPlaintext(JSON.stringify(snap.structured) + snap.text, 'get_window_state');
  return (label) => {
    const el = snap.structured.elements.find((e: any) => e.label === label);
    assert.ok(el, `no element "${label}" in ${snap.text}`);
    return el.element_token;
  };
}

function noPlaintext(haystack: string, where: string): void {
  for (const secret of SECRETS)
    assert.ok(!haystack.includes(secret), `${where} holds "${secret}":\n${haystack.slice(0, 3000)}`);
}

function masked(r: ToolResult, where: string): void {
  noPlaintext(JSON.stringify(r.structured) + r.text, where);
  assert.match(r.structured.masked ?? '', /password|one-time-code|cc-number|cc-csc/, `${where}: ${r.text}`);
  assert.ok(
    r.structured.evidence.some((e: any) => e.kind === 'masked'),
    `${where}: the evidence says it is masked: ${r.text}`,
  );
}

/** Every file under a folder, as text (binary files too: a secret in a PNG or a zip would show as its bytes). */
function filesUnder(root: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push({ path, text: readFileSync(path, 'latin1') + readFileSync(path, 'utf8') });
  }
  return out;
}

describe('secrets stay secret', () => {
  test('type_text into a blank password field: confirmed, its text shown as one • per character', async () => {
    const token = await tokens();
    const r = await agent.call('type_text', { element_token: token('Password'), text: 'hunter2#pw', session: 'pay' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    masked(r, 'type_text Password');
    const field = r.structured.evidence.find((e: any) => e.kind === 'field_value');
    assert.equal(field.observed, '•'.repeat('hunter2#pw'.length), r.text);
  });

  test('a password field that rewrites its text: still a mismatch, and neither text shows', async () => {
    const token = await tokens();
    const r = await agent.call('type_text', {
      element_token: token('Shouting password'),
      text: 'hunter2#pw',
      session: 'pay',
    });
    assert.equal(r.structured.effect, 'mismatch', r.text);
    assert.equal(r.isError, true);
    masked(r, 'type_text Shouting password');
    assert.match(r.text, /did not match/);
  });

  test('type_text after the text of a pre-filled password: confirmed, the old text masked too', async () => {
    const token = await tokens();
    const r = await agent.call('type_text', {
      element_token: token('Old password'),
      text: 'hunter2#pw',
      session: 'pay',
    });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    masked(r, 'type_text Old password');
  });

  test('set_value on a pre-filled one-time-code field: confirmed and masked; a cut-short value is not confirmed', async () => {
    const token = await tokens();
    const r = await agent.call('set_value', {
      element_token: token('One-time code'),
      value: 'otp#424242',
      session: 'pay',
    });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    masked(r, 'set_value One-time code');
    // maxlength 6 keeps "csc#93" of "csc#93xyz": the full comparison says so.
    const cut = await agent.call('set_value', {
      element_token: token('Security code'),
      value: 'csc#93xyz',
      session: 'pay',
    });
    assert.equal(cut.structured.effect, 'mismatch', cut.text);
    masked(cut, 'set_value Security code');
  });

  test('run_actions steps into card fields are masked in each step and in the batch', async () => {
    const token = await tokens();
    const r = await agent.call('run_actions', {
      session: 'pay',
      steps: [
        { tool: 'set_value', args: { element_token: token('Card number'), value: 'card#5555-1234' } },
        { tool: 'type_text', args: { element_token: token('Nickname'), text: 'Robin' } },
      ],
    });
    assert.equal(r.isError, false, r.text);
    noPlaintext(JSON.stringify(r.structured) + r.text, 'run_actions');
    assert.equal(r.structured.steps[0].result.effect, 'confirmed', r.text);
    assert.ok(r.structured.steps[0].result.masked, r.text);
    // A field that is no secret keeps its text: masking is for secrets only.
    assert.equal(r.structured.steps[1].result.masked, undefined, r.text);
    assert.match(JSON.stringify(r.structured.steps[1].result), /Robin/);
  });

  test('a refused type_text into a password field says masked, so its text is kept masked too', async () => {
    const token = await tokens();
    const r = await agent.call('type_text', {
      element_token: token('Password'),
      text: 'nl#secret\nmore',
      session: 'pay',
    });
    assert.equal(r.structured.refusal?.code, 'text_not_deliverable', r.text);
    assert.match(r.structured.refusal.masked ?? '', /password/, r.text);
  });

  test('nothing in plaintext in the activity events, the audit trail or the recording', async () => {
    // The activity events of every action above reached the operator's connection (the batch's last step last).
    await waitFor(
      () => op.events.some((e) => e.event === 'action' && JSON.stringify(e.payload).includes('Robin')),
      "the activity event of the batch's last step",
      100,
      300,
    );
    assert.ok(
      op.events.filter((e) => e.event === 'action' && /type_text|set_value/.test(e.payload?.tool ?? '')).length >= 7,
      'every typing call was heard',
    );
    const heard = JSON.stringify(op.events);
    noPlaintext(heard, 'the activity events');
    // The audit trail is written after each reply: wait until the batch's entry is there.
    const written = () => filesUnder(dir).filter((f) => f.text.includes('run_actions'));
    await waitFor(() => written().length > 0, 'the audit entry of run_actions', 100, 300);
    const files = filesUnder(dir);
    assert.ok(
      files.some((f) => /pay-run/.test(f.path) && f.text.includes('type_text')),
      `a recording was written: ${files.map((f) => f.path).join(', ')}`,
    );
    for (const f of files) noPlaintext(f.text, f.path);
    assert.ok(
      files.some((f) => f.text.includes('Robin')),
      'the trail keeps what is not secret (so the search above could find a secret)',
    );
  });
});
