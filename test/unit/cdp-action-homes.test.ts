// Every action of the table (server/contract/actions.ts) has its browser half in a home of its own:
// server/cdp/actions/<kebab-name>.ts, exporting a function of the action's own name (what the CDP driver
// calls). A new action without its browser half, or with it elsewhere, fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ACTIONS } from '../../server/contract/actions.js';

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

for (const action of Object.keys(ACTIONS)) {
  test(`${action}: its browser half is server/cdp/actions/${kebab(action)}.ts, exporting ${action}()`, async () => {
    const home = (await import(`../../server/cdp/actions/${kebab(action)}.js`)) as Record<string, unknown>;
    assert.equal(
      typeof home[action],
      'function',
      `server/cdp/actions/${kebab(action)}.ts exports no function ${action}`,
    );
  });
}
