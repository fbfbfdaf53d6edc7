// The launch decisions as pure logic: the sandbox flag, the owner pid in a profile's name, stale-profile
// cleaning (on real folders, with real live and dead pids), and the browser flags of the CLI.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { cleanStaleProfiles, newProfile, profileOwner, sandboxArgs } from '../../server/cdp/browser/lifetime.js';
import { parseFlags } from '../../server/cli/parse.js';

describe('the sandbox', () => {
  test('off (--no-sandbox) only as root on Linux', () => {
    assert.deepEqual(sandboxArgs('linux', 0), ['--no-sandbox']);
    assert.deepEqual(sandboxArgs('linux', 1000), []);
    assert.deepEqual(sandboxArgs('darwin', 0), []);
    assert.deepEqual(sandboxArgs('win32', undefined), []);
  });
});

describe('temporary profiles', () => {
  test('a profile is named after its owner', () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-unit-'));
    try {
      const p = newProfile(dir);
      assert.equal(profileOwner(basename(p)), process.pid);
      assert.equal(profileOwner('verity-profile-abc'), null, 'an old-style name has no owner and is left alone');
      assert.equal(profileOwner('other-1234-x'), null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('only profiles whose owner is gone are removed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-unit-'));
    try {
      const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
        encoding: 'utf8',
      });
      const deadPid = Number(dead.stdout);
      assert.ok(deadPid > 0);
      const stale = join(dir, `verity-profile-${deadPid}-abc123`);
      const mine = join(dir, `verity-profile-${process.pid}-abc123`);
      const parents = join(dir, `verity-profile-${process.ppid}-abc123`);
      const oldStyle = join(dir, 'verity-profile-XyZ123');
      for (const d of [stale, mine, parents, oldStyle]) mkdirSync(join(d, 'Default'), { recursive: true });
      const removed = await cleanStaleProfiles(dir);
      assert.deepEqual(removed, [stale]);
      assert.equal(existsSync(stale), false);
      for (const d of [mine, parents, oldStyle]) assert.equal(existsSync(d), true, d);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('browser flags', () => {
  test('each flag and its VERITY_* variable', () => {
    const f = parseFlags(
      [
        '--channel',
        'chrome-beta',
        '--viewport',
        '800x600',
        '--proxy-server',
        'socks5://127.0.0.1:1080',
        '--ignore-https-errors',
        '--browser-arg',
        '--lang=fr',
        '--browser-arg',
        '--user-agent=A B',
      ],
      {},
    );
    assert.equal(f.channel, 'chrome-beta');
    assert.deepEqual(f.viewport, { width: 800, height: 600 });
    assert.equal(f.proxyServer, 'socks5://127.0.0.1:1080');
    assert.equal(f.ignoreHttpsErrors, true);
    assert.deepEqual(f.browserArgs, ['--lang=fr', '--user-agent=A B']);
    const e = parseFlags([], {
      VERITY_CHANNEL: 'msedge',
      VERITY_VIEWPORT: '1024x768',
      VERITY_PROXY_SERVER: 'http://p:8080',
      VERITY_IGNORE_HTTPS_ERRORS: '1',
      VERITY_BROWSER_ARGS: '["--user-agent=A B", "--lang=fr"]',
    });
    assert.equal(e.channel, 'msedge');
    assert.deepEqual(e.viewport, { width: 1024, height: 768 });
    assert.equal(e.proxyServer, 'http://p:8080');
    assert.equal(e.ignoreHttpsErrors, true);
    assert.deepEqual(e.browserArgs, ['--user-agent=A B', '--lang=fr']);
    assert.deepEqual(parseFlags([], { VERITY_BROWSER_ARGS: '--a  --b' }).browserArgs, ['--a', '--b']);
    assert.equal(parseFlags([], {}).ignoreHttpsErrors, false);
  });

  test('bad values are refused naming the flag', () => {
    assert.throws(
      () => parseFlags(['--channel', 'firefox'], {}),
      /--channel must be one of chromium, chrome, .*msedge/,
    );
    assert.throws(() => parseFlags([], { VERITY_CHANNEL: 'x' }), /VERITY_CHANNEL must be one of/);
    for (const v of ['800', '0x600', '800x', 'axb', '20000x10', '800x600x2'])
      assert.throws(() => parseFlags(['--viewport', v], {}), /--viewport must be WIDTHxHEIGHT/, v);
    assert.throws(() => parseFlags(['--proxy-server', 'a b'], {}), /--proxy-server must be a proxy/);
    assert.throws(() => parseFlags(['--browser-arg'], {}), /--browser-arg needs a value/);
    assert.throws(() => parseFlags([], { VERITY_BROWSER_ARGS: '[1]' }), /VERITY_BROWSER_ARGS must be/);
    assert.throws(
      () => parseFlags(['--browser-url', 'http://127.0.0.1:9222', '--proxy-server', 'http://p:1'], {}),
      /--proxy-server apply to a browser Verity launches/,
    );
  });

  test('--browser-context: one context of the attached browser, given with --browser-url only', () => {
    const url = ['--browser-url', 'http://127.0.0.1:9222'];
    const id = '0123456789ABCDEF0123456789ABCDEF';
    assert.equal(parseFlags([...url, '--browser-context', id], {}).browserContextId, id);
    assert.equal(parseFlags(url, { VERITY_BROWSER_CONTEXT: id }).browserContextId, id);
    assert.throws(
      () => parseFlags(['--browser-context', id], {}),
      /--browser-context names a context of the browser attached with --browser-url, which is not given/,
    );
    assert.throws(
      () => parseFlags([...url, '--browser-context', id, '--isolated'], {}),
      /--browser-context and --isolated exclude each other/,
    );
    assert.throws(
      () => parseFlags([...url, '--browser-context', 'a b'], {}),
      /--browser-context must be a browser context id/,
    );
  });
});
