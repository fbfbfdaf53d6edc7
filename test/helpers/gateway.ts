// `verity start` as one process with several MCP clients over Streamable HTTP (each client is its own
// connection), plus small helpers the session tests share: bounded waits, the session audit log, refusals.
// Every process started here is ended by its PID.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ROOT } from './fixtures.js';
import type { ToolResult } from './mcp.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function killPid(pid: number | null | undefined, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (pid)
    try {
      process.kill(pid, signal);
    } catch {
      /* gone */
    }
}

/** Polls `check` (bounded; the wait itself is never asserted as a duration) until it returns a truthy value. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  tries = 100,
  everyMs = 100,
): Promise<NonNullable<T>> {
  let last: T | undefined;
  for (let i = 0; i < tries; i++) {
    last = await check();
    if (last) return last as NonNullable<T>;
    await sleep(everyMs);
  }
  throw new Error(`gave up waiting for ${what} (last: ${JSON.stringify(last)})`);
}

export interface HookLine {
  session: string;
  connection: string;
  reason: string;
  hook: string;
}

/** The VERITY_SESSION_LOG lines: one per cleanup hook run. */
export function hookLines(file: string): HookLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

export function refusalOf(r: ToolResult): { code: string; message: string; [k: string]: unknown } {
  assert.equal(r.isError, true, r.text);
  assert.equal(r.structured?.status, 'refused', r.text);
  return r.structured.refusal;
}

export interface Connection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  call(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  disconnect(): Promise<void>;
}

/** `token` is the operator credential (Control UI, gateway); `agentToken` the agent's (/mcp). */
export interface Gateway {
  pid: number;
  proc: ChildProcess;
  base: string;
  token: string;
  agentToken: string;
  stdout(): string;
  stderr(): string;
  connect(): Promise<Connection>;
  stop(): Promise<number | null>;
  close(): Promise<void>;
}

/**
 * A tool call as the tests make it. `serverGone` says how the server process ended, when it has: a call
 * that fails because the server went away (`Connection closed`) says so, with its exit status and the end
 * of its stderr, so that the failure names its cause and not only its symptom.
 */
export function wrap(client: Client, serverGone: () => string | null = () => null) {
  return async (name: string, args: Record<string, unknown> = {}): Promise<ToolResult> => {
    let result: Awaited<ReturnType<Client['callTool']>>;
    try {
      result = await client.callTool({ name, arguments: args });
    } catch (e) {
      // The exit event may follow the closed pipe by a moment: give it a bounded chance to arrive.
      for (let i = 0; i < 20 && !serverGone(); i++) await sleep(50);
      const gone = serverGone();
      if (gone) (e as Error).message += `\n${gone}`;
      throw e;
    }
    const content = result.content as Array<{ type: string; text?: string }>;
    return {
      isError: !!result.isError,
      structured: result.structuredContent,
      text: content
        .filter((c) => c.type === 'text')
        .map((c) => c.text)
        .join('\n'),
      images: content.filter((c) => c.type === 'image').length,
    };
  };
}

/** How a server a test started ended: its exit status or signal and the last lines of its stderr. */
export function exitReport(
  what: string,
  pid: number,
  code: number | null,
  signal: NodeJS.Signals | null,
  stderr: string,
): string {
  const tail = stderr.trimEnd().split('\n').slice(-30).join('\n');
  return `${what} (pid ${pid}) exited ${signal ? `on ${signal}` : `with status ${code}`}; its stderr ends:\n${tail || '(nothing)'}`;
}

/** The credentials `verity start` prints (contract section 1): the Control UI URL and the /mcp line. */
export function printedCredentials(out: string): { base: string; token: string; agentToken: string } | null {
  const ui = /(http:\/\/[^\s/]+)\/\?token=(\S+)/.exec(out);
  const agent = /\/mcp\b.*Bearer ([^\s)]+)/.exec(out);
  return ui && agent ? { base: ui[1], token: decodeURIComponent(ui[2]), agentToken: agent[1] } : null;
}

