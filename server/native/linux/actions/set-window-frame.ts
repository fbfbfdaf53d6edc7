// set_window_frame on the Linux desktop: the window's area (its client area, as list_windows reports it)
// asked of the window manager (EWMH _NET_MOVERESIZE_WINDOW with static gravity, or ConfigureWindow; sway:
// floating, move, resize), and read back: confirmed when it is where it was asked, partial when the window
// manager placed it elsewhere (a minimum size, the screen's edge, a size increment), saying where.
import type { ActionArgs, WindowFrame } from '../../../contract/actions.js';
import { type ActionResult, type Evidence, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import type { LinuxHost } from '../host.js';
import { type NetState, readWm, requestFrame, requestStates, waitForWm } from '../transport/ewmh.js';
import { placements, swayCommand } from '../transport/wayland.js';
import { CLAMP_STEADY_MS, WM_BOUND_MS, askedOf, wmResult, wmWindow, type WmWindow } from './window-manager.js';

type Bounds = { x: number; y: number; w: number; h: number };

const same = (b: Bounds, f: WindowFrame) => b.x === f.x && b.y === f.y && b.w === f.width && b.h === f.height;
const text = (b: Bounds) => `(${b.x}, ${b.y}) ${b.w}x${b.h}`;

export async function setWindowFrame(
  host: LinuxHost,
  target: ResolvedTarget,
  frame: ActionArgs['setWindowFrame'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const win = await wmWindow(host, target, 'set_window_frame');
  sw.lap('resolve');
  const asked: Bounds = { x: frame.x, y: frame.y, w: frame.width, h: frame.height };
  if (win.via.kind === 'sway') return swayFrame(win, frame, asked, sw);
  const before = await readWm(win.id);
  if (!before.window?.viewable)
    throw new Refusal(
      'invalid_arguments',
      `window ${win.id} ("${win.title}") is minimized (not shown); call set_window_state "normal" first`,
      { window_id: win.id },
    );
  const notes: string[] = [];
  // A maximized or fullscreen window keeps its size whatever is asked: it is made normal first, and said.
  const fixed: NetState[] = before.states.filter(
    (s) => s === 'MAXIMIZED_VERT' || s === 'MAXIMIZED_HORZ' || s === 'FULLSCREEN',
  );
  if (fixed.length) {
    if (fixed.includes('FULLSCREEN')) await requestStates(win.id, false, ['FULLSCREEN']);
    await requestStates(win.id, false, ['MAXIMIZED_VERT', 'MAXIMIZED_HORZ']);
    await waitForWm(win.id, (v) => !v.states.some((s) => fixed.includes(s)), WM_BOUND_MS);
    notes.push(`it was ${fixed.join(' and ').toLowerCase()}: made normal first`);
  }
  const start = (await readWm(win.id)).window?.bounds ?? before.window.bounds;
  const request = await requestFrame(win.id, frame);
  sw.lap('deliver');
  const { view, held, waitedMs } = await waitForWm(
    win.id,
    (v) => !!v.window && same(v.window.bounds, frame),
    WM_BOUND_MS,
    // Moved, then still for a while without matching: the window manager placed it where it allows.
    (v, steadyMs) => !!v.window && !sameBounds(v.window.bounds, start) && steadyMs >= CLAMP_STEADY_MS,
  );
  if (!view.window || !view.listed)
    throw new Refusal('target_not_found', `window ${win.id} closed while it was being moved`, { window_id: win.id });
  const got = view.window.bounds;
  const evidence: Evidence[] = [
    {
      kind: 'window_frame',
      expected: text(asked),
      observed: text(got),
      detail: `${askedOf(win)} asked with ${request}; the X server's geometry read back after ${waitedMs} ms${notes.length ? `; ${notes.join('; ')}` : ''}`,
    },
  ];
  return verdict(
    win,
    sw,
    held,
    start,
    got,
    asked,
    evidence,
    `ewmh_${request === 'ConfigureWindow' ? 'configure' : 'moveresize'}`,
  );
}

function sameBounds(a: Bounds, b: Bounds): boolean {
  return a.x === b.x && a.y === b.y && a.w === b.w && a.h === b.h;
}

function verdict(
  win: WmWindow,
  sw: Stopwatch,
  held: boolean,
  start: Bounds,
  got: Bounds,
  asked: Bounds,
  evidence: Evidence[],
  method: string,
): ActionResult {
  const observed = { frame: got };
  if (held) return wmResult('confirmed', sw, win, method, evidence, { observed });
  if (sameBounds(got, start))
    return wmResult('no_effect', sw, win, method, evidence, {
      observed,
      escalation: {
        target: 'verify',
        reason: `the window manager left window ${win.id} at ${text(got)} (asked ${text(asked)}) within ${WM_BOUND_MS} ms`,
      },
    });
  const clamped = [
    got.x !== asked.x || got.y !== asked.y ? `placed at (${got.x}, ${got.y})` : null,
    got.w !== asked.w || got.h !== asked.h ? `sized ${got.w}x${got.h}` : null,
  ].filter(Boolean);
  return wmResult('partial', sw, win, method, evidence, {
    observed,
    escalation: {
      target: 'verify',
      reason: `the window manager clamped the frame: ${clamped.join(' and ')} instead of ${text(asked)} (a minimum or maximum size, a size increment, or the screen's edge)`,
    },
  });
}

/** sway: the window made floating (a tiled one's size is the layout's), moved and resized, read back from its tree. */
async function swayFrame(win: WmWindow, frame: WindowFrame, asked: Bounds, sw: Stopwatch): Promise<ActionResult> {
  const bounds = async () => (await placements())?.find((p) => p.xid === win.id || p.title === win.title)?.bounds;
  const start = (await bounds()) ?? asked;
  // sway sizes and places the container (its border and title around the window): asked once as given,
  // then once more corrected by the difference read back, so the window itself lands where asked.
  const command = (f: Bounds) =>
    `floating enable, resize set width ${f.w} px height ${f.h} px, move absolute position ${f.x} ${f.y}`;
  const con = await swayCommand(win.id, command(asked));
  sw.lap('deliver');
  const began = Date.now();
  const settle = async () => {
    let seen = await bounds();
    for (let last = ''; Date.now() - began < WM_BOUND_MS; ) {
      if (seen && same(seen, frame)) break;
      const key = JSON.stringify(seen);
      if (key === last) break; // read twice alike: sway is done
      last = key;
      await new Promise((r) => setTimeout(r, 100));
      seen = await bounds();
    }
    return seen;
  };
  let got = await settle();
  if (got && !same(got, frame)) {
    const sent = { x: 2 * asked.x - got.x, y: 2 * asked.y - got.y, w: 2 * asked.w - got.w, h: 2 * asked.h - got.h };
    if (sent.w > 0 && sent.h > 0) {
      await swayCommand(win.id, command(sent));
      got = await settle();
    }
  }
  if (!got)
    throw new Refusal('target_not_found', `window ${win.id} is no longer in sway's tree`, { window_id: win.id });
  const evidence: Evidence[] = [
    {
      kind: 'window_frame',
      expected: text(asked),
      observed: text(got),
      detail: `sway container ${con} made floating, resized and moved (once more corrected by what it read back when off); its tree read back after ${Date.now() - began} ms (the area is sway's window_rect: sway moves the container, its border around the window)`,
    },
  ];
  return verdict(win, sw, same(got, frame), start, got, asked, evidence, 'sway_ipc');
}
