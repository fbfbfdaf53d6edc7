#!/usr/bin/env node
// The layering rules, checked (`npm test` and `npm run lint` run this): which folder may import what, who
// may speak CDP, and no import cycle in server/, control-ui/src or extension/, type imports included.
// Imports are read with the TypeScript compiler's parser (static, `import type`, `export … from`,
// `import('…')` and `import('…').T` types). Exits 1 naming each file, its import and the rule it breaks.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = /\.(ts|mts|js|mjs)$/;
const SKIP = /(^|\/)(node_modules|dist|ui)(\/|$)|\.min\.js$|\.d\.ts$/;

/** The folders checked for cycles; `extension/ui` is the built Control UI, not source. */
const TREES = ['server', 'control-ui/src', 'extension'];

const BACKENDS = ['server/cdp/', 'server/native/'];
const FRONT = ['server/mcp/', 'server/tools/', 'server/gateway/', 'server/core.ts', 'server/cli.ts'];
/** Leaf modules everybody shares: they import no folder above them. */
const SHARED = [
  'server/activity.ts',
  'server/approvals.ts',
  'server/limits.ts',
  'server/policy.ts',
  'server/progress.ts',
  'server/token.ts',
  'server/ui-commands.ts',
  'server/version.ts',
];

/**
 * What each place may not import (a path prefix, or a package name), and whether it may send CDP
 * commands (`.send('Domain.method', …)`). The first rule whose `files` match a file applies to it.
 * `allowTypes` lists imports taken for their types only (`import type`) that a rule lets through.
 */
const RULES = [
  {
    name: 'tools see only ToolContext: no backend, no MCP, no gateway, no core, no CDP',
    files: ['server/tools/'],
    deny: ['puppeteer-core', ...BACKENDS, 'server/mcp/', 'server/gateway/', 'server/core.ts', 'server/cli.ts'],
    // The page tool hands Tab objects back to the router; it names their type through context.ts.
    allowTypes: { 'server/tools/context.ts': ['server/cdp/tab.ts'] },
    noCdp: true,
  },
  {
    name: 'the core and the router speak no CDP and know nothing of MCP, tools or the gateway',
    files: ['server/routing/', 'server/core.ts'],
    deny: ['puppeteer-core', 'server/tools/', 'server/gateway/', 'server/cli.ts'],
    except: { 'server/core.ts': ['server/mcp/pipeline.ts'] },
    noCdp: true,
  },
  {
    name: 'the MCP side reaches the backends through the router',
    files: ['server/mcp/'],
    deny: ['puppeteer-core', 'server/gateway/', 'server/cli.ts', 'server/native/'],
    noCdp: true,
  },
  {
    name: 'the CDP route is a backend: no MCP, tools, gateway, core, nor the native route',
    files: ['server/cdp/'],
    deny: [...FRONT, 'server/native/', 'server/sessions/'],
  },
  {
    name: 'the native route is a backend: no MCP, tools, gateway, core, nor the CDP route',
    files: ['server/native/'],
    deny: [...FRONT, 'server/cdp/', 'server/sessions/'],
  },
  {
    name: 'sessions are plain state: no backend, no MCP, tools, gateway or core',
    files: ['server/sessions/'],
    deny: ['puppeteer-core', ...BACKENDS, ...FRONT],
    noCdp: true,
  },
  {
    name: 'shared leaf modules import no folder above them',
    files: SHARED,
    deny: ['puppeteer-core', ...BACKENDS, ...FRONT, 'server/sessions/'],
    noCdp: true,
  },
  {
    name: 'the gateway is not a tool and does not start the process',
    files: ['server/gateway/'],
    deny: ['server/tools/', 'server/cli.ts'],
  },
  {
    name: 'the Control UI and the extension share only the gateway protocol with the server',
    files: ['control-ui/src/', 'extension/'],
    deny: ['server/'],
    except: { '*': ['server/gateway/protocol'] },
  },
];

const list = (root, dir) => {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (SKIP.test(rel)) return [];
    return e.isDirectory() ? list(root, rel) : SOURCE.test(e.name) ? [rel] : [];
  });
};

/** A relative specifier as a repository path (the .js of an import is the .ts beside it), or null. */
function resolveSpecifier(root, from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(root, dirname(from), specifier);
  const stem = base.replace(/\.(js|mjs|ts)$/, '');
  for (const candidate of [
    base,
    `${stem}.ts`,
    `${stem}.mts`,
    `${stem}.js`,
    `${stem}.mjs`,
    join(base, 'index.ts'),
    join(base, 'index.js'),
  ]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(root, candidate).split('\\').join('/');
  }
  return null;
}

