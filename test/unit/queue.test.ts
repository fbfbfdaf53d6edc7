// The per-target action queue, in-process: order, independence of targets, bounds and the wait hook.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { queuedDriver, TargetQueue } from '../../server/routing/queue.js';
import type { ActionResult, Driver, WindowTarget } from '../../server/contract/driver.js';
import { Refusal } from '../../server/contract/refusal.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

describe('TargetQueue', () => {
  test('calls on one target run one at a time, in arrival order', async () => {
    const q = new TargetQueue();
    const log: string[] = [];
    let running = 0;
    const job = (name: string) => async () => {
      running++;
      assert.equal(running, 1, 'two ran at once');
      log.push(`start ${name}`);
      await new Promise((r) => setImmediate(r));
      log.push(`end ${name}`);
      running--;
      return name;
    };
    const results = await Promise.all(['a', 'b', 'c'].map((n) => q.run('tab 1', job(n))));
    assert.deepEqual(results, ['a', 'b', 'c']);
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    assert.equal(q.waiting('tab 1'), 0);
  });

  test('different targets do not wait for each other', async () => {
    const q = new TargetQueue();
    const g = gate();
    const slow = q.run('tab 1', () => g.opened.then(() => 'slow'));
    assert.equal(await q.run('tab 2', async () => 'other'), 'other');
    g.open();
    assert.equal(await slow, 'slow');
  });

  test('a failing call hands the target on', async () => {
    const q = new TargetQueue();
    const first = q.run('tab 1', async () => {
      throw new Error('boom');
    });
    const second = q.run('tab 1', async () => 'ok');
    await assert.rejects(first, /boom/);
    assert.equal(await second, 'ok');
  });

  test('the line is bounded: one more is refused target_busy, and nothing of it runs', async () => {
    const q = new TargetQueue({ maxWaiting: 2, maxWaitMs: 60_000 });
    const g = gate();
    let ran = 0;
    const running = q.run('tab 1', () => g.opened);
    const waiting = [
      q.run('tab 1', async () => {
        ran++;
      }),
      q.run('tab 1', async () => {
        ran++;
      }),
    ];
    await assert.rejects(
      q.run('tab 1', async () => {
        ran += 100;
      }),
      (e: unknown) => e instanceof Refusal && e.code === 'target_busy' && /at most 2/.test(e.message),
    );
    g.open();
    await running;
    await Promise.all(waiting);
    assert.equal(ran, 2);
  });

  test('a wait is bounded: refused target_busy after maxWaitMs, the line goes on', async () => {
    const q = new TargetQueue({ maxWaiting: 4, maxWaitMs: 20 });
    const g = gate();
    const running = q.run('tab 1', () => g.opened);
    let ran = false;
    await assert.rejects(
      q.run('tab 1', async () => {
        ran = true;
      }),
      (e: unknown) => e instanceof Refusal && e.code === 'target_busy' && /waited 20 ms/.test(e.message),
    );
    assert.equal(q.waiting('tab 1'), 0);
    g.open();
    await running;
    assert.equal(ran, false);
    assert.equal(await q.run('tab 1', async () => 'after'), 'after');
  });

  test('the wait hook hears each waiting call with its place in line', async () => {
    const q = new TargetQueue();
    const heard: number[] = [];
    const g = gate();
    const running = q.run(
      'tab 1',
      () => g.opened,
      () => heard.push(-1),
    );
    const w = [1, 2].map(() =>
      q.run(
        'tab 1',
        async () => {},
        (i) => heard.push(i.position),
      ),
    );
    assert.deepEqual(heard, [1, 2]);
    g.open();
    await Promise.all([running, ...w]);
  });

  test("operator input waits for the action in flight, and that action's turn counts it", async () => {
    const q = new TargetQueue();
    const log: string[] = [];
    const g = gate();
    let seen = -1;
    const action = q.run('tab 1', async (turn) => {
      log.push('action start');
      await g.opened;
      log.push('action end');
      seen = turn.operatorInputsHeld;
    });
    const input = q.operatorInput('tab 1', async () => {
      log.push('operator input');
    });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(log, ['action start'], 'the operator input ran while the action was in flight');
    g.open();
    await Promise.all([action, input]);
    assert.deepEqual(log, ['action start', 'action end', 'operator input']);
    assert.equal(seen, 1);
    // Nothing in flight: the input runs at once and no one's turn counts it.
    let later = -1;
    await q.operatorInput('tab 1', async () => {});
    await q.run('tab 1', async (turn) => {
      later = turn.operatorInputsHeld;
    });
    assert.equal(later, 0);
  });

  test('a window target keeps the window the router found unless another call ran on it first', async () => {
    const q = new TargetQueue();
    const g = gate();
    const seen: Array<unknown> = [];
    const result = { effect: 'confirmed', timings_ms: {}, evidence: [] } as unknown as ActionResult;
    const driver = {
      hover: async (target: WindowTarget) => {
        seen.push(target.window);
        await g.opened;
        return result;
      },
    } as unknown as Driver;
    const target = (): WindowTarget => ({
      kind: 'window',
      key: '42:7',
      pid: 42,
      windowId: 7,
      window: { id: 7 },
      deliveryMode: 'background',
    });
    // As the router hands them out: one target per call, the same object to the queue and to the action.
    const call = () => {
      const t = target();
      return queuedDriver(q, driver, t, undefined).hover(t, { pointer: false });
    };
    const first = call();
    const behind = call();
    g.open();
    await Promise.all([first, behind]);
    assert.deepEqual(
      seen,
      [{ id: 7 }, undefined],
      'the first ran on the carried window, the one behind it looks again',
    );
  });
});
