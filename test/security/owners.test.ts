// Security: recordings and session labels per owner (issue #22 item 7), against a real `verity start` with a
// real Chromium and two real MCP SDK clients. The attacks: B's start_session {recording_dir} with
// A's folder was accepted and B's click overwrote A's step files (so the operator's audit image of A's step
// showed B's action); B learnt that A's label existed (refused it) and could squat a label. Here B is
// refused A's folder (and a folder inside it) `not_permitted`, A's files and the operator's audit images of
// A's steps stay A's, A revives its own folder; a label is per connection: B is told nothing of A's label,
// B's same label is B's own session, and the operator still sees both. Every process is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import {
  alive,
  operatorSocket,
  refusalOf,
  startGateway,
  waitFor,
  type Connection,
  type Gateway,
  type OperatorSocket,
} from '../helpers/gateway.js';

const tmp = mkdtempSync(join(tmpdir(), 'verity-owners-'));
const cfg = join(tmp, 'cfg');
const recordings = join(cfg, 'recordings');
let chrome: TestBrowser;
let gw: Gateway;
let a: Connection, b: Connection;
let operator: OperatorSocket;
before(async () => {
  chrome = await sharedChromium();
  gw = await startGateway(chrome.attach, { VERITY_CONFIG_DIR: cfg, VERITY_POLICY: undefined });
  [a, b] = [await gw.connect(), await gw.connect()];
  operator = await operatorSocket(gw, ['operator.read']);
});
after(async () => {
  operator?.ws.close();
  await gw?.close();
  await chrome?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const PAGE = (who: string) =>
  `data:text/html,<title>${who}</title><button onclick="this.textContent='clicked by ${who}'">Press ${who}</button>`;

/** Opens the page in the session's own tab and clicks its button (a recorded step when the session records). */
async function clickOnce(c: Connection, session: string, who: string): Promise<void> {
  const nav = await c.call('page', { action: 'navigate', url: PAGE(who), session });
  assert.equal(nav.isError, false, nav.text);
  const snap = await c.call('get_window_state', { format: 'full', include_screenshot: false, session });
  const token = snap.structured.elements.find((e: any) => e.role === 'button').element_token;
  const clicked = await c.call('click', { element_token: token, session });
  assert.equal(clicked.structured.effect, 'confirmed', clicked.text);
}

/** Every file of a folder with its bytes, to prove nothing in it changed. */
function contents(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f)).toString('base64')]));
}