/** Every import of a file (with whether it is for types only) and every CDP command it sends. */
function scan(root, file) {
  const text = readFileSync(join(root, file), 'utf8');
  const source = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith('ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS,
  );
  const imports = [];
  const cdp = [];
  const line = (node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const clause = ts.isImportDeclaration(node) ? node.importClause : null;
      const typeOnly = ts.isImportDeclaration(node)
        ? !!clause &&
          (clause.isTypeOnly ||
            (!clause.name &&
              !!clause.namedBindings &&
              ts.isNamedImports(clause.namedBindings) &&
              clause.namedBindings.elements.length > 0 &&
              clause.namedBindings.elements.every((e) => e.isTypeOnly)))
        : node.isTypeOnly;
      imports.push({ specifier: node.moduleSpecifier.text, typeOnly, line: line(node) });
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      imports.push({ specifier: node.argument.literal.text, typeOnly: true, line: line(node) });
    } else if (ts.isCallExpression(node)) {
      const [first] = node.arguments;
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword && first && ts.isStringLiteralLike(first)) {
        imports.push({ specifier: first.text, typeOnly: false, line: line(node) });
      } else if (
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === 'send' &&
        first &&
        ts.isStringLiteralLike(first) &&
        /^[A-Z][A-Za-z]+\.[a-z][A-Za-z]+$/.test(first.text)
      ) {
        cdp.push({ method: first.text, line: line(node) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { imports, cdp };
}

const matches = (path, prefixes) => prefixes.some((p) => path === p || path.startsWith(p));
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/**
 * Cycles known and being removed by work in flight. Reported, not failed; an entry that no longer occurs is
 * reported too, so that it is deleted here. (The CDP route's driver.ts <-> typing.ts, issue #16 item 2, is gone.)
 */
const PENDING_CYCLES = [];

/** Checks the tree under `root` (default: this repository); returns the problems and the notes. */
export function checkDeps(root = REPO, pending = PENDING_CYCLES) {
  const files = TREES.flatMap((tree) => list(root, tree));
  const notes = [];
  const problems = [];
  const graph = new Map();
  for (const file of files) {
    const { imports, cdp } = scan(root, file);
    const rule = RULES.find((r) => matches(file, r.files));
    const edges = [];
    for (const imp of imports) {
      const target = resolveSpecifier(root, file, imp.specifier);
      if (target) edges.push(target);
      if (!rule) continue;
      const named = target ?? packageOf(imp.specifier);
      if (!matches(named, rule.deny)) continue;
      const excepted = [...(rule.except?.[file] ?? []), ...(rule.except?.['*'] ?? [])];
      if (matches(named, excepted)) continue;
      if (imp.typeOnly && (rule.allowTypes?.[file] ?? []).includes(named)) continue;
      problems.push(
        `${file}:${imp.line}: imports ${imp.specifier}${imp.typeOnly ? ' (types)' : ''}; rule: ${rule.name}`,
      );
    }
    if (rule?.noCdp)
      for (const c of cdp)
        problems.push(
          `${file}:${c.line}: sends the CDP command ${c.method}; rule: ${rule.name} (put it behind a method of server/cdp/ and the router)`,
        );
    graph.set(file, edges);
  }
  const seen = new Set();
  for (const cycle of cycles(graph)) {
    const known = pending.find((p) => p.length === cycle.length && p.every((f) => cycle.includes(f)));
    const text = `import cycle (type imports count): ${[...cycle, cycle[0]].join(' -> ')}`;
    if (known) {
      seen.add(known);
      notes.push(`${text} (pending: its removal is under way)`);
    } else problems.push(text);
  }
  for (const p of pending)
    if (!seen.has(p))
      notes.push(
        `the pending cycle ${p.join(' <-> ')} is gone: delete it from PENDING_CYCLES in scripts/check-deps.mjs`,
      );
  return { files: files.length, problems, notes };
}

/** Each strongly connected set of files (Tarjan), as one cycle through it. */
function cycles(graph) {
  let counter = 0;
  const index = new Map(),
    low = new Map(),
    stack = [],
    onStack = new Set(),
    found = [];
  const strong = (v) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(pathThrough(graph, new Set(component), v));
  };
  for (const v of graph.keys()) if (!index.has(v)) strong(v);
  return found;
}

/** One concrete cycle inside a strongly connected set, starting at `start` (for a readable message). */
function pathThrough(graph, component, start) {
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of graph.get(v) ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [];
        for (let x = v; x !== null; x = previous.get(x)) path.unshift(x);
        return path;
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [...component];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { files, problems, notes } = checkDeps();
  for (const note of notes) process.stdout.write(`check-deps: note: ${note}\n`);
  if (problems.length) {
    process.stderr.write(
      `check-deps: ${problems.length} problem(s) in ${files} files (rules in scripts/check-deps.mjs):\n${problems.map((p) => `  ${p}`).join('\n')}\n`,
    );
    process.exit(1);
  }
  process.stdout.write(`check-deps: ${files} files, layers and cycles ok\n`);
}
