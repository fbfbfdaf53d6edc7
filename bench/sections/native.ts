// The native route (Linux, AT-SPI + XTest) on one GTK field, side by side in one run: Verity's verified
// type_text over MCP, the raw AT-SPI floor (one InsertText + one GetText on a bare D-Bus connection to the
// app's own socket, the route Verity takes; and through the bus daemon, for comparison), taken in turns;
// XTest keystrokes (nut-js) and `xdotool type`, each keystroke route timed until its text is read back;
// non-ASCII text by keystrokes (borrowed keycodes), Verity against `xdotool type`; and get_window_state of
// a ~500-node window against a bare walk of the same tree. Skips itself (a note) where Xvfb / AT-SPI / GTK
// are missing.
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { DBusConnection } from '../../server/native/linux/transport/dbus.js';
import { startMcp, REPO_ROOT, type McpSession, type ToolResult } from '../mcp.js';
import { describe, measure, measureInTurns, type Side } from '../stats.js';
import { timingNote, type Timings } from '../drivers/verity.js';
import { failed, ok, type BenchContext, type Cell, type Row, type Section } from '../types.js';
import {
  appBusName,
  missingToolkit,
  missingTools,
  missingWaylandTools,
  startApp,
  startDesktop,
  startWaylandDesktop,
  until,
  type Desktop,
  type Toolkit,
} from '../../test/native/desktop.js';

const TEXT = Array.from({ length: 100 }, (_, i) => 'abcdefghij klmnopqrstuvwxyz0123456789'[i % 37]).join('');

/** For the keystroke-only widget: characters the keyboard map lacks (borrowed keycodes) among ones it has. */
const NON_ASCII = 'é ß → 世界 ΩÀ';

/** A child that types TEXT through nut-js (XTest) on each "type" line, answering "ok". */
const TYPIST = `
import { createRequire } from 'node:module';
const require = createRequire(${JSON.stringify(join(REPO_ROOT, 'package.json'))});
const { keyboard } = require('@nut-tree-fork/nut-js');
keyboard.config.autoDelayMs = 0;
import { createInterface } from 'node:readline';
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'type') await keyboard.type(${JSON.stringify(TEXT)});
  process.stdout.write('ok\\n');
}
`;

interface Ref {
  bus: string;
  path: string;
}

/**
 * The window-state rows and the MCP hop run after at least this many warm-up calls on each side, and are
 * the median of at least this many: a server answers many calls, and before the JIT has compiled a path
 * its first calls measure the compiler, not the route; sub-millisecond medians of 15 swing by a fifth.
 * (The keystroke rows are 50-100 times apart from Verity and keep the usual counts.)
 */
const STEADY = { warmup: 200, iterations: 60 };

/**
 * Verified typing and its floors: measured in turns, after warming both sides to their steady state. A
 * server's call runs a long chain of small functions once each, so V8 needs well over a thousand calls to
 * optimise them all: measured on this VM, Verity's median per 100 calls falls from about 0.85 ms to 0.5 ms
 * by call 1500-2000 (with the floor's loop from 0.37 to 0.29 ms). The warm-up curve and the first 100
 * calls of each side are reported next to the result. The median is over 1000 rounds (2-3 s): Verity's
 * call passes through three processes on two cores, and how the scheduler happens to place them shifts
 * its median per 100 calls by up to a fifth for a quarter of a second at a time (the floor's, two
 * processes, stays within a few percent).
 */
const TURNS = { warmup: 2000, iterations: 1000 };

