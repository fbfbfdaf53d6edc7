// verify_state's pure half (contract/verify.ts): predicates checked (bad ones refused naming the field),
// each family evaluated against a read, and consecutive reads counted into satisfied / unsatisfied / unknown.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  evaluate,
  parsePredicates,
  Stability,
  type Observation,
  type Predicate,
} from '../../server/contract/verify.js';
import { Refusal } from '../../server/contract/refusal.js';

const refusedAt = (value: unknown, field: string) =>
  assert.throws(
    () => parsePredicates(value),
    (e: unknown) => e instanceof Refusal && e.code === 'invalid_arguments' && (e.details as any).field === field,
    field,
  );

describe('parsePredicates', () => {
  test('the three families pass', () => {
    const ps = parsePredicates([
      { element: { role: 'button', name: 'Save' }, enabled: true },
      { text_present: 'Order placed' },
      { request: { url_contains: '/api', status_min: 200, status_max: 299 }, since: 3 },
      { no_console_errors_since: 0 },
      { window: { title_contains: 'Editor' }, frame: { x: 0, y: 0, width: 10, height: 10, tolerance: 2 } },
    ]);
    assert.equal(ps.length, 5);
  });
  test('bad ones are refused naming the field', () => {
    refusedAt([], 'expect');
    refusedAt(new Array(9).fill({ text_present: 'a' }), 'expect');
    refusedAt([{ text_present: 'a' }, { element: { role: 'button' } }], 'expect.1');
    refusedAt([{ element: { role: 'button' }, exists: true, enabled: true }], 'expect.0');
    refusedAt([{ element: { rol: 'button' }, exists: true }], 'expect.0.element.rol');
    refusedAt([{ element: {}, exists: true }], 'expect.0.element');
    refusedAt([{ element: { role: 'button' }, count: -1 }], 'expect.0.count');
    refusedAt([{ url_matches: '(' }], 'expect.0.url_matches');
    refusedAt([{ no_console_errors_since: 'x' }], 'expect.0.no_console_errors_since');
    refusedAt([{ request: { url_contains: '/a', status_min: 'x' } }], 'expect.0.request.status_min');
    refusedAt([{ text_present: 'a', since: 2 }], 'expect.0.since');
    refusedAt([{ window: { title: 'a' }, frame: { x: 0, y: 0, width: 1 } }], 'expect.0.frame.height');
    refusedAt([{ bogus: 1 }], 'expect.0.bogus');
  });
});

const page: Observation = {
  elements: [
    { role: 'button', label: 'Save', enabled: true, focused: false, visible: true, tokens: ['s00000001:0'] },
    { role: 'button', label: 'Save draft', enabled: false, focused: false, visible: true },
    { role: 'checkbox', label: 'Agree', value: 'true', enabled: true, focused: true, visible: true },
    { role: 'textbox', label: 'Email', value: 'a@b.c', enabled: true, focused: false, visible: true },
  ],
  text: 'Welcome Order placed thank you',
  url: 'https://shop.test/done?id=7',
  title: 'Shop: done',
  activity: {
    recording: true,
    firstKept: 1,
    errors: [{ seq: 5, text: 'TypeError: x is undefined' }],
    requests: [
      { seq: 3, url: 'https://shop.test/api/order', status: 500, done: true },
      { seq: 7, url: 'https://shop.test/api/order', status: 201, done: true },
    ],
  },
};
const one = (p: Predicate, o: Observation = page) => evaluate([p], o)[0];

