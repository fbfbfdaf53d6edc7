// The permission policy's file and approval rules (server/policy.ts), in process: loading and refusing a
// policy file, origin patterns, the native apps list and which tools wait for an operator. The reach rules
// (schemes, the gateway's own origin) are in reach-policy.test.ts.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  appMatches,
  CONTROL_UI_TITLE,
  isTerminal,
  Policy,
  type AppFacts,
  type PolicyFile,
} from '../../server/policy.js';
import { Refusal } from '../../server/contract/refusal.js';
import { configDir, setConfigDir } from '../../server/token.js';

const tmp = mkdtempSync(join(tmpdir(), 'verity-policy-unit-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function refusal(fn: () => void): Refusal {
  try {
    fn();
  } catch (e) {
    if (e instanceof Refusal) return e;
    throw e;
  }
  assert.fail('expected a refusal');
}
function loadError(json: string): string {
  const file = join(tmp, `p${Math.random().toString(16).slice(2)}.json`);
  writeFileSync(file, json);
  try {
    Policy.load(file);
  } catch (e) {
    return (e as Error).message;
  }
  assert.fail(`${json} was accepted`);
}

describe('policy file', () => {
  test('the sample file loads and says where it came from', () => {
    const p = Policy.load(join(process.cwd(), 'policy.sample.json'));
    assert.match(p.source, /policy\.sample\.json$/);
    assert.equal(p.needsApproval('drag'), true);
    assert.equal(p.filtersOrigins, true);
  });

  test('refused files name the file and the field', () => {
    const table: Array<[string, RegExp]> = [
      ['{', /not valid JSON/],
      ['[]', /root: /],
      ['{"allowed_origins": "https://a.example"}', /allowed_origins: /],
      ['{"allowed_origins": [""]}', /allowed_origins\.0: /],
      ['{"require_approval": [1]}', /require_approval\.0: /],
      ['{"allowed_orgins": []}', /root: .*allowed_orgins/],
    ];
    for (const [json, want] of table) {
      const message = loadError(json);
      assert.match(message, /^policy file .*\.json: /, message);
      assert.match(message, want, `${json}: ${message}`);
    }
  });

  test('an explicit file that does not exist is an error; a missing default is "everything allowed"', () => {
    assert.throws(() => Policy.load(join(tmp, 'missing.json')), /does not exist/);
    const saved = configDir();
    try {
      setConfigDir(join(tmp, 'empty-config'));
      const p = Policy.load();
      assert.match(p.source, /built-in/);
      p.checkUrl('https://anything.example/');
      assert.equal(p.appRefusal(facts({ names: ['anything'] })), null);
    } finally {
      setConfigDir(saved);
    }
  });
});

describe('origin patterns', () => {
  const allows = (pattern: string, url: string) => {
    try {
      new Policy({ allowed_origins: [pattern], require_approval: [] }).checkUrl(url);
      return true;
    } catch (e) {
      if (e instanceof Refusal) return false;
      throw e;
    }
  };
  const table: Array<[string, string, boolean]> = [
    ['https://a.example', 'https://a.example/path?q', true],
    ['https://a.example', 'http://a.example/', false],
    ['https://a.example', 'https://a.example:8443/', false],
    ['https://*.example.com', 'https://deep.sub.example.com/', true],
    ['https://*.example.com', 'https://example.com/', false],
    ['https://*.example.com', 'https://evil.com/.example.com', false],
    ['https://*.example.com', 'https://example.com.evil.test/', false],
    ['http://127.0.0.1:*', 'http://127.0.0.1:9/', true],
    ['http://127.0.0.1:*', 'http://127.0.0.1/', false],
    ['https://*', 'https://anything.test:8443/', true],
    ['https://*', 'http://anything.test/', false],
    ['https://a.example', 'https://A.EXAMPLE/', true],
    ['https://a.example', 'about:blank', true],
  ];
  for (const [pattern, url, want] of table)
    test(`${pattern} ${want ? 'allows' : 'refuses'} ${url}`, () => assert.equal(allows(pattern, url), want));

  test("a refusal names the origin and the policy's source and list", () => {
    const p = new Policy({ allowed_origins: ['https://a.example'], require_approval: [] }, '/etc/verity/policy.json');
    const r = refusal(() => p.checkUrl('https://b.example/x?secret=1', 'the tab'));
    assert.equal(r.code, 'not_permitted');
    assert.equal(r.details.origin, 'https://b.example');
    assert.match(
      r.message,
      /^the tab is on https:\/\/b\.example, which the policy \(\/etc\/verity\/policy\.json\) does not allow; allowed: https:\/\/a\.example$/,
    );
  });
});

describe('tunnels (the policy proxy asks hostPortAllowed for each CONNECT host:port)', () => {
  const p = new Policy({
    allowed_origins: ['https://a.example', 'http://127.0.0.1:8080', 'wss://live.example:9443', 'https://*.b.example'],
    blocked_origins: ['https://evil.b.example'],
    require_approval: [],
  });
  p.setGatewayOrigin('127.0.0.1', 7317);
  const table: Array<[string, number, boolean]> = [
    ['a.example', 443, true], // https://a.example
    ['a.example', 80, false], // only https is allowed there
    ['a.example', 8443, false],
    ['127.0.0.1', 8080, true], // an allowed http origin's host:port (a ws:// to it tunnels there)
    ['127.0.0.1', 8081, false],
    ['live.example', 9443, true],
    ['x.b.example', 443, true],
    ['evil.b.example', 443, false], // blocked wins
    ['127.0.0.1', 7317, false], // the gateway
    ['localhost', 7317, false],
    ['[::1]', 7317, false],
    ['a.example', 0, false],
    ['a.example', 65536, false],
    ['', 443, false],
    ['a.example/x', 443, false],
    ['user@a.example', 443, false],
    ['A.EXAMPLE', 443, true],
    ['[::1', 443, false],
  ];
  for (const [host, port, want] of table)
    test(`${JSON.stringify(host)}:${port} is ${want ? 'allowed' : 'refused'}`, () =>
      assert.equal(p.hostPortAllowed(host, port), want));

  test('a spelling the URL parser would rewrite is refused (the caller connects to the name it checked)', () => {
    const any = new Policy({ allowed_origins: ['http://*'], require_approval: [] });
    assert.equal(any.hostPortAllowed('127.0.0.1', 80), true);
    assert.equal(any.hostPortAllowed('127.1', 80), false);
    assert.equal(any.hostPortAllowed('0x7f.0.0.1', 80), false);
    assert.equal(any.hostPortAllowed('[0:0:0:0:0:0:0:1]', 80), false);
    assert.equal(any.hostPortAllowed('[::1]', 80), true);
  });

  test('with no origin list every host:port but the gateway is allowed', () => {
    const open = new Policy();
    open.setGatewayOrigin('127.0.0.1', 7317);
    assert.equal(open.hostPortAllowed('anything.test', 443), true);
    assert.equal(open.hostPortAllowed('127.0.0.1', 7318), true);
    assert.equal(open.hostPortAllowed('127.0.0.1', 7317), false);
    assert.equal(open.hostPortAllowed('127.9.9.9', 7317), false);
  });
});

/** An app as the native host reads it from /proc, with the fields a test does not care about empty. */
function facts(extra: Partial<AppFacts>): AppFacts {
  return { pid: 100, names: [], exe: '', comm: '', argv: [], ...extra };
}
const gedit = facts({
  pid: 4100,
  names: ['gedit'],
  exe: '/usr/bin/gedit',
  comm: 'gedit',
  argv: ['gedit', 'notes.txt'],
});
const pyApp = facts({
  pid: 4200,
  names: ['app.py'],
  exe: '/usr/bin/python3.11',
  comm: 'python3',
  argv: ['/usr/bin/python3', '/work/test/native/app.py', 'Policy Allowed'],
});
const xterm = facts({ pid: 4300, exe: '/usr/bin/xterm', comm: 'xterm', argv: ['xterm'] });

describe('native apps', () => {
  const allows = (rules: Partial<PolicyFile>, app: AppFacts) =>
    new Policy({ require_approval: [], ...rules }).appRefusal(app) === null;

  test('allowed_apps names an app by AT-SPI name, executable, process name, argv[0], command line or pid', () => {
    const table: Array<[string, AppFacts, boolean]> = [
      ['gedit', gedit, true],
      ['GEdit', gedit, true],
      ['/usr/bin/gedit', gedit, true],
      ['gedit notes.txt', gedit, true],
      ['4100', gedit, true],
      ['4101', gedit, false],
      ['gedi', gedit, false],
      ['app.py', pyApp, true],
      ['python3', pyApp, true],
      ['python3.11', pyApp, true],
      ['*Policy Allowed', pyApp, true],
      ['*app.py Policy*', pyApp, true],
      ['*Policy Blocked', pyApp, false],
      ['/usr/bin/python3 *', pyApp, true],
      ['app.*', gedit, false],
      ['.*', gedit, false],
      ['g(edit)?', gedit, false],
    ];
    for (const [entry, app, want] of table)
      assert.equal(appMatches(entry, app), want, `${entry} ${want ? 'names' : 'does not name'} ${app.argv.join(' ')}`);
  });

  test('omitted lists allow any app but terminals; an empty allowed_apps allows none; blocked_apps wins', () => {
    assert.equal(allows({}, gedit), true);
    assert.equal(allows({}, pyApp), true);
    assert.equal(allows({ allowed_apps: [] }, gedit), false, 'an empty list allows none');
    assert.equal(allows({ allowed_apps: ['gedit'] }, pyApp), false);
    assert.equal(allows({ blocked_apps: ['*Policy Allowed'] }, pyApp), false);
    assert.equal(allows({ allowed_apps: ['gedit'], blocked_apps: ['gedit'] }, gedit), false, 'blocked wins');
    assert.equal(allows({ blocked_apps: ['gedit'] }, pyApp), true);
    const why = new Policy({ allowed_apps: ['gedit', '4242'], require_approval: [] }, 'my.json').appRefusal(pyApp);
    assert.equal(why, 'the policy (my.json) does not allow it; allowed_apps: gedit, 4242');
    const blocked = new Policy({ blocked_apps: ['python3'], require_approval: [] }, 'my.json').appRefusal(pyApp);
    assert.equal(blocked, 'the policy (my.json) blocks it (blocked_apps: python3)');
  });

  test('a terminal emulator is refused unless allowed_apps names it (a bare "*" does not)', () => {
    assert.match(String(new Policy().appRefusal(xterm)), /terminal emulator/);
    assert.equal(allows({ allowed_apps: ['*'] }, xterm), false);
    assert.equal(allows({ allowed_apps: ['*'] }, gedit), true);
    assert.equal(allows({ allowed_apps: ['xterm'] }, xterm), true);
    assert.equal(allows({ allowed_apps: ['4300'] }, xterm), true);
    assert.equal(allows({ allowed_apps: ['xterm'], blocked_apps: ['4300'] }, xterm), false);
    // Any of its names makes it one: a renamed binary, a wrapper, a link named like a terminal.
    for (const app of [
      facts({ names: ['gnome-terminal-server'] }),
      facts({ exe: '/usr/lib/kitty/kitty' }),
      facts({ comm: 'konsole' }),
      facts({ argv: ['/tmp/x/uxterm', '-e', 'sh'] }),
      facts({ exe: '/opt/foo/foo-terminal' }),
      facts({ argv: ['alacritty.bin'] }),
    ])
      assert.equal(isTerminal(app), true, JSON.stringify(app));
    for (const app of [gedit, pyApp, facts({ names: ['Terms of use viewer'] }), facts({ comm: 'determine' })])
      assert.equal(isTerminal(app), false, JSON.stringify(app));
  });

  test('a browser window showing the Control UI is refused whatever the lists say; another title is not', () => {
    const firefox = facts({ names: ['Firefox'], exe: '/usr/lib/firefox-esr/firefox-esr', comm: 'firefox-esr' });
    const ui = { ...firefox, browserLike: true };
    assert.match(
      String(new Policy().appRefusal({ ...ui, title: `${CONTROL_UI_TITLE} — Mozilla Firefox` })),
      /Control UI/,
    );
    assert.equal(allows({ allowed_apps: ['firefox-esr'] }, { ...ui, title: `${CONTROL_UI_TITLE} - Chromium` }), false);
    assert.equal(allows({ allowed_apps: ['firefox-esr'] }, { ...ui, title: 'Example Domain — Mozilla Firefox' }), true);
    // Only a browser draws the console: a native app titled so is an app like any other.
    assert.equal(allows({}, { ...gedit, title: CONTROL_UI_TITLE, browserLike: false }), true);
    // The constant is the Control UI's real title.
    const html = readFileSync(join(process.cwd(), 'control-ui', 'index.html'), 'utf8');
    assert.equal(/<title>([^<]*)<\/title>/.exec(html)?.[1], CONTROL_UI_TITLE);
  });

  test('a policy file with blocked_apps loads; a wrong type there is refused naming the field', () => {
    const file = join(tmp, 'apps.json');
    writeFileSync(file, JSON.stringify({ allowed_apps: ['gedit'], blocked_apps: ['xterm'] }));
    const p = Policy.load(file);
    assert.deepEqual(p.summary().blocked_apps, ['xterm']);
    assert.deepEqual(p.summary().allowed_apps, ['gedit']);
    assert.equal(new Policy().summary().allowed_apps, null, 'null: any app');
    assert.match(loadError('{"blocked_apps": "xterm"}'), /blocked_apps: /);
  });
});

describe('approvals', () => {
  test('require_approval holds a tool, or one page action as page.<action>', () => {
    const p = new Policy({ require_approval: ['drag', 'page.execute_javascript'] });
    const table: Array<[string, string | undefined, boolean]> = [
      ['drag', undefined, true],
      ['drag', 'anything', true],
      ['click', undefined, false],
      ['page', 'execute_javascript', true],
      ['page', 'navigate', false],
      ['page', undefined, false],
      ['execute_javascript', undefined, false],
    ];
    for (const [tool, action, want] of table) assert.equal(p.needsApproval(tool, action), want, `${tool} ${action}`);
    assert.equal(new Policy().needsApproval('drag'), false, 'the built-in policy holds nothing');
  });

  test('a require_approval entry naming no tool is refused at start, naming it and the known ones', () => {
    const known = ['click', 'drag', 'page.navigate'];
    new Policy({ require_approval: ['drag', 'page.navigate'] }).checkNames(known);
    assert.throws(
      () => new Policy({ require_approval: ['drga', 'click', 'page.nav'] }, 'my.json').checkNames(known),
      /^Error: policy file my\.json: require_approval: unknown tool "drga", "page\.nav"; known: click, drag, page\.navigate$/,
    );
  });
});
