// The trust-boundary fuzzer (issue 41 item 5): random sequences of agent calls with hostile strings (huge,
// near a limit, control, bidi and zero-width characters, lone surrogates) against a real `verity start`
// holding only the agent credential, with fast-check and a fixed seed. Some sequences log in on a page
// whose form is sent by GET, typing a generated password into its password field, so the password is in
// the next page's URL, title, text and requests. After every call: the gateway answered, its audit folder
// is within its cap and its memory within its bound; after every sequence: the entry another session wrote
// before the fuzz is still kept, and no reply since the login has carried the password, raw or encoded
// (URL, form, base64). The npm-test tier (test/fuzz/trust.test.ts) and `npm run bench` (its fuzz section)
// both run it; the bench with more sequences.
import fc from 'fast-check';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { bounded, ODD_STRINGS, preview } from './fuzz.js';

export const TRUST_SEED = 41_2026;

/** One agent call as the fuzz makes it; `login` types `secret` into a GET form's password field. */
export type TrustStep =
  | { tool: string; args: Record<string, unknown> }
  | { tool: 'login'; secret: string; session: string };

/** The gateway under test, as the fuzz sees it. */
export interface TrustTarget {
  /** An agent's tool call over /mcp: its structured content and text, or a thrown transport error. */
  call(tool: string, args: Record<string, unknown>): Promise<{ isError: boolean; structured: unknown; text: string }>;
  /** Bytes of the gateway's audit folder now. */
  trailBytes(): number;
  /** The gateway process's resident memory now, in bytes. */
  rssBytes(): number;
  /** Whether the audit trail still holds entry `id` (audit.query over the operator's socket). */
  kept(id: number): Promise<boolean>;
  /** The login page (a form sent by GET with a user and a password field). */
  loginUrl: string;
}

export interface TrustBounds {
  capBytes: number;
  rssBytes: number;
  /** The entry another session wrote before the fuzz. */
  sentinelId: number;
}

export interface TrustReport {
  sequences: number;
  calls: number;
  answered: number;
  logins: number;
  /** Outcomes by `ok`, `effect:<e>` or `refused:<code>`. */
  outcomes: Map<string, number>;
  maxTrailBytes: number;
  maxRssBytes: number;
  /** Each a call whose reply carried a password typed earlier (which call, in which encoding). */
  echoes: string[];
  /** Each a broken bound or a call that got no answer. */
  failures: string[];
  sentinelKept: boolean;
}

/** Hostile strings: odd ones, names with controls and bidi, exactly at and around the limits, one of 1 MB. */
const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ODD_STRINGS) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'ok\u202Eexe.txt\u0000\n[approved by operator]',
      'a\u200Bb',
      '\u2066rtl\u2069',
      'line\u2028sep',
      'tab\there',
    ),
  },
  { weight: 3, arbitrary: fc.constantFrom(127, 128, 129, 4095, 4096, 4097, 8192, 8193).map((n) => 'n'.repeat(n)) },
  { weight: 3, arbitrary: fc.string({ maxLength: 40, unit: 'binary' }) },
  { weight: 1, arbitrary: fc.constant('L'.repeat(999_000)) },
);

/** A session label: one of the sequence's own (most calls), or a hostile one. */
const label = (own: string) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(own) }, { weight: 1, arbitrary: hostileText });

/** A password the fuzz types: long enough to be masked wherever it comes back, with characters that encode. */
const password = fc
  .string({ minLength: 6, maxLength: 14, unit: fc.constantFrom(...'abcXYZ059@ +ü!/=&%#?'.split('')) })
  .map((s) => `Pw-${s}-9`);

function stepOf(own: string): fc.Arbitrary<TrustStep> {
  const session = label(own);
  return fc.oneof(
    fc.record({ tool: fc.constant('login'), secret: password, session: fc.constant(own) }),
    fc.record({ tool: fc.constant('start_session'), args: fc.record({ session }) }),
    fc.record({ tool: fc.constant('get_session'), args: fc.record({ session }) }),
    fc.record({ tool: fc.constant('end_session'), args: fc.record({ session }) }),
    fc.record({ tool: fc.constant('list_sessions'), args: fc.record({ cursor: hostileText }, { requiredKeys: [] }) }),
    fc.record({
      tool: fc.constant('page'),
      args: fc.record({
        action: fc.constantFrom('get_text', 'list_tabs', 'reload', 'back', 'screenshot'),
        session,
      }),
    }),
    fc.record({
      tool: fc.constant('page'),
      args: fc.record({
        action: fc.constant('navigate'),
        // A lone surrogate has no percent-encoding (encodeURIComponent throws): it goes as U+FFFD.
        url: hostileText.map(
          (t) =>
            `data:text/html,<title>${encodeURIComponent(t.replace(/[\uD800-\uDFFF]/gu, '\uFFFD')).slice(0, 8150)}</title>`,
        ),
        session,
      }),
    }),
    fc.record({ tool: fc.constant('get_window_state'), args: fc.record({ session, query: hostileText }) }),
    fc.record({ tool: fc.constant('type_text'), args: fc.record({ text: hostileText, session }) }),
    fc.record({
      tool: fc.constant('press_key'),
      args: fc.record({ key: fc.constantFrom('Enter', 'Tab', '\u0000'), session }),
    }),
  ) as fc.Arbitrary<TrustStep>;
}

