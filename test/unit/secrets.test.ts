// The masking rules of contract/secrets.ts, in-process: content masked one • per character, known secrets
// scrubbed from details, the verdict kept, and the arguments of masked calls and batch steps masked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ActionResult } from '../../server/contract/driver.js';
import { mask, maskedArgs, maskedForApproval, maskSecrets } from '../../server/contract/secrets.js';

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
