// Lifecycle sessions (seed 000) through the real MCP client: implicit sessions, labels scoped to their
// connection, tombstones and revival, cleanup hooks exactly once per end (end_session, disconnect, idle
// timeout, shutdown), get_session / list_sessions, cursor motion clamping and precedence, the agent cursor
// in a driven tab, and recording. Every process started here is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { sharedChromium, model, type TestBrowser } from '../helpers/chromium.js';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { snapshot, startVerity, type Verity } from '../helpers/mcp.js';
import {
  alive,
  hookLines,
  killPid,
  refusalOf,
  sleep,
  startGateway,
  waitFor,
  type Connection,
  type Gateway,
  type HookLine,
} from '../helpers/gateway.js';

const tmp = mkdtempSync(join(tmpdir(), 'verity-sessions-'));
const dir = (name: string) => join(tmp, name);
let fx: FixtureServer;
let chrome: TestBrowser;
before(async () => {
  fx = await serveFixtures();
  chrome = await sharedChromium();
});
after(async () => {
  await chrome?.close();
  await fx?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** A session with all three kinds of cleanup hook registered: cursor (always), recording, config. */
async function prepare(call: Connection['call'], label: string): Promise<void> {
  const started = await call('start_session', { session: label, recording_dir: `rec-${label}` }); // under <config dir>/recordings
  assert.equal(started.isError, false, started.text);
  const set = await call('set_agent_cursor_motion', { session: label, spring: 0.5 });
  assert.equal(set.isError, false, set.text);
}

/** Each of cursor, recording and config ran exactly once for (connection, label), for `reason`. */
function assertHooksOnce(lines: HookLine[], label: string, reason: string, connection?: string): string {
  const mine = lines.filter((l) => l.session === label && (!connection || l.connection === connection));
  assert.deepEqual(mine.map((l) => l.hook).sort(), ['config', 'cursor', 'recording'], JSON.stringify(mine));
  assert.ok(
    mine.every((l) => l.reason === reason),
    JSON.stringify(mine),
  );
  return mine[0].connection;
}

function assertNoHookRanTwice(lines: HookLine[]): void {
  const keys = lines.map((l) => `${l.connection}/${l.session}/${l.hook}/${l.reason}`);
  assert.equal(new Set(keys).size, keys.length, `a hook ran twice: ${JSON.stringify(lines)}`);
}

const labels = (r: { structured: any }) =>
  (r.structured.sessions as Array<{ session: string | null }>).map((s) => s.session);

describe('sessions over two HTTP connections at once', () => {
  let gw: Gateway;
  let a: Connection, b: Connection, c: Connection;
  const log = dir('gateway.log');
  before(async () => {
    gw = await startGateway(chrome.attach, {
      VERITY_SESSION_LOG: log,
      VERITY_CONFIG_DIR: dir('cfg-gw'),
      VERITY_SESSION_IDLE_MS: undefined,
      VERITY_REDUCED_MOTION: undefined,
    });
    [a, b, c] = [await gw.connect(), await gw.connect(), await gw.connect()];
  });
  after(async () => {
    await gw?.close();
  });

  test('an ordinary action creates the implicit session; get_session reports its fields', async () => {
    // Seed 000: "omit session to inspect its implicit session" (the contract: not a refusal), and reading
    // it creates nothing.
    const before = await a.call('get_session');
    assert.equal(before.isError, false, before.text);
    assert.deepEqual(
      [before.structured.session, before.structured.implicit, before.structured.state],
      [null, true, 'active'],
    );
    assert.deepEqual(labels(await a.call('list_sessions')), []);
    const clicked = await a.call('click', { x: 3, y: 3 });
    assert.equal(clicked.structured?.status, undefined, clicked.text);
    const got = await a.call('get_session');
    assert.equal(got.isError, false, got.text);
    const s = got.structured;
    assert.deepEqual([s.session, s.implicit, s.state, s.recording_active], [null, true, 'active', false]);
    assert.ok(Number.isInteger(s.idle_seconds) && s.idle_seconds >= 0, got.text);
    assert.equal(typeof s.cursor.visible, 'boolean');
    assert.deepEqual([s.cursor.motion.style, s.cursor.motion.spring], ['signature_arc', 0.72]);
    assert.deepEqual(s.cursor.theme, { theme_id: 'default', reduced_motion: 'auto' });
    assert.deepEqual(labels(await a.call('list_sessions')), [null]);
    // B's implicit session is its own.
    assert.equal((await b.call('get_session')).structured.implicit, true);
    assert.deepEqual(labels(await b.call('list_sessions')), [], "B's read created nothing");
  });

  test("a label belongs to its connection: the other one's same label is its own session, A's is never touched", async () => {
    const started = await a.call('start_session', { session: 'alpha' });
    assert.equal(started.isError, false, started.text);
    assert.equal(started.structured.revived, false);
    assert.equal(
      (await a.call('get_window_state', { format: 'full', session: 'alpha', include_screenshot: false })).isError,
      false,
    );
    for (const [tool, args] of [
      ['get_window_state', { format: 'full', include_screenshot: false }],
      ['click', { x: 3, y: 3 }],
      ['get_session', {}],
      ['start_session', {}],
      ['end_session', {}],
      ['set_agent_cursor_motion', { spring: 0.3 }],
      ['run_actions', { steps: [{ tool: 'press_key', args: { key: 'Tab' } }] }],
    ] as const) {
      // B's calls run in B's own "alpha" (created by them, or refused for B's own reasons), never in A's.
      const r = await b.call(tool, { ...args, session: 'alpha' });
      assert.ok(!r.isError || refusalOf(r).code !== 'session_unavailable', `${tool}: ${r.text}`);
    }
    assert.equal((await b.call('start_session', { session: 'beta' })).isError, false);
    assert.deepEqual(labels(await b.call('list_sessions')).sort(), ['alpha', 'beta']);
    assert.ok(!labels(await a.call('list_sessions')).includes('beta'));
    const alpha = await a.call('get_session', { session: 'alpha' });
    assert.equal(alpha.structured.state, 'active', 'B did not end it');
    assert.equal(alpha.structured.cursor.motion.spring, 0.72, 'B did not change it');
  });

  test('an ended label is refused by ordinary actions until start_session revives it; end_session is idempotent', async () => {
    await prepare(a.call, 'gamma');
    const ended = await a.call('end_session', { session: 'gamma' });
    assert.deepEqual(ended.structured, { session: 'gamma', active: false, cleanup_complete: true });
    const once = hookLines(log).filter((l) => l.session === 'gamma');
    assertHooksOnce(once, 'gamma', 'end_session');
    assert.equal((await a.call('get_session', { session: 'gamma' })).structured.state, 'ended');
    for (const [tool, args] of [
      ['click', { x: 3, y: 3 }],
      ['get_window_state', {}],
      ['set_agent_cursor_motion', { spring: 1 }],
      ['page', { action: 'list_tabs' }],
      ['run_actions', { steps: [{ tool: 'press_key', args: { key: 'Tab' } }] }],
    ] as const) {
      const r = await a.call(tool, { ...args, session: 'gamma' });
      assert.equal(refusalOf(r).code, 'session_ended', `${tool}: ${r.text}`);
    }
    const again = await a.call('end_session', { session: 'gamma' });
    assert.deepEqual([again.isError, again.structured.active], [false, false], again.text);
    assert.equal(
      hookLines(log).filter((l) => l.session === 'gamma').length,
      3,
      'a second end_session runs no hook again',
    );
    const revived = await a.call('start_session', { session: 'gamma' });
    assert.equal(revived.isError, false, revived.text);
    assert.equal(revived.structured.revived, true);
    const s = (await a.call('get_session', { session: 'gamma' })).structured;
    assert.deepEqual(
      [s.state, s.recording_active, s.cursor.motion.spring],
      ['active', false, 0.72],
      'a revived session starts fresh',
    );
    assert.equal(
      (await a.call('get_window_state', { format: 'full', session: 'gamma', include_screenshot: false })).isError,
      false,
    );
    assert.equal((await a.call('start_session', { session: 'gamma' })).structured.revived, false);
  });

  test('list_sessions pages with limit (default 50, max 100) and an opaque cursor', async () => {
    const names = Array.from({ length: 57 }, (_, i) => `page-${String(i).padStart(2, '0')}`);
    for (const name of names) assert.equal((await c.call('start_session', { session: name })).isError, false);
    const first = await c.call('list_sessions');
    assert.equal(first.structured.sessions.length, 50, 'default limit');
    assert.equal(typeof first.structured.next_cursor, 'string');
    const rest = await c.call('list_sessions', { cursor: first.structured.next_cursor });
    assert.equal(rest.structured.next_cursor, null);
    assert.deepEqual([...labels(first), ...labels(rest)].sort(), names);
    const seen: Array<string | null> = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const r = await c.call('list_sessions', { limit: 10, ...(cursor ? { cursor } : {}) });
      assert.equal(r.isError, false, r.text);
      assert.ok(r.structured.sessions.length <= 10);
      seen.push(...labels(r));
      cursor = r.structured.next_cursor ?? undefined;
      if (!cursor) break;
    }
    assert.deepEqual(seen.sort(), names, 'every session exactly once across the pages');
    assert.equal((await c.call('list_sessions', { limit: 100 })).structured.sessions.length, 57);
    const tooMany = refusalOf(await c.call('list_sessions', { limit: 101 }));
    assert.equal(tooMany.code, 'invalid_arguments');
    assert.match(tooMany.message, /limit/);
    assert.equal(refusalOf(await c.call('list_sessions', { cursor: 'not-a-cursor' })).code, 'invalid_arguments');
    assert.ok(!labels(await a.call('list_sessions')).some((l) => l?.startsWith('page-')), "A never sees C's sessions");
  });

  test('cleanup hooks run exactly once: end_session, disconnect, then shutdown (SIGTERM)', async () => {
    await prepare(a.call, 'by-end');
    await prepare(b.call, 'by-disconnect');
    assert.equal(
      (await b.call('get_window_state', { format: 'full', include_screenshot: false })).isError,
      false,
      "B's implicit session",
    );
    await prepare(c.call, 'by-shutdown-c');
    await prepare(a.call, 'by-shutdown-a');
    await a.call('end_session', { session: 'by-end' });
    await a.call('end_session', { session: 'by-end' });
    assertHooksOnce(hookLines(log), 'by-end', 'end_session');

    await b.disconnect();
    const bConn = await waitFor(
      () => hookLines(log).find((l) => l.session === 'by-disconnect' && l.hook === 'recording')?.connection,
      "B's hooks",
    );
    // Wait for each of B's sessions by name: a count alone can be reached by the lines of B's earlier
    // end_session ("alpha") before the disconnect's last hook is written.
    await waitFor(() => {
      const mine = hookLines(log).filter((l) => l.connection === bConn && l.reason === 'disconnect');
      return (
        mine.filter((l) => l.session === 'by-disconnect').length >= 3 &&
        mine.some((l) => l.session === 'implicit') &&
        mine.some((l) => l.session === 'beta')
      );
    }, "all of B's sessions ended");
    assertHooksOnce(hookLines(log), 'by-disconnect', 'disconnect');
    const bLines = hookLines(log).filter((l) => l.connection === bConn);
    assert.deepEqual(
      bLines.filter((l) => l.session === 'implicit').map((l) => [l.hook, l.reason]),
      [['cursor', 'disconnect']],
    );
    assert.deepEqual(
      bLines.filter((l) => l.session === 'beta').map((l) => [l.hook, l.reason]),
      [['cursor', 'disconnect']],
    );
    // B's labels are free again once B is gone.
    assert.equal((await c.call('start_session', { session: 'beta' })).isError, false);

    const code = await gw.stop();
    assert.equal(code, 0, `verity start exits cleanly on SIGTERM; stderr: ${gw.stderr()}`);
    const lines = hookLines(log);
    assertHooksOnce(lines, 'by-shutdown-c', 'shutdown');
    assertHooksOnce(lines, 'by-shutdown-a', 'shutdown');
    assertHooksOnce(lines, 'by-end', 'end_session');
    assert.ok(lines.some((l) => l.session === 'alpha' && l.reason === 'shutdown'));
    assert.equal(
      lines.filter((l) => l.session.startsWith('page-')).length,
      57,
      'every listed session ended with the server',
    );
    assertNoHookRanTwice(lines);
    for (const label of ['by-end', 'by-disconnect', 'by-shutdown-c', 'by-shutdown-a']) {
      const trajectory = readFileSync(join(dir('cfg-gw'), 'recordings', `rec-${label}`, 'trajectory.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      assert.equal(trajectory.filter((e) => e.event === 'end').length, 1, `${label}: one end line`);
    }
  });
});

describe('ends that come from outside: idle timeout and a stdio client that goes away', () => {
  test('idle timeout (VERITY_SESSION_IDLE_MS) ends a session once; its label then needs start_session', async () => {
    const log = dir('idle.log');
    const gw = await startGateway([], {
      VERITY_SESSION_LOG: log,
      VERITY_SESSION_IDLE_MS: '700',
      VERITY_CONFIG_DIR: dir('cfg-idle'),
      VERITY_BROWSER_URL: undefined,
    });
    try {
      const a = await gw.connect();
      await prepare(a.call, 'idler');
      await waitFor(() => hookLines(log).length >= 3, 'the idle timeout');
      await sleep(2100); // three more sweeps: nothing may run twice
      const lines = hookLines(log);
      assertHooksOnce(lines, 'idler', 'idle_timeout');
      assertNoHookRanTwice(lines);
      assert.equal((await a.call('get_session', { session: 'idler' })).structured.state, 'ended');
      assert.equal(
        refusalOf(await a.call('set_agent_cursor_motion', { session: 'idler', spring: 1 })).code,
        'session_ended',
      );
      assert.equal((await a.call('start_session', { session: 'idler' })).structured.revived, true);
    } finally {
      await gw.close();
    }
  });

  test('a stdio client that closes ends its sessions once, as a disconnect', async () => {
    const log = dir('stdio.log');
    const v = await startVerity(chrome.attach, {
      VERITY_SESSION_LOG: log,
      VERITY_CONFIG_DIR: dir('cfg-stdio'),
    });
    try {
      await prepare(v.call, 'stdio-run');
      assert.equal((await v.call('get_window_state', { format: 'full', include_screenshot: false })).isError, false);
      await v.client.close();
      await waitFor(() => !alive(v.pid), 'verity mcp to exit after its client left');
      const lines = hookLines(log);
      assertHooksOnce(lines, 'stdio-run', 'disconnect');
      assert.deepEqual(
        lines.filter((l) => l.session === 'implicit').map((l) => [l.hook, l.reason]),
        [['cursor', 'disconnect']],
      );
      assertNoHookRanTwice(lines);
    } finally {
      killPid(v.pid);
    }
  });
});

// The seed's table: [min, max, default] of every numeric cursor_motion field.
const TABLE: Record<string, [number, number, number]> = {
  arc_flow: [-1, 1, 0],
  arc_size: [0, 1, 0.25],
  dwell_after_click_ms: [0, 5000, 80],
  end_handle: [0, 1, 0.3],
  glide_duration_ms: [0, 5000, 0],
  idle_hide_ms: [0, 60000, 15000],
  spring: [0.3, 1, 0.72],
  start_handle: [0, 1, 0.3],
  turn_radius: [1, 1000, 80],
};
const DEFAULTS = Object.fromEntries(Object.entries(TABLE).map(([k, [, , d]]) => [k, d]));

describe('agent cursor motion: clamping and precedence', () => {
  test('every numeric field: defaults when omitted, clamped below min and above max, kept inside', async () => {
    const v = await startVerity([], { VERITY_CONFIG_DIR: dir('cfg-plain'), VERITY_REDUCED_MOTION: '' });
    try {
      const fresh = (await v.call('start_session', { session: 'defaults' })).structured.cursor.motion;
      assert.deepEqual({ ...fresh, ...DEFAULTS }, fresh, `defaults: ${JSON.stringify(fresh)}`);
      assert.deepEqual([fresh.style, fresh.timing], ['signature_arc', 'steady']);
      for (const [field, [min, max]] of Object.entries(TABLE)) {
        const span = max - min;
        for (const [given, expected] of [
          [min - span - 1, min],
          [max + span + 1, max],
          [min, min],
          [max, max],
          [min + span / 2, min + span / 2],
        ]) {
          const r = await v.call('set_agent_cursor_motion', { session: `clamp-${field}`, [field]: given });
          assert.equal(r.isError, false, r.text);
          assert.equal(r.structured.motion[field], expected, `${field}=${given}`);
          const got = (await v.call('get_session', { session: `clamp-${field}` })).structured.cursor.motion;
          assert.equal(got[field], expected, `get_session ${field}=${given}`);
          for (const other of Object.keys(TABLE))
            if (other !== field) assert.equal(got[other], DEFAULTS[other], `${other} untouched by ${field}`);
        }
      }
      // All at once, one layer below and the next above.
      const low = await v.call('set_agent_cursor_motion', {
        session: 'all',
        ...Object.fromEntries(Object.entries(TABLE).map(([k, [min]]) => [k, min - 10_000])),
      });
      assert.deepEqual(
        Object.fromEntries(Object.keys(TABLE).map((k) => [k, low.structured.motion[k]])),
        Object.fromEntries(Object.entries(TABLE).map(([k, [min]]) => [k, min])),
      );
      const high = await v.call('set_agent_cursor_motion', {
        session: 'all',
        ...Object.fromEntries(Object.entries(TABLE).map(([k, [, max]]) => [k, max + 100_000])),
      });
      assert.deepEqual(
        Object.fromEntries(Object.keys(TABLE).map((k) => [k, high.structured.motion[k]])),
        Object.fromEntries(Object.entries(TABLE).map(([k, [, max]]) => [k, max])),
      );
      assert.equal(
        refusalOf(await v.call('set_agent_cursor_motion', { session: 'all', spring: 'soft' })).code,
        'invalid_arguments',
      );
    } finally {
      await v.close();
    }
  });

  test('set_agent_cursor_motion > start_session > saved config.json > built-in; reduced motion always wins', async () => {
    const cfg = dir('cfg-saved');
    rmSync(cfg, { recursive: true, force: true });
    mkdirSync(cfg, { recursive: true });
    writeFileSync(
      join(cfg, 'config.json'),
      JSON.stringify({
        cursor: {
          motion: { arc_flow: 0.5, spring: 0.4, dwell_after_click_ms: 300, turn_radius: 99_999, style: 'classic' },
        },
      }),
    );
    const v = await startVerity([], { VERITY_CONFIG_DIR: cfg, VERITY_REDUCED_MOTION: '1' });
    const motion = async (label: string) => (await v.call('get_session', { session: label })).structured.cursor.motion;
    const off = { cursor_theme: { reduced_motion: 'off' } };
    try {
      await v.call('start_session', { session: 'saved', ...off });
      const saved = await motion('saved');
      assert.deepEqual(
        [saved.arc_flow, saved.spring, saved.dwell_after_click_ms, saved.turn_radius, saved.style],
        [0.5, 0.4, 300, 1000, 'classic'],
        'saved default, clamped',
      );
      assert.equal(saved.arc_size, 0.25, 'built-in where nothing is saved');
      await v.call('start_session', {
        session: 'started',
        ...off,
        cursor_motion: { spring: 0.9, dwell_after_click_ms: 400 },
      });
      const started = await motion('started');
      assert.deepEqual([started.arc_flow, started.spring, started.dwell_after_click_ms], [0.5, 0.9, 400]);
      const set = await v.call('set_agent_cursor_motion', { session: 'started', dwell_after_click_ms: 500 });
      assert.equal(set.structured.motion.dwell_after_click_ms, 500);
      const after = await motion('started');
      assert.deepEqual(
        [after.arc_flow, after.spring, after.dwell_after_click_ms, after.idle_hide_ms],
        [0.5, 0.9, 500, 15000],
      );

      const effectsOn = { trail: true, click_ripple: true, follow_through: true };
      await v.call('start_session', {
        session: 'reduced',
        cursor_theme: { reduced_motion: 'on' },
        cursor_motion: { arc_size: 0.9, effects: effectsOn },
      });
      const r = await v.call('set_agent_cursor_motion', { session: 'reduced', arc_size: 1, effects: effectsOn });
      for (const m of [r.structured.motion, await motion('reduced')]) {
        assert.equal(m.arc_size, 0);
        assert.deepEqual(m.effects, { trail: false, click_ripple: false, follow_through: false });
        assert.equal(m.spring, 0.4, 'reduced motion leaves the other fields to precedence');
      }
      // theme "auto" follows the system preference (VERITY_REDUCED_MOTION=1); "off" does not.
      await v.call('start_session', { session: 'auto', cursor_motion: { arc_size: 0.8 } });
      assert.equal((await motion('auto')).arc_size, 0);
      const unreduced = await v.call('set_agent_cursor_motion', {
        session: 'auto',
        reduced_motion: 'off',
        effects: effectsOn,
      });
      assert.equal(unreduced.structured.motion.arc_size, 0.8);
      assert.deepEqual(unreduced.structured.motion.effects, effectsOn);
    } finally {
      await v.close();
    }
  });
});

describe('the agent cursor in a driven tab, and recording', () => {
  let v: Verity;
  let page: Page;
  before(async () => {
    v = await startVerity(chrome.attach, { VERITY_CONFIG_DIR: dir('cfg-cursor') });
  });
  after(async () => {
    await v?.close();
  });

  const open = async (session: string) => {
    const r = await v.call('page', { action: 'navigate', url: fx.url('plain.html'), session });
    assert.equal(r.isError, false, r.text);
    page = await chrome.page(fx.url('plain.html'));
    // Sessions of the earlier suites own tabs of their own in this browser now; a headless background tab
    // never paints, so the test's own screenshots need this one in front.
    await page.bringToFront();
    await page.waitForFunction('window.__ready === true && document.readyState === "complete"');
  };
  /** Children of <html> other than head and body: where the cursor host lives. */
  const hosts = () =>
    page.evaluate(() =>
      [...document.documentElement.children]
        .filter((e) => e !== document.head && e !== document.body)
        .map((e) => {
          const cs = getComputedStyle(e);
          return { tag: e.localName, position: cs.position, pointerEvents: cs.pointerEvents };
        }),
    );
  /** Layout in document coordinates (the click may scroll its element into view; that is not layout). */
  const layout = () =>
    page.evaluate(() => {
      const r = document.body.getBoundingClientRect(),
        b = document.getElementById('btn')!.getBoundingClientRect();
      return JSON.stringify({
        body: [r.x + scrollX, r.y + scrollY, r.width, r.height],
        btn: [b.x + scrollX, b.y + scrollY, b.width, b.height],
        h: document.documentElement.scrollHeight,
        w: document.documentElement.scrollWidth,
      });
    });

  test('drawn fixed, never hit, never listed, no layout change; end_session removes it', async () => {
    await v.call('start_session', {
      session: 'cur',
      cursor_motion: { glide_duration_ms: 50, timing: 'fixed', idle_hide_ms: 0 },
    });
    await open('cur');
    const before = await snapshot(v, { session: 'cur' });
    const layoutBefore = await layout();
    assert.deepEqual(await hosts(), [], 'no cursor before any action');
    assert.equal((await v.call('get_session', { session: 'cur' })).structured.cursor.visible, false);
    const click = await v.call('click', { element_token: before.token('Increment'), session: 'cur' });
    assert.equal(click.structured.effect, 'confirmed', click.text);
    const [host] = await waitFor(async () => {
      const h = await hosts();
      return h.length ? h : null;
    }, 'the cursor host');
    assert.deepEqual(host, { tag: 'div', position: 'fixed', pointerEvents: 'none' });
    assert.equal((await v.call('get_session', { session: 'cur' })).structured.cursor.visible, true);
    // Let the glide finish so the arrow sits on the click point, then hit-test there.
    await waitFor(
      () => page.evaluate(() => document.getAnimations().every((a) => a.playState !== 'running')),
      'the glide to end',
    );
    const hit = await page.evaluate(() => {
      const r = document.getElementById('btn')!.getBoundingClientRect();
      const el = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
      return el?.id || el?.localName;
    });
    assert.equal(hit, 'btn', 'the click point hits the button, not the cursor');
    assert.equal(await layout(), layoutBefore, 'the cursor changes no layout');
    const afterSnap = await snapshot(v, { session: 'cur' });
    assert.equal(
      afterSnap.result.structured.element_count,
      before.result.structured.element_count,
      'the cursor is never listed',
    );
    assert.deepEqual(
      afterSnap.elements.map((e) => `${e.role}:${e.label}`),
      before.elements.map((e) => `${e.role}:${e.label}`),
    );
    const second = await v.call('click', { element_token: afterSnap.token('Increment'), session: 'cur' });
    assert.equal(second.structured.effect, 'confirmed', second.text);
    assert.equal((await model(page)).clicks, 2, 'a click through the cursor reaches the page');

    await waitFor(
      () => page.evaluate(() => document.getAnimations().every((a) => a.playState !== 'running')),
      'the glide to end',
    );
    const layoutWithCursor = await layout();
    const withCursor = await page.screenshot({ encoding: 'base64' });
    assert.equal((await v.call('end_session', { session: 'cur' })).isError, false);
    assert.deepEqual(await hosts(), [], 'end_session removed the cursor');
    assert.equal(await layout(), layoutWithCursor, 'removing the cursor changes no layout either');
    assert.notEqual(
      await page.screenshot({ encoding: 'base64' }),
      withCursor,
      'the cursor was really drawn (and is gone now)',
    );
    assert.equal((await v.call('get_session', { session: 'cur' })).structured.cursor.visible, false);
  });

  test('recording: each action appends NNNN-<tool>.json and before/after PNGs; one end line', async () => {
    // recording_dir is a name under <config dir>/recordings/ (absolute paths are refused).
    const rec = join(dir('cfg-cursor'), 'recordings', 'recording');
    const started = await v.call('start_session', { session: 'rec', recording_dir: 'recording' });
    assert.equal(started.structured.recording_path, rec, started.text);
    assert.equal(started.isError, false, started.text);
    assert.equal((await v.call('get_session', { session: 'rec' })).structured.recording_active, true);
    await open('rec');
    const snap = await snapshot(v, { session: 'rec' });
    const click = await v.call('click', { element_token: snap.token('Increment'), session: 'rec' });
    const typed = await v.call('type_text', { element_token: snap.token('Text'), text: 'recorded', session: 'rec' });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    const files = readdirSync(rec).sort();
    const steps = files.filter((f) => /^\d{4}-[a-z_]+\.json$/.test(f));
    const clickFile = steps.find((f) => f.endsWith('-click.json'))!;
    const typeFile = steps.find((f) => f.endsWith('-type_text.json'))!;
    assert.ok(clickFile && typeFile && clickFile < typeFile, `numbered in order: ${files}`);
    for (const [file, reply, args] of [
      [clickFile, click, { element_token: snap.token('Increment') }],
      [typeFile, typed, { text: 'recorded' }],
    ] as const) {
      const entry = JSON.parse(readFileSync(join(rec, file), 'utf8'));
      for (const [k, val] of Object.entries(args)) assert.equal(entry.args[k], val, `${file} args.${k}`);
      assert.equal(entry.result.effect, reply.structured.effect);
      assert.deepEqual(entry.result.evidence, reply.structured.evidence);
      assert.ok(entry.result.evidence.length > 0);
      const stem = file.slice(0, 4);
      for (const which of ['before', 'after']) {
        const png = readFileSync(join(rec, `${stem}-${which}.png`));
        assert.equal(png.subarray(1, 4).toString(), 'PNG', `${stem}-${which}.png is a PNG`);
      }
    }
    assert.equal((await v.call('end_session', { session: 'rec' })).isError, false);
    assert.equal((await v.call('end_session', { session: 'rec' })).isError, false);
    assert.equal(
      refusalOf(await v.call('click', { element_token: snap.token('Increment'), session: 'rec' })).code,
      'session_ended',
    );
    const trajectory = readFileSync(join(rec, 'trajectory.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    assert.equal(trajectory.filter((e) => e.event === 'end').length, 1, 'exactly one end line');
    assert.equal(trajectory[trajectory.length - 1].event, 'end', 'nothing recorded after the end');
    assert.equal(trajectory.filter((e) => e.event === 'action').length, steps.length);
    assert.equal((await v.call('get_session', { session: 'rec' })).structured.recording_active, false);
    // Revived into the same folder: it appends after what is there and overwrites nothing.
    const kept = readFileSync(join(rec, clickFile), 'utf8');
    assert.equal(
      (await v.call('start_session', { session: 'rec', recording_dir: 'recording' })).structured.revived,
      true,
    );
    const again = await v.call('click', {
      element_token: (await snapshot(v, { session: 'rec' })).token('Increment'),
      session: 'rec',
    });
    assert.equal(again.structured.effect, 'confirmed', again.text);
    const added = readdirSync(rec).filter((f) => /^\d{4}-[a-z_]+\.json$/.test(f) && !steps.includes(f));
    assert.equal(added.length, 1, `one new step file: ${added}`);
    assert.ok(added[0] > steps[steps.length - 1], `${added[0]} is numbered after ${steps[steps.length - 1]}`);
    assert.equal(readFileSync(join(rec, clickFile), 'utf8'), kept);
    await v.call('end_session', { session: 'rec' });
    const lines = readFileSync(join(rec, 'trajectory.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.filter((e) => e.event !== 'action').map((e) => e.event),
      ['start', 'end', 'start', 'end'],
    );
  });
});
