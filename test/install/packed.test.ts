// The package as a user gets it: `npm pack` (its prepack builds the server, the Control UI and the
// extension), installed into an empty folder with a fresh HOME, offline from this machine's npm cache,
// then run: --help, --version, `mcp` over stdio (the real MCP SDK client), `start` serving the Control UI.
//
// Offline, npm can only install what its cache holds, and `npm ci` caches the registry's abbreviated
// documents, not the full ones a fresh resolution asks for; so the empty folder gets a package-lock.json
// with the package's own dependency tree as the repository's lock pins it (the non-dev entries), and the
// install takes exactly the versions the rest of the suite ran against.
//
// It packs a copy of the checkout (its sources, node_modules linked), never the checkout itself: prepack
// rebuilds dist/server and control-ui/dist where it runs, and the other test files running beside this one
// import from dist and serve control-ui/dist (a fresh clone's run under a CPU hog once failed on a module
// read half-written: "does not provide an export named 'configDir'").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from '../helpers/fixtures.js';
import { killPid, sleep } from '../helpers/gateway.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'verity-packed-'));
const home = join(work, 'home');
const app = join(work, 'app');
const started: number[] = [];

/** What a copy to pack leaves out: installs, builds (prepack makes its own) and history. */
const NOT_COPIED = /^(node_modules|dist|\.git|control-ui\/dist|dev-peers)(\/|$)/;

/** The checkout's sources in a folder of this test's own, its node_modules linked: where `npm pack` runs. */
function copyToPack(): string {
  const source = join(work, 'source');
  cpSync(ROOT, source, { recursive: true, filter: (path) => !NOT_COPIED.test(relative(ROOT, path)) });
  symlinkSync(join(ROOT, 'node_modules'), join(source, 'node_modules'));
  return source;
}

/** A fresh user's environment: its own HOME, no VERITY_* and no npm_* settings from this test run. */
function freshEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(VERITY_|npm_|NPM_|XDG_CONFIG_HOME$|DISPLAY$)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, HOME: home, ...extra };
}

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs a command in its own process group, bounded: on timeout the group is killed by its PID. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    started.push(child.pid!);
    let stdout = '',
      stderr = '',
      timedOut = false;
    child.stdout!.on('data', (c) => {
      stdout += c;
    });
    child.stderr!.on('data', (c) => {
      stderr += c;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      killPid(-child.pid!);
    }, options.timeoutMs);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, timedOut });
    });
  });
}

let tarball = '';
let files: string[] = [];
let bin = '';

before(
  async () => {
    mkdirSync(home, { recursive: true });
    mkdirSync(app, { recursive: true });
    // 1. npm pack, as a publisher runs it (prepack builds), in a copy of the checkout.
    const packed = await run('npm', ['pack', '--json', '--pack-destination', work], {
      cwd: copyToPack(),
      env: { ...(process.env as Record<string, string>) },
      timeoutMs: 420_000,
    });
    assert.equal(packed.timedOut, false, `npm pack did not finish within 7 min:\n${packed.stderr.slice(-3000)}`);
    assert.equal(packed.status, 0, `npm pack failed:\n${packed.stderr.slice(-3000)}`);
    const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('[')))[0] as {
      filename: string;
      files: Array<{ path: string }>;
    };
    tarball = join(work, info.filename);
    files = info.files.map((f) => f.path);

    // 2. An empty project that depends on the tarball, its tree pinned by the repository's lock.
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
    const spec = `file:${tarball}`;
    const packages: Record<string, unknown> = {
      '': { name: 'packed-install', dependencies: { [pkg.name]: spec } },
      [`node_modules/${pkg.name}`]: {
        version: pkg.version,
        resolved: spec,
        integrity,
        license: pkg.license,
        dependencies: pkg.dependencies,
        peerDependencies: pkg.peerDependencies,
        peerDependenciesMeta: pkg.peerDependenciesMeta,
        bin: pkg.bin,
        engines: pkg.engines,
      },
    };
    for (const [location, entry] of Object.entries(lock.packages as Record<string, Record<string, unknown>>)) {
      if (location === '' || entry.dev) continue;
      const { devOptional, ...rest } = entry;
      packages[location] = devOptional ? { ...rest, optional: true } : rest;
    }
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'packed-install', private: true, dependencies: { [pkg.name]: spec } }, null, 2),
    );
    writeFileSync(
      join(app, 'package-lock.json'),
      JSON.stringify({ name: 'packed-install', lockfileVersion: 3, requires: true, packages }, null, 2),
    );

    // 3. npm install, offline, from the cache `npm ci` filled (asked of npm with this machine's own settings).
    const cache = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8', cwd: ROOT }).stdout.trim();
    assert.ok(cache && existsSync(cache), `npm's cache (${cache}) exists`);
    const installed = await run(
      'npm',
      [
        'install',
        '--offline',
        '--cache',
        cache,
        '--logs-dir',
        join(work, 'npm-logs'),
        '--no-audit',
        '--no-fund',
        '--loglevel',
        'warn',
      ],
      { cwd: app, env: freshEnv(), timeoutMs: 300_000 },
    );
    const missing = /ENOTCACHED[\s\S]*?request to (\S+) failed/.exec(installed.stderr)?.[1];
    assert.equal(
      missing,
      undefined,
      `the npm cache at ${cache} lacks ${missing}: run \`npm ci\` in the repository (online) first, then this test again`,
    );
    assert.equal(
      installed.timedOut,
      false,
      `npm install --offline did not finish within 5 min:\n${installed.stderr.slice(-3000)}`,
    );
    assert.equal(installed.status, 0, `npm install --offline failed:\n${installed.stderr.slice(-3000)}`);
    bin = join(app, 'node_modules', '.bin', pkg.name);
  },
  { timeout: 900_000 },
);

