// Background proven (server/native/shared/background.ts), in-process: the comparison of the desktop before and
// after an action, the plan of what a background delivery puts back, the account the result's delivery
// carries, and the step around an action run over a desktop held in memory (the real reads and restores are
// test/native/background.test.ts's and background-sway.test.ts's, against the window manager's own state).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  raisedUnfocused,
  sameView,
  compareDesk,
  deskAround,
  deskReport,
  DeskLock,
  notePointerMotion,
  planRestore,
  sameOrder,
  type DeskProbe,
  type DeskView,
} from '../../server/native/shared/background.js';
import type { ActionResult, ResolvedTarget } from '../../server/contract/driver.js';
import { actionResult } from '../../server/contract/wire.js';
import { Refusal } from '../../server/contract/refusal.js';

const A = 0x200001;
const B = 0x400001;
const C = 0x600001;
const NEW = 0x800001;
const before: DeskView = { focus: B, stacking: [C, A, B], pointer: { x: 10, y: 20 } };
const probeAll: Pick<DeskProbe, 'movePointer' | 'activate'> = {
  movePointer: async () => undefined,
  activate: async () => undefined,
};

describe('compareDesk', () => {
  test('the same desktop: every aspect unchanged', () => {
    assert.deepEqual(compareDesk(before, { ...before }), {
      focus: 'unchanged',
      z_order: 'unchanged',
      pointer: 'unchanged',
    });
  });

  test('a click the window manager answered by focusing and raising its window: all three moved', () => {
    const after = { focus: A, stacking: [C, B, A], pointer: { x: 300, y: 200 } };
    assert.deepEqual(compareDesk(before, after), { focus: 'moved', z_order: 'moved', pointer: 'moved' });
  });

  test('a window that opened or closed is no change of the stacking order among the others', () => {
    assert.equal(sameOrder([C, A, B], [C, A, B, NEW]), true);
    assert.equal(sameOrder([C, A, B], [C, B]), true);
    assert.equal(sameOrder([C, A, B], [A, C, B, NEW]), false);
    assert.equal(compareDesk(before, { ...before, stacking: [C, A, NEW, B] }).z_order, 'unchanged');
  });

  test('what either read lacks is unread; a pointer the route sent motion to and cannot read is moved', () => {
    const sway: DeskView = { focus: 7, stacking: [5, 7], unread: { pointer: 'sway tells no client' } };
    assert.deepEqual(compareDesk(sway, { ...sway }), { focus: 'unchanged', z_order: 'unchanged', pointer: 'unread' });
    assert.equal(compareDesk(sway, { ...sway }, true).pointer, 'moved');
    assert.equal(compareDesk({ stacking: [1] }, { focus: 1, stacking: [1] }).focus, 'unread');
  });
});

describe('planRestore', () => {
  const moved = { focus: 'moved', z_order: 'moved', pointer: 'moved' } as const;
  const after: DeskView = { focus: A, stacking: [C, B, A], pointer: { x: 300, y: 200 } };

  test('background: the pointer back where it was, and the window that had focus (on top) activated again', () => {
    const plan = planRestore(before, after, moved, { background: true, goals: [], probe: probeAll });
    assert.deepEqual(plan, { pointer: { x: 10, y: 20 }, activate: B, kept: {} });
  });

  test('foreground: nothing put back, each moved aspect saying why', () => {
    const plan = planRestore(before, after, moved, { background: false, goals: [], probe: probeAll });
    assert.equal(plan.pointer, undefined);
    assert.equal(plan.activate, undefined);
    assert.equal(plan.kept.focus, '', 'the mode says why: no note');
  });

  test("what the action was for stays: hover's pointer", () => {
    const plan = planRestore(before, after, moved, { background: true, goals: ['pointer'], probe: probeAll });
    assert.equal(plan.pointer, undefined);
    assert.equal(plan.kept.pointer, '', 'what hover is for says itself');
    assert.equal(plan.activate, B);
  });

  test('a window that was not there before took the focus (a dialog the app opened): left to it', () => {
    const dialog: DeskView = { focus: NEW, stacking: [C, A, B, NEW], pointer: before.pointer };
    const states = compareDesk(before, dialog);
    assert.deepEqual(states, { focus: 'moved', z_order: 'unchanged', pointer: 'unchanged' });
    const plan = planRestore(before, dialog, states, { background: true, goals: [], probe: probeAll });
    assert.equal(plan.activate, undefined);
    assert.match(plan.kept.focus!, /not there before/);
  });

  test('a dialog that took the focus while its window was raised: neither put back (activating would take its focus)', () => {
    const dialog: DeskView = { focus: NEW, stacking: [C, B, A, NEW], pointer: before.pointer };
    const states = compareDesk(before, dialog);
    assert.deepEqual(states, { focus: 'moved', z_order: 'moved', pointer: 'unchanged' });
    const plan = planRestore(before, dialog, states, { background: true, goals: [], probe: probeAll });
    assert.equal(plan.activate, undefined);
    assert.match(plan.kept.z_order!, /would take it from the one the app opened/);
  });

  test('the window that had focus is gone, or no window had it: not put back, saying so', () => {
    const gone = planRestore(before, { focus: A, stacking: [C, A], pointer: before.pointer }, moved, {
      background: true,
      goals: [],
      probe: probeAll,
    });
    assert.match(gone.kept.focus!, /gone/);
    const none = planRestore({ ...before, focus: 0 }, after, moved, { background: true, goals: [], probe: probeAll });
    assert.match(none.kept.focus!, /no window had focus/);
  });

  test('a stacking order changed under a window that was not on top cannot be put back by activation', () => {
    const states = { focus: 'unchanged', z_order: 'moved', pointer: 'unchanged' } as const;
    const plan = planRestore({ ...before, focus: A }, { focus: A, stacking: [A, C, B] }, states, {
      background: true,
      goals: [],
      probe: probeAll,
    });
    assert.equal(plan.activate, undefined);
    assert.match(plan.kept.z_order!, /not the top one/);
  });

  test('sway: its pointer, moved by the route, is not put back (where it was is not known)', () => {
    const sway: DeskView = { focus: 7, stacking: [5, 7], unread: { pointer: 'sway tells no client' } };
    const states = compareDesk(sway, { ...sway }, true);
    const plan = planRestore(sway, { ...sway }, states, { background: true, goals: [], probe: probeAll });
    assert.equal(plan.pointer, undefined);
    assert.match(plan.kept.pointer!, /sway tells no client/);
  });
});