describe('evaluate', () => {
  test('element predicates', () => {
    assert.equal(one({ element: { name: 'Save' }, exists: true }).holds, true);
    assert.equal(one({ element: { name: 'Gone' }, absent: true }).holds, true);
    assert.equal(one({ element: { role: 'button' }, count: 2 }).holds, true);
    assert.equal(one({ element: { name: 'Email' }, value_equals: 'a@b.c' }).holds, true);
    assert.equal(one({ element: { name: 'Email' }, value_contains: '@' }).holds, true);
    assert.equal(one({ element: { name: 'Agree' }, checked: true }).holds, true);
    assert.equal(one({ element: { name: 'Agree' }, focused: true }).holds, true);
    assert.equal(one({ element: { name: 'Save draft' }, enabled: true }).holds, false);
    assert.equal(one({ element: { element_token: 's00000001:0' }, visible: true }).holds, true);
    assert.equal(one({ element: { name: 'Nowhere' }, visible: false }).holds, true);
    // A button has no checked state: never "checked: false" held by default.
    assert.equal(one({ element: { name: 'Save' }, checked: false }).holds, false);
    // The route says nothing of selection: unknown, not a guess.
    assert.equal(one({ element: { name: 'Save' }, selected: true }).reason, 'unsupported_predicate');
  });
  test('an ambiguous selector is unknown and lists the candidates', () => {
    const r = one({ element: { name_contains: 'save' }, enabled: true });
    assert.equal(r.holds, null);
    assert.equal(r.reason, 'ambiguous_selector');
    assert.deepEqual(
      r.candidates?.map((c: any) => c.name),
      ['Save', 'Save draft'],
    );
  });
  test('absence from an incomplete read is unknown', () => {
    const o = { ...page, elementsIncomplete: 'a bound cut the walk' };
    assert.equal(one({ element: { name: 'Gone' }, absent: true }, o).reason, 'observation_unavailable');
    assert.equal(one({ element: { role: 'button' }, count: 2 }, o).reason, 'observation_unavailable');
    assert.equal(one({ text_absent: 'nope' }, { ...page, textIncomplete: 'cut' }).reason, 'observation_unavailable');
  });
  test('page predicates', () => {
    assert.equal(one({ text_present: 'Order  placed' }).holds, true);
    assert.equal(one({ text_absent: 'Error' }).holds, true);
    assert.equal(one({ text_present: 'Error' }).holds, false);
    assert.equal(one({ url_contains: '/done' }).holds, true);
    assert.equal(one({ url_equals: 'https://shop.test/done' }).holds, false);
    assert.equal(one({ url_matches: 'id=\\d+$' }).holds, true);
    assert.equal(one({ title_equals: 'Shop: done' }).holds, true);
    assert.equal(one({ title_contains: 'cart' }).holds, false);
    assert.equal(one({ no_console_errors_since: 5 }).holds, true);
    assert.equal(one({ no_console_errors_since: 4 }).holds, false);
    assert.equal(one({ request: { url_contains: '/api/order', status_min: 200, status_max: 299 } }).holds, true);
    assert.equal(one({ request: { url_contains: '/api/order', status_min: 500 }, since: 3 }).holds, false);
    assert.equal(one({ request: { url_contains: '/api/order', status_min: 500 } }).holds, true);
    // A native window has no page: unsupported, never held.
    assert.equal(one({ text_present: 'x' }, { elements: [] }).reason, 'unsupported_predicate');
  });
  test('window predicates', () => {
    const o: Observation = {
      windows: [
        { title: 'Editor — a.txt', focused: true, frame: { x: 10, y: 20, width: 400, height: 300 }, target: true },
        { title: 'Editor — b.txt', focused: false, frame: { x: 0, y: 0, width: 100, height: 100 } },
      ],
    };
    assert.equal(one({ window: {}, focused: true }, o).holds, true);
    assert.equal(one({ window: { title: 'Editor — b.txt' }, exists: true }, o).holds, true);
    assert.equal(one({ window: { title: 'Nope' }, exists: false }, o).holds, true);
    assert.equal(one({ window: { title_contains: 'Editor' }, focused: true }, o).reason, 'ambiguous_selector');
    const frame = { x: 12, y: 18, width: 401, height: 299 };
    assert.equal(one({ window: {}, frame: { ...frame, tolerance: 2 } }, o).holds, true);
    assert.equal(one({ window: {}, frame: { ...frame, tolerance: 1 } }, o).holds, false);
  });
});

describe('Stability', () => {
  const held = [{ index: 0, holds: true, observed: {} }];
  const failed = [{ index: 0, holds: false, observed: {} }];
  test('satisfied only after `need` consecutive reads', () => {
    const s = new Stability(2);
    s.add(held);
    assert.equal(s.done, false);
    assert.equal(s.verdict().status, 'unknown');
    assert.equal(s.verdict().reason, 'stability_unproven');
    s.add(held);
    assert.equal(s.done, true);
    assert.equal(s.verdict().status, 'satisfied');
  });
  test('a flicker starts the count over', () => {
    const s = new Stability(2);
    for (const r of [held, failed, held, failed, held]) s.add(r);
    assert.equal(s.done, false);
    assert.equal(s.verdict().reason, 'stability_unproven');
    s.add(failed);
    assert.equal(s.verdict().status, 'unsatisfied');
    assert.equal(s.verdict().failed, 0);
  });
  test('a read that could not be taken is unknown with its reason', () => {
    const s = new Stability(1);
    s.add(held);
    s.miss(1, 'target_missing', 'the window is gone');
    assert.equal(s.verdict().status, 'unknown');
    assert.equal(s.verdict().reason, 'target_missing');
  });
  test('an unsupported predicate ends the sampling', () => {
    const s = new Stability(3);
    s.add([{ index: 0, holds: null, observed: {}, reason: 'unsupported_predicate' } as any]);
    assert.equal(s.done, true);
    assert.equal(s.verdict().reason, 'unsupported_predicate');
  });
});
