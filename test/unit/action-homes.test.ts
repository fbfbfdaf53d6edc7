// Every action of the table (server/contract/actions.ts) has a home of its own on each route: its browser
// half at server/cdp/actions/<kebab-name>.ts (its page part, if any, beside it as .page.ts), its native
// halves at server/native/linux/actions/<kebab-name>.ts and server/native/nutjs/actions/<kebab-name>.ts,
// each exporting a function of the action's own name (what that route's driver calls). A new action
// without one of its halves, or with it elsewhere, fails here; the Driver type (ActionMethods) fails the
// build when a driver does not hand the action on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ACTIONS } from '../../server/contract/actions.js';

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

const HOMES = ['server/cdp/actions', 'server/native/linux/actions', 'server/native/nutjs/actions'];

for (const action of Object.keys(ACTIONS)) {
  for (const home of HOMES) {
    test(`${action}: its half in ${home}/${kebab(action)}.ts, exporting ${action}()`, async () => {
      const module = (await import(`../../${home}/${kebab(action)}.js`)) as Record<string, unknown>;
      assert.equal(typeof module[action], 'function', `${home}/${kebab(action)}.ts exports no function ${action}`);
    });
  }
}
