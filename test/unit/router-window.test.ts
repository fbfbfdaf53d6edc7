// A window target carries what the router's lookup found, like a tab target carries its tab (issue 43 item 4):
// a window call looks its window up once. The router is built here as the composition root builds it, over
// the contracts only (contract/browser-route.ts, contract/native-host.ts): a native route that counts its
// host's lookups, and a browser route that is never asked (no browser runs).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserRoute, PageOps, RoutedTab } from '../../server/contract/browser-route.js';
import type { WindowTarget } from '../../server/contract/driver.js';
import type { NativeRoute, NativeWindow } from '../../server/contract/native-host.js';
import { LinuxHost } from '../../server/native/linux/host.js';
import type { WindowInfo } from '../../server/native/linux/atspi/window.js';
import { Policy } from '../../server/policy.js';
import { Router } from '../../server/routing/router.js';
import { SessionManager } from '../../server/sessions/manager.js';

const WINDOW: NativeWindow = { id: 7, pid: 42, title: 'Verity Form', bounds: { x: 0, y: 0, w: 400, h: 300 } };

/** How often the native host was asked for windows: the whole list, or one by id. */
const lookups = { list: 0, one: 0 };

const nativeRoute = {
  host: {
    windows: async () => {
      lookups.list++;
      return [WINDOW];
    },
    window: async () => {
      lookups.one++;
      return WINDOW;
    },
    windowTitle: async () => WINDOW.title,
    isDescendant: () => false,
    close: () => {},
  },
} as unknown as NativeRoute;

const noBrowser = {
  running: false,
  attached: false,
  launchedPid: null,
  closedListeners: new Set(),
  driver: {},
} as unknown as BrowserRoute<RoutedTab>;

let router: Router;
let sessions: SessionManager;

before(() => {
  sessions = new SessionManager({ idleMs: 60_000 });
  router = new Router({
    browser: noBrowser,
    pageOps: {} as PageOps,
    loadNative: async () => nativeRoute,
    policy: new Policy(),
    cursorFor: () => undefined,
    onCurrentTabChanged: () => {},
    perConnection: { sessions },
    // The native route needs a display to be loaded at all (nativeUnavailable); none is opened here.
    env: { DISPLAY: ':99' },
  });
});
after(async () => {
  await sessions.shutdown();
});

async function resolveCounted(args: Record<string, unknown>) {
  lookups.list = 0;
  lookups.one = 0;
  const { target } = await router.resolve(args, { connectionId: 'c1' });
  assert.equal(target.kind, 'window');
  return target as WindowTarget;
}

test('a window named by its pid alone is looked up once, and the window found travels with the target', async () => {
  const target = await resolveCounted({ pid: 42 });
  assert.deepEqual(lookups, { list: 1, one: 0 });
  assert.equal(target.windowId, 7);
  assert.equal(target.window, WINDOW, 'the target carries the window the lookup found');
});

test('a window named by its id alone is looked up once, and the window found travels with the target', async () => {
  const target = await resolveCounted({ target: { kind: 'window', window_id: 7 } });
  assert.deepEqual(lookups, { list: 1, one: 0 });
  assert.equal(target.pid, 42);
  assert.equal(target.window, WINDOW);
});

test('a window named by pid and id is not looked up by the router: the native route looks it up, once', async () => {
  const target = await resolveCounted({ target: { kind: 'window', pid: 42, window_id: 7 } });
  assert.deepEqual(lookups, { list: 0, one: 0 });
  assert.equal(target.window, undefined);
});

test("the Linux host takes a target's carried window as it is, and looks up only a window not carried", async () => {
  const host = new LinuxHost({ drivenBrowserPid: async () => null });
  let asked = 0;
  const looked = { ...WINDOW, surface: 'x11', placed: true } as unknown as WindowInfo;
  host.window = async () => {
    asked++;
    return looked;
  };
  const base = { kind: 'window' as const, key: '42:7', deliveryMode: 'background' as const, pid: 42, windowId: 7 };
  const carried = { ...WINDOW } as unknown as WindowInfo;
  assert.equal(await host.targetWindow({ ...base, window: carried }), carried);
  assert.equal(asked, 0, 'a carried window is not looked up again');
  assert.equal(await host.targetWindow(base), looked);
  assert.equal(asked, 1);
});
