// The audit trail's store in-process: durable across a reopen (a restart), paging back with filters, a
// torn last line, retention by age and by size; the zip writer checked by `unzip -t`; the brake's states.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditStore, LINE_MAX } from '../../server/audit/store.js';
import { exportJsonl } from '../../server/audit/trail.js';
import { zip } from '../../server/audit/zip.js';
import { Brake } from '../../server/sessions/brake.js';
import type { Refusal } from '../../server/contract/refusal.js';
import { TargetQueue } from '../../server/routing/queue.js';

const call = (sessionKey: string, tool: string, verdict: string, summary = '') => ({
  kind: 'call' as const,
  sessionKey,
  tool,
  verdict,
  summary,
});

describe('AuditStore', () => {
  test('every entry names its agent, for good: after its connection is gone, after a reopen, by the agent filter', () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-audit-actor-'));
    try {
      const store = new AuditStore(dir);
      const actor = (connection: string, session: string) => ({
        client: 'claims-bot',
        client_version: '1.2',
        credential: 'agent+link:0123456789ab',
        connection,
        session,
        transport: 'http',
      });
      const live = new Map([
        ['http-1/implicit', actor('http-1', 'implicit')],
        ['http-2/second', actor('http-2', 'second')],
      ]);
      store.actorOf = (key) => live.get(key);
      store.append(call('http-1/implicit', 'click', 'confirmed'));
      store.append(call('http-2/second', 'click', 'denied'));
      store.append(call('http-3/implicit', 'click', 'confirmed')); // a client the core never saw: no actor
      live.clear(); // both connections closed: a late line (a call's entry follows its reply) keeps the last actor
      store.append(call('http-1/implicit', 'press_key', 'refused'));
      const byAgent = store.query({ client: 'claims-bot' }).entries;
      assert.deepEqual(
        byAgent.map((e) => `${e.sessionKey}:${e.tool}`),
        ['http-1/implicit:press_key', 'http-2/second:click', 'http-1/implicit:click'],
        'the agent filter spans its sessions and leaves the unknown client out',
      );
      assert.deepEqual(byAgent[0].actor, actor('http-1', 'implicit'));
      store.close();
      // A restart: the names come back from the files.
      const reopened = new AuditStore(dir);
      const sessions = reopened.sessions();
      assert.deepEqual(sessions.find((s) => s.sessionKey === 'http-2/second')?.actor, actor('http-2', 'second'));
      assert.equal(sessions.find((s) => s.sessionKey === 'http-3/implicit')?.actor, undefined);
      assert.equal(reopened.query({ client: 'claims-bot' }).entries.length, 3);
      assert.equal(reopened.query({ client: 'other' }).entries.length, 0);
      reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('entries survive a reopen, page back newest first, and filter by session, tool, verdict, text and time', () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-audit-'));
    try {
      const first = new AuditStore(dir);
      const yesterday = new Date(Date.now() - 86_400_000).toISOString();
      first.append({
        ...call('a/implicit', 'click', 'confirmed', 'element_token=button "Submit claim"'),
        at: yesterday,
      });
      for (let i = 0; i < 30; i++)
        first.append(
          call(
            i % 2 ? 'a/implicit' : 'b/x',
            i % 3 ? 'type_text' : 'press_key',
            i % 5 ? 'confirmed' : 'refused',
            `n=${i}`,
          ),
        );
      first.close();

      const store = new AuditStore(dir);
      const page1 = store.query({ limit: 10 });
      assert.equal(page1.entries.length, 10);
      assert.equal(page1.entries[0].id, 31, 'newest first, ids continue across the reopen');
      const page2 = store.query({ limit: 10, before: page1.next_before! });
      assert.equal(page2.entries[0].id, 21);
      assert.deepEqual(
        new Set(store.query({ sessionKey: 'b/x', limit: 500 }).entries.map((e) => e.sessionKey)),
        new Set(['b/x']),
      );
      assert.equal(store.query({ tool: 'click' }).entries.length, 1);
      assert.ok(store.query({ verdict: 'refused' }).entries.every((e) => e.verdict === 'refused'));
      assert.equal(store.query({ text: 'submit CLAIM' }).entries[0].tool, 'click');
      const old = store.query({ to: Date.now() - 3_600_000 });
      assert.deepEqual(
        old.entries.map((e) => e.id),
        [1],
        "only yesterday's entry is older than an hour",
      );
      assert.equal(store.query({ from: Date.now() - 3_600_000, limit: 500 }).entries.length, 30);
      assert.equal(store.append(call('a/implicit', 'scroll', 'confirmed'))!.id, 32);
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a torn last line (a crash mid-write) is skipped and the next entry starts clean', () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-audit-'));
    try {
      const s = new AuditStore(dir);
      s.append(call('a/implicit', 'click', 'confirmed'));
      s.close();
      appendFileSync(join(dir, readdirSync(dir)[0]), '{"id":2,"at":"2026-');
      const again = new AuditStore(dir);
      const next = again.append(call('a/implicit', 'scroll', 'confirmed'))!;
      assert.equal(next.id, 2);
      again.close();
      const third = new AuditStore(dir);
      assert.deepEqual(
        third.query().entries.map((e) => e.tool),
        ['scroll', 'click'],
      );
      third.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('retention drops only segments past the age bound; the size cap holds on every append and deletes nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-audit-'));
    try {
      const cap = 1024 * 1024;
      const s = new AuditStore(dir, { maxAgeMs: 86_400_000, maxBytes: cap });
      const big = 'x'.repeat(3000);
      const first = s.append(call('a/implicit', 'navigate', 'confirmed', 'the entry the flood would hide'))!;
      let kept = 1;
      let notKept = 0;
      for (let i = 0; i < 600; i++) {
        if (s.append({ ...call('a/implicit', 'type_text', 'confirmed'), args: { text: big } })) kept++;
        else notKept++;
        assert.ok(s.bytes <= cap, `the cap held at append ${i}: ${s.bytes} bytes`);
      }
      assert.ok(notKept > 0 && kept > 100, `the cap stopped the appends (${kept} kept, ${notKept} not)`);
      s.sweep();
      assert.equal(s.get(first.id)?.summary, 'the entry the flood would hide', 'nothing young is deleted for size');
      s.close();
      for (const f of readdirSync(dir))
        assert.ok(statSync(join(dir, f)).size <= Math.max(LINE_MAX, cap / 8), `segment ${f} within its size`);
      const reopened = new AuditStore(dir, { maxAgeMs: 86_400_000, maxBytes: cap / 2 }); // a lower cap after a restart
      assert.equal(reopened.get(first.id)?.tool, 'navigate', 'a restart keeps the first entry, even over a lower cap');
      assert.match(String(reopened.noRoomFor('b/implicit')?.message), /audit trail is full/);
      reopened.sweep(Date.now() + 2 * 86_400_000);
      assert.equal(reopened.query().entries.length, 0, 'everything past the age bound went');
      assert.equal(readdirSync(dir).length, 0);
      assert.equal(reopened.noRoomFor('b/implicit'), null, 'room again once the entries aged out');
      reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("one session's flood is refused at its share; another session keeps room, and the refusals are counted, not kept", () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-audit-share-'));
    try {
      const s = new AuditStore(dir, { maxAgeMs: 86_400_000, maxBytes: 4 * 1024 * 1024 });
      s.append(call('c1/victim', 'new_tab', 'confirmed', 'evidence'));
      let calls = 0;
      while (!s.noRoomFor('c2/flood') && calls < 10_000) {
        s.append({ ...call('c2/flood', 'type_text', 'confirmed'), args: { text: 'f'.repeat(3500) } });
        calls++;
      }
      const why = s.noRoomFor('c2/flood');
      assert.ok(why, `the flood hit its share within ${calls} calls`);
      assert.match(why.message, /this session holds .* its share/);
      assert.ok(why.retryAfterS > 0 && why.retryAfterS <= 86_400);
      assert.equal(s.noRoomFor('c1/victim'), null, 'the other session still has room');
      const sizeBefore = s.bytes;
      for (let i = 0; i < 50; i++)
        assert.equal(
          s.append({
            ...call('c2/flood', 'get_session', 'refused'),
            refusal: { code: 'too_many_audit_bytes', message: 'm' },
          }),
          null,
        );
      assert.equal(s.bytes, sizeBefore, 'refusals of a session with no room add nothing');
      const flood = s.sessions().find((x) => x.sessionKey === 'c2/flood')!;
      assert.equal(flood.refused, 50);
      assert.ok(flood.bytes <= s.shareBytes, `${flood.bytes} within the share ${s.shareBytes}`);
      const victim = s.sessions().find((x) => x.sessionKey === 'c1/victim')!;
      assert.equal(victim.entries, 1);
      assert.ok(victim.bytes > 0);
      assert.equal(s.query({ sessionKey: 'c1/victim' }).entries[0].summary, 'evidence');
      s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the index has a bound of its own: agents are refused before its last eighth, nothing passes it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-audit-rows-'));
    try {
      const s = new AuditStore(dir, { maxAgeMs: 86_400_000, maxBytes: 1024 * 1024 });
      let refusedAt = -1;
      for (let i = 0; i < s.maxRows + 100; i++) {
        const key = `c${i % 50}/s`; // many sessions, each far from its share in bytes
        if (refusedAt < 0 && s.noRoomFor(key)) refusedAt = i;
        s.append(call(key, 'get_session', 'ok'));
      }
      assert.equal(
        refusedAt,
        s.maxRows - Math.floor(s.maxRows / 8),
        'agents refused once the rows reach seven eighths',
      );
      assert.match(String(s.noRoomFor('c1/s')?.message), /audit trail is full .* entries/);
      assert.equal(s.query({ limit: 1 }).total, s.maxRows, 'operators fill the rest, and nothing passes the bound');
      s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('every string an entry keeps is bounded: a 1 MB session key, actor, labels, many long strings', () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-audit-bounds-'));
    try {
      const s = new AuditStore(dir);
      const huge = 'L'.repeat(999_000);
      s.actorOf = () => ({
        client: huge,
        client_version: huge,
        credential: 'agent',
        connection: 'c1',
        session: huge,
        transport: 'http',
      });
      const many = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, 's'.repeat(3999)]));
      const e = s.append({
        ...call(`c1/${huge}`, 'get_session', 'refused', huge),
        args: many,
        result: { status: 'refused', many },
        labels: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`t${i}`, huge])),
        refusal: { code: 'invalid_arguments', message: huge },
      })!;
      assert.ok(e, 'kept');
      s.close();
      const lines = readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8'));
      const longest = Math.max(
        ...lines
          .join('')
          .split('\n')
          .map((l) => Buffer.byteLength(l)),
      );
      assert.ok(longest <= LINE_MAX, `the line is within LINE_MAX: ${longest}`);
      const stored = new AuditStore(dir).get(e.id)!;
      assert.ok(stored.sessionKey.length < 400, `key bounded: ${stored.sessionKey.length}`);
      assert.ok(stored.actor!.client.length < 200 && stored.actor!.session.length < 200, 'actor bounded');
      assert.ok(Object.keys(stored.labels!).length <= 64, 'labels bounded');
      assert.ok(stored.summary.length < 2100 && stored.refusal!.message.length < 1100);
      assert.match(stored.sessionKey, /999003 chars in all/, 'says how long it was');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a long argument is cut and says how long it was; an oversized result keeps its verdict fields', () => {
    const s = new AuditStore(null);
    const e = s.append({
      ...call('a/implicit', 'type_text', 'confirmed'),
      args: { text: 'y'.repeat(10_000) },
      result: { effect: 'confirmed', big: 'z'.repeat(100_000) },
    });
    const stored = s.get(e!.id)!;
    assert.match(String(stored.args!.text), /10000 chars in all/);
    assert.equal((stored.result as any).effect, 'confirmed');
    assert.equal((stored.result as any).truncated, true);
  });

  test('an entry with nothing to cut is stored whole, near the bounds too', () => {
    const s = new AuditStore(null);
    const chunks = (n: number, c: string) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, c.repeat(4000)]));
    // The line is over the result bound, the result itself is not: nothing is truncated.
    const result = { effect: 'confirmed', nested: [{ deep: chunks(15, 'r') }] };
    const e = s.append({ ...call('a/implicit', 'type_text', 'confirmed'), args: chunks(3, 'a'), result });
    const stored = s.get(e!.id)!;
    assert.deepEqual(stored.result, result);
    assert.deepEqual(stored.args, chunks(3, 'a'));
    const small = s.append({
      ...call('a/implicit', 'click', 'confirmed'),
      args: { x: 1 },
      result: { effect: 'confirmed' },
    });
    assert.deepEqual(s.get(small!.id)!.result, { effect: 'confirmed' });
  });
});

