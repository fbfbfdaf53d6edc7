// The masking rules of contract/secrets.ts, in-process: content masked one • per character, known secrets
// scrubbed from details, the verdict kept, and the arguments of masked calls and batch steps masked. Then the
// registry of contract/secret-echo.ts: a secret typed once is masked wherever it comes back, in each encoding
// (computed here by Node's own encoders, not by the code under test), within its bounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ActionResult } from '../../server/contract/driver.js';
import { mask, maskedArgs, maskedForApproval, maskSecrets } from '../../server/contract/secrets.js';
import {
  ECHO_MAX_CHARS,
  ECHO_MAX_PER_OWNER,
  ECHO_MAX_SECRETS,
  ECHO_MIN_CHARS,
  ECHO_MIN_DIGITS,
  SecretEcho,
  secretsSent,
} from '../../server/contract/secret-echo.js';

const base: ActionResult = {
  effect: 'mismatch',
  route: 'dom',
  delivery: { mode: 'background', delivered_count: 0 },
  evidence: [
    { kind: 'field_value', expected: 'old1new2', observed: 'OLD1NEW2', detail: 'read back after the page settled' },
    { kind: 'event', observed: 'input at input#pw "Password"' },
    { kind: 'field_value', expected: 'x', detail: 'before: "old1"' },
  ],
  timings_ms: { resolve: 0, deliver: 0, verify: 0 },
  observed: 'OLD1NEW2',
  target: 'input#pw "Password"',
};

test('mask: one • per code point, the excerpt marker kept', () => {
  assert.equal(mask('hünter🙂'), '•••••••');
  assert.equal(mask('…abc'), '…•••');
});

test('maskSecrets: content masked whole, secrets scrubbed from details, descriptions kept, verdict unchanged', () => {
  const r = maskSecrets(base, 'a password field', ['new2', 'old1', 'OLD1NEW2', undefined, '']);
  assert.equal(r.effect, 'mismatch');
  assert.equal(r.masked, 'a password field');
  assert.equal(r.evidence[0].expected, '••••••••');
  assert.equal(r.evidence[0].observed, '••••••••');
  assert.equal(r.evidence[1].observed, 'input at input#pw "Password"');
  assert.equal(r.evidence[2].detail, 'before: "••••"');
  assert.equal(r.observed, '••••••••');
  assert.match(r.evidence.at(-1)!.detail!, /a password field.*mismatch: it did not match/);
  const all = JSON.stringify(r);
  for (const s of ['old1', 'new2', 'OLD1', 'NEW2']) assert.ok(!all.includes(s), s);
  assert.equal(base.evidence[0].expected, 'old1new2', 'the input result is not changed');
});

test('maskedArgs: a masked call has text and value masked; a batch masks only its masked steps', () => {
  assert.deepEqual(maskedArgs({ text: 'abc', element_token: 't' }, { masked: 'x' }), {
    text: '•••',
    element_token: 't',
  });
  assert.deepEqual(maskedArgs({ text: 'abc' }, { effect: 'confirmed' }), { text: 'abc' });
  assert.deepEqual(
    maskedArgs({ text: 'a\nb' }, { status: 'refused', refusal: { code: 'text_not_deliverable', masked: 'x' } }),
    { text: '•••' },
    'a refusal on a secret field masks too',
  );
  const batch = {
    steps: [
      { tool: 'set_value', args: { value: 'card' } },
      { tool: 'type_text', args: { text: 'Robin' } },
    ],
  };
  const shown = maskedArgs(batch, {
    steps: [
      { index: 0, result: { masked: 'a field marked autocomplete="cc-number"' } },
      { index: 1, result: { effect: 'confirmed' } },
    ],
  });
  assert.deepEqual(shown.steps, [
    { tool: 'set_value', args: { value: '••••' } },
    { tool: 'type_text', args: { text: 'Robin' } },
  ]);
  assert.equal(batch.steps[0].args.value, 'card', 'the arguments themselves are not changed');
  assert.equal(maskedArgs(batch, null), batch);
});

test('maskedForApproval: text and value bound for a secret field are masked before the call runs, batch steps too', () => {
  const secretOf = (token: string) => (token.startsWith('pw') ? 'a password field' : undefined);
  assert.deepEqual(maskedForApproval({ element_token: 'pw:1', text: 'hunter2' }, secretOf), {
    element_token: 'pw:1',
    text: '•••••••',
  });
  const plain = { element_token: 'name:1', text: 'Ada' };
  assert.equal(maskedForApproval(plain, secretOf), plain, 'an ordinary field is shown whole');
  const typedAtCaret = { text: 'x' };
  assert.equal(maskedForApproval(typedAtCaret, secretOf), typedAtCaret, 'no token: nothing known to mask');
  const batch = {
    steps: [
      { tool: 'set_value', args: { element_token: 'pw:2', value: '4111' } },
      { tool: 'type_text', args: { element_token: 'name:2', text: 'Robin' } },
      { tool: 'press_key', args: null },
    ],
  };
  assert.deepEqual(maskedForApproval(batch, secretOf).steps, [
    { tool: 'set_value', args: { element_token: 'pw:2', value: '••••' } },
    { tool: 'type_text', args: { element_token: 'name:2', text: 'Robin' } },
    { tool: 'press_key', args: null },
  ]);
  assert.equal(batch.steps[0].args!.value, '4111', 'the arguments themselves are not changed');
});

