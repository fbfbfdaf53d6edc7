// The command line (server/cli/): parseArgs, an environment variable and a --config key per option,
// refusals naming the option, and one table (docs/options.md) that documents every option and every VERITY_*
// variable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENV_ONLY } from '../../server/cli/environment.js';
import { startFailure } from '../../server/cli/failures.js';
import { CONFIG_EXAMPLE, HELP_WIDTH, helpText } from '../../server/cli/help.js';
import { envName, OPTIONS, type OptionSpec } from '../../server/cli/options.js';
import { parseCommandLine, UsageError } from '../../server/cli/parse.js';
import { configSchema, KIND_SCHEMAS } from '../../server/cli/kinds.js';
import { nativeUnavailable } from '../../server/routing/router.js';
import { ROOT } from '../helpers/fixtures.js';

const run = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const parsed = parseCommandLine(argv, env);
  assert.equal(parsed.kind, 'run');
  return parsed as Extract<typeof parsed, { kind: 'run' }>;
};
const refused = (argv: string[], message: RegExp, env: NodeJS.ProcessEnv = {}) =>
  assert.throws(
    () => parseCommandLine(argv, env),
    (e: unknown) => e instanceof UsageError && message.test(e.message),
  );

test('--flag=value and --flag value are the same; booleans take --no-; --headful is --no-headless', () => {
  assert.deepEqual(run(['start', '--port=8000', '--host', '127.0.0.2']).values, { port: 8000, host: '127.0.0.2' });
  assert.deepEqual(run(['mcp', '--no-cursor', '--headful']).values, { cursor: false, headless: false });
  assert.deepEqual(run(['mcp', '--headless', '--allow-javascript']).values, {
    headless: true,
    'allow-javascript': true,
  });
});

test('help and version, for the program and for each command', () => {
  assert.deepEqual(parseCommandLine(['--help'], {}), { kind: 'help', command: undefined });
  assert.deepEqual(parseCommandLine(['-h'], {}), { kind: 'help', command: undefined });
  assert.deepEqual(parseCommandLine(['mcp', '--help'], {}), { kind: 'help', command: 'mcp' });
  assert.deepEqual(parseCommandLine(['help', 'start'], {}), { kind: 'help', command: 'start' });
  assert.deepEqual(parseCommandLine(['--version'], {}), { kind: 'version' });
  assert.deepEqual(parseCommandLine(['-V'], {}), { kind: 'version' });
  for (const command of ['start', 'mcp'] as const) {
    const help = helpText(command)
      .split('\n')
      .filter((l) => l.startsWith('  --'))
      .join('\n');
    for (const o of OPTIONS.filter((x) => x.commands.includes(command)))
      assert.match(help, new RegExp(`--${o.name}\\b.*\\[${envName(o)}\\]`), `${command} --help lists --${o.name}`);
    for (const o of OPTIONS.filter((x) => !x.commands.includes(command)))
      assert.doesNotMatch(help, new RegExp(`--${o.name}\\b`), `${command} --help leaves out --${o.name}`);
  }
});

