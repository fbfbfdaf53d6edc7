// A server that goes away under a test says how it ended (issue 42 item 3): a call that fails because
// `verity mcp` or `verity start` is gone carries the process's exit status or signal and the end of its
// stderr, so that a failure in CI names its cause (a crash, a native abort, a kill) and not only
// "Connection closed". Each server is ended by its PID.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startVerity } from '../helpers/mcp.js';
import { alive, startGateway, waitFor } from '../helpers/gateway.js';

test('verity mcp killed by a signal: the next call says the signal and the stderr', async () => {
  const v = await startVerity();
  try {
    assert.equal((await v.call('list_sessions')).isError, false);
    process.kill(v.pid, 'SIGABRT');
    await waitFor(() => !alive(v.pid), 'the server to exit');
    await assert.rejects(v.call('list_sessions'), (e: Error) => {
      assert.match(e.message, new RegExp(`verity mcp \\(pid ${v.pid}\\) exited on SIGABRT; its stderr ends:`));
      return true;
    });
  } finally {
    await v.close();
  }
});

test('verity start killed: a call over /mcp says so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'verity-gone-'));
  const gw = await startGateway([], { VERITY_CONFIG_DIR: dir });
  try {
    const agent = await gw.connect();
    assert.equal((await agent.call('list_sessions')).isError, false);
    process.kill(gw.pid, 'SIGKILL');
    await waitFor(() => !alive(gw.pid), 'the gateway to exit');
    await assert.rejects(agent.call('list_sessions'), (e: Error) => {
      assert.match(e.message, /verity start \(pid \d+\) exited on SIGKILL; its stderr ends:/);
      return true;
    });
  } finally {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