const PW = 'p@ss w0rd+ü!~?';
const learned = (...texts: string[]) => {
  const echo = new SecretEcho();
  echo.learn('conn/login', texts);
  return echo;
};

test('secret echo: every encoding of a learned secret is masked, one • per character, the text around it kept', () => {
  const echo = learned(PW);
  const utf8 = Buffer.from(PW);
  const latin1 = Buffer.from(PW, 'latin1');
  const forms: Record<string, string> = {
    raw: PW,
    encodeURIComponent: encodeURIComponent(PW),
    'form-encoded': new URLSearchParams({ pw: PW }).toString().slice(3),
    'encodeURI (as a URL parser escapes a query)': encodeURI(PW),
    'lower-case hex': encodeURIComponent(PW).toLowerCase(),
    'encoded twice': encodeURIComponent(encodeURIComponent(PW)),
    'Latin-1 percent bytes': escape(PW),
    'JSON-escaped': JSON.stringify(PW).slice(1, -1).replace('ü', '\\u00fc'),
    base64: utf8.toString('base64'),
    base64url: utf8.toString('base64url'),
    'base64, URL-encoded': encodeURIComponent(utf8.toString('base64')),
    'base64url, URL-encoded twice': encodeURIComponent(encodeURIComponent(utf8.toString('base64'))),
    'base64 of Latin-1': latin1.toString('base64'),
    'base64 of Latin-1, URL-encoded': encodeURIComponent(latin1.toString('base64')),
  };
  assert.equal(new Set(Object.values(forms)).size, Object.keys(forms).length, JSON.stringify(forms));
  for (const [name, form] of Object.entries(forms)) {
    const shown = echo.scrubText(`http://h/done?user=alice&pw=${form}&next=1 (${name})`);
    assert.equal(shown, `http://h/done?user=alice&pw=${mask(PW)}&next=1 (${name})`, name);
  }
});

test('secret echo: inside a longer encoded text (Basic auth, a JSON blob in base64url), each byte alignment is found', () => {
  const echo = learned(PW);
  for (const prefix of ['alice:', 'bob:', 'al:']) {
    const basic = Buffer.from(`${prefix}${PW}`).toString('base64');
    const shown = echo.scrubText(`Authorization: Basic ${basic}`);
    assert.ok(shown.includes(mask(PW)), `${prefix}: ${shown}`);
    // What is left of the run is the prefix's own characters: none fixed by the secret's bytes.
    const left = shown.slice('Authorization: Basic '.length).split(mask(PW))[0];
    assert.ok(basic.startsWith(left) && left.length <= Math.ceil((prefix.length * 8) / 6), `${prefix}: ${shown}`);
  }
  const blob = Buffer.from(JSON.stringify({ user: 'alice', pw: PW, n: 1 })).toString('base64url');
  const shown = echo.scrubText(blob);
  assert.ok(shown.includes(mask(PW)), shown);
  assert.ok(!shown.includes(Buffer.from(PW).toString('base64url').slice(2, 12)), shown);
});

test('secret echo: a secret cut short by an excerpt marker is masked before and after the marker', () => {
  const echo = learned(PW);
  const uri = encodeURIComponent(PW);
  assert.equal(
    echo.scrubText(`http://h/done?pw=${uri.slice(0, 9)}… (300 chars)`),
    `http://h/done?pw=${mask(PW)}… (300 chars)`,
  );
  assert.equal(echo.scrubText(`…${PW.slice(6)} after`), `…${mask(PW)} after`);
  // Shorter than ECHO_MIN_CHARS characters of it before the marker: too little to tell from ordinary text.
  assert.equal(echo.scrubText(`pw=${PW.slice(0, ECHO_MIN_CHARS - 1)}…`), `pw=${PW.slice(0, ECHO_MIN_CHARS - 1)}…`);
  // Without a marker a prefix is ordinary text.
  assert.equal(echo.scrubText(`${PW.slice(0, 8)} and more`), `${PW.slice(0, 8)} and more`);
});