test('every help fits 80 columns and says each thing once', () => {
  for (const command of [undefined, 'start', 'mcp', 'doctor'] as const) {
    const lines = helpText(command).split('\n');
    const long = lines.filter((l) => l.length > HELP_WIDTH);
    assert.deepEqual(long, [], `verity ${command ?? ''} --help: no line over ${HELP_WIDTH} columns`);
    const text = lines.join(' ');
    assert.doesNotMatch(
      text,
      /repeatable.*may repeat|may repeat.*repeatable/,
      'a list option says once that it repeats',
    );
    assert.ok((text.match(/\(repeatable/g) ?? []).length <= OPTIONS.filter((o) => o.kind === 'list').length);
  }
});

test("each command's --config example is one that command takes", () => {
  const dir = mkdtempSync(join(tmpdir(), 'verity-cli-'));
  try {
    for (const command of ['start', 'mcp', 'doctor'] as const) {
      assert.match(helpText(command), new RegExp(CONFIG_EXAMPLE[command].replace(/[{}[\]]/g, '\\$&')));
      const file = join(dir, `${command}.json`);
      writeFileSync(file, CONFIG_EXAMPLE[command]);
      const parsed = run([command, '--config', file], {});
      assert.equal(parsed.kind, 'run', `verity ${command} takes its own --config example`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the command line wins over the environment, the environment over --config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'verity-cli-'));
  try {
    const config = join(dir, 'verity.json');
    writeFileSync(config, JSON.stringify({ port: 9000, headless: false, 'browser-url': 'http://127.0.0.1:9222' }));
    const fromAll = run(['start', '--config', config, '--port', '9100'], {
      VERITY_PORT: '9200',
      VERITY_HEADLESS: 'on',
      VERITY_HOST: '',
    });
    assert.deepEqual(fromAll.values, { config, port: 9100, headless: true, 'browser-url': 'http://127.0.0.1:9222' });
    assert.deepEqual(fromAll.sources, { config: 'flag', port: 'flag', headless: 'env', 'browser-url': 'config' });
    assert.deepEqual(run(['start'], { VERITY_CONFIG: config }).values.port, 9000, 'VERITY_CONFIG names the file too');
    writeFileSync(config, JSON.stringify({ prot: 1 }));
    refused(['start', '--config', config], /"prot"/);
    writeFileSync(config, JSON.stringify({ host: '0.0.0.0' }));
    refused(['mcp', '--config', config], /verity mcp does not take "host".*an option of verity start/);
    writeFileSync(config, '{"port": ');
    refused(['start', '--config', config], /verity\.json/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Config: a flag over the environment over the --config file over the default, each value typed by its row', () => {
  const dir = mkdtempSync(join(tmpdir(), 'verity-cli-'));
  try {
    const file = join(dir, 'verity.json');
    writeFileSync(file, JSON.stringify({ port: 9000, host: '127.0.0.3', viewport: '800x600' }));
    const config = (argv: string[], env: NodeJS.ProcessEnv = {}) => run(['start', ...argv], env).config;
    // The default, where no layer gives it; a default is not "given" (it does not make `verity mcp` its own server).
    assert.equal(config([]).port, 7317);
    assert.equal(config([]).host, '127.0.0.1');
    assert.deepEqual(run(['start']).values, {});
    assert.equal(run(['mcp']).config.relay, true);
    // The file over the default, the environment over the file, the flag over the environment.
    assert.equal(config(['--config', file]).port, 9000);
    assert.equal(config(['--config', file], { VERITY_PORT: '9200' }).port, 9200);
    assert.equal(config(['--config', file, '--port', '9100'], { VERITY_PORT: '9200' }).port, 9100);
    const mixed = config(['--config', file, '--port', '9100'], { VERITY_HOST: '127.0.0.4' });
    assert.deepEqual([mixed.port, mixed.host, mixed.viewport], [9100, '127.0.0.4', { width: 800, height: 600 }]);
    // Typed by the table: these lines compile only while each field has its row's type.
    const port: number = mixed.port;
    const viewport: { width: number; height: number } | undefined = mixed.viewport;
    const roots: string[] | undefined = run(['mcp', '--upload-root', '/a']).config['upload-root'];
    assert.deepEqual([port, viewport?.width, roots], [9100, 800, ['/a']]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("every default and every value the parser makes is of its kind's zod schema", () => {
  for (const o of OPTIONS.filter((x) => x.value !== undefined))
    assert.ok(KIND_SCHEMAS[o.kind].safeParse(o.value).success, `--${o.name}'s default ${JSON.stringify(o.value)}`);
  const argv = {
    start: ['--port', '0', '--host', '::1', '--allowed-hosts', 'a.lan,b.lan', '--audit-max-mb', '9', '--no-cursor'],
    mcp: ['--headful', '--upload-root', '/a', '--browser-arg', '--lang=fr', '--viewport', '10x10', '--tools', 'full'],
    doctor: ['--channel', 'chrome', '--json'],
  } as const;
  for (const command of ['start', 'mcp', 'doctor'] as const) {
    const schema = configSchema(OPTIONS.filter((o) => o.commands.includes(command)));
    for (const config of [run([command]).config, run([command, ...argv[command]]).config]) {
      const checked = schema.safeParse(config);
      assert.ok(checked.success, `${command}: ${JSON.stringify(config)}: ${checked.error?.message}`);
    }
  }
  // The schema is not one that takes anything.
  assert.equal(configSchema(OPTIONS).safeParse({ port: '7317' }).success, false);
  assert.equal(configSchema(OPTIONS).safeParse({ prot: 1 }).success, false);
});

test('a bad value is refused naming its option, in whichever layer it is', () => {
  const dir = mkdtempSync(join(tmpdir(), 'verity-cli-'));
  try {
    const file = join(dir, 'verity.json');
    writeFileSync(file, JSON.stringify({ port: 'seven' }));
    refused(['start', '--config', file], /--config .*verity\.json: "port": expected a port, 0\.\.65535, got "seven"/);
    writeFileSync(file, JSON.stringify({ 'session-idle-ms': 0 }));
    refused(['mcp', '--config', file], /"session-idle-ms": expected a positive integer, got 0/);
    writeFileSync(file, JSON.stringify({ viewport: 'big' }));
    refused(['mcp', '--config', file], /"viewport" must be WIDTHxHEIGHT|"viewport".*WIDTHxHEIGHT/);
    refused(['mcp'], /^VERITY_SESSION_IDLE_MS: expected a positive integer, got "-1"$/, {
      VERITY_SESSION_IDLE_MS: '-1',
    });
    refused(['mcp', '--tools', 'most'], /^--tools: must be default or full, got "most"$/);
    refused(['mcp', '--caps', 'windows,telepathy'], /^--caps: "telepathy" is no capability \(apps, windows, /);
    refused(['mcp'], /^VERITY_CAPS: "x" is no capability/, { VERITY_CAPS: 'windows,x' });
    assert.deepEqual(run(['mcp', '--caps', 'windows,clipboard', '--caps', 'apps']).values.caps, [
      'windows',
      'clipboard',
      'apps',
    ]);
    assert.deepEqual(run(['start'], { VERITY_CAPS: 'zoom, menus' }).values.caps, ['zoom', 'menus']);
    // A lower layer's value is not read when a higher one gives the option (it does not apply).
    writeFileSync(file, JSON.stringify({ port: 'seven' }));
    assert.equal(run(['start', '--config', file, '--port', '1'], { VERITY_PORT: 'x' }).config.port, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("refusals name the option: another command's, unknown, a bad value, a missing value, a stray argument", () => {
  refused(['mcp', '--port', '1'], /verity mcp does not take --port \(an option of verity start\)/);
  refused(['start', '--gateway'], /verity start does not take --gateway/);
  refused(['start', '--bogus'], /unknown option --bogus/);
  refused(['start', '--port', '70000'], /--port: expected a port/);
  refused(['start'], /VERITY_PORT: expected a port/, { VERITY_PORT: 'x' });
  refused(['mcp'], /VERITY_HEADLESS: expected 1\/0/, { VERITY_HEADLESS: 'maybe' });
  refused(['start', '--host'], /--host needs a value/);
  refused(['mcp', 'extra'], /takes no argument "extra"/);
  refused(['stop'], /unknown command stop/);
  refused([], /no command given/);
  refused(['mcp', '--gateway', '--standalone'], /exclude each other/);
  assert.equal(
    run(['mcp'], { VERITY_PORT: 'x' }).values.port,
    undefined,
    "another command's variable is not this one's concern",
  );
});

test('the native route says where it cannot run, before anything of it is loaded', () => {
  // macOS and Windows get the portable nut-js backend (issue 27); a system with none is refused naming it.
  assert.equal(nativeUnavailable('darwin', {}), null);
  assert.equal(nativeUnavailable('win32', {}), null);
  assert.match(nativeUnavailable('freebsd', { DISPLAY: ':0' })!, /needs Linux, macOS or Windows; this is freebsd/);
  assert.match(nativeUnavailable('linux', {})!, /DISPLAY is not set/);
  // Forced nutjs on Linux needs X (nut-js there is Xlib): a Wayland socket alone is not enough.
  assert.match(nativeUnavailable('linux', { WAYLAND_DISPLAY: 'wayland-0' }, 'nutjs')!, /nutjs .*DISPLAY is not set/);
  assert.equal(nativeUnavailable('linux', { DISPLAY: ':0' }, 'nutjs'), null);
  // A Wayland session is a desktop of its own (issue 23): AT-SPI and the compositor, no XWayland needed.
  assert.equal(nativeUnavailable('linux', { WAYLAND_DISPLAY: 'wayland-0' }), null);
  assert.match(
    nativeUnavailable('linux', { XDG_SESSION_TYPE: 'x11', WAYLAND_DISPLAY: 'wayland-0' })!,
    /DISPLAY is not set/,
  );
  assert.equal(nativeUnavailable('linux', { DISPLAY: ':0' }), null);
});

test('one table in docs/options.md documents every option and every VERITY_* variable the server reads', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'options.md'), 'utf8');
  const table = /<!-- options:start -->([\s\S]*?)<!-- options:end -->/.exec(doc)?.[1];
  assert.ok(table, 'docs/options.md has the options table between <!-- options:start --> and <!-- options:end -->');
  const rows = table.split('\n').filter((l) => l.startsWith('| ') && l.includes('`VERITY_'));
  for (const o of OPTIONS) {
    assert.ok(
      rows.some((r) => r.includes(`\`--${o.name}`) && r.includes(`\`${envName(o)}\``)),
      `a docs/options.md row for --${o.name} with ${envName(o)}`,
    );
  }
  for (const v of ENV_ONLY)
    assert.ok(
      rows.some((r) => r.includes(`\`${v.env}\``)),
      `a docs/options.md row for ${v.env}`,
    );
  const read = new Set<string>();
  const scan = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) scan(join(dir, e.name));
      else if (e.name.endsWith('.ts'))
        for (const m of readFileSync(join(dir, e.name), 'utf8').matchAll(/\bVERITY_[A-Z_]+/g)) read.add(m[0]);
    }
  };
  scan(join(ROOT, 'server'));
  const undocumented = [...read].filter((v) => !rows.some((r) => r.includes(`\`${v}\``)));
  assert.deepEqual(undocumented, [], 'every VERITY_* variable under server/ is in the docs/options.md table');
});

test("the table's other kinds: repeatable lists, checked values, another variable name, a refused option", () => {
  const table = [
    { name: 'upload-root', kind: 'list', split: ':', env: 'VERITY_UPLOAD_ROOTS', commands: ['mcp'], help: 'h' },
    {
      name: 'viewport',
      kind: 'string',
      commands: ['mcp'],
      help: 'h',
      parse: (v: string, from: string) => {
        const m = /^(\d+)x(\d+)$/.exec(v);
        if (!m) throw new Error(`${from}: expected WxH, got ${JSON.stringify(v)}`);
        return { width: +m[1], height: +m[2] };
      },
    },
    {
      name: 'token',
      kind: 'string',
      commands: ['mcp'],
      help: 'h',
      refused: 'not on the command line (it shows in `ps`): set VERITY_TOKEN',
    },
  ] as const satisfies readonly OptionSpec[];
  const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
    parseCommandLine(argv, env, table as unknown as OptionSpec[]) as Extract<
      ReturnType<typeof parseCommandLine>,
      { kind: 'run' }
    >;
  assert.deepEqual(parse(['mcp', '--upload-root', '/a:/b', '--upload-root=/c']).values, {
    'upload-root': ['/a', '/b', '/c'],
  });
  assert.deepEqual(parse(['mcp'], { VERITY_UPLOAD_ROOTS: '/x:/y' }).values, { 'upload-root': ['/x', '/y'] });
  assert.deepEqual(parse(['mcp', '--viewport=800x600']).values, { viewport: { width: 800, height: 600 } });
  assert.throws(
    () => parse(['mcp', '--viewport', 'big']),
    (e: unknown) => e instanceof UsageError && /^--viewport: expected WxH, got "big"$/.test(e.message),
  );
  assert.deepEqual(parse(['mcp'], { VERITY_TOKEN: 's3cret' }).values, {}, 'its variable is left to whoever reads it');
  assert.throws(
    () => parse(['mcp', '--token', 's3cret']),
    (e: unknown) =>
      e instanceof UsageError && /--token: not on the command line/.test(e.message) && !e.message.includes('s3cret'),
  );
});

test('a failed start is one line naming what failed and how to fix it (startFailure)', () => {
  const listenError = (code: string, address: string, port: number) =>
    Object.assign(new Error(`listen ${code}: ${address}:${port}`), { code, syscall: 'listen', address, port });
  assert.match(
    startFailure(listenError('EADDRINUSE', '127.0.0.1', 1)),
    /^port 1 is in use on 127\.0\.0\.1: .*--port N/,
  );
  assert.match(
    startFailure(listenError('EACCES', '127.0.0.1', 80)),
    /^cannot listen on 127\.0\.0\.1:80: binding port 80 needs privileges; .*above 1023/,
  );
  assert.match(
    startFailure(listenError('EADDRNOTAVAIL', '192.0.2.1', 7317)),
    /not an address of this machine; .*--host/,
  );
  const fsError = Object.assign(new Error("EACCES: permission denied, mkdir '/x/audit'"), {
    code: 'EACCES',
    syscall: 'mkdir',
    path: '/x/audit',
  });
  assert.match(startFailure(fsError), /^cannot mkdir \/x\/audit \(EACCES\); .*--config-dir/);
  assert.equal(startFailure(new Error('first line\n    at somewhere')), 'first line', 'never a stack');
});