after(async () => {
  for (const pid of started) killPid(-pid);
  rmSync(work, { recursive: true, force: true });
});

describe('the packed package, installed offline into an empty folder with a fresh HOME', { timeout: 900_000 }, () => {
  test('the tarball holds the builds and no tests, bench or fixtures', () => {
    for (const needed of [
      'bin/verity.js',
      'dist/server/cli/main.js',
      'dist/server/mcp/server.js',
      'dist/server/cdp/page-agent.bundle.js',
      'control-ui/dist/index.html',
      'extension/manifest.json',
      'extension/ui/index.html',
      'extension/background.js',
      'extension/pair.js',
      'extension/open-ui.js',
      'extension/icons/icon-16.png',
      'extension/icons/icon-128.png',
      'package.json',
      'README.md',
      'docs/options.md',
      'docs/security.md',
      'LICENSE',
    ]) {
      assert.ok(files.includes(needed), `${needed} is in the tarball`);
    }
    const unwanted = files.filter((f) =>
      /^(test|bench|dist\/test|dist\/bench|control-ui\/src|scripts)\/|fixtures|\.map$|\.ts$|^tsconfig/.test(f),
    );
    assert.deepEqual(unwanted, [], 'nothing of the tests, the bench, the fixtures or the sources');
  });

  test('the install compiled nothing: the PTY is a prebuilt binary, and it runs', async () => {
    const tree = JSON.parse(readFileSync(join(app, 'node_modules', '.package-lock.json'), 'utf8')).packages as Record<
      string,
      unknown
    >;
    const names = Object.keys(tree);
    for (const compiler of ['node-gyp', 'nan', 'usocket', 'node-pty']) {
      assert.ok(!names.some((n) => n.endsWith(`node_modules/${compiler}`)), `${compiler} is not installed`);
    }
    const script = `const pty = require(${JSON.stringify(join(app, 'node_modules', '@lydell', 'node-pty'))});
      const p = pty.spawn('/bin/sh', ['-c', 'echo pty-says-$((6*7))'], { cols: 80, rows: 24 });
      let out = ''; p.onData((d) => { out += d; }); p.onExit(() => { process.stdout.write(out); });`;
    const r = await run(process.execPath, ['-e', script], { cwd: app, env: freshEnv(), timeoutMs: 30_000 });
    assert.match(r.stdout, /pty-says-42/, r.stderr);
  });

  test('--help and --version', async () => {
    const help = await run(bin, ['--help'], { cwd: app, env: freshEnv(), timeoutMs: 30_000 });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /usage: verity <command>/);
    assert.match(help.stdout, /\bmcp\b/);
    assert.match(help.stdout, /\bstart\b/);
    const mcpHelp = await run(bin, ['mcp', '--help'], { cwd: app, env: freshEnv(), timeoutMs: 30_000 });
    assert.equal(mcpHelp.status, 0, mcpHelp.stderr);
    assert.match(mcpHelp.stdout, /--browser-url URL\s+\[VERITY_BROWSER_URL\]/);
    const version = await run(bin, ['--version'], { cwd: app, env: freshEnv(), timeoutMs: 30_000 });
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout.trim(), pkg.version);
  });

  test('mcp answers initialize and tools/list over stdio', async () => {
    const transport = new StdioClientTransport({
      command: bin,
      args: ['mcp', '--headless'],
      cwd: app,
      env: freshEnv(),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (c) => {
      stderr += c;
    });
    const client = new Client({ name: 'packed-test', version: '1' });
    try {
      await client.connect(transport);
      started.push(transport.pid!);
      assert.deepEqual(client.getServerVersion(), { name: 'verity', version: pkg.version });
      const tools = (await client.listTools()).tools.map((t) => t.name);
      for (const name of ['get_window_state', 'click', 'type_text', 'run_actions', 'page'])
        assert.ok(tools.includes(name), `${name} in ${tools.join(', ')}\n${stderr}`);
    } finally {
      await client.close().catch(() => {});
    }
  });

  test('a page read goes through the page agent, bundled at pack time', async () => {
    const page = createServer((_, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><button>Packed agent</button>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const transport = new StdioClientTransport({
      command: bin,
      args: ['mcp', '--headless'],
      cwd: app,
      env: freshEnv(),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (c) => {
      stderr += c;
    });
    const client = new Client({ name: 'packed-test', version: '1' });
    try {
      await client.connect(transport);
      started.push(transport.pid!);
      const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
      const nav = await client.callTool({ name: 'page', arguments: { action: 'navigate', url } });
      assert.ok(!nav.isError, `${JSON.stringify(nav.content)}\n${stderr}`);
      const snap = await client.callTool({
        name: 'get_window_state',
        arguments: { format: 'full', include_screenshot: false },
      });
      const elements =
        (snap.structuredContent as { elements?: Array<{ role: string; label: string }> } | undefined)?.elements ?? [];
      assert.ok(
        elements.some((e) => e.role === 'button' && e.label === 'Packed agent'),
        `${JSON.stringify(snap.content)}\n${stderr}`,
      );
    } finally {
      await client.close().catch(() => {});
      page.close();
    }
  });

  test('start serves the Control UI and prints an entry for HTTP clients', async () => {
    const proc = spawn(bin, ['start', '--port', '0', '--headless'], {
      cwd: app,
      env: freshEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(proc.pid!);
    let out = '',
      err = '';
    proc.stdout!.on('data', (c) => {
      out += c;
    });
    proc.stderr!.on('data', (c) => {
      err += c;
    });
    try {
      for (let i = 0; i < 300 && !/HTTP client entry/.test(out) && proc.exitCode === null; i++) await sleep(100);
      const base = /Verity gateway on (http:\/\/[^\s/]+)\//.exec(out)?.[1];
      assert.ok(base, `verity start printed its URL\nstdout: ${out}\nstderr: ${err}`);
      const res = await fetch(`${base}/`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      const html = await res.text();
      assert.match(html, /<title>Verity Control<\/title>/);
      assert.match(html, /<script type="module"[^>]*src="\.\/assets\/[^"]+\.js"/, 'the built UI, not its sources');
      const entry = JSON.parse(/HTTP client entry[^{]*(\{.*\})\s*$/m.exec(out)?.[1] ?? 'null');
      const bearer = /MCP \(Streamable HTTP\): (\S+)\s+\(Authorization: (Bearer \S+)\)/.exec(out);
      assert.ok(entry && bearer, out);
      assert.deepEqual(entry.mcpServers.verity, {
        type: 'http',
        url: bearer![1],
        headers: { Authorization: bearer![2] },
      });
      assert.ok(existsSync(join(home, '.config', 'verity')), 'its config went to the fresh HOME');
      // A user who installed the package is told where its extension is, to load it unpacked.
      const extension = /The Chrome extension's folder \([^)]*\): (\S+)/.exec(out)?.[1];
      assert.ok(extension, out);
      assert.ok(existsSync(join(extension, 'manifest.json')), `${extension} holds the extension`);
      assert.ok(existsSync(join(extension, 'icons', 'icon-128.png')), 'with its icons');
      assert.ok(extension.startsWith(join(app, 'node_modules')), 'the installed copy, not the repository');
    } finally {
      killPid(proc.pid, 'SIGTERM');
      for (let i = 0; i < 100 && proc.exitCode === null && proc.signalCode === null; i++) await sleep(100);
      killPid(proc.pid);
    }
  });
});