test('secret echo: HTML-escaped, and a secret of regular-expression characters, quotes and astral characters', () => {
  const odd = 'a.b*c(d)[e]{f}|g\\h"i<&>\'🙂';
  const echo = learned(odd);
  const html = odd.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  for (const form of [
    odd,
    html.replace(/'/g, '&#39;'),
    JSON.stringify(odd).slice(1, -1),
    encodeURIComponent(odd),
    Buffer.from(odd).toString('base64'),
  ])
    assert.equal(echo.scrubText(`[${form}]`), `[${mask(odd)}]`, form);
  // Metacharacters stand for themselves only.
  assert.equal(echo.scrubText('aXb*c(d)[e]{f}|g\\h"i<&>\'🙂'), 'aXb*c(d)[e]{f}|g\\h"i<&>\'🙂');
});

test('secret echo: too short, or digits shorter than a one-time code, is not masked everywhere; a code is', () => {
  const echo = learned('abc', '1234', '12345', '', 'ab🙂');
  assert.equal(echo.size, 0, 'nothing learned');
  assert.equal(echo.scrubText('abc 1234 12345 2024'), 'abc 1234 12345 2024');
  echo.learn('conn/login', ['424242', 'abcd']);
  assert.equal(echo.size, 2);
  assert.equal(echo.scrubText('code 424242, word abcd'), `code ${'•'.repeat(ECHO_MIN_DIGITS)}, word ${'•'.repeat(4)}`);
  // A long text is remembered by its first ECHO_MAX_CHARS characters.
  const long = 'x'.repeat(ECHO_MAX_CHARS) + 'TAIL';
  const cut = new SecretEcho();
  cut.learn('s', [long]);
  assert.equal(cut.scrubText(long), `${mask('x'.repeat(ECHO_MAX_CHARS))}TAIL`);
});

test('secret echo: deep, strings only; identifiers, pixel keys and keys kept; the input never changed', () => {
  const echo = learned(PW);
  const reply = {
    tab_id: `T${PW}`,
    current_tab_id: PW,
    sessionKey: `c/${PW}`,
    element_token: PW,
    count: 3,
    tabs: [{ url: `http://h/?pw=${encodeURIComponent(PW)}`, title: PW, ok: true }],
    labels: { [PW]: `textbox ${PW}` },
    thumbnail: PW,
  };
  const frozen = JSON.stringify(reply);
  const shown = echo.scrub(reply, new Set(['thumbnail']));
  assert.equal(JSON.stringify(reply), frozen, 'the input is not changed');
  assert.deepEqual(shown, {
    ...reply,
    tabs: [{ url: `http://h/?pw=${mask(PW)}`, title: mask(PW), ok: true }],
    labels: { [PW]: `textbox ${mask(PW)}` },
  });
  const clean = { a: ['b', { c: 'd' }], n: 1 };
  assert.equal(echo.scrub(clean), clean, 'nothing to mask: the same value, no copy');
  assert.equal(new SecretEcho().scrub(reply), reply, 'an empty registry costs nothing');
  const r = echo.scrubReply({ structured: { url: PW }, text: `url ${PW}`, images: [{ data: PW, mimeType: 'x' }] });
  assert.deepEqual(r, {
    structured: { url: mask(PW) },
    text: `url ${mask(PW)}`,
    images: [{ data: PW, mimeType: 'x' }],
  });
});

test('secret echo: bounded per session and in all, the oldest forgotten first; forget and retainOnly', () => {
  const echo = new SecretEcho();
  const texts = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-secret-${i}`);
  echo.learn('a', texts('a', ECHO_MAX_PER_OWNER + 3));
  assert.equal(echo.size, ECHO_MAX_PER_OWNER);
  assert.equal(echo.scrubText('a-secret-0'), 'a-secret-0', "a's oldest went first");
  assert.equal(echo.scrubText(`a-secret-${ECHO_MAX_PER_OWNER + 2}`), mask(`a-secret-${ECHO_MAX_PER_OWNER + 2}`));
  for (let owner = 0; owner * ECHO_MAX_PER_OWNER < ECHO_MAX_SECRETS; owner++)
    echo.learn(`o${owner}`, texts(`o${owner}`, ECHO_MAX_PER_OWNER));
  assert.equal(echo.size, ECHO_MAX_SECRETS);
  assert.equal(echo.scrubText('a-secret-18'), 'a-secret-18', 'the oldest in all went first');
  // The same text typed by two sessions is one entry, masked while either lives.
  const shared = new SecretEcho();
  shared.learn('a', ['shared-secret']);
  shared.learn('b', ['shared-secret', 'b-only-secret']);
  assert.equal(shared.size, 2);
  shared.forget('a');
  assert.equal(shared.scrubText('shared-secret'), mask('shared-secret'), "b's still");
  shared.retainOnly((owner) => owner !== 'b');
  assert.equal(shared.size, 0);
  assert.equal(shared.scrubText('shared-secret b-only-secret'), 'shared-secret b-only-secret');
});

test('secretsSent: the texts a call sent to secret fields, by its result or by its snapshot, batch steps too', () => {
  const args = { element_token: 'pw:1', text: PW, session: 'login' };
  assert.deepEqual(secretsSent(args, maskedArgs(args, { masked: 'a password field' })), [PW]);
  assert.deepEqual(secretsSent(args, maskedArgs(args, { effect: 'confirmed' })), []);
  const batch = {
    steps: [
      { tool: 'type_text', args: { element_token: 'name:1', text: 'alice' } },
      { tool: 'set_value', args: { element_token: 'pw:2', value: 'card#5555-1234' } },
    ],
  };
  const secretOf = (token: string) => (token.startsWith('pw') ? 'a password field' : undefined);
  assert.deepEqual(secretsSent(batch, maskedForApproval(batch, secretOf)), ['card#5555-1234']);
  assert.deepEqual(secretsSent(batch, maskedArgs(batch, { steps: [{ index: 1, result: { masked: 'x' } }] })), [
    'card#5555-1234',
  ]);
});
