// type_text and set_value on every <input> type, blank and pre-filled, by token and by focus. Text-like
// types (email, number, tel, url, search, password) take the text at the end of their value; one-value
// types (date, time, color, range) have no caret and take the text as their whole value. What a field
// would reject is refused naming why, and nothing changes. Each case checks the page's own values.
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

const FILLED: Record<string, string> = {
  email: 'ada@example.com',
  number: '42',
  tel: '+1 555',
  url: 'https://example.com',
  search: 'cats',
  password: 'hunter2',
  date: '2024-01-31',
  time: '09:30',
  color: '#00ff00',
  range: '20',
};
// What to type, and what the field then holds: appended for text-like types, replaced for one-value types.
const CASES: Record<string, { text: string; blank: string; filled: string }> = {
  email: { text: 'grace@example.org', blank: 'grace@example.org', filled: 'ada@example.comgrace@example.org' },
  number: { text: '17', blank: '17', filled: '4217' },
  tel: { text: ' 0199', blank: ' 0199', filled: '+1 555 0199' },
  url: { text: '/docs?q=1', blank: '/docs?q=1', filled: 'https://example.com/docs?q=1' },
  search: { text: ' and dogs', blank: ' and dogs', filled: 'cats and dogs' },
  password: { text: 's3cr3t!', blank: 's3cr3t!', filled: 'hunter2s3cr3t!' },
  date: { text: '2025-12-24', blank: '2025-12-24', filled: '2025-12-24' },
  time: { text: '14:05', blank: '14:05', filled: '14:05' },
  color: { text: '#123abc', blank: '#123abc', filled: '#123abc' },
  range: { text: '75', blank: '75', filled: '75' },
};

async function values(page: any): Promise<Record<string, string>> {
  return (await s.model(page)).values;
}

for (const how of ['token', 'focus'] as const) {
  describe(`type_text into every input type, by ${how}`, () => {
    for (const [type, c] of Object.entries(CASES)) {
      for (const state of ['blank', 'filled'] as const) {
        test(`${type} ${state}`, async () => {
          const page = await s.open('inputs.html');
          const id = `${type}-${state}`;
          const start = await values(page);
          let args: Record<string, unknown> = { text: c.text };
          if (how === 'token') {
            const snap = await s.snapshot(s.v, { format: 'full' });
            args = { ...args, element_token: snap.token(`${type} ${state}`) };
          } else {
            // As a user would: focus the field, caret to the end of what it holds.
            await page.focus(`#${id}`);
            if (!['date', 'time', 'color', 'range'].includes(type)) await page.keyboard.press('End');
          }
          const r = await s.v.call('type_text', args);
          assert.equal(r.structured.effect, 'confirmed', r.text);
          const now = await values(page);
          assert.equal(now[id], c[state], `the page's value of #${id}`);
          // Nothing else on the page changed.
          for (const other of Object.keys(start))
            if (other !== id) assert.equal(now[other], start[other], `#${other} untouched`);
          if (state === 'filled') assert.equal(start[id], FILLED[type]);
        });
      }
    }
  });
}

describe('a focused field takes the text at its caret', () => {
  test('email (no selection API) with the caret at the start: inserted there, confirmed', async () => {
    const page = await s.open('inputs.html');
    await page.focus('#email-filled');
    await page.keyboard.press('Home');
    const r = await s.v.call('type_text', { text: 'x' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal((await values(page))['email-filled'], 'xada@example.com');
  });
});

describe('what a field rejects is refused for that reason, and nothing changes', () => {
  test('letters into a number field: refused naming the dropped characters', async () => {
    const page = await s.open('inputs.html');
    const snap = await s.snapshot(s.v, { format: 'full' });
    for (const state of ['blank', 'filled']) {
      const r = await s.v.call('type_text', { element_token: snap.token(`number ${state}`), text: '12abc' });
      assert.equal(r.isError, true);
      assert.equal(r.structured.refusal.code, 'text_not_deliverable', r.text);
      assert.match(r.text, /number field/);
      assert.match(r.text, /abc/);
    }
    const now = await values(page);
    assert.equal(now['number-blank'], '');
    assert.equal(now['number-filled'], '42');
  });

  test('a date in another form, a range value off its step: refused naming the form and what would be stored', async () => {
    const page = await s.open('inputs.html');
    const snap = await s.snapshot(s.v, { format: 'full' });
    const d = await s.v.call('type_text', { element_token: snap.token('date filled'), text: '31/12/2024' });
    assert.equal(d.structured.refusal?.code, 'text_not_deliverable', d.text);
    assert.match(d.text, /yyyy-mm-dd/);
    const r = await s.v.call('type_text', { element_token: snap.token('range blank'), text: '57' });
    assert.equal(r.structured.refusal?.code, 'text_not_deliverable', r.text);
    assert.match(r.text, /would store "55"/);
    const now = await values(page);
    assert.equal(now['date-filled'], '2024-01-31');
    assert.equal(now['range-blank'], '50');
    assert.deepEqual((await s.model(page)).changes, {}, 'no change event fired');
  });
});

describe('set_value on every input type', () => {
  for (const [type, c] of Object.entries(CASES)) {
    test(`${type}: set by token, blank and pre-filled, read back`, async () => {
      const page = await s.open('inputs.html');
      const snap = await s.snapshot(s.v, { format: 'full' });
      for (const state of ['blank', 'filled']) {
        const want = c.blank.trim() || c.text;
        const r = await s.v.call('set_value', { element_token: snap.token(`${type} ${state}`), value: want });
        assert.equal(r.structured.effect, 'confirmed', `${state}: ${r.text}`);
        assert.equal((await values(page))[`${type}-${state}`], want);
      }
    });
  }
});
