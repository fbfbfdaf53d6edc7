// The permission policy's file and approval rules (server/policy.ts), in process: loading and refusing a
// policy file, origin patterns, the native apps list and which tools wait for an operator. The reach rules
// (schemes, the gateway's own origin) are in reach-policy.test.ts.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Policy } from '../../server/policy.js';
import { Refusal } from '../../server/routing/refusal.js';

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
    const saved = { env: process.env.VERITY_POLICY, dir: process.env.VERITY_CONFIG_DIR };
    try {
      delete process.env.VERITY_POLICY;
      process.env.VERITY_CONFIG_DIR = join(tmp, 'empty-config');
      const p = Policy.load();
      assert.match(p.source, /built-in/);
      p.checkUrl('https://anything.example/');
      p.checkApp('anything', 1);
    } finally {
      if (saved.env === undefined) delete process.env.VERITY_POLICY;
      else process.env.VERITY_POLICY = saved.env;
      if (saved.dir === undefined) delete process.env.VERITY_CONFIG_DIR;
      else process.env.VERITY_CONFIG_DIR = saved.dir;
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

describe('native apps', () => {
  test('allowed_apps: by name (any case) or by pid; omitted: any app', () => {
    const p = new Policy({ allowed_apps: ['gedit', '4242'], require_approval: [] });
    p.checkApp('gedit', 1);
    p.checkApp('GEdit', 2);
    p.checkApp('python3', 4242);
    const r = refusal(() => p.checkApp('xterm', 7));
    assert.equal(r.code, 'not_permitted');
    assert.match(r.message, /the app xterm \(pid 7\) is not allowed .*allowed: gedit, 4242/);
    new Policy().checkApp('xterm', 7);
    assert.equal(
      refusal(() => new Policy({ allowed_apps: [], require_approval: [] }).checkApp('gedit', 1)).code,
      'not_permitted',
      'an empty list allows none',
    );
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
