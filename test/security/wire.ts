// What an attacker on this machine has: raw HTTP requests and WebSocket connections to `verity start`,
// with any Host, Origin and credential it likes. Shared by the security tests.
import { request } from 'node:http';
import WebSocket from 'ws';
import type { Gateway } from '../helpers/gateway.js';

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request with exactly these headers (Host included), answered or refused. */
export function raw(
  gw: Gateway,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawReply> {
  const url = new URL(path, gw.base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
      },
      (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export interface Sock {
  ws: WebSocket;
  frames: any[];
  request(method: string, params?: unknown): Promise<any>;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens /gateway with these headers; rejects with {status, message} when refused before the upgrade. */
export function openSocket(gw: Gateway, headers: Record<string, string> = {}): Promise<Sock> {
  const ws = new WebSocket(gw.base.replace('http', 'ws') + '/gateway', { headers });
  const frames: any[] = [];
  let next = 1;
  const waiters = new Map<number, (f: any) => void>();
  ws.on('message', (d) => {
    const f = JSON.parse(String(d));
    frames.push(f);
    if (f.type === 'res' && waiters.has(f.id)) {
      waiters.get(f.id)!(f);
      waiters.delete(f.id);
    }
  });
  // A request the gateway never answers because it closed the socket resolves null (never hangs).
  const closed = new Promise<{ code: number; reason: string }>((r) =>
    ws.on('close', (code, reason) => {
      for (const w of waiters.values()) w(null);
      waiters.clear();
      r({ code, reason: String(reason) });
    }),
  );
  return new Promise((resolve, reject) => {
    ws.on('open', () =>
      resolve({
        ws,
        frames,
        closed,
        request: (method, params) =>
          new Promise((res) => {
            if (ws.readyState !== WebSocket.OPEN) return res(null);
            const id = next++;
            waiters.set(id, res);
            ws.send(JSON.stringify({ type: 'req', id, method, params }));
          }),
      }),
    );
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => reject(Object.assign(new Error(body), { status: res.statusCode })));
    });
    ws.on('error', reject);
  });
}

export const ALL_SCOPES = ['operator.read', 'operator.write', 'operator.admin', 'operator.approvals'];

export const connectParams = (token: string, scopes: string[] = ALL_SCOPES, caps: string[] = []) => ({
  client: { id: 'attacker', version: '1', mode: 'test' },
  caps,
  role: 'operator',
  scopes,
  auth: { token },
});

/** Opens /gateway and sends connect: the reply and the socket. */
export async function connectAs(
  gw: Gateway,
  token: string,
  scopes: string[] = ALL_SCOPES,
  caps: string[] = [],
  headers: Record<string, string> = {},
) {
  const s = await openSocket(gw, headers);
  const reply = await s.request('connect', connectParams(token, scopes, caps));
  return { ...s, reply };
}

/** The server is still up and serving: an honest agent initializes and lists its tools. */
export async function stillServing(gw: Gateway): Promise<void> {
  const agent = await gw.connect();
  try {
    const { tools } = await agent.client.listTools();
    if (!tools.some((t) => t.name === 'page')) throw new Error('the gateway answers but lists no tools');
  } finally {
    await agent.disconnect();
  }
}

/** The JSON-RPC answer in a Streamable HTTP reply: the body itself (JSON) or the first `data:` line of an SSE stream. */
export function jsonRpcOf(reply: RawReply): any {
  const text = String(reply.headers['content-type']).includes('text/event-stream')
    ? (/^data: (.*)$/m.exec(reply.body)?.[1] ?? 'null')
    : reply.body;
  return JSON.parse(text);
}

/**
 * A raw MCP session over HTTP with the agent credential: initialized, then `post` sends any request body
 * as text (so a body can be built that no client library would serialize) and returns its JSON-RPC answer.
 */
export async function rawMcpSession(gw: Gateway): Promise<{ post(body: string): Promise<any> }> {
  const headers = { ...MCP_HEADERS, host: new URL(gw.base).host, authorization: `Bearer ${gw.agentToken}` };
  const init = await raw(gw, '/mcp', { method: 'POST', headers, body: INITIALIZE });
  const id = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof id !== 'string') throw new Error(`initialize failed: ${init.status} ${init.body}`);
  const session = { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' };
  await raw(gw, '/mcp', {
    method: 'POST',
    headers: session,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return {
    post: async (body) => jsonRpcOf(await raw(gw, '/mcp', { method: 'POST', headers: session, body })),
  };
}
