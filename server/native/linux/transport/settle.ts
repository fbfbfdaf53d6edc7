// Waits before keys go in, each on something the X server, the window manager or the app answers, never a
// fixed guess: a busy machine is exactly where a guess fails (issue 42: a Swing field got only 'é' of
// 'swing é' under load; the window manager had not yet let the click through to the app, so the keys
// before it went to the button that had the focus). Before the first key after a click, a focus change or
// a change of the keyboard map:
//  - an X round trip (GetInputFocus): the server has handled every request sent before it (the click, the
//    map change) and queued their events to the apps;
//  - after a click: the pointer no longer held by another client's grab (a window manager's click-to-focus
//    grab holds the click until it lets it through to the app; keys are not held with it);
//  - after a click or a focus change: the X input focus in the window (it, or a window inside it);
//  - the app's own answer where it gives one: a _NET_WM_PING round trip (GTK 3, GTK 4 and Qt list it in
//    WM_PROTOCOLS). The app answers it from its event loop after the events queued before it, the click,
//    the focus and the map change among them; its keys come after all of them.
//  - where the app answers nothing (Tk and Swing list no _NET_WM_PING), a wait scaled by the machine's load
//    (loadScaledMs): the one wait here that proves nothing, and those apps' verdicts are never confirmed.
// What was waited for, and how long, goes into the result's timings_ms (settle, settle_signal).
import { availableParallelism, loadavg } from 'node:os';
import type { ActionResult } from '../../../contract/driver.js';
import { xServer } from './env.js';
import { waylandSurface } from './wayland.js';
import { cardinals, type XConnection } from './xproto.js';

/** The waits one call made before its keys: their total time and what each waited on, in order. */
export class SettleLog {
  ms = 0;
  readonly signals: string[] = [];
  add(signal: string, startedAt: number): void {
    this.ms += performance.now() - startedAt;
    this.signals.push(signal);
  }
}

/** `result` with the waits in its timings_ms (settle in tenths of a ms; settle_signal naming them, in order). */
export function withSettle(result: ActionResult, log: SettleLog): ActionResult {
  if (!log.signals.length) return result;
  return {
    ...result,
    timings_ms: {
      ...result.timings_ms,
      settle: Math.round(log.ms * 10) / 10,
      settle_signal: [...new Set(log.signals)].join('+'),
    },
  };
}

/**
 * A wait for apps that answer nothing, scaled by the machine's load: `base` ms on an idle machine, times the
 * run queue per core when it is longer than one (a process waits its turn behind that many others), and
 * times the X server's own latency over an idle round trip's (an X server slow to answer us is slow to
 * answer the app as well); at least `base`, at most `ceiling`. loadavg is a one-minute average, so it also
 * covers a machine that just became busy; the round trip, one that is busy this instant.
 */
export async function loadScaledMs(base: number, ceiling: number, x?: XConnection): Promise<number> {
  const perCore = loadavg()[0] / availableParallelism();
  let server = 1;
  if (x) {
    const t = performance.now();
    await x.sync().catch(() => undefined);
    server = (performance.now() - t) / IDLE_ROUND_TRIP_MS;
  }
  return Math.round(Math.min(ceiling, base * Math.max(1, perCore, server)));
}
/** An X round trip on an idle machine (Xvfb, local socket): well under a millisecond. */
const IDLE_ROUND_TRIP_MS = 2;

/** How long the app of a no-ping window gets after a click, focus or map change (loadScaledMs). */
const NO_SIGNAL_BASE_MS = 150;
const NO_SIGNAL_CEILING_MS = 1500;
/** Bounds of the waits on a signal: past them the keys go anyway and settle_signal says what was not seen. */
const POINTER_BOUND_MS = 2000;
const FOCUS_BOUND_MS = 2000;
const PING_BOUND_MS = 3000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Windows activated since their last settle (x11.ts activate marks them): their app gets a settle before keys. */
const activated = new Set<number>();
/** Windows remembered as activated at most (one activated and never typed into is forgotten, oldest first). */
const ACTIVATED_MAX = 256;
export function focusMovedTo(window: number): void {
  activated.delete(window);
  activated.add(window);
  if (activated.size > ACTIVATED_MAX) activated.delete(activated.values().next().value!);
}

/**
 * Before the first key of a call to `window` (0: the focused window, whichever it is): waits for what the
 * call changed (a click, the focus moved to it since its last settle) to reach the app. Nothing to wait for
 * when neither happened.
 */
export async function settleBeforeKeys(window: number, clicked: boolean, log: SettleLog): Promise<void> {
  const focused = window !== 0 && activated.delete(window);
  // A Wayland surface's keys and clicks go through the compositor (wtype, the virtual pointer): not here.
  if ((!clicked && !focused) || waylandSurface()) return;
  const x = await xServer();
  let t = performance.now();
  await x.sync();
  log.add('x_roundtrip', t);
  if (clicked) {
    t = performance.now();
    log.add((await pointerLetGo(x)) ? 'pointer_released' : 'pointer_still_grabbed', t);
  }
  if (window) {
    t = performance.now();
    log.add((await focusIn(x, window)) ? 'x_focus' : 'x_focus_elsewhere', t);
  }
  await appSettle(x, window, log);
}

/** After a change of the keyboard map (sync sent already): the app of `window` has taken it in. */
export async function settleAfterMapChange(window: number, log: SettleLog): Promise<void> {
  const x = await xServer();
  const t = performance.now();
  await x.sync();
  log.add('x_roundtrip', t);
  await appSettle(x, window, log);
}

