// Inline-edit widgets: a role=textbox element that becomes an <input> when clicked (task boards). type_text
// by token clicks it as a user would and types into the field it becomes; the page's draft is the truth.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, type Suite } from '../helpers/suite.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

describe('inline edit', () => {
  for (const [key, start] of [
    ['filled', 'Card title'],
    ['blank', ''],
  ] as const) {
    test(`${key}: typed into the field it becomes, confirmed, and committed by Enter`, async () => {
      const page = await s.open('inline-edit.html');
      const snap = await s.snapshot(s.v, { format: 'full' });
      const r = await s.v.call('type_text', { element_token: snap.token(`${key} title`), text: ' v2' });
      assert.equal(r.structured.effect, 'confirmed', r.text);
      assert.deepEqual((await s.model(page)).draft, { [key]: start + ' v2' });
      const enter = await s.v.call('press_key', { key: 'Enter' });
      assert.equal(enter.isError, false, enter.text);
      assert.equal((await s.model(page)).titles[key], start + ' v2');
    });
  }
});
