// The policy proxy (server/cdp/policy-proxy.ts) on its own, in process, against real sockets on 127.0.0.1:
// what it forwards and what it refuses for plain requests and CONNECT tunnels (the origin that is refused
// never hears a byte), the gateway's own port whatever the name, chaining to an operator's http proxy,
// refusing a socks one, its bounds (headers, the request forms it serves), loopback only, and close().
// The browser's side (which channels go through it) is test/security/origin-channels.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { chainedUpstream, checkBrowserArgs, PolicyProxy } from '../../server/cdp/browser/policy-proxy.js';
import { Policy } from '../../server/policy.js';

const listen = async <S extends Server | import('node:net').Server>(server: S): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};
const closeServer = (server: Server | import('node:net').Server) =>
  new Promise<void>((resolve) => {
    (server as Server).closeAllConnections?.();
    server.close(() => resolve());
  });

/** An origin that answers every request with its name and counts what it hears (requests and raw connections). */
async function origin(name: string) {
  const seen: string[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} host=${req.headers.host} proxy-connection=${req.headers['proxy-connection']}`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`${name} says hi`);
  });
  server.on('connection', () => connections++);
  const port = await listen(server);
  return {
    port,
    seen,
    connections: () => connections,
    close: () => closeServer(server),
  };
}

/** A raw request through the proxy: the status line and the body. */
function viaProxy(
  proxyPort: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: proxyPort, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** CONNECT host:port through the proxy: the status, and when it is 200 the socket (the tunnel). */
function tunnelVia(proxyPort: number, authority: string): Promise<{ status: number; socket: Socket; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: proxyPort, method: 'CONNECT', path: authority, agent: false });
    req.on('connect', (res, socket, head) => {
      let text = head.toString('utf8');
      if (res.statusCode !== 200) {
        socket.on('data', (c) => {
          text += c;
        });
        socket.on('close', () => resolve({ status: res.statusCode ?? 0, socket, text }));
        return;
      }
      resolve({ status: 200, socket, text });
    });
    req.on('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, socket: res.socket, text: '' });
    });
    req.on('error', reject);
    req.end();
  });
}

/** An HTTP/1.1 exchange over a tunnel: sends a GET and reads until the peer closes. */
function getOver(socket: Socket, host: string): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (c) => {
      text += c;
    });
    socket.on('close', () => resolve(text));
    socket.write(`GET /through-tunnel HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

describe('a policy proxy with an allow list and a block list', () => {
  let allowed: Awaited<ReturnType<typeof origin>>;
  let refused: Awaited<ReturnType<typeof origin>>;
  let gatewayHits = 0;
  let gateway: Server;
  let gatewayPort: number;
  let proxy: PolicyProxy;
  before(async () => {
    allowed = await origin('allowed');
    refused = await origin('refused');
    gateway = createServer((_req, res) => {
      gatewayHits++;
      res.end('the gateway');
    });
    gatewayPort = await listen(gateway);
    const policy = new Policy({
      // "http://127.0.0.1:*" would allow the gateway's port too: the gateway rule must still win.
      allowed_origins: ['http://127.0.0.1:*', 'http://localhost:*'],
      blocked_origins: [`http://127.0.0.1:${refused.port}`],
      require_approval: [],
    });
    policy.setGatewayOrigin('127.0.0.1', gatewayPort);
    proxy = await PolicyProxy.start({ policy });
  });
  after(async () => {
    await proxy?.close();
    await allowed?.close();
    await refused?.close();
    if (gateway) await closeServer(gateway);
  });

  test('it listens on 127.0.0.1 only, and names itself to Chromium with loopback not bypassed and no UDP for WebRTC', () => {
    assert.ok(proxy.port > 0);
    assert.deepEqual(proxy.chromiumArgs, [
      `--proxy-server=http://127.0.0.1:${proxy.port}`,
      '--proxy-bypass-list=<-loopback>',
      '--webrtc-ip-handling-policy=disable_non_proxied_udp',
    ]);
  });

  test('a plain request to an allowed origin is forwarded (hop-by-hop headers dropped); a refused one is 403 and never sent', async () => {
    const ok = await viaProxy(proxy.port, `http://127.0.0.1:${allowed.port}/page?q=1`, {
      'proxy-connection': 'keep-alive',
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body, 'allowed says hi');
    assert.deepEqual(allowed.seen, [`GET /page?q=1 host=127.0.0.1:${allowed.port} proxy-connection=undefined`]);
    const no = await viaProxy(proxy.port, `http://127.0.0.1:${refused.port}/secret`);
    assert.equal(no.status, 403);
    assert.match(no.body, /origin policy refuses http:\/\/127\.0\.0\.1:\d+/);
    assert.doesNotMatch(no.body, /refused says/);
    assert.deepEqual(refused.seen, []);
    assert.equal(refused.connections(), 0, 'the refused origin was not even connected to');
  });

  test('CONNECT to an allowed host:port is a tunnel; to a refused one 403, and nothing connects', async () => {
    const ok = await tunnelVia(proxy.port, `127.0.0.1:${allowed.port}`);
    assert.equal(ok.status, 200);
    assert.match(await getOver(ok.socket, `127.0.0.1:${allowed.port}`), /allowed says hi/);
    const before = refused.connections();
    const no = await tunnelVia(proxy.port, `127.0.0.1:${refused.port}`);
    assert.equal(no.status, 403);
    no.socket.destroy();
    assert.equal(refused.connections(), before, 'no connection reached the refused origin');
  });

  test("the gateway's own port is refused under every loopback name, both ways, though the allow list names it", async () => {
    for (const host of ['127.0.0.1', 'localhost', '127.0.0.2', '[::ffff:127.0.0.1]']) {
      const plain = await viaProxy(proxy.port, `http://${host}:${gatewayPort}/`);
      assert.equal(plain.status, 403, host);
      const tunnel = await tunnelVia(proxy.port, `${host}:${gatewayPort}`);
      assert.equal(tunnel.status, 403, host);
      tunnel.socket.destroy();
    }
    assert.equal(gatewayHits, 0);
  });

  test('requests it does not serve: origin form, https in absolute form, a garbled CONNECT, oversized headers', async () => {
    assert.equal((await viaProxy(proxy.port, '/plain-path')).status, 400);
    assert.equal((await viaProxy(proxy.port, `https://127.0.0.1:${allowed.port}/`)).status, 400);
    for (const authority of [`127.0.0.1:${allowed.port}/x`, 'user@127.0.0.1:80', '127.0.0.1', '127.0.0.1:0']) {
      const r = await tunnelVia(proxy.port, authority);
      assert.ok(r.status >= 400, `${authority}: ${r.status}`);
      r.socket.destroy();
    }
    const huge = await viaProxy(proxy.port, `http://127.0.0.1:${allowed.port}/`, { 'x-big': 'a'.repeat(100_000) });
    assert.equal(huge.status, 431);
  });

  test('close() ends the tunnels it holds and stops listening', async () => {
    const other = await PolicyProxy.start({ policy: new Policy() });
    const open = await tunnelVia(other.port, `127.0.0.1:${allowed.port}`);
    assert.equal(open.status, 200);
    const closed = new Promise((resolve) => open.socket.on('close', resolve));
    await other.close();
    await closed;
    await assert.rejects(viaProxy(other.port, `http://127.0.0.1:${allowed.port}/`), /ECONNREFUSED/);
  });
});

describe("chaining to the operator's --proxy-server", () => {
  test('an http proxy is chained to: absolute form for plain requests, CONNECT for tunnels; refusals never reach it', async () => {
    const target = await origin('behind the upstream');
    const upstreamSeen: string[] = [];
    // The operator's proxy: forwards absolute-form requests and opens CONNECT tunnels, recording each.
    const upstream = createServer((req, res) => {
      upstreamSeen.push(`${req.method} ${req.url}`);
      const url = new URL(req.url ?? '');
      const out = request({ host: url.hostname, port: url.port, path: url.pathname, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(out);
    });
    upstream.on('connect', (req, socket: Socket) => {
      upstreamSeen.push(`CONNECT ${req.url}`);
      const [host, port] = (req.url ?? '').split(':');
      const remote = connect(Number(port), host, () => {
        socket.write('HTTP/1.1 200 OK\r\n\r\n');
        socket.pipe(remote);
        remote.pipe(socket);
      });
      remote.on('error', () => socket.destroy());
    });
    const upstreamPort = await listen(upstream);
    const policy = new Policy({ allowed_origins: [`http://127.0.0.1:${target.port}`], require_approval: [] });
    const proxy = await PolicyProxy.start({ policy, upstream: `http://127.0.0.1:${upstreamPort}` });
    try {
      const plain = await viaProxy(proxy.port, `http://127.0.0.1:${target.port}/a`);
      assert.equal(plain.body, 'behind the upstream says hi');
      const tunnel = await tunnelVia(proxy.port, `127.0.0.1:${target.port}`);
      assert.equal(tunnel.status, 200);
      assert.match(await getOver(tunnel.socket, `127.0.0.1:${target.port}`), /behind the upstream says hi/);
      assert.equal((await viaProxy(proxy.port, 'http://127.0.0.1:1/refused')).status, 403);
      const refusedTunnel = await tunnelVia(proxy.port, '127.0.0.1:1');
      assert.equal(refusedTunnel.status, 403);
      refusedTunnel.socket.destroy();
      assert.deepEqual(upstreamSeen, [`GET http://127.0.0.1:${target.port}/a`, `CONNECT 127.0.0.1:${target.port}`]);
    } finally {
      await proxy.close();
      await closeServer(upstream);
      await target.close();
    }
  });

  test('an upstream that refuses the CONNECT is told to the browser as 502', async () => {
    const upstream = createTcpServer((socket) => {
      socket.once('data', () => socket.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n'));
    });
    const upstreamPort = await listen(upstream);
    const proxy = await PolicyProxy.start({ policy: new Policy(), upstream: `127.0.0.1:${upstreamPort}` });
    try {
      const r = await tunnelVia(proxy.port, 'example.test:443');
      assert.equal(r.status, 502);
      assert.match(r.text, /upstream proxy refused example\.test:443/);
    } finally {
      await proxy.close();
      await closeServer(upstream);
    }
  });

  test('what can be chained to: a plain http proxy; a socks or https one, or a list, is refused naming both options', () => {
    assert.deepEqual(chainedUpstream('http://proxy.corp:3128'), { host: 'proxy.corp', port: 3128 });
    assert.deepEqual(chainedUpstream('proxy.corp:8080'), { host: 'proxy.corp', port: 8080 });
    assert.deepEqual(chainedUpstream('http://[::1]:3128/'), { host: '::1', port: 3128 });
    assert.deepEqual(chainedUpstream('http://proxy.corp'), { host: 'proxy.corp', port: 80 });
    for (const bad of [
      'socks5://127.0.0.1:1080',
      'socks://h:1',
      'https://proxy.corp:443',
      'http=a:1;https=b:2',
      'a:1,direct://',
      'http://user:pw@h:1',
      'h:99999',
    ])
      assert.throws(
        () => chainedUpstream(bad),
        /--proxy-server .*--policy.*http --proxy-server, or drop the origin lists/,
        bad,
      );
  });

  test('starting with an upstream it cannot chain to fails before it listens', async () => {
    await assert.rejects(PolicyProxy.start({ policy: new Policy(), upstream: 'socks5://127.0.0.1:1080' }), /socks/);
  });

  test('a --browser-arg that would take the proxy out of the path is refused naming it', () => {
    checkBrowserArgs(['--lang=fr', '--proxy-serverless']);
    for (const bad of [
      '--proxy-server=socks5://h:1',
      '--no-proxy-server',
      '--proxy-pac-url=http://x/p.pac',
      '--proxy-bypass-list=*',
    ])
      assert.throws(
        () => checkBrowserArgs(['--lang=fr', bad]),
        new RegExp(`--browser-arg ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
      );
  });
});
