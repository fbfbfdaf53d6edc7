// Launches the one headless Chromium every tool under test shares.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProcessRegistry } from './procs.js';

export interface LaunchedChromium {
  pid: number;
  port: number;
  browserUrl: string;
  /** ws://.../devtools/browser/<id> */
  wsEndpoint: string;
}

export async function launchChromium(procs: ProcessRegistry, timeoutMs = 20_000): Promise<LaunchedChromium> {
  const exe = process.env.VERITY_CHROMIUM || '/usr/bin/chromium';
  const userDataDir = mkdtempSync(join(tmpdir(), 'verity-bench-profile-'));
  procs.addDir(userDataDir);
  const args = [
    '--headless=new',
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--remote-debugging-port=0',
    `--user-data-dir=${userDataDir}`,
    'about:blank',
  ];
  // detached: own process group, so cleanup can signal the browser and its helpers by the browser's PID.
  const child = spawn(exe, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  if (child.pid === undefined) {
    const err = await new Promise<Error>((r) => child.once('error', r));
    throw new Error(`could not start ${exe} (set VERITY_CHROMIUM): ${err.message}`);
  }
  procs.addProcess(child.pid, 'chromium', true);
  child.unref();
  const wsEndpoint = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(
      () => reject(new Error(`Chromium printed no DevTools endpoint within ${timeoutMs} ms:\n${buf.slice(-2000)}`)),
      timeoutMs,
    );
    const onData = (d: Buffer) => {
      buf += d.toString();
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(buf);
      if (m) {
        clearTimeout(timer);
        child.stderr!.off('data', onData);
        child.stderr!.resume(); // keep draining so Chromium never blocks on a full pipe
        resolve(m[1]!);
      }
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`Chromium exited early (code ${code}, signal ${sig}):\n${buf.slice(-2000)}`));
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
  (child.stderr as unknown as { unref?: () => void }).unref?.();
  const port = Number(new URL(wsEndpoint).port);
  return { pid: child.pid, port, browserUrl: `http://127.0.0.1:${port}`, wsEndpoint };
}
