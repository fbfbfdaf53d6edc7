// Issue 41 item 3, replayed against a real `verity start` and its Chromium: a login form that submits by GET
// puts the password Verity typed (masked in type_text's own result) into the next page's URL, and from there
// into the click's "Navigated to", the tab list, the network and console logs, the page text and title, the
// window target, the operator's Control UI and the audit trail. Whatever was typed into a secret field is
// never shown again while the session that typed it lives: not raw, URL- or form-encoded, nor base64 or
// base64url of it (URL-encoded too), in any session's results, in what operators are sent, in the audit JSONL
// or in a recording. Positive controls: the user name next to it is shown, the mask stands where it was, and
// once the typing session has ended (its secrets forgotten) a new session's tab list does show the password,
// so each search below would have found it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import {
  operatorSocket,
  startGateway,
  waitFor,
  type Connection,
  type Gateway,
  type OperatorSocket,
} from '../helpers/gateway.js';
import type { ToolResult } from '../helpers/mcp.js';

/** Encodes differently raw, in encodeURIComponent (space, +, ü, ?) and in a form (also !, ~); base64 has a `/`. */
const PASSWORD = 'p@ss w0rd+ü!~?';
/** The second password, typed by a run_actions step (a `%` and a `#` besides). */
const PASSWORD2 = 'zw€i #te+st%ß';

/** Every form a password may come back in: none may be shown anywhere while the typing session lives. */
function formsOf(password: string): Record<string, string> {
  const utf8 = Buffer.from(password, 'utf8');
  const forms: Record<string, string> = {
    raw: password,
    encodeURIComponent: encodeURIComponent(password),
    'form-encoded': new URLSearchParams({ pw: password }).toString().slice('pw='.length),
    base64: utf8.toString('base64'),
    base64url: utf8.toString('base64url'),
    'base64, URL-encoded': encodeURIComponent(utf8.toString('base64')),
  };
  if ([...password].every((c) => c.codePointAt(0)! <= 0xff)) {
    const latin1 = Buffer.from(password, 'latin1').toString('base64');
    forms['base64 of Latin-1'] = latin1;
    forms['base64 of Latin-1, URL-encoded'] = encodeURIComponent(latin1);
  }
  return forms;
}
const FORMS = formsOf(PASSWORD);
const FORMS2 = formsOf(PASSWORD2);
/** The mask: one • per character of the password. */
const MASK = '•'.repeat([...PASSWORD].length);
const MASK2 = '•'.repeat([...PASSWORD2].length);

const dir = mkdtempSync(join(tmpdir(), 'verity-sec-echo-'));
let fx: FixtureServer;
let gw: Gateway;
let agent: Connection;
let op: OperatorSocket;
let tabId: string;

