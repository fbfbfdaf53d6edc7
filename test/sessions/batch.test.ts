// run_actions (seed 001) on the browser route: at most 32 steps, every step validated before the first
// runs (a malformed or stale step N changes nothing), the first failure stops the batch, each step's result
// is the single call's, one optional observation, and the batch's one session. Every case asserts the page's
// own state through an independent CDP connection.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'puppeteer-core';
import { browserSuite, type Suite } from '../helpers/suite.js';
import { refusalOf } from '../helpers/gateway.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

/** The fields of plain.html's model these tests touch, as the page itself holds them. */
async function state(page: Page) {
  const m = await s.model(page);
  return { clicks: m.clicks, text: m.text, area: m.area, cb: m.cb, sel: m.sel, ro: m.ro };
}
const PRISTINE = { clicks: 0, text: '', area: '', cb: false, sel: 'a', ro: 'fixed' };

async function fresh(session?: string) {
  const page = await s.open('plain.html');
  const snap = await s.snapshot(s.v, session ? { session } : {});
  assert.deepEqual(await state(page), PRISTINE);
  return { page, snap };
}

type Snap = Awaited<ReturnType<typeof fresh>>['snap'];
/** Four good steps: after them the page holds clicks 1, text "abc", the checkbox on and Beta selected. */
const goodFour = (snap: Snap) => [
  { tool: 'click', args: { element_token: snap.token('Increment') } },
  { tool: 'type_text', args: { element_token: snap.token('Text'), text: 'abc' } },
  { tool: 'set_value', args: { element_token: snap.token('Checkbox'), value: 'true' } },
  { tool: 'set_value', args: { element_token: snap.token('Select'), value: 'Beta' } },
];

describe('run_actions: limits', () => {
  test('32 steps run; 33 are refused with invalid_arguments before anything runs', async () => {
    const { page, snap } = await fresh();
    const click = { tool: 'click', args: { element_token: snap.token('Increment') } };
    const over = await s.v.call('run_actions', { steps: Array(33).fill(click) });
    assert.equal(refusalOf(over).code, 'invalid_arguments');
    assert.match(over.structured.refusal.message, /steps/);
    assert.equal((await state(page)).clicks, 0);
    const full = await s.v.call('run_actions', { steps: Array(32).fill(click) });
    assert.equal(full.isError, false, full.text);
    assert.equal(full.structured.steps.length, 32);
    assert.ok(
      full.structured.steps.every(
        (st: any, i: number) => st.index === i && st.status === 'ok' && st.result.effect === 'confirmed',
      ),
      full.text,
    );
    assert.equal((await state(page)).clicks, 32);
  });

  test('delay_ms above 2000 (or below 0), no steps, and a tool that is not batchable are refused', async () => {
    const { page, snap } = await fresh();
    const steps = [{ tool: 'click', args: { element_token: snap.token('Increment') } }];
    for (const bad of [
      { steps, delay_ms: 2001 },
      { steps, delay_ms: -1 },
      { steps: [] },
      // page is a step (open a tab and observe it; answer a dialog with the task's check); kill_app never is.
      { steps: [{ tool: 'kill_app', args: { pid: 1 } }] },
      { steps: [{ tool: 'get_window_state', args: {} }] },
    ]) {
      const r = await s.v.call('run_actions', bad);
      assert.equal(refusalOf(r).code, 'invalid_arguments', JSON.stringify(bad));
    }
    assert.match((await s.v.call('run_actions', { steps, delay_ms: 2001 })).structured.refusal.message, /delay_ms/);
    assert.equal((await state(page)).clicks, 0);
    const ok = await s.v.call('run_actions', { steps: [...steps, ...steps], delay_ms: 2000 });
    assert.equal(ok.isError, false, ok.text);
    assert.equal((await state(page)).clicks, 2);
  });
});