/**
 * Whether the app of `window` has read every event sent to it so far: true once it answered a ping, false
 * when it did not in time, null when it answers none (no _NET_WM_PING in its WM_PROTOCOLS).
 */
export async function appHasRead(window: number): Promise<boolean | null> {
  const x = await xServer();
  const top = await topLevel(x, window).catch(() => 0);
  return top ? ping(x, top) : null;
}

/** The app's own answer (a ping) where it gives one, else the load-scaled wait. */
async function appSettle(x: XConnection, window: number, log: SettleLog): Promise<void> {
  const t = performance.now();
  const target = window || (await x.inputFocus().then((f) => (f > 1 ? f : 0)));
  const top = target ? await topLevel(x, target).catch(() => 0) : 0;
  const pinged = top ? await ping(x, top) : null;
  if (pinged) return log.add('ping', t);
  await sleep(await loadScaledMs(NO_SIGNAL_BASE_MS, NO_SIGNAL_CEILING_MS, x));
  log.add(pinged === false ? 'ping_unanswered+load_scaled_wait' : 'load_scaled_wait', t);
}

/**
 * Whether the pointer is free of other clients' grabs (within POINTER_BOUND_MS): probed with a grab of our
 * own on the window that holds the pointer (so no crossing event reaches any app), let go at once.
 */
async function pointerLetGo(x: XConnection): Promise<boolean> {
  const deadline = performance.now() + POINTER_BOUND_MS;
  for (;;) {
    let window = x.root;
    for (let depth = 0; depth < 16; depth++) {
      const child = await x.pointerChild(window);
      if (!child) break;
      window = child;
    }
    const status = await x.probePointerGrab(window);
    // 1 AlreadyGrabbed, 4 Frozen: another client holds it. NotViewable or InvalidTime say nothing more.
    if (status !== 1 && status !== 4) return true;
    if (performance.now() >= deadline) return false;
    await sleep(5);
  }
}

/** Whether the X input focus is `window` or inside it (within FOCUS_BOUND_MS). */
async function focusIn(x: XConnection, window: number): Promise<boolean> {
  const deadline = performance.now() + FOCUS_BOUND_MS;
  for (;;) {
    let at = await x.inputFocus();
    for (let depth = 0; depth < 16 && at > 1 && at !== window && at !== x.root; depth++) at = await x.parent(at);
    if (at === window) return true;
    if (performance.now() >= deadline) return false;
    await sleep(5);
  }
}

/** The client window (a child of the window manager's frame, or a root child) that holds `window`. */
async function topLevel(x: XConnection, window: number): Promise<number> {
  const wmState = await x.atom('WM_STATE');
  let at = window;
  for (let depth = 0; depth < 16 && at && at !== x.root; depth++) {
    const state = await x.property(at, 'WM_STATE', 1);
    if (state?.type === wmState) return at;
    at = await x.parent(at);
  }
  return window;
}

let pingToken = 0x7e000000;

/**
 * A _NET_WM_PING round trip to `window`'s app (EWMH: a ClientMessage of type WM_PROTOCOLS, data [_NET_WM_PING,
 * timestamp, window]; the app sends it back to the root). Null when the window does not list _NET_WM_PING in
 * WM_PROTOCOLS (it would never answer), false when it did not answer within PING_BOUND_MS. The token stands
 * in the timestamp's place, so an answer to another client's ping is not taken for ours.
 */
async function ping(x: XConnection, window: number): Promise<boolean | null> {
  const [protocols, pingAtom, wmProtocols] = await Promise.all([
    x.property(window, 'WM_PROTOCOLS', 64).catch(() => null),
    x.atom('_NET_WM_PING'),
    x.atom('WM_PROTOCOLS'),
  ]);
  if (!cardinals(protocols).includes(pingAtom)) return null;
  const token = (pingToken = pingToken >= 0x7effffff ? 0x7e000000 : pingToken + 1);
  const event = Buffer.alloc(32);
  event[0] = 33; // ClientMessage
  event[1] = 32; // format
  event.writeUInt32LE(window, 4);
  event.writeUInt32LE(wmProtocols, 8);
  event.writeUInt32LE(pingAtom, 12);
  event.writeUInt32LE(token, 16);
  event.writeUInt32LE(window, 20);
  let stop = () => {};
  const answered = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), PING_BOUND_MS);
    const off = x.onEvent((e) => {
      if ((e[0] & 0x7f) === 33 && e.readUInt32LE(12) === pingAtom && e.readUInt32LE(16) === token) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    stop = () => {
      clearTimeout(timer);
      off();
    };
  });
  // The answer goes to the root with SubstructureNotify (GTK) or StructureNotify (Qt) beside the window
  // manager's SubstructureRedirect: heard while a ping is out, and only then.
  listening++;
  if (listening === 1) x.selectInput(x.root, STRUCTURE_NOTIFY | SUBSTRUCTURE_NOTIFY);
  try {
    x.sendEvent(window, 0, event);
    return await answered;
  } finally {
    stop();
    listening--;
    if (listening === 0 && !x.closed) x.selectInput(x.root, 0);
  }
}
const STRUCTURE_NOTIFY = 0x20000;
const SUBSTRUCTURE_NOTIFY = 0x80000;
let listening = 0;