before(async () => {
  // The forms differ from each other (else the test would check fewer than it says).
  for (const forms of [FORMS, FORMS2])
    assert.equal(new Set(Object.values(forms)).size, Object.keys(forms).length, JSON.stringify(forms));
  fx = await serveFixtures();
  gw = await startGateway([], { VERITY_CONFIG_DIR: dir });
  agent = await gw.connect();
  op = await operatorSocket(gw, ['operator.read']);
  const started = await agent.call('start_session', { session: 'login', recording_dir: 'login-run' });
  assert.equal(started.isError, false, started.text);
  const opened = await call('page', { action: 'navigate', url: fx.url('login-get.html') });
  tabId = opened.structured.tab_id;
});
after(async () => {
  op?.ws.close();
  await agent?.disconnect();
  await gw?.close();
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `where` holds no form of either password. */
function noEcho(haystack: string, where: string): void {
  for (const [password, forms] of [
    ['the password', FORMS],
    ['the second password', FORMS2],
  ] as const)
    for (const [name, form] of Object.entries(forms))
      assert.ok(!haystack.includes(form), `${where} holds ${password} ${name} (${form}):\n${haystack.slice(0, 4000)}`);
}

/** A result's structured content and its text, as the MCP client got them. */
const all = (r: ToolResult) => `${JSON.stringify(r.structured)}\n${r.text}`;

async function call(name: string, args: Record<string, unknown>, session = 'login'): Promise<ToolResult> {
  const r = await agent.call(name, { session, ...args });
  assert.equal(r.isError, false, `${name}: ${r.text}`);
  return r;
}

async function tokens(): Promise<(label: string) => string> {
  const snap = await call('get_window_state', { format: 'full', include_screenshot: false });
  return (label) => {
    const el = snap.structured.elements.find((e: any) => e.label === label);
    assert.ok(el, `no element "${label}" in ${snap.text}`);
    return el.element_token;
  };
}

/** Every file under a folder, as text (binary files too: a secret in a PNG or a zip would show as its bytes). */
function filesUnder(root: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push({ path, text: readFileSync(path, 'latin1') + readFileSync(path, 'utf8') });
  }
  return out;
}

/** What the operator's connection heard, but the screencast's pixels. */
const heard = () => JSON.stringify(op.events.filter((e) => e.event !== 'browser.frame'));

describe('a password typed into a GET login form is never shown again while its session lives', () => {
  test('type_text into the password field: masked in its own result (the field-level mask)', async () => {
    // The operator's browser panel follows the tab, so its location events are heard below.
    const cast = await op.request('browser.screencast.start', { tab_id: tabId });
    assert.equal(cast.ok, true, JSON.stringify(cast.error));
    const token = await tokens();
    const user = await call('type_text', { element_token: token('User'), text: 'alice' });
    assert.equal(user.structured.masked, undefined, user.text);
    const typed = await call('type_text', { element_token: token('Password'), text: PASSWORD });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    assert.match(typed.structured.masked ?? '', /password/, typed.text);
    noEcho(all(typed), 'type_text');
  });

  test('the click that submits the form: its result, and the page it leads to, show the URL masked', async () => {
    const token = await tokens();
    const clicked = await call('click', { element_token: token('Sign in') });
    noEcho(all(clicked), 'click');
    // "Navigated to" when the navigation fell in the click's window: then with the user shown and the password masked.
    const navigated = clicked.structured.caused?.navigated;
    if (navigated !== undefined) assert.ok(navigated.includes(`user=alice&pw=${MASK}`), navigated);
    const ready = await call('page', { action: 'wait_for', css_selector: 'body[data-ready]' });
    noEcho(all(ready), 'page wait_for');
    // The page's two requests have been answered (the console has the 404's line).
    await waitFor(async () => {
      const read = await call('page', { action: 'network_requests', url: 'respond' });
      return read.structured.requests.filter((r: any) => r.status !== undefined).length === 2;
    }, 'the done page to have its two answers');
  });

  test('page list_tabs, network_requests, console_messages, get_text and query_dom, and the title: masked', async () => {
    const tabs = await call('page', { action: 'list_tabs' });
    noEcho(all(tabs), 'page list_tabs');
    const [tab] = tabs.structured.tabs;
    assert.ok(tab.url.includes(`login-done.html?user=alice&pw=${MASK}`), tab.url);
    assert.ok(tab.title.includes(`?user=alice&pw=${MASK}`), tab.title);
    assert.ok(tabs.text.includes(`user=alice&pw=${MASK}`), tabs.text);

    const requests = await call('page', { action: 'network_requests' });
    noEcho(all(requests), 'page network_requests');
    assert.ok(all(requests).includes(`respond?status=200&b64=${MASK}&b64url=${MASK}&latin1=${MASK}`), all(requests));
    assert.ok(all(requests).includes(`respond?status=404&raw=${MASK}`), all(requests));

    const consoled = await call('page', { action: 'console_messages' });
    noEcho(all(consoled), 'page console_messages');
    assert.ok(all(consoled).includes(`password ${MASK}; token ${MASK}`), all(consoled));
    assert.ok(all(consoled).includes(`signed in at ${fx.url('login-done.html')}?user=alice&pw=${MASK}`));

    const text = await call('page', { action: 'get_text' });
    noEcho(all(text), 'page get_text');
    assert.ok(text.text.includes(`Your password is ${MASK}`), text.text);
    assert.ok(text.structured.title.includes(`user=alice&pw=${MASK}`), text.structured.title);

    const dom = await call('page', { action: 'query_dom', css_selector: 'a, p', attributes: ['href'] });
    noEcho(all(dom), 'page query_dom');
    assert.ok(all(dom).includes(`user=alice&pw=${MASK}`), all(dom));
  });

  test('get_window_state: its target and its outline of the page are masked', async () => {
    const state = await call('get_window_state', { format: 'full', include_screenshot: false });
    noEcho(all(state), 'get_window_state');
    assert.ok(state.structured.target.url.includes(`user=alice&pw=${MASK}`), JSON.stringify(state.structured.target));
    assert.ok(state.text.includes(`Your password is ${MASK}`), state.text);
    const compact = await call('get_window_state', { include_screenshot: false });
    noEcho(all(compact), 'get_window_state (compact)');
  });

  test("another session of the agent sees the tab masked too: the mask holds in every session's results", async () => {
    const tabs = await call('page', { action: 'list_tabs' }, 'other');
    noEcho(all(tabs), "the other session's page list_tabs");
    assert.ok(all(tabs).includes(`user=alice&pw=${MASK}`), all(tabs));
  });

  test('a password typed by a run_actions step is masked in the later steps and in the observation', async () => {
    await call('page', { action: 'navigate', url: fx.url('login-get.html') });
    const token = await tokens();
    const batch = await call('run_actions', {
      steps: [
        { tool: 'type_text', args: { element_token: token('User'), text: 'bob' } },
        { tool: 'type_text', args: { element_token: token('Password'), text: PASSWORD2 } },
        { tool: 'click', args: { element_token: token('Sign in') } },
      ],
    });
    noEcho(all(batch), 'run_actions');
    assert.ok(batch.structured.steps[1].result.masked, all(batch));
    await call('page', { action: 'wait_for', css_selector: 'body[data-ready]' });
    const text = await call('page', { action: 'get_text' });
    noEcho(all(text), 'page get_text after the batch');
    assert.ok(text.text.includes(`user=bob&pw=${MASK2}`), text.text);
    assert.ok(text.text.includes(`Your password is ${MASK2}`), text.text);
  });

  test("the operator's Control UI: the tab list, the panel's location, the action log and audit entries", async () => {
    const tabs = await op.request('browser.tabs', {});
    assert.equal(tabs.ok, true, JSON.stringify(tabs.error));
    noEcho(JSON.stringify(tabs), 'browser.tabs');
    assert.ok(JSON.stringify(tabs).includes(`user=bob&pw=${MASK2}`), JSON.stringify(tabs));
    const audit = await op.request('audit.query', { limit: 500 });
    assert.equal(audit.ok, true, JSON.stringify(audit.error));
    noEcho(JSON.stringify(audit), 'audit.query');
    // The panel's URL bar followed the tab to the done page (both times); the action log heard the user names.
    await waitFor(
      () => op.events.filter((e) => e.event === 'browser.location' && e.payload.url.includes('login-done')).length >= 2,
      'the browser panel to follow both sign-ins',
    );
    const locations = op.events.filter((e) => e.event === 'browser.location').map((e) => e.payload.url);
    assert.ok(locations.includes(`${fx.url('login-done.html')}?user=alice&pw=${MASK}`), locations.join('\n'));
    await waitFor(() => heard().includes('bob'), 'the action log to hear the batch');
    assert.ok(heard().includes('alice'), 'the action log names the user');
    noEcho(heard(), "the operator's events");
    assert.equal((await op.request('browser.screencast.stop')).ok, true);
  });

  test('the audit trail in the config dir and the recording folder hold no form of either password', async () => {
    const written = () => filesUnder(dir).filter((f) => f.text.includes('run_actions'));
    await waitFor(() => written().length > 0, 'the audit entry of run_actions', 100, 300);
    const files = filesUnder(dir);
    assert.ok(
      files.some((f) => /login-run/.test(f.path) && f.text.includes('"click"')),
      `a recording was written: ${files.map((f) => f.path).join(', ')}`,
    );
    for (const f of files) noEcho(f.text, f.path);
    assert.ok(
      files.some((f) => f.text.includes(`user=alice&pw=${MASK}`)),
      'the trail keeps the URL, the user shown and the password masked (so the search above could find it)',
    );
    noEcho(gw.stdout() + gw.stderr(), "the gateway's output");
  });

  test('positive control: once the typing session ends its secrets are forgotten, and the same tab list shows them', async () => {
    const ended = await call('end_session', {});
    assert.equal(ended.isError, false, ended.text);
    const tabs = await call('page', { action: 'list_tabs' }, 'afterwards');
    // What the session typed is masked while it lives, not after: the searches above would have found it.
    assert.ok(all(tabs).includes(`user=bob&pw=${FORMS2['form-encoded']}`), all(tabs));
    assert.throws(() => noEcho(all(tabs), 'list_tabs after the end'), /form-encoded/);
  });
});
