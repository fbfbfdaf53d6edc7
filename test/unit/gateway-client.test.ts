// The gateway client's back-off policy (one for the Control UI and the extension), as a table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reconnectDelay } from '../../control-ui/src/gateway.js';

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
