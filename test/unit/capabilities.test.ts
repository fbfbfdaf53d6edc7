// Capabilities (contract/capabilities.ts): which tool families tools/list offers and admits. The MCP side
// (a tool of a capability that is off is neither listed nor callable, directly or as a batch step) is in
// tools-in-memory.test.ts with the capability tools themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CAPABILITIES,
  capabilityOffMessage,
  capabilityOn,
  isCapability,
  surfaceOf,
} from '../../server/contract/capabilities.js';

test('a capability is on when named by --caps or when --tools full; an ordinary tool is always on', () => {
  const lean = surfaceOf({});
  assert.deepEqual(lean, { surface: 'default', caps: [] });
  assert.equal(capabilityOn(undefined, lean), true);
  assert.equal(capabilityOn('windows', lean), false);
  assert.equal(capabilityOn('windows', surfaceOf({ caps: ['windows'] })), true);
  assert.equal(capabilityOn('clipboard', surfaceOf({ caps: ['windows'] })), false);
  for (const cap of Object.keys(CAPABILITIES))
    assert.equal(capabilityOn(cap as keyof typeof CAPABILITIES, surfaceOf({ tools: 'full' })), true, cap);
  assert.equal(isCapability('apps'), true);
  assert.equal(isCapability('toString'), false, 'not an inherited name');
  assert.equal(
    capabilityOffMessage('launch_app', 'apps'),
    'name: launch_app is off on this server; the operator turns it on with --caps apps (or --tools full)',
  );
});