/** Reads `read` every millisecond until `done` holds of it or `boundMs` passed; the last value read. */
/** `verity mcp` on this desktop: its environment is taken from ours at spawn time, then ours is put back. */
async function verityOn(ctx: BenchContext, d: Desktop, name: string): Promise<McpSession> {
  const saved = { ...process.env };
  Object.assign(process.env, d.env);
  try {
    return await startMcp(ctx.procs, {
      name,
      command: process.execPath,
      args: [join(REPO_ROOT, 'bin', 'verity.js'), 'mcp', '--headless'],
      cwd: REPO_ROOT,
    });
  } finally {
    for (const k of Object.keys(d.env)) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

async function readUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, boundMs: number): Promise<T> {
  const deadline = performance.now() + boundMs;
  for (;;) {
    const value = await read();
    if (done(value) || performance.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Times `run` after an untimed `reset`; `check` (untimed) proves each run did what it claims. */
async function timeIt<T>(
  ctx: BenchContext,
  label: string,
  reset: () => Promise<void>,
  run: () => Promise<T>,
  check?: (result: T) => Promise<void>,
  at: Partial<BenchContext['config']> = {},
): Promise<Cell> {
  try {
    const config = {
      warmup: Math.max(at.warmup ?? 0, ctx.config.warmup),
      iterations: Math.max(at.iterations ?? 0, ctx.config.iterations),
    };
    const s = await measure(config, { prepare: reset, act: run, check });
    ctx.log(`native: ${label}: ${s.median.toFixed(1)} ms (${describe(s)})`);
    return ok(s.median, describe(s));
  } catch (e) {
    ctx.log(`native: ${label}: FAILED: ${(e as Error).message}`);
    return failed(e);
  }
}

export const nativeSection: Section = {
  name: 'native',
  async run(ctx) {
    const missing = missingTools();
    if (missing) {
      ctx.notes.push(
        `native section skipped: ${missing} (needs xvfb, openbox, dbus, at-spi2-core, xdotool, x11-utils, python3-gi + gir1.2-gtk-3.0)`,
      );
      return [];
    }
    let desktop: Desktop | null = null;
    let verity: McpSession | null = null;
    let bare: DBusConnection | null = null;
    let direct: DBusConnection | null = null;
    try {
      desktop = await startDesktop();
      const d = desktop;
      const app = await startApp(d, 'Bench Form', ['--many', '150']);
      const windowId = app.windowId();
      d.x('xdotool', ['windowactivate', '--sync', String(windowId)]);

      verity = await verityOn(ctx, d, 'verity-native');
      const v = verity;
      const target = { kind: 'window', pid: app.pid, window_id: windowId };

      // The bare connections: the floor's own view of the same field and tree, through the bus daemon and
      // straight to the app's own socket. Verity's own wire client, so that the floor pays no library cost.
      bare = await DBusConnection.open(d.env.AT_SPI_BUS_ADDRESS);
      const viaBus =
        (c: DBusConnection) =>
        async (ref: Ref, iface: string, member: string, signature = '', body: unknown[] = []): Promise<any[]> =>
          c.call({ destination: ref.bus, path: ref.path, interface: iface, member, signature, body });
      const call = viaBus(bare);
      await call(
        { bus: 'org.a11y.atspi.Registry', path: '/org/a11y/atspi/registry' },
        'org.a11y.atspi.Registry',
        'RegisterEvent',
        'sass',
        ['object:children-changed', [], ''],
      );
      const appBus = await appBusName(bare, app.pid);
      if (!appBus) throw new Error('the GTK app is not on the AT-SPI bus');
      const items = (
        await call({ bus: appBus, path: '/org/a11y/atspi/cache' }, 'org.a11y.atspi.Cache', 'GetItems')
      )[0] as any[];
      const field: Ref = (() => {
        const row = items.find((r) => r[6] === 'Name' && r[7] === 61);
        return { bus: row[0][0], path: row[0][1] };
      })();
      const frameRow = items.find((r) => r[6] === 'Bench Form' && r[7] === 23);
      const frame: Ref = { bus: frameRow[0][0], path: frameRow[0][1] };
      const [appSocket] = await call(
        { bus: appBus, path: '/org/a11y/atspi/accessible/root' },
        'org.a11y.atspi.Application',
        'GetApplicationBusAddress',
      );
      direct = await DBusConnection.open(String(appSocket), { peer: true });
      const callDirect = viaBus(direct);
      const getText = async () => String((await call(field, 'org.a11y.atspi.Text', 'GetText', 'ii', [0, -1]))[0]);
      const clear = async () => {
        await call(field, 'org.a11y.atspi.EditableText', 'SetTextContents', 's', ['']);
      };
      const landed = async (what: string) => {
        const held = await readUntil(getText, (t) => t === TEXT, 10_000);
        if (held !== TEXT)
          throw new Error(`${what}: the field never held the text (holds ${JSON.stringify(held.slice(0, 40))})`);
      };

      // Verity: the token of the same field, then verified type_text.
      const snap = await v.call('get_window_state', {
        target,
        include_screenshot: false,
        max_elements: 5000,
        format: 'full',
      });
      const sc = snap.structuredContent as {
        elements: Array<{ label: string; role: string; element_token: string }>;
        element_count: number;
      };
      const token = sc.elements.find((e) => e.label === 'Name' && e.role === 'text')!.element_token;
      // Verity's verified type_text and the two floors, in turns (see TURNS).
      const serverTimings: Timings[] = [];
      const floorOn = (c: typeof call) => async () => {
        await c(field, 'org.a11y.atspi.EditableText', 'InsertText', 'isi', [0, TEXT, Buffer.byteLength(TEXT)]);
        if (String((await c(field, 'org.a11y.atspi.Text', 'GetText', 'ii', [0, -1]))[0]) !== TEXT)
          throw new Error('the floor insertion did not land');
      };
      const verityCall: Side<ToolResult> = {
        prepare: clear,
        act: async () => (await v.timed('type_text', { element_token: token, text: TEXT })).result,
        check: async (result) => {
          const s = result.structuredContent as { effect?: string; timings_ms?: Record<string, number> } | undefined;
          if (s?.effect !== 'confirmed')
            throw new Error(`type_text was not confirmed: ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
          // Checked independently, outside the timed part, as the floor's own read-back is inside its own.
          if ((await getText()) !== TEXT) throw new Error('the field does not hold the text after Verity typed it');
          if (s.timings_ms) serverTimings.push(s.timings_ms);
        },
      };
      let verityType: Cell,
        floorType: Cell,
        floorViaBus: Cell,
        coldRow: Row | null = null;
      try {
        ctx.log(
          `native: Verity type_text and the AT-SPI floors in turns: ${TURNS.warmup} warm-up rounds, then ${TURNS.iterations} measured`,
        );
        const turns = await measureInTurns(TURNS, [
          verityCall,
          { prepare: clear, act: floorOn(callDirect) },
          { prepare: clear, act: floorOn(call) },
        ]);
        [verityType, floorType, floorViaBus] = turns.samples.map((sample) => ok(sample.median, describe(sample)));
        ['Verity type_text', 'AT-SPI floor (app socket)', 'AT-SPI floor (through the bus)'].forEach((label, k) =>
          ctx.log(
            `native: ${label}: ${turns.samples[k]!.median.toFixed(2)} ms (${describe(turns.samples[k]!)}); first 100 calls ${turns.curve[k]![0]!.toFixed(2)} ms`,
          ),
        );
        const curve = (k: number) => turns.curve[k]!.map((ms) => ms.toFixed(2)).join(' ');
        ctx.notes.push(
          `native type_text warm-up, median of each 100 calls in ms: Verity ${curve(0)}; floor (app socket) ${curve(1)}.`,
        );
        coldRow = {
          metric: 'native type_text, first 100 calls of each side (info)',
          unit: 'ms',
          cells: { verity: ok(turns.curve[0]![0]!), floor: ok(turns.curve[1]![0]!) },
          checks: [],
          note: "the same turns before anything was warm: Verity's server (one get_window_state before) and the floor's loop in this process, both before V8 optimised their code.",
        };
      } catch (e) {
        ctx.log(`native: type_text in turns: FAILED: ${(e as Error).message}`);
        verityType = floorType = floorViaBus = failed(e);
      }
      ctx.notes.push(timingNote('native type_text (100 chars)', serverTimings.slice(-TURNS.iterations)));
      const hop = await timeIt(
        ctx,
        'MCP round trip of list_sessions',
        async () => {},
        async () => (await v.timed('list_sessions', {})).result,
        async (result) => {
          if (result.isError) throw new Error('list_sessions refused');
        },
        STEADY,
      );
      // Keystrokes go to the focused widget: the field, focused once (the window has focus).
      await call(field, 'org.a11y.atspi.Component', 'GrabFocus');
      // nut-js runs in a child process: its X connection would end this process when Xvfb stops.
      const typist = spawn(process.execPath, ['--input-type=module', '-e', TYPIST], {
        env: { ...process.env, ...d.env },
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      ctx.procs.addProcess(typist.pid!, 'nut-js typist');
      const lines = createInterface({ input: typist.stdout! });
      const replies: Array<(line: string) => void> = [];
      lines.on('line', (line) => replies.shift()?.(line));
      const ask = (line: string) =>
        new Promise<string>((resolve) => {
          replies.push(resolve);
          typist.stdin!.write(line + '\n');
        });
      await ask('ready');
      const xtest = await timeIt(ctx, 'XTest keystrokes', clear, async () => {
        await ask('type');
        await landed('XTest');
      });
      typist.stdin!.end();
      await new Promise((r) => typist.once('exit', r));
      ctx.procs.forgetProcess(typist.pid!);
      const xdotool = await timeIt(ctx, 'xdotool type', clear, async () => {
        const r = spawnSync('xdotool', ['type', '--delay', '0', TEXT], { env: { ...process.env, ...d.env } });
        if (r.status !== 0) throw new Error(`xdotool type: ${String(r.stderr)}`);
        await landed('xdotool');
      });

      // Non-ASCII text where only keystrokes go in (the "terminal": Text, no EditableText), on keycodes
      // borrowed for the characters the keyboard map lacks: Verity's type_text against `xdotool type`,
      // which borrows keycodes too. Each is timed until the terminal's text has grown by the whole text.
      const termRow = items.find((r) => r[6] === 'Term');
      const term: Ref = { bus: termRow[0][0], path: termRow[0][1] };
      const termText = async () => String((await call(term, 'org.a11y.atspi.Text', 'GetText', 'ii', [0, -1]))[0]);
      /**
       * Waits until the terminal has as many new characters as the text has, and returns them; after
       * `boundMs` without that, what it got (an xdotool run that dropped a character ends there).
       */
      const grownBy = async (before: string, boundMs: number): Promise<string> => {
        const want = Array.from(before + NON_ASCII).length;
        return (await readUntil(termText, (t) => Array.from(t).length >= want, boundMs)).slice(before.length);
      };
      const termToken = sc.elements.find((e) => e.label === 'Term')!.element_token;
      let termBefore = '';
      const verityNonAscii = await timeIt(
        ctx,
        'Verity type_text, non-ASCII keystrokes',
        async () => {
          termBefore = await termText();
        },
        async () => {
          const { result } = await v.timed('type_text', {
            element_token: termToken,
            text: NON_ASCII,
            delivery_mode: 'foreground',
            delay_ms: 0,
          });
          return { result, landed: await grownBy(termBefore, 10_000) };
        },
        async ({ result, landed }) => {
          const s = result.structuredContent as { effect?: string } | undefined;
          if (s?.effect !== 'confirmed')
            throw new Error(`type_text was not confirmed: ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
          if (landed !== NON_ASCII) throw new Error(`Verity's keys landed as ${JSON.stringify(landed)}`);
        },
      );
      await call(term, 'org.a11y.atspi.Component', 'GrabFocus');
      const xdotoolLanded: string[] = [];
      const xdotoolNonAscii = await timeIt(
        ctx,
        'xdotool type, non-ASCII',
        async () => {
          termBefore = await termText();
        },
        async () => {
          const r = spawnSync('xdotool', ['type', NON_ASCII], { env: { ...process.env, ...d.env } });
          if (r.status !== 0) throw new Error(`xdotool type: ${String(r.stderr)}`);
          return grownBy(termBefore, 1000);
        },
        async (landed) => {
          xdotoolLanded.push(landed);
        },
      );
      const shown = [...new Set(xdotoolLanded)].map(
        (t) =>
          `${JSON.stringify(t)}${xdotoolLanded.length > 1 ? ` (${xdotoolLanded.filter((x) => x === t).length} of ${xdotoolLanded.length} runs)` : ''}`,
      );
      ctx.notes.push(
        `native: \`xdotool type\` (its default 12 ms delay; at 0 it dropped the borrowed characters) typed ${JSON.stringify(NON_ASCII)} as ${shown.join(', ')}; a run that dropped characters is timed until 1 s had passed. Verity's text landed exactly every time (checked in each run).`,
      );

      // get_window_state of the ~500-node window vs a bare walk: the cache, then every node's extents.
      const subtreeOf = (rows: any[]) => {
        const byParent = new Map<string, any[]>();
        for (const r of rows) {
          const k = r[2][1];
          byParent.set(k, [...(byParent.get(k) ?? []), r]);
        }
        const out: any[] = [];
        const visit = (r: any) => {
          out.push(r);
          for (const c of byParent.get(r[0][1]) ?? []) visit(c);
        };
        visit(rows.find((r) => r[0][1] === frame.path));
        return out;
      };
      let nodes = 0;
      const bareWalk = await timeIt(
        ctx,
        'bare tree walk',
        async () => {},
        async () => {
          const rows = (
            await callDirect({ bus: appBus, path: '/org/a11y/atspi/cache' }, 'org.a11y.atspi.Cache', 'GetItems')
          )[0] as any[];
          const tree = subtreeOf(rows);
          nodes = tree.length;
          await Promise.all(
            tree.map((r) =>
              callDirect({ bus: r[0][0], path: r[0][1] }, 'org.a11y.atspi.Component', 'GetExtents', 'u', [0]).catch(
                () => null,
              ),
            ),
          );
        },
        undefined,
        STEADY,
      );
      let returned = 0;
      const verityState = await timeIt(
        ctx,
        'Verity get_window_state',
        async () => {},
        async () => {
          const { result } = await v.timed('get_window_state', {
            target,
            include_screenshot: false,
            max_elements: 5000,
          });
          if (result.isError)
            throw new Error(`get_window_state refused: ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
          returned = (result.structuredContent as { element_count: number }).element_count;
        },
        undefined,
        STEADY,
      );
      ctx.notes.push(
        `native: the GTK window has ${nodes} accessible nodes (bare walk = Cache.GetItems + Component.GetExtents of each, pipelined, on the app's socket); Verity lists ${returned} of them (unnamed containers folded) with values and tokens.`,
      );

      const toolkitRows = await perToolkit(ctx, d, v);
      const waylandRows = await waylandTyping(ctx);

      return [
        ...toolkitRows,
        ...waylandRows,
        {
          metric: 'native verified type_text, 100 chars (AT-SPI)',
          unit: 'ms',
          cells: { verity: verityType, floor: floorType },
          checks: [{ of: 'verity', over: 'floor', max: 2 }],
          note: `floor = one EditableText.InsertText + one Text.GetText on a bare D-Bus connection to the app's own socket (Application.GetApplicationBusAddress, the route Verity and libatspi take); Verity = the MCP type_text round trip, confirmed by its read-back, with its changes (the window was observed for the token, so every call walks the window again to say what changed: the timings note's re-read for changes). Taken in turns (Verity, floor, floor through the bus: one call each per round), median of ${TURNS.iterations} rounds after ${TURNS.warmup} warm-up rounds.`,
        },
        ...(coldRow ? [coldRow] : []),
        {
          metric: 'native type_text vs the AT-SPI floor through the bus daemon',
          unit: 'ms',
          cells: { verity: verityType, floor: floorViaBus },
          checks: [],
          note: 'floor column here = the same insertion and read-back through the AT-SPI bus daemon (the route when an app offers no socket of its own).',
        },
        {
          metric: 'MCP round trip of a no-op tool (list_sessions), stdio',
          unit: 'ms',
          cells: { verity: hop },
          checks: [],
          note: 'what any MCP tool call costs before it does anything: the part of the Verity column no server work can remove.',
        },
        {
          metric: 'native type_text vs XTest keystrokes (nut-js), 100 chars',
          unit: 'ms',
          cells: { verity: verityType, floor: xtest },
          checks: [{ of: 'verity', over: 'floor', max: 0.1 }],
          note: 'floor column here = nut-js keyboard.type (XTest, autoDelay 0) until the field reads back the text.',
        },
        {
          metric: 'native type_text vs `xdotool type`, 100 chars',
          unit: 'ms',
          cells: { verity: verityType, floor: xdotool },
          checks: [{ of: 'verity', over: 'floor', max: 0.1 }],
          note: 'floor column here = `xdotool type --delay 0` until the field reads back the text.',
        },
        {
          metric: `native type_text by keystrokes, non-ASCII (${Array.from(NON_ASCII).length} chars) vs \`xdotool type\``,
          unit: 'ms',
          cells: { verity: verityNonAscii, floor: xdotoolNonAscii },
          checks: [],
          note: `text = ${JSON.stringify(NON_ASCII)} into a widget with AT-SPI Text but no EditableText (a terminal), so both send keystrokes and borrow keycodes for the characters the keyboard map lacks; Verity confirmed by its read-back, both timed until the widget's text has grown by the whole text.`,
        },
        {
          metric: `native get_window_state, ${nodes} nodes`,
          unit: 'ms',
          cells: { verity: verityState, floor: bareWalk },
          checks: [{ of: 'verity', over: 'floor', max: 1.5 }],
          note: 'floor = a bare walk of the same window tree; Verity without the screenshot (include_screenshot false).',
        },
      ] satisfies Row[];
    } finally {
      bare?.close();
      direct?.close();
      await verity?.close().catch(() => undefined);
      await desktop?.close();
    }
  },
};

/** The same text for every toolkit's multi-line field: accents, an emoji, CJK, RTL and newlines. */
const MIXED = 'Grüße café 😀\n世界 مرحبا\nend of it';
const TOOLKIT_NAMES: Record<Toolkit, string> = { gtk3: 'GTK 3', gtk4: 'GTK 4', qt: 'Qt 5', tk: 'Tk', swing: 'Swing' };

/** Characters of `want` missing from `got` (code points; want's length minus their longest common subsequence). */
export function charactersLost(want: string, got: string): number {
  const a = Array.from(want),
    b = Array.from(got);
  let prev = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++)
      row[j] = a[i - 1] === b[j - 1] ? prev[j - 1]! + 1 : Math.max(prev[j]!, row[j - 1]!);
    prev = row;
  }
  return a.length - prev[b.length]!;
}

/**
 * Verified native typing per toolkit (GTK 3, GTK 4, Qt 5) against `xdotool type` (its default 12 ms per
 * key), on the same multi-line text into each app's own multi-line field. Both are timed until the app
 * holds the text (a run that lost characters: until 1 s had passed), and the characters each lost are
 * counted from the app's own report of what its field holds.
 */
async function perToolkit(ctx: BenchContext, d: Desktop, v: McpSession): Promise<Row[]> {
  const rows: Row[] = [];
  const runs = Math.min(5, Math.max(1, ctx.config.iterations));
  for (const toolkit of ['gtk3', 'gtk4', 'qt'] as Toolkit[]) {
    const why = missingToolkit(toolkit);
    const name = TOOLKIT_NAMES[toolkit];
    if (why) {
      ctx.notes.push(`native ${name} row skipped: ${why}`);
      continue;
    }
    const app = await startApp(d, `Bench ${name}`, [], toolkit);
    try {
      const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
      d.x('xdotool', ['windowactivate', '--sync', String(app.windowId())]);
      const info = d.x('xwininfo', ['-id', String(app.windowId())]);
      const origin = {
        x: Number(/Absolute upper-left X:\s*(-?\d+)/.exec(info)?.[1]),
        y: Number(/Absolute upper-left Y:\s*(-?\d+)/.exec(info)?.[1]),
      };
      const field = await until(
        async () => {
          const r = await v.timed('get_window_state', { target, include_screenshot: false, format: 'full' });
          const els =
            (
              (r.result.structuredContent ?? {}) as {
                elements?: Array<{
                  label: string;
                  element_token: string;
                  frame: { x: number; y: number; w: number; h: number };
                }>;
              }
            ).elements ?? [];
          return els.find((e) => e.label === 'Notes');
        },
        `the Notes field of the ${name} app`,
        15_000,
        200,
      );
      const clear = async () => {
        const r = await v.timed('set_value', { element_token: field.element_token, value: '' });
        if ((r.result.structuredContent as { effect?: string } | undefined)?.effect !== 'confirmed')
          throw new Error(`clearing the field: ${JSON.stringify(r.result.structuredContent).slice(0, 200)}`);
        await app.waitFor((st) => st.notes === '', 'the cleared field');
      };
      /** What the app holds once it holds MIXED, or after 1 s without it. */
      const held = async () => {
        await app.waitFor((st) => st.notes === MIXED, 'the text', 1000).catch(() => undefined);
        return app.state().notes;
      };
      const lost = { verity: [] as number[], xdotool: [] as number[] };
      const verity = await timeIt(
        ctx,
        `${name}: Verity type_text, mixed text`,
        clear,
        async () => {
          const { result } = await v.timed('type_text', { element_token: field.element_token, text: MIXED });
          return { result, holds: await held() };
        },
        async ({ result, holds }) => {
          const effect = (result.structuredContent as { effect?: string } | undefined)?.effect;
          lost.verity.push(charactersLost(MIXED, holds));
          // Never a confirmation the app's own state contradicts.
          if (effect === 'confirmed' && holds !== MIXED)
            throw new Error(`FALSE CONFIRMATION: the app holds ${JSON.stringify(holds)}`);
          if (effect !== 'confirmed')
            throw new Error(`type_text was ${effect}: ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
        },
        { warmup: 1, iterations: runs },
      );
      const xdotool = await timeIt(
        ctx,
        `${name}: xdotool type, mixed text`,
        async () => {
          await clear();
          // Keys go where the pointer's click put the focus: the field.
          d.x('xdotool', [
            'mousemove',
            String(origin.x + field.frame.x + field.frame.w / 2),
            String(origin.y + field.frame.y + field.frame.h / 2),
            'click',
            '1',
          ]);
          await new Promise((r) => setTimeout(r, 100));
        },
        async () => {
          const r = spawnSync('xdotool', ['type', MIXED], { env: { ...process.env, ...d.env } });
          if (r.status !== 0) throw new Error(`xdotool type: ${String(r.stderr)}`);
          return held();
        },
        async (holds) => {
          lost.xdotool.push(charactersLost(MIXED, holds));
        },
        { warmup: 1, iterations: runs },
      );
      const total = (xs: number[]) =>
        `${xs.reduce((a, b) => a + b, 0)} of ${xs.length * Array.from(MIXED).length} characters lost in ${xs.length} runs`;
      ctx.log(`native ${name}: Verity ${total(lost.verity)}; xdotool ${total(lost.xdotool)}`);
      rows.push({
        metric: `native ${name} multi-line field, ${Array.from(MIXED).length} chars with non-ASCII and newlines: type_text vs \`xdotool type\``,
        unit: 'ms',
        cells: { verity, floor: xdotool },
        checks: [],
        note: `text ${JSON.stringify(MIXED)}; the app's own state is the truth. Verity (verified type_text): ${total(lost.verity)}; \`xdotool type\` (default delay): ${total(lost.xdotool)}. Both timed until the app holds the text, a lossy run until 1 s had passed.`,
      });
    } catch (e) {
      ctx.log(`native ${name}: FAILED: ${(e as Error).message}`);
      rows.push({
        metric: `native ${name} multi-line field: type_text vs \`xdotool type\``,
        unit: 'ms',
        cells: { verity: failed(e) },
        checks: [],
      });
    } finally {
      await app.kill();
    }
  }
  return rows;
}

/**
 * Typing on Wayland (sway headless, no DISPLAY), beside the xdotool rows: Verity's type_text by token (AT-SPI
 * insertion) and by keystrokes (the terminal: Text without EditableText, so wtype under Verity) against
 * `wtype` itself into the focused widget, each timed until the app reports the text.
 */
export async function waylandTyping(ctx: BenchContext): Promise<Row[]> {
  const missing = missingWaylandTools();
  if (missing) {
    ctx.notes.push(`native Wayland typing rows skipped: ${missing} (needs sway, wtype, grim, xwayland)`);
    return [];
  }
  let d: Desktop | null = null;
  let v: McpSession | null = null;
  try {
    d = await startWaylandDesktop();
    const desktop = d;
    const app = await startApp(d, 'Bench Wayland');
    v = await verityOn(ctx, d, 'verity-wayland');
    const session = v;
    const listed = await session.call('list_windows', {});
    const win = (
      listed.structuredContent as { windows: Array<{ pid: number | null; window_id: number }> }
    ).windows.find((w) => w.pid === app.pid);
    if (!win) throw new Error('the Wayland app is not in list_windows');
    const snap = await session.call('get_window_state', {
      target: { kind: 'window', pid: app.pid, window_id: win.window_id },
      include_screenshot: false,
      format: 'full',
    });
    const els = (snap.structuredContent as { elements: Array<{ label: string; element_token: string }> }).elements;
    const token = (label: string) => {
      const e = els.find((x) => x.label === label);
      if (!e) throw new Error(`the Wayland app lists no "${label}"`);
      return e.element_token;
    };
    const [name, term] = [token('Name'), token('Term')];
    const wtype = (text: string) => {
      const r = spawnSync('wtype', ['-'], { input: text, env: { ...process.env, ...desktop.env } });
      if (r.status !== 0) throw new Error(`wtype: ${String(r.stderr)}`);
    };
    const verified = async (args: Record<string, unknown>) => {
      const { result } = await session.timed('type_text', args);
      const effect = (result.structuredContent as { effect?: string } | undefined)?.effect;
      if (effect !== 'confirmed')
        throw new Error(`type_text: ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
    };
    // The field, emptied (and focused, for wtype's keys) before each run; the app's own report is the truth.
    const emptyName = async () => {
      const r = await session.call('set_value', { element_token: name, value: '' });
      if ((r.structuredContent as { effect?: string } | undefined)?.effect !== 'confirmed')
        throw new Error(`clearing the field: ${JSON.stringify(r.structuredContent).slice(0, 200)}`);
      await app.waitFor((st) => st.entry === '', 'the emptied Name');
    };
    // The terminal only grows (it has no EditableText to empty): each run waits for TEXT more than before.
    let termFrom = 0;
    const markTerm = async () => {
      termFrom = app.state().term.length;
    };
    const termHolds = (what: string) =>
      app.waitFor((st) => st.term.length >= termFrom + TEXT.length, `${what} in the terminal`, 10_000);
    const byToken = await timeIt(ctx, 'Wayland: Verity type_text by token', emptyName, async () => {
      await verified({ element_token: name, text: TEXT });
      await app.waitFor((st) => st.entry === TEXT, 'the text in Name', 10_000);
    });
    const wtypeName = await timeIt(
      ctx,
      'Wayland: wtype into the focused field',
      async () => {
        await emptyName();
        await session.call('click', { element_token: name }); // focus for the keys
      },
      async () => {
        wtype(TEXT);
        await app.waitFor((st) => st.entry === TEXT, 'the wtype text in Name', 10_000);
      },
    );
    const byKeys = await timeIt(ctx, 'Wayland: Verity type_text by keystrokes (wtype)', markTerm, async () => {
      await verified({ element_token: term, text: TEXT, delay_ms: 0 });
      await termHolds('Verity keys');
    });
    const wtypeTerm = await timeIt(ctx, 'Wayland: wtype into the terminal', markTerm, async () => {
      wtype(TEXT);
      await termHolds('wtype keys');
    });
    return [
      {
        metric: 'native type_text vs `wtype`, 100 chars (Wayland, sway)',
        unit: 'ms',
        cells: { verity: byToken, floor: wtypeName },
        checks: [],
        note: 'a GTK 3 entry on headless sway with no DISPLAY; Verity = the MCP type_text round trip by token (AT-SPI insertion, confirmed by its read-back); floor column here = `wtype -` (virtual-keyboard protocol) into the focused entry, timed until the app reports the text.',
      },
      {
        metric: 'native type_text by keystrokes vs `wtype`, 100 chars (Wayland, sway)',
        unit: 'ms',
        cells: { verity: byKeys, floor: wtypeTerm },
        checks: [],
        note: "a widget with Text but no EditableText (a terminal), so Verity's keys go through wtype too (plus its keymap settle and its read-back); both timed until the app reports the whole text.",
      },
    ];
  } catch (e) {
    ctx.log(`native: Wayland typing: FAILED: ${(e as Error).message}`);
    ctx.notes.push(`native Wayland typing rows failed: ${(e as Error).message}`);
    return [];
  } finally {
    await v?.close().catch(() => undefined);
    await d?.close();
  }
}