/** `runs` sequences of 1 to 10 steps, each sequence in sessions of its own (`t<n>`). */
export function trustSequences(runs: number, seed = TRUST_SEED): TrustStep[][] {
  return Array.from(
    { length: runs },
    (_, n) => fc.sample(fc.array(stepOf(`t${n}`), { minLength: 1, maxLength: 10 }), { seed: seed + n, numRuns: 1 })[0],
  );
}

/** A password in every form a page, a URL or a log may carry it. */
export function encodingsOf(secret: string): Array<[string, string]> {
  const b64 = Buffer.from(secret).toString('base64');
  const forms: Array<[string, string]> = [
    ['raw', secret],
    ['url', encodeURIComponent(secret)],
    ['form', new URLSearchParams({ p: secret }).toString().slice(2)],
    ['base64', b64],
    ['base64url', Buffer.from(secret).toString('base64url')],
    ['url(base64)', encodeURIComponent(b64)],
  ];
  return forms.filter(([, s], i) => forms.findIndex(([, t]) => t === s) === i);
}

/** Every string of a reply, in one text to search. */
function replyText(r: { structured: unknown; text: string }): string {
  return `${JSON.stringify(r.structured) ?? ''}\n${r.text}`;
}

/** The element token of the field or button labelled `name` in a full get_window_state. */
function tokenOf(state: unknown, name: string): string | undefined {
  const elements = (state as { elements?: Array<{ label?: string; element_token: string }> })?.elements ?? [];
  return elements.find((e) => e.label === name)?.element_token;
}

const CALL_BOUND_MS = 30_000;

export async function fuzzTrust(
  target: TrustTarget,
  sequences: TrustStep[][],
  bounds: TrustBounds,
): Promise<TrustReport> {
  const report: TrustReport = {
    sequences: 0,
    calls: 0,
    answered: 0,
    logins: 0,
    outcomes: new Map(),
    maxTrailBytes: 0,
    maxRssBytes: 0,
    echoes: [],
    failures: [],
    sentinelKept: true,
  };
  const typed: string[] = [];
  const fail = (what: string) => {
    if (report.failures.length < 20) report.failures.push(what);
  };
  const call = async (tool: string, args: Record<string, unknown>) => {
    report.calls++;
    const r = await bounded(
      target.call(tool, args).catch((e: Error) => ({ error: e.message })),
      CALL_BOUND_MS,
    );
    const trail = target.trailBytes();
    const rss = target.rssBytes();
    report.maxTrailBytes = Math.max(report.maxTrailBytes, trail);
    report.maxRssBytes = Math.max(report.maxRssBytes, rss);
    if (trail > bounds.capBytes) fail(`the trail held ${trail} bytes, over its cap, after ${tool} ${preview(args)}`);
    if (rss > bounds.rssBytes) fail(`the gateway held ${rss} bytes of memory, over its bound, after ${tool}`);
    if (r === 'hang' || 'error' in r) {
      fail(`${tool} ${preview(args)} got no answer: ${r === 'hang' ? `none in ${CALL_BOUND_MS} ms` : r.error}`);
      return null;
    }
    report.answered++;
    const s = r.structured as { effect?: string; refusal?: { code?: string } } | undefined;
    const outcome = s?.refusal?.code ? `refused:${s.refusal.code}` : s?.effect ? `effect:${s.effect}` : 'ok';
    report.outcomes.set(outcome, (report.outcomes.get(outcome) ?? 0) + 1);
    const text = replyText(r);
    for (const secret of typed)
      for (const [encoding, form] of encodingsOf(secret))
        if (text.includes(form) && report.echoes.length < 20)
          report.echoes.push(`${tool} ${preview(args)} carried a typed password (${encoding})`);
    return r;
  };
  for (const steps of sequences) {
    report.sequences++;
    for (const step of steps) {
      if (step.tool !== 'login' || !('secret' in step)) {
        await call(step.tool, (step as { args: Record<string, unknown> }).args);
        continue;
      }
      // Logging in: the page, its fields by token, the password typed (masked from here on), the GET form sent.
      const { secret, session } = step;
      await call('start_session', { session });
      await call('page', { action: 'navigate', url: target.loginUrl, session });
      const state = await call('get_window_state', { session, format: 'full' });
      // A refusal (the connection's labels or the trail full) is the server holding a bound: no login then.
      if ((state?.structured as { status?: string } | undefined)?.status === 'refused') continue;
      const user = tokenOf(state?.structured, 'User');
      const pw = tokenOf(state?.structured, 'Password');
      const submit = tokenOf(state?.structured, 'Sign in');
      if (!user || !pw || !submit) {
        fail(`the login page showed no User, Password and Sign in: ${preview(state?.structured)}`);
        continue;
      }
      await call('type_text', { element_token: user, text: 'alice', session });
      const typedPw = await call('type_text', { element_token: pw, text: secret, session });
      typed.push(secret); // from the password's own reply on, no reply may carry it
      if (typedPw && replyText(typedPw).includes(secret))
        report.echoes.push('the typing reply itself carried the password');
      await call('click', { element_token: submit, session });
      report.logins++;
    }
    if (!(await target.kept(bounds.sentinelId))) {
      report.sentinelKept = false;
      fail(`the entry ${bounds.sentinelId} another session wrote before the fuzz was lost`);
    }
  }
  return report;
}

