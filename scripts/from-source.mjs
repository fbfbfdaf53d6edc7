// Runs TypeScript from source (`node --import ./scripts/from-source.mjs file.ts`): the fast test tier
// (`npm run test:unit`) needs no tsc pass. Node 20 cannot strip types itself and tsx is not a dependency,
// so these module hooks transpile each .ts file with esbuild (a devDependency already: types dropped, no
// type check; `npm run lint` and the build still check types) and map the source's `./x.js` imports to
// `./x.ts`, as tsc's NodeNext resolution does.
//
// Paths: the code reads files relative to its compiled place (`new URL('../../package.json',
// import.meta.url)` from dist/server/, ROOT from dist/test/helpers/), so each file is given the
// `import.meta.url` of its compiled twin under dist/. Files that exist only once built (the page agent's
// bundle, the Control UI) are then found in dist/ as in the built suite; none of the unit tests needs them.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'verity-from-source');
const HOOKS = readFileSync(fileURLToPath(import.meta.url));

/** The URL of `file`'s compiled twin (`server/x.ts` -> `dist/server/x.js`). */
const compiledUrl = (file) => pathToFileURL(join(ROOT, 'dist', relative(ROOT, file)).replace(/\.ts$/, '.js')).href;

export async function resolve(specifier, context, nextResolve) {
  const fromSource = context.parentURL?.startsWith('file:') && context.parentURL.endsWith('.ts');
  if (fromSource && /^\.{1,2}\//.test(specifier) && specifier.endsWith('.js')) {
    const ts = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (existsSync(fileURLToPath(ts))) return { url: ts.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const source = readFileSync(file, 'utf8');
  // Each test file is its own process and imports much the same server code: the JavaScript of a source
  // text is kept on disk, keyed by its path and text (and these hooks' own text, which say how to transpile it),
  // so only what changed is transpiled again.
  const key = createHash('sha1').update(HOOKS).update('\0').update(file).update('\0').update(source).digest('hex');
  const cached = join(CACHE, `${key}.js`);
  if (existsSync(cached)) return { format: 'module', source: readFileSync(cached, 'utf8'), shortCircuit: true };
  const { transformSync } = await import('esbuild');
  const { code } = transformSync(source, {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcefile: file,
    sourcemap: 'inline',
    define: { 'import.meta.url': JSON.stringify(compiledUrl(file)) },
  });
  mkdirSync(CACHE, { recursive: true });
  // Written whole under a unique name, then renamed: a file read by a concurrent test process is never half written.
  const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(partial, code);
  renameSync(partial, cached);
  return { format: 'module', source: code, shortCircuit: true };
}

// Imported with --import: register this file as the hooks. Node runs hooks on their own thread, which imports
// this file again and must not register it a second time.
if (isMainThread) register(import.meta.url);
