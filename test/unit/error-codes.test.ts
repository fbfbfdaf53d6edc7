// Relay failures are recognised by their code, typed in the process and as a tag through puppeteer's
// protocol errors (which keep only text): the wording around the tag may change freely.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorCodeOf, errorTag, RelayCommandError } from '../../server/errors.js';
import { asRefusal } from '../../server/mcp/refusals.js';

test('a typed relay error and its tag in a protocol error give the same code', () => {
  assert.equal(errorCodeOf(new RelayCommandError('delivery_unknown', 'any words')), 'delivery_unknown');
  const viaPuppeteer = new Error(
    `Protocol error (Input.dispatchMouseEvent): whatever the relay said ${errorTag('not_delivered')}`,
  );
  assert.equal(errorCodeOf(viaPuppeteer), 'not_delivered');
  assert.equal(errorCodeOf(new Error('its result is unknown and it is not resent')), null, 'prose alone is no code');
  assert.equal(errorCodeOf(new Error('[verity-error:made_up]')), null, 'an unknown tag is no code');
  assert.equal(errorCodeOf('a string'), null);
});

test('asRefusal maps the codes to the delivery the caller must know', () => {
  const unknown = asRefusal(
    new RelayCommandError('delivery_unknown', 'the extension disconnected before answering relay command r-1'),
  );
  assert.equal(unknown.code, 'unavailable');
  assert.deepEqual([unknown.details.delivery, unknown.details.retryable], ['unknown', false]);
  const none = asRefusal(new Error(`Protocol error (Runtime.callFunctionOn): detached ${errorTag('not_delivered')}`));
  assert.deepEqual([none.code, none.details.delivery, none.details.retryable], ['unavailable', 'none', true]);
  const plain = asRefusal(new Error('something else broke'));
  assert.equal(plain.details.delivery, undefined);
});