describe('export', () => {
  test('JSONL in the recording format, and a zip that unzip accepts', () => {
    const s = new AuditStore(null);
    s.append({
      ...call('a/implicit', 'click', 'confirmed'),
      args: { element_token: 's1:2' },
      result: { effect: 'confirmed' },
      labels: { 's1:2': 'button "Go"' },
    });
    s.append({
      kind: 'approval',
      sessionKey: 'a/implicit',
      tool: 'click',
      verdict: 'approved',
      summary: '',
      by: 'ui #1',
    });
    const lines = exportJsonl(s.sessionEntries('a/implicit'), 'a/implicit')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.event),
      ['start', 'action', 'approval', 'end'],
    );
    assert.equal(lines[1].step, 1);
    assert.deepEqual(lines[1].args, { element_token: 's1:2' });
    assert.equal(lines[1].labels['s1:2'], 'button "Go"');
    const dir = mkdtempSync(join(tmpdir(), 'verity-zip-'));
    try {
      const file = join(dir, 'x.zip');
      writeFileSync(
        file,
        zip([
          { name: 'trajectory.jsonl', data: Buffer.from('{"a":1}\n'.repeat(100)) },
          { name: 'images/1-after.png', data: Buffer.from([137, 80, 78, 71]) },
        ]),
      );
      const out = execFileSync('unzip', ['-t', file]).toString();
      assert.match(out, /No errors detected/);
      assert.equal(execFileSync('unzip', ['-p', file, 'trajectory.jsonl']).toString(), '{"a":1}\n'.repeat(100));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Brake', () => {
  test('stop refuses session_stopped and cancels running calls; pause holds until resume; the pause times out with session_paused', async () => {
    const brake = new Brake(200);
    brake.stop('c1', 'op');
    await assert.rejects(brake.admit('c1'), (e: Refusal) => e.code === 'session_stopped');
    await brake.admit('c2'); // another agent runs on

    brake.resume('c1');
    await brake.admit('c1');
    const running = brake.begin('c1/implicit');
    const queue = new TargetQueue();
    let release!: () => void;
    const first = queue.run(
      'tab 1',
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    const queued = queue.run('tab 1', async () => 'ran', undefined, running.signal);
    brake.stop('c1', 'op');
    await assert.rejects(queued, (e: Refusal) => e.code === 'session_stopped');
    release();
    await first;
    brake.finish('c1/implicit', running);

    brake.resume('c1');
    brake.pause('c1', 'op');
    let resumed = false;
    const held = brake.admit('c1').then(() => {
      resumed = true;
    });
    assert.equal(brake.status('c1').waiting, 1);
    assert.equal(resumed, false);
    brake.resume('c1');
    await held;
    assert.equal(resumed, true);

    brake.pause('c1', 'op');
    await assert.rejects(brake.admit('c1'), (e: Refusal) => e.code === 'session_paused');
  });
});
