// The desktop's own state for the background-delivery and seeing tests (issue 44 items 6, 7), each read on its own connection:
// the active window (xdotool getactivewindow), the stacking order (xprop _NET_CLIENT_LIST_STACKING) and the
// pointer (xdotool getmouselocation); a result's account held against it; and an app's own report of its
// window becoming active while a call ran.
import assert from 'node:assert/strict';
import type { Desktop, GtkApp } from './desktop.js';

export const ASPECTS = ['focus', 'z_order', 'pointer'] as const;

/** A root property's window list, as xprop prints it (ids in hex). */
export function rootWindows(d: Desktop, name: string): number[] {
  return (d.x('xprop', ['-root', name]).split('#')[1] ?? '')
    .split(',')
    .map((s) => Number.parseInt(s.trim(), 16))
    .filter((n) => n > 0);
}

/** A window's frame as the X server says it (xwininfo): where it is on the screen, and its size. */
export function geometry(d: Desktop, id: number): { x: number; y: number; w: number; h: number } {
  const info = d.x('xwininfo', ['-id', String(id)]);
  const n = (label: string) => Number(new RegExp(`${label}:\\s+(-?\\d+)`).exec(info)?.[1]);
  return { x: n('Absolute upper-left X'), y: n('Absolute upper-left Y'), w: n('Width'), h: n('Height') };
}

export function pointer(d: Desktop): { x: number; y: number } {
  const at = d.x('xdotool', ['getmouselocation']);
  return { x: Number(/x:(-?\d+)/.exec(at)?.[1]), y: Number(/y:(-?\d+)/.exec(at)?.[1]) };
}

/** What the X11 window manager and the X server say now. */
export function wm(d: Desktop) {
  return {
    focus: Number(d.x('xdotool', ['getactivewindow'])),
    z_order: rootWindows(d, '_NET_CLIENT_LIST_STACKING'),
    pointer: pointer(d),
  };
}
export type Wm = ReturnType<typeof wm>;

/**
 * The result's account against the window manager's: every aspect in exactly one of unchanged, moved and
 * unread (none unread on X11); what it says is unchanged or restored is as it was, what it says moved and was
 * not restored is not.
 */
export function agrees(delivery: any, was: Wm, now: Wm, text: string): void {
  const listed = [...(delivery.unchanged ?? []), ...(delivery.moved ?? []), ...(delivery.unread ?? [])].sort();
  assert.deepEqual(listed, [...ASPECTS].sort(), `each aspect said once: ${text}`);
  assert.equal(delivery.unread, undefined, `X11 reads all three: ${text}`);
  for (const aspect of ASPECTS) {
    const same = JSON.stringify(now[aspect]) === JSON.stringify(was[aspect]);
    const back = delivery.unchanged?.includes(aspect) || delivery.restored?.includes(aspect);
    assert.equal(
      same,
      !!back,
      `${aspect}: the result says ${back ? 'as it was' : 'moved'}, the window manager says ${JSON.stringify(was[aspect])} then ${JSON.stringify(now[aspect])}: ${text}`,
    );
  }
}

/** Whether `app` reported its window active at any moment while `work` ran (its own state, line by line). */
export async function activeDuring<T>(app: GtkApp, work: () => Promise<T>): Promise<{ value: T; wasActive: boolean }> {
  let wasActive = false;
  const watch = app
    .waitFor((s) => s.active, 'its window active', 15_000)
    .then(
      () => {
        wasActive = true;
      },
      () => undefined,
    );
  const value = await work();
  // Its line is in by now if it came at all: the click's own state line comes after any focus change.
  await Promise.race([watch, new Promise((r) => setTimeout(r, 300))]);
  return { value, wasActive };
}
