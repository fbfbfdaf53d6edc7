// Browser discovery as pure logic: the candidate places per OS and channel, and the refusal's text.
// The disk is replaced by a set of "installed" paths, so each OS's layout is checked here on any OS.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, candidates, findBrowser, pathDirs } from '../../server/cdp/browser/discovery.js';
import { Refusal } from '../../server/contract/refusal.js';

const installed = (...paths: string[]) => ({ isExecutable: (p: string) => paths.includes(p) });
const places = (cs: ReturnType<typeof candidates>) => cs.map((c) => ('path' in c ? c.path : `$PATH:${c.command}`));

function refusal(fn: () => unknown): Refusal {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof Refusal, String(e));
    return e;
  }
  assert.fail('expected a refusal');
}

describe('candidates per platform', () => {
  test('Linux: the package commands on PATH, then the vendor paths', () => {
    assert.deepEqual(places(candidates('linux', {}, 'chrome')), [
      '$PATH:google-chrome',
      '$PATH:google-chrome-stable',
      '/opt/google/chrome/chrome',
    ]);
    assert.deepEqual(places(candidates('linux', {}, 'chromium')), [
      '$PATH:chromium',
      '$PATH:chromium-browser',
      '/snap/bin/chromium',
    ]);
    assert.deepEqual(places(candidates('linux', {}, 'chrome-dev')), [
      '$PATH:google-chrome-unstable',
      '/opt/google/chrome-unstable/chrome',
    ]);
    assert.deepEqual(places(candidates('linux', {}, 'msedge')), [
      '$PATH:microsoft-edge',
      '$PATH:microsoft-edge-stable',
      '/opt/microsoft/msedge/msedge',
    ]);
    assert.deepEqual(candidates('linux', {}, 'msedge-canary'), [], 'no Edge Canary for Linux');
  });

  test('macOS: app bundles in /Applications and ~/Applications', () => {
    assert.deepEqual(places(candidates('darwin', { HOME: '/Users/a' }, 'chrome-canary')), [
      '/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary',
      '/Users/a/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary',
    ]);
    assert.deepEqual(places(candidates('darwin', {}, 'msedge')), [
      '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
    ]);
    assert.ok(
      places(candidates('darwin', {}, 'chromium')).includes('/Applications/Chromium.app/Contents/MacOS/Chromium'),
    );
  });

  test('Windows: per-machine and per-user install folders', () => {
    const env = {
      PROGRAMFILES: 'C:\\Program Files',
      'PROGRAMFILES(X86)': 'C:\\Program Files (x86)',
      LOCALAPPDATA: 'C:\\Users\\a\\AppData\\Local',
    };
    assert.deepEqual(places(candidates('win32', env, 'chrome')), [
      'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
      'C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe',
      'C:\\Users\\a\\AppData\\Local\\Google\\Chrome\\Application\\chrome.exe',
    ]);
    assert.deepEqual(places(candidates('win32', env, 'chrome-canary')), [
      'C:\\Users\\a\\AppData\\Local\\Google\\Chrome SxS\\Application\\chrome.exe',
    ]);
    assert.deepEqual(
      places(candidates('win32', env, 'msedge-beta')).at(0),
      'C:\\Program Files\\Microsoft\\Edge Beta\\Application\\msedge.exe',
    );
  });

  test('without a channel every channel is searched, Chromium first', () => {
    for (const platform of ['linux', 'darwin', 'win32'] as const) {
      const cs = candidates(platform, { PROGRAMFILES: 'C:\\P', LOCALAPPDATA: 'C:\\L', HOME: '/h' });
      assert.equal(cs[0].channel, 'chromium', platform);
      const seen = new Set(cs.map((c) => c.channel));
      for (const ch of CHANNELS)
        if (!(platform === 'linux' && ch === 'msedge-canary')) assert.ok(seen.has(ch), `${platform} ${ch}`);
    }
  });

  test('PATH is split per platform', () => {
    assert.deepEqual(pathDirs('linux', { PATH: '/a::/b' }), ['/a', '/b']);
    assert.deepEqual(pathDirs('win32', { Path: 'C:\\a;C:\\b' }), ['C:\\a', 'C:\\b']);
    assert.deepEqual(pathDirs('linux', {}), []);
  });
});