/**
 * Spawns `verity start --port 0 --headless [args]` and waits for the lines it prints. The credentials go
 * in the environment (VERITY_TOKEN, VERITY_AGENT_TOKEN), never on the command line; pass either as
 * undefined in `env` to have the gateway generate (or reuse) it in its config dir.
 */
export async function startGateway(args: string[], env: Record<string, string | undefined> = {}): Promise<Gateway> {
  const childEnv = {
    ...process.env,
    VERITY_TOKEN: 'session-tests-token',
    VERITY_AGENT_TOKEN: 'session-tests-agent-token',
    ...env,
  } as Record<string, string>;
  for (const [k, val] of Object.entries(env)) if (val === undefined) delete childEnv[k];
  const proc = spawn(
    process.execPath,
    [join(ROOT, 'bin', 'verity.js'), 'start', '--port', '0', '--headless', ...args],
    { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '',
    err = '';
  proc.stdout!.on('data', (c) => {
    out += c;
  });
  proc.stderr!.on('data', (c) => {
    err += c;
  });
  const pid = proc.pid!;
  const exit = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  let ended: string | null = null;
  // 'close' comes after the process's pipes are drained: its stderr is whole by then.
  proc.once('close', (code, signal) => {
    ended = exitReport('verity start', pid, code, signal, err);
  });
  for (let i = 0; i < 150 && !printedCredentials(out) && proc.exitCode === null; i++) await sleep(100);
  const printed = printedCredentials(out);
  if (!printed) {
    killPid(pid);
    throw new Error(`verity start printed no URL.\nstdout: ${out}\nstderr: ${err}`);
  }
  const { base, token, agentToken } = printed;
  const clients: Client[] = [];
  return {
    pid,
    proc,
    base,
    token,
    agentToken,
    stdout: () => out,
    stderr: () => err,
    async connect() {
      const client = new Client({ name: `sessions-test-${clients.length}`, version: '1' });
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${agentToken}` } },
      });
      await client.connect(transport);
      clients.push(client);
      return {
        client,
        transport,
        call: wrap(client, () => ended),
        async disconnect() {
          await transport.terminateSession().catch(() => {});
          await client.close().catch(() => {});
        },
      };
    },
    /** SIGTERM, then the exit code once it has exited (null when it had to be killed). */
    async stop() {
      killPid(pid, 'SIGTERM');
      const code = await Promise.race([exit, sleep(15_000).then(() => 'hung' as const)]);
      if (code === 'hung') {
        killPid(pid);
        return null;
      }
      return code;
    },
    async close() {
      for (const c of clients) await c.close().catch(() => {});
      if (alive(pid)) {
        killPid(pid, 'SIGTERM');
        for (let i = 0; i < 50 && alive(pid); i++) await sleep(100);
      }
      killPid(pid);
    },
  };
}

export interface OperatorSocket {
  ws: WebSocket;
  events: any[];
  request(method: string, params?: unknown): Promise<any>;
}

/** A gateway WebSocket connection that has done the connect handshake, recording the events it hears. */
export async function operatorSocket(gw: Gateway, scopes: string[], caps: string[] = []): Promise<OperatorSocket> {
  const ws = new WebSocket(gw.base.replace('http', 'ws') + '/gateway');
  const events: any[] = [];
  const waiters = new Map<number, (f: any) => void>();
  let id = 0;
  ws.on('message', (d) => {
    const f = JSON.parse(String(d));
    if (f.type === 'event') events.push(f);
    else waiters.get(f.id)?.(f);
  });
  await new Promise((r) => ws.on('open', r));
  const request = (method: string, params?: unknown) =>
    new Promise<any>((resolve) => {
      const n = ++id;
      waiters.set(n, resolve);
      ws.send(JSON.stringify({ type: 'req', id: n, method, params }));
    });
  const hello = await request('connect', {
    client: { id: 'test-operator', version: '1', mode: 'ui' },
    caps,
    role: 'operator',
    scopes,
    auth: { token: gw.token },
  });
  assert.equal(hello.ok, true, JSON.stringify(hello));
  return { ws, events, request };
}
