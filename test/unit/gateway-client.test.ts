// The gateway client's back-off policy (one for the Control UI and the extension), as a table; its typed
// event listeners (on/off) added and taken away by reference, as the panels do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayClient, reconnectDelay } from '../../control-ui/src/gateway.js';

test('reconnect delays: 250 ms, doubling, at most 5 s', () => {
  const table: Array<[number, number]> = [
    [0, 250],
    [1, 500],
    [2, 1000],
    [3, 2000],
    [4, 4000],
    [5, 5000],
    [6, 5000],
    [50, 5000],
    [-1, 250],
  ];
  for (const [attempt, ms] of table) assert.equal(reconnectDelay(attempt), ms, `attempt ${attempt}`);
});

test('on() with the same listener twice calls it once; off() and the returned stop take it away', () => {
  const client = new GatewayClient({
    url: 'ws://127.0.0.1:1/gateway',
    token: 't',
    caps: [],
    scopes: [],
    clientId: 'unit',
  });
  const seen: string[] = [];
  const listener = ({ terminalId }: { terminalId: string; data: string }) => seen.push(terminalId);
  const fire = (terminalId: string) =>
    client.dispatchEvent(new CustomEvent('terminal.data', { detail: { terminalId, data: '' } }));
  client.on('terminal.data', listener);
  client.on('terminal.data', listener);
  fire('a');
  assert.deepEqual(seen, ['a']);
  client.off('terminal.data', listener);
  fire('b');
  assert.deepEqual(seen, ['a']);
  const stop = client.on('terminal.data', listener);
  fire('c');
  stop();
  fire('d');
  assert.deepEqual(seen, ['a', 'c']);
});