describe('run_actions: every step is validated before the first one runs', () => {
  const malformed: Array<[string, Record<string, unknown>]> = [
    ['type_text without text', { tool: 'type_text', args: {} }],
    ['an unknown argument', { tool: 'click', args: { bogus: 1 } }],
    ['a bad enum', { tool: 'scroll', args: { direction: 'sideways' } }],
    ['a wrong type', { tool: 'press_key', args: { key: 5 } }],
    ['set_value without element_token', { tool: 'set_value', args: { value: 'x' } }],
  ];
  for (const [what, step] of malformed) {
    test(`a malformed step 4 (${what}) changes nothing`, async () => {
      const { page, snap } = await fresh();
      const r = await s.v.call('run_actions', {
        steps: [...goodFour(snap), step, { tool: 'click', args: { element_token: snap.token('Increment') } }],
      });
      const refusal = refusalOf(r);
      assert.equal(refusal.code, 'invalid_arguments', r.text);
      assert.match(refusal.message, /steps\.4/);
      assert.equal(refusal.step, 4);
      assert.deepEqual(await state(page), PRISTINE);
    });
  }

  test('a step 4 that names its target two ways, or half a point, changes nothing', async () => {
    const { page, snap } = await fresh();
    for (const [args, code] of [
      [{ element_token: snap.token('Increment'), x: 5, y: 5 }, 'conflicting_target'],
      [{ element_token: snap.token('Increment'), target: { kind: 'tab', tab_id: 'some-tab' } }, 'conflicting_target'],
      [{ x: 5 }, 'invalid_arguments'],
    ] as const) {
      const r = await s.v.call('run_actions', { steps: [...goodFour(snap), { tool: 'click', args }] });
      assert.equal(refusalOf(r).code, code, r.text);
      assert.match(r.structured.refusal.message, /steps\.4/);
      assert.deepEqual(await state(page), PRISTINE, JSON.stringify(args));
    }
  });

  test('a stale element token in step 4 changes nothing; so does a forged one', async () => {
    const { page, snap: old } = await fresh();
    const current = await s.snapshot(s.v);
    const stale = await s.v.call('run_actions', {
      steps: [...goodFour(current), { tool: 'click', args: { element_token: old.token('Increment') } }],
    });
    const refusal = refusalOf(stale);
    assert.equal(refusal.code, 'stale_element_token', stale.text);
    assert.match(refusal.message, /element_token is stale; call get_window_state again to refresh/);
    assert.ok(Array.isArray(refusal.current_snapshot_ids), stale.text);
    assert.equal(refusal.step, 4);
    assert.deepEqual(await state(page), PRISTINE);
    const forged = await s.v.call('run_actions', {
      steps: [...goodFour(current), { tool: 'click', args: { element_token: 'not-a-token' } }],
    });
    assert.equal(refusalOf(forged).code, 'invalid_element_token', forged.text);
    assert.deepEqual(await state(page), PRISTINE);
  });

  test('a malformed observe changes nothing', async () => {
    const { page, snap } = await fresh();
    const r = await s.v.call('run_actions', { steps: goodFour(snap), observe: { max_elements: -1 } });
    assert.equal(refusalOf(r).code, 'invalid_arguments');
    assert.match(r.structured.refusal.message, /observe/);
    assert.deepEqual(await state(page), PRISTINE);
  });
});