describe('findBrowser', () => {
  test('the first installed candidate wins, commands found on PATH', () => {
    assert.equal(
      findBrowser({
        platform: 'linux',
        env: { PATH: '/usr/local/bin:/usr/bin' },
        probe: installed('/usr/bin/chromium', '/opt/google/chrome/chrome'),
      }),
      '/usr/bin/chromium',
    );
    assert.equal(
      findBrowser({
        platform: 'linux',
        env: { PATH: '/usr/bin' },
        channel: 'chrome',
        probe: installed('/usr/bin/chromium', '/opt/google/chrome/chrome'),
      }),
      '/opt/google/chrome/chrome',
    );
    assert.equal(
      findBrowser({
        platform: 'darwin',
        env: { PATH: '/usr/bin' },
        channel: 'chrome',
        probe: installed('/Applications/Google Chrome.app/Contents/MacOS/Google Chrome'),
      }),
      '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
    );
    assert.equal(
      findBrowser({
        platform: 'win32',
        env: { LOCALAPPDATA: 'C:\\L' },
        channel: 'msedge',
        probe: installed('C:\\L\\Microsoft\\Edge\\Application\\msedge.exe'),
      }),
      'C:\\L\\Microsoft\\Edge\\Application\\msedge.exe',
    );
  });

  test('--chromium: a path is taken only if it is there; a bare name is looked up on PATH', () => {
    assert.equal(
      findBrowser({ platform: 'linux', env: {}, explicit: '/x/chrome', probe: installed('/x/chrome') }),
      '/x/chrome',
    );
    assert.equal(
      findBrowser({ platform: 'linux', env: { PATH: '/x' }, explicit: 'mychrome', probe: installed('/x/mychrome') }),
      '/x/mychrome',
    );
    assert.equal(
      findBrowser({
        platform: 'win32',
        env: { PATH: 'C:\\x', PATHEXT: '.EXE;.CMD' },
        explicit: 'chrome',
        probe: installed('C:\\x\\chrome.exe'),
      }),
      'C:\\x\\chrome.exe',
    );
    const r = refusal(() => findBrowser({ platform: 'linux', env: {}, explicit: '/nope/chrome', probe: installed() }));
    assert.equal(r.code, 'unavailable');
    assert.match(r.message, /--chromium \/nope\/chrome/);
  });

  test('the refusal names every place looked, and an install hint for that OS', () => {
    const linux = refusal(() => findBrowser({ platform: 'linux', env: { PATH: '' }, probe: installed() }));
    assert.equal(linux.code, 'unavailable');
    for (const c of candidates('linux', {}))
      assert.ok(linux.message.includes('path' in c ? c.path : c.command), `${JSON.stringify(c)} in ${linux.message}`);
    assert.match(linux.message, /PATH \(empty\)/);
    assert.match(linux.message, /apt-get install chromium/);

    const mac = refusal(() =>
      findBrowser({
        platform: 'darwin',
        env: { PATH: '/usr/bin:/opt/homebrew/bin', HOME: '/Users/a' },
        channel: 'chrome',
        probe: installed(),
      }),
    );
    assert.match(
      mac.message,
      /^no chrome browser found: looked at \/Applications\/Google Chrome\.app\/Contents\/MacOS\/Google Chrome/,
    );
    assert.match(mac.message, /\/Users\/a\/Applications\/Google Chrome\.app/);
    assert.doesNotMatch(mac.message, /apt-get/);
    assert.match(mac.message, /brew install --cask chromium/);

    const win = refusal(() =>
      findBrowser({
        platform: 'win32',
        env: { PROGRAMFILES: 'C:\\P', LOCALAPPDATA: 'C:\\L' },
        channel: 'msedge',
        probe: installed(),
      }),
    );
    assert.match(
      win.message,
      /C:\\P\\Microsoft\\Edge\\Application\\msedge\.exe, C:\\L\\Microsoft\\Edge\\Application\\msedge\.exe/,
    );
    assert.doesNotMatch(win.message, /apt-get/);

    const none = refusal(() =>
      findBrowser({ platform: 'linux', env: {}, channel: 'msedge-canary', probe: installed() }),
    );
    assert.match(none.message, /no msedge-canary build for linux/);
  });
});