describe('a recording folder belongs to the session that created it', () => {
  const aRun = join(recordings, 'shared-run');
  let aFiles: Record<string, string>;
  let aImage: string;

  test("A records into its folder; the operator's audit image of A's step is A's", async () => {
    const started = await a.call('start_session', { session: 'rec', recording_dir: 'shared-run' });
    assert.equal(started.isError, false, started.text);
    await clickOnce(a, 'rec', 'A');
    aFiles = contents(aRun);
    assert.ok(
      Object.keys(aFiles).some((f) => /^\d{4}-click\.json$/.test(f)),
      `a step file: ${Object.keys(aFiles)}`,
    );
    // The audit trail is written after the reply: ask until A's step is in it (bounded).
    const step = await waitFor(async () => {
      const entries = (await operator.request('audit.query', { limit: 50 })).payload.entries as any[];
      return entries.find((e) => e.tool === 'click' && e.recording?.after);
    }, "A's recorded click in the audit trail");
    const image = await operator.request('audit.image', { id: step.id, which: 'after' });
    assert.equal(image.ok, true, JSON.stringify(image));
    aImage = image.payload.data;
    assert.equal(aImage, aFiles[step.recording.after], 'the audit image is the file A recorded');
  });

  test("B's start_session with A's folder, or a folder inside it, is refused not_permitted; A's files stay A's", async () => {
    for (const recording_dir of ['shared-run', 'shared-run/inner', 'shared-run/']) {
      const r = await b.call('start_session', { session: 'rec', recording_dir });
      const refusal = refusalOf(r);
      assert.equal(refusal.code, 'not_permitted', `${recording_dir}: ${r.text}`);
      assert.match(r.text, /recording_dir: .*another session's recording/, recording_dir);
    }
    // B records elsewhere (its own folder) and clicks in its own tab.
    const own = await b.call('start_session', { session: 'rec', recording_dir: 'b-run' });
    assert.equal(own.isError, false, own.text);
    await clickOnce(b, 'rec', 'B');
    assert.ok(readdirSync(join(recordings, 'b-run')).some((f) => /^\d{4}-click\.json$/.test(f)));
    assert.deepEqual(contents(aRun), aFiles, "nothing in A's folder changed");
    const entries = (await operator.request('audit.query', { limit: 50 })).payload.entries as any[];
    const aStep = entries.find((e) => e.tool === 'click' && e.recording?.dir === aRun);
    const image = await operator.request('audit.image', { id: aStep.id, which: 'after' });
    assert.equal(image.payload.data, aImage, "the operator's audit image of A's step is still A's");
    assert.ok(alive(gw.pid));
  });

  test('A revives its session into its own folder: appended after its steps, nothing overwritten', async () => {
    assert.equal((await a.call('end_session', { session: 'rec' })).isError, false);
    const revived = await a.call('start_session', { session: 'rec', recording_dir: 'shared-run' });
    assert.equal(revived.isError, false, revived.text);
    assert.equal(revived.structured.revived, true);
    await clickOnce(a, 'rec', 'A');
    const now = contents(aRun);
    for (const [f, bytes] of Object.entries(aFiles)) if (f !== 'trajectory.jsonl') assert.equal(now[f], bytes, f);
    assert.equal(Object.keys(now).filter((f) => /^\d{4}-click\.json$/.test(f)).length, 2);
  });

  test('a folder holding files of no session (an older recording) is refused, and left as it was', async () => {
    mkdirSync(join(recordings, 'legacy'), { recursive: true });
    writeFileSync(join(recordings, 'legacy', '0001-click.json'), '{"old":true}');
    const r = await b.call('start_session', { session: 'old', recording_dir: 'legacy' });
    assert.equal(refusalOf(r).code, 'not_permitted', r.text);
    assert.deepEqual(readdirSync(join(recordings, 'legacy')), ['0001-click.json']);
  });
});

describe('session labels are per connection', () => {
  const labels = (r: { structured: any }) => (r.structured.sessions as any[]).map((s) => s.session).sort();

  test("B is told nothing of A's label: the same answer as for a label nobody started", async () => {
    assert.equal((await a.call('start_session', { session: 'private-work' })).isError, false);
    const probe = await b.call('get_session', { session: 'private-work' });
    const never = await b.call('get_session', { session: 'never-started' });
    assert.equal(refusalOf(probe).code, refusalOf(never).code);
    assert.equal(probe.text.replace('private-work', 'X'), never.text.replace('never-started', 'X'));
    assert.ok(!labels(await b.call('list_sessions')).includes('private-work'));
    const ended = await b.call('end_session', { session: 'private-work' });
    assert.equal(ended.isError, false, ended.text);
    assert.equal(
      (await a.call('get_session', { session: 'private-work' })).structured.state,
      'active',
      "B's end_session did not end A's",
    );
  });

  test("B's same label is its own session: A's is untouched, and the operator sees both", async () => {
    const squat = await b.call('start_session', { session: 'private-work', cursor_motion: { spring: 0.3 } });
    assert.equal(squat.isError, false, squat.text);
    assert.equal(squat.structured.revived, false, "a fresh session of B's, not A's revived");
    const mine = await a.call('get_session', { session: 'private-work' });
    assert.equal(mine.structured.state, 'active');
    assert.equal(mine.structured.cursor.motion.spring, 0.72, "B did not change A's");
    const rows = (await operator.request('sessions.list')).payload.sessions as any[];
    const keys = rows.filter((r) => r.session === 'private-work' && r.state === 'active').map((r) => r.sessionKey);
    assert.equal(new Set(keys).size, 2, `the operator sees A's and B's: ${JSON.stringify(keys)}`);
    assert.equal((await b.call('end_session', { session: 'private-work' })).isError, false);
    assert.equal((await a.call('get_session', { session: 'private-work' })).structured.state, 'active');
    // A labels first, then B: B is never refused for A's label (before, the second comer was), nor A for B's.
    assert.equal((await b.call('start_session', { session: 'only-b' })).isError, false);
    assert.equal((await a.call('start_session', { session: 'only-b' })).isError, false);
    assert.ok(labels(await a.call('list_sessions')).includes('private-work'));
  });
});