describe('run_actions: running', () => {
  test('a step that fails at run time stops the batch: 0-3 ok, 4 failed, 5+ not_run', async () => {
    const { page, snap } = await fresh();
    const r = await s.v.call('run_actions', {
      steps: [
        ...goodFour(snap),
        { tool: 'type_text', args: { element_token: snap.token('Read-only'), text: 'x' } },
        { tool: 'click', args: { element_token: snap.token('Increment') } },
        { tool: 'type_text', args: { element_token: snap.token('Area'), text: 'never' } },
      ],
    });
    assert.equal(r.isError, true, r.text);
    assert.deepEqual(
      r.structured.steps.map((st: any) => [st.index, st.tool, st.status]),
      [
        [0, 'click', 'ok'],
        [1, 'type_text', 'ok'],
        [2, 'set_value', 'ok'],
        [3, 'set_value', 'ok'],
        [4, 'type_text', 'failed'],
        [5, 'click', 'not_run'],
        [6, 'type_text', 'not_run'],
      ],
    );
    assert.equal(r.structured.steps[4].result.refusal.code, 'element_readonly');
    assert.equal(r.structured.steps[5].result, undefined);
    assert.deepEqual(await state(page), { clicks: 1, text: 'abc', area: '', cb: true, sel: 'b', ro: 'fixed' });
  });

  test('a step that reports no_effect or mismatch also stops the batch', async () => {
    const { page, snap } = await fresh();
    const r = await s.v.call('run_actions', {
      steps: [
        { tool: 'type_text', args: { element_token: snap.token('Upper-cases'), text: 'abc' } },
        { tool: 'click', args: { element_token: snap.token('Increment') } },
      ],
    });
    assert.equal(r.isError, true, r.text);
    assert.equal(r.structured.steps[0].status, 'failed');
    assert.equal(r.structured.steps[0].result.effect, 'mismatch');
    assert.equal(r.structured.steps[1].status, 'not_run');
    assert.equal((await state(page)).clicks, 0);
  });

  test("each step's result is the single call's (shape and effect)", async () => {
    const shape = (result: any) => ({
      ...result,
      // The three phases always; queue, lock and side_effects only when they took 1 ms or more.
      timings_ms: Object.keys(result.timings_ms ?? {})
        .filter((k) => ['resolve', 'deliver', 'verify'].includes(k))
        .sort(),
      // Where the tab's console and requests stood: a number that grows with every call, the batch's or not.
      ...(result.mark !== undefined ? { mark: typeof result.mark } : {}),
      ...(result.refusal
        ? { refusal: { ...result.refusal, message: result.refusal.message.replace(/^steps\.\d+ \([a-z_]+\): /, '') } }
        : {}),
    });
    const plan = (snap: Snap) => [
      ...goodFour(snap),
      { tool: 'press_key', args: { element_token: snap.token('Text'), key: 'Backspace' } },
      { tool: 'scroll', args: { direction: 'down', amount: 3 } },
      { tool: 'type_text', args: { element_token: snap.token('Read-only'), text: 'x' } },
    ];
    const batchRun = await fresh();
    const batch = await s.v.call('run_actions', { steps: plan(batchRun.snap) });
    const afterBatch = await s.model(batchRun.page);
    const direct = await fresh();
    const singles = [];
    for (const step of plan(direct.snap)) singles.push(await s.v.call(step.tool, step.args));
    assert.equal(batch.structured.steps.length, singles.length);
    for (const [i, single] of singles.entries()) {
      assert.deepEqual(
        shape(batch.structured.steps[i].result),
        shape(single.structured),
        `step ${i} (${batch.structured.steps[i].tool})`,
      );
      assert.equal(batch.structured.steps[i].status, single.isError ? 'failed' : 'ok');
    }
    const afterSingles = await s.model(direct.page);
    for (const key of ['clicks', 'text', 'cb', 'sel', 'ro']) assert.equal(afterBatch[key], afterSingles[key], key);
    assert.equal(afterBatch.text, 'ab');
  });

  test('observe: one get_window_state after the last executed step, without a screenshot by default', async () => {
    const { page, snap } = await fresh();
    const plain = await s.v.call('run_actions', {
      steps: [{ tool: 'type_text', args: { element_token: snap.token('Text'), text: 'seen' } }],
    });
    assert.equal(plain.isError, false, plain.text);
    assert.equal(plain.structured.observation, undefined, 'without observe nothing is read');
    assert.equal(plain.images, 0);
    const r = await s.v.call('run_actions', {
      steps: [{ tool: 'type_text', args: { element_token: snap.token('Text'), text: '!' } }],
      observe: { format: 'full' },
    });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.images, 0, 'no screenshot by default');
    const obs = r.structured.observation;
    assert.equal(typeof obs.snapshot_id, 'string');
    assert.ok(obs.returned_element_count <= 200);
    assert.equal(obs.elements.find((e: any) => e.label === 'Text').value, 'seen!', 'read after the last step');
    // It is a real snapshot: its tokens are current and the older ones are stale.
    assert.equal(
      refusalOf(await s.v.call('click', { element_token: snap.token('Increment') })).code,
      'stale_element_token',
    );
    const click = await s.v.call('click', {
      element_token: obs.elements.find((e: any) => e.label === 'Increment').element_token,
    });
    assert.equal(click.structured.effect, 'confirmed', click.text);
    const shot = await s.v.call('run_actions', {
      steps: [{ tool: 'press_key', args: { key: 'End' } }],
      observe: { include_screenshot: true, max_elements: 3 },
    });
    assert.equal(shot.images, 1);
    assert.equal(shot.structured.observation.returned_element_count, 3);
    // After a failure the observation still reads the page as the last executed step left it.
    const ro = (await s.snapshot(s.v)).token('Read-only');
    const failed = await s.v.call('run_actions', {
      steps: [
        { tool: 'type_text', args: { element_token: ro, text: 'x' } },
        { tool: 'press_key', args: { key: 'a' } },
      ],
      observe: { query: 'Read-only', format: 'full' },
    });
    assert.deepEqual(
      failed.structured.steps.map((st: any) => st.status),
      ['failed', 'not_run'],
    );
    assert.equal(failed.structured.observation.elements[0].value, 'fixed');
    assert.equal((await state(page)).clicks, 1);
  });
});

describe('run_actions: one session', () => {
  test("a step naming a different session is refused and nothing runs; repeating the batch's is fine", async () => {
    assert.equal((await s.v.call('start_session', { session: 'batch-a' })).isError, false);
    const { page, snap } = await fresh('batch-a');
    const click = { tool: 'click', args: { element_token: snap.token('Increment') } };
    for (const batch of [
      { session: 'batch-a', steps: [click, { ...click, args: { ...click.args, session: 'batch-b' } }] },
      { steps: [click, { ...click, args: { ...click.args, session: 'batch-a' } }] },
    ]) {
      const r = await s.v.call('run_actions', batch);
      assert.equal(refusalOf(r).code, 'invalid_arguments', r.text);
      assert.match(r.structured.refusal.message, /steps\.1\.args\.session/);
      assert.equal((await state(page)).clicks, 0);
    }
    const same = await s.v.call('run_actions', {
      session: 'batch-a',
      steps: [click, { ...click, args: { ...click.args, session: 'batch-a' } }],
    });
    assert.equal(same.isError, false, same.text);
    assert.equal((await state(page)).clicks, 2);
  });

  test('a batch in an ended session is refused with session_ended and changes nothing', async () => {
    assert.equal((await s.v.call('start_session', { session: 'batch-ended' })).isError, false);
    const { page, snap } = await fresh('batch-ended');
    assert.equal((await s.v.call('end_session', { session: 'batch-ended' })).isError, false);
    const r = await s.v.call('run_actions', {
      session: 'batch-ended',
      steps: [{ tool: 'click', args: { element_token: snap.token('Increment') } }],
    });
    assert.equal(refusalOf(r).code, 'session_ended', r.text);
    assert.deepEqual(await state(page), PRISTINE);
  });
});
