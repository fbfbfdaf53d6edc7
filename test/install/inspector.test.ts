// The MCP Inspector's CLI (@modelcontextprotocol/inspector, a development peer in dev-peers/) against a real `verity mcp`,
// with its --strict tool-schema check (issue #28 item 4): every tool's input and output schema is portable,
// with no warning, on the default surface and on `--tools full`. Each run ends on its own (bounded).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/fixtures.js';
import { PEER_NODE, peerPath } from '../helpers/peers.js';

const INSPECTOR = peerPath('@modelcontextprotocol/inspector', 'clients', 'launcher', 'build', 'index.js');

/** `inspector --cli --strict --method tools/list node bin/verity.js mcp ...args`: its exit code and output. */
function inspect(args: string[], configDir: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const env = { ...process.env, VERITY_CONFIG_DIR: configDir, VERITY_HEADLESS: '1' } as Record<string, string>;
    delete env.VERITY_TOOLS;
    // The Inspector runs on the peers' Node (it wants 22.19+); the server it starts, on this one.
    const child = spawn(
      PEER_NODE,
      [
        INSPECTOR,
        '--cli',
        '--strict',
        // Its default 15 s to connect is not enough on a loaded two-core machine (seen: a timeout there).
        '--connect-timeout',
        '60000',
        '--method',
        'tools/list',
        process.execPath,
        join(ROOT, 'bin', 'verity.js'),
        'mcp',
        ...args,
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

for (const surface of ['default', 'full']) {
  test(`the Inspector's --strict check passes with no warning (--tools ${surface})`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-inspector-'));
    try {
      const r = await inspect(['--tools', surface], dir);
      // What is not Verity's own log line is the Inspector's report.
      const report = r.stderr
        .split('\n')
        .filter((l) => l.trim() && !l.startsWith('verity:'))
        .join('\n');
      assert.equal(report, '', `the Inspector reports:\n${report.slice(0, 4000)}`);
      assert.equal(r.code, 0, `the Inspector exited ${r.code}: ${r.stderr.slice(0, 2000)}`);
      const listed = JSON.parse(r.stdout) as { tools: Array<{ name: string; outputSchema?: unknown }> };
      assert.ok(listed.tools.length >= 20, `tools/list through the Inspector: ${listed.tools.length} tools`);
      assert.ok(
        listed.tools.every((t) => t.outputSchema),
        'every tool has an output schema',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