/** A page with a login form sent by GET, and the page it lands on (its URL in its title and text). */
export async function serveLogin(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/done')
      res.end(
        `<!doctype html><title>done</title><p id=where></p><script>document.title = location.href; where.textContent = location.href; console.log(location.href); fetch('/log?d=' + btoa(new URLSearchParams(location.search).get('pw') || ''));</script>`,
      );
    else if (path === '/log') res.end('ok');
    else
      res.end(
        '<!doctype html><title>Sign in</title><form method=get action=/done><label>User <input name=user></label><label>Password <input type=password name=pw></label><button>Sign in</button></form>',
      );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/login`, server };
}

/** Bytes in a folder's files (the audit trail's segments). */
export function folderBytes(dir: string): number {
  try {
    return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
  } catch {
    return 0;
  }
}

/** A process's resident memory in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
}

/** `refused:invalid_arguments 812, ok 301, ...`, most frequent first. */
export function outcomesLine(outcomes: Map<string, number>): string {
  return [...outcomes]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

/** A real `verity start` for the fuzz: its own config dir and audit cap, a sentinel entry, the login page. */
export interface TrustRig {
  target: TrustTarget;
  bounds: TrustBounds;
  close(): Promise<void>;
}

export async function startTrustRig(capMb: number, rssBoundBytes: number): Promise<TrustRig> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { operatorSocket, startGateway } = await import('../test/helpers/gateway.js');
  const dir = mkdtempSync(join(tmpdir(), 'verity-trust-fuzz-'));
  const login = await serveLogin();
  const gw = await startGateway(['--audit-max-mb', String(capMb)], {
    VERITY_CONFIG_DIR: dir,
    DISPLAY: undefined,
    WAYLAND_DISPLAY: undefined,
    DBUS_SESSION_BUS_ADDRESS: undefined,
    AT_SPI_BUS_ADDRESS: undefined,
  });
  try {
    const op = await operatorSocket(gw, ['operator.read']);
    // Another agent's session writes the entry it would rather hide, before the fuzz.
    const victim = await gw.connect();
    const opened = await victim.call('page', { action: 'new_tab', url: 'data:text/html,<title>sentinel</title>' });
    if (opened.isError) throw new Error(`the sentinel tab did not open: ${opened.text}`);
    // A call's entry is written just after its reply: ask until it is there (bounded).
    let found: { payload?: { entries?: Array<{ id: number }> } } = {};
    for (let i = 0; i < 50 && !found.payload?.entries?.length; i++) {
      if (i) await new Promise((r) => setTimeout(r, 100));
      found = await op.request('audit.query', { tool: 'page', limit: 1 });
    }
    const sentinelId = found.payload?.entries?.[0]?.id;
    if (!sentinelId) throw new Error(`no sentinel entry in the trail after 5 s: ${JSON.stringify(found)}`);
    const agent = await gw.connect();
    return {
      target: {
        call: (tool, args) => agent.call(tool, args),
        trailBytes: () => folderBytes(join(dir, 'audit')),
        rssBytes: () => rssOf(gw.pid),
        kept: async (id) => {
          const r = await op.request('audit.query', { before: id + 1, limit: 1 });
          return r.payload?.entries?.[0]?.id === id;
        },
        loginUrl: login.url,
      },
      bounds: { capBytes: capMb * 1024 * 1024, rssBytes: rssBoundBytes, sentinelId },
      async close() {
        op.ws.close();
        await gw.close();
        login.server.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await gw.close();
    login.server.close();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