describe('deskReport', () => {
  test('nothing moved: every aspect listed unchanged and nothing else (the smallest account)', () => {
    const same = compareDesk(before, before);
    assert.deepEqual(deskReport(before, same, same, before, {}), { unchanged: ['focus', 'z_order', 'pointer'] });
  });

  test('moved and put back: moved and restored; unread with its reason in the note', () => {
    const view: DeskView = { focus: 7, stacking: [5, 7], unread: { pointer: 'sway tells no client' } };
    const afterAction = { focus: 'moved', z_order: 'unchanged', pointer: 'unread' } as const;
    const final = { focus: 'unchanged', z_order: 'unchanged', pointer: 'unread' } as const;
    const r = deskReport(view, afterAction, final, view, {});
    assert.deepEqual(r, {
      unchanged: ['z_order'],
      moved: ['focus'],
      restored: ['focus'],
      unread: ['pointer'],
      note: 'pointer: sway tells no client',
    });
    assert.ok(actionResult.shape.delivery.safeParse({ mode: 'background', ...r }).success, 'the wire shape holds it');
  });

  test("a pointer moved by the route's motion where it cannot be read: moved, the note saying both", () => {
    const view: DeskView = { focus: 7, stacking: [5, 7], unread: { pointer: 'sway tells no client' } };
    const states = { focus: 'unchanged', z_order: 'unchanged', pointer: 'moved' } as const;
    const r = deskReport(view, states, states, view, { pointer: 'not put back' });
    assert.deepEqual(r.moved, ['pointer']);
    assert.match(r.note!, /moved by the route's own motion; sway tells no client/);
  });
});

/** A desktop in memory whose action moves what it is told to, as a click-to-focus window manager would. */
function memoryDesk(view: DeskView) {
  const now: DeskView = structuredClone(view);
  const probe: DeskProbe = {
    read: async () => structuredClone(now),
    movePointer: async (p) => {
      now.pointer = { ...p };
    },
    activate: async (id) => {
      now.focus = id;
      now.stacking = [...now.stacking!.filter((w) => w !== id), id];
    },
  };
  return { now, probe };
}
const target = (deliveryMode: 'background' | 'foreground'): ResolvedTarget => ({
  kind: 'window',
  key: `1:${A}`,
  pid: 1,
  windowId: A,
  deliveryMode,
});
const resultOf = (mode: 'background' | 'foreground'): ActionResult => ({
  effect: 'unverifiable',
  route: 'pixel',
  delivery: { mode },
  evidence: [],
  timings_ms: { resolve: 0, deliver: 0, verify: 0 },
});

describe('deskAround', () => {
  test('a background pixel click that focused and raised its window: all put back, and read back so', async () => {
    const { now, probe } = memoryDesk(before);
    const r = await deskAround(probe)(
      target('background'),
      async () => {
        await probe.activate!(A);
        now.pointer = { x: 300, y: 200 };
        return resultOf('background');
      },
      'click',
    );
    assert.deepEqual(r.delivery, {
      mode: 'background',
      moved: ['focus', 'z_order', 'pointer'],
      restored: ['focus', 'z_order', 'pointer'],
    });
    assert.deepEqual(now, before);
  });

  test('foreground: what moved is said, nothing put back', async () => {
    const { now, probe } = memoryDesk(before);
    const r = await deskAround(probe)(
      target('foreground'),
      async () => {
        await probe.activate!(A);
        return resultOf('foreground');
      },
      'click',
    );
    assert.deepEqual(r.delivery.moved, ['focus', 'z_order']);
    assert.equal(r.delivery.restored, undefined);
    assert.deepEqual(r.delivery.unchanged, ['pointer']);
    assert.equal(r.delivery.note, undefined, 'the mode says why nothing was put back');
    assert.equal(now.focus, A);
  });

  test("hover keeps the pointer where it was asked to go; the route's motion where it cannot be read is said", async () => {
    const { now, probe } = memoryDesk(before);
    const r = await deskAround(probe)(
      target('background'),
      async () => {
        now.pointer = { x: 1, y: 1 };
        return resultOf('background');
      },
      'hover',
    );
    assert.deepEqual(r.delivery.moved, ['pointer']);
    assert.equal(r.delivery.restored, undefined);
    assert.deepEqual(now.pointer, { x: 1, y: 1 });

    const sway = memoryDesk({ focus: 7, stacking: [5, 7], unread: { pointer: 'sway tells no client' } });
    const s = await deskAround(sway.probe)(
      target('background'),
      async () => {
        notePointerMotion();
        return resultOf('background');
      },
      'click',
    );
    assert.deepEqual(s.delivery.moved, ['pointer']);
    assert.deepEqual(s.delivery.unchanged, ['focus', 'z_order']);
  });

  test('a refusal passes through, with what moved before it put back', async () => {
    const { now, probe } = memoryDesk(before);
    await assert.rejects(
      deskAround(probe)(
        target('background'),
        async () => {
          now.pointer = { x: 5, y: 5 };
          throw new Refusal('target_not_found', 'gone');
        },
        'click',
      ),
      /gone/,
    );
    assert.deepEqual(now.pointer, before.pointer);
  });

  test('a probe that fails to read says unread with the reason, and the action still runs', async () => {
    const probe: DeskProbe = { read: async () => Promise.reject(new Error('no display')) };
    const r = await deskAround(probe)(target('background'), async () => resultOf('background'), 'click');
    assert.deepEqual(r.delivery.unread, ['focus', 'z_order', 'pointer']);
    assert.match(r.delivery.note!, /no display/);
  });

  test('a click whose window was raised at once and focused late (a busy app taking the focus): waited for, said moved', async () => {
    const { now, probe } = memoryDesk(before);
    const r = await deskAround(probe)(
      target('foreground'),
      async () => {
        notePointerMotion();
        now.stacking = [C, B, A]; // raised on the press; the app takes the focus past the 300 ms of stillness
        setTimeout(() => {
          now.focus = A;
        }, 700);
        return resultOf('foreground');
      },
      'click',
    );
    assert.deepEqual(r.delivery.moved, ['focus', 'z_order'], JSON.stringify(r.delivery));
    assert.equal(now.focus, A);
  });

  test('a raised window that never takes the focus: the focus is unread at the bound, saying why, never unchanged', async () => {
    const { now, probe } = memoryDesk(before);
    const r = await deskAround(probe)(
      target('foreground'),
      async () => {
        notePointerMotion();
        now.stacking = [C, B, A];
        return resultOf('foreground');
      },
      'click',
    );
    assert.deepEqual(r.delivery.unread, ['focus'], JSON.stringify(r.delivery));
    assert.match(r.delivery.note!, /raised by the action and still lacked the focus/);
  });

  test('one action at a time on the desktop; a wait past its bound is refused target_busy', async () => {
    const lock = new DeskLock();
    const release = await lock.acquire();
    await assert.rejects(lock.acquire(20), (e: Refusal) => e.code === 'target_busy');
    const next = lock.acquire(1000);
    release();
    (await next)();
  });
});

test('two reads agree only when focus, stacking and pointer all do (the settled read after pointer input)', () => {
  const view = { focus: 7, stacking: [5, 7], pointer: { x: 10, y: 20 } };
  assert.equal(sameView(view, { ...view, stacking: [5, 7] }), true);
  assert.equal(sameView(view, { ...view, focus: 5 }), false, 'the window manager moved focus meanwhile');
  assert.equal(sameView(view, { ...view, stacking: [7, 5] }), false, 'or raised a window');
  assert.equal(sameView(view, { ...view, pointer: { x: 11, y: 20 } }), false, 'or the pointer moved');
  assert.equal(
    sameView({ unread: { pointer: 'sway' } }, { unread: { pointer: 'sway' } }),
    true,
    'nothing read: nothing changed',
  );
});

test('a window the action raised without the focus is pending; an unchanged top, a focused top or an unread one is not', () => {
  assert.equal(raisedUnfocused(before, { ...before, stacking: [C, B, A] }), A);
  assert.equal(raisedUnfocused(before, { ...before, stacking: [C, B, A], focus: A }), undefined);
  assert.equal(raisedUnfocused(before, { ...before, focus: A }), undefined, 'the top is as it was');
  assert.equal(raisedUnfocused(before, { focus: B, unread: { z_order: 'no WM' } }), undefined);
});
