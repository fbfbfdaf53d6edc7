// LibreOffice on the native route (issue #23): get_window_state of a Writer document and of a Calc sheet
// against a bare libatspi walk of the same tree (bench/python/atspi_walk.py: python3-gi's Atspi, from the
// frame down, shown nodes only, a sheet by its cells in view), with both element counts; and typing into a
// Writer paragraph, Verity's confirmed type_text against `xdotool type`, each timed until the paragraph
// reads back the text. Runs on its own with `--only office`; skips itself (a note) where LibreOffice,
// python3-uno or gir1.2-atspi-2.0 are missing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Atspi, type AccRef } from '../../server/native/linux/atspi/model.js';
import { startMcp, REPO_ROOT, type McpSession } from '../mcp.js';
import { describe, measure } from '../stats.js';
import { failed, ok, type BenchContext, type Cell, type Row, type Section } from '../types.js';
import { missingTools, startDesktop, type Desktop } from '../../test/native/desktop.js';
import { missingOffice, startOffice, type Office } from '../../test/native/libreoffice.js';
import { walkWindow } from '../../server/native/linux/atspi/walk.js';
import { profileFor } from '../../server/native/linux/toolkits/index.js';

const WALK_PY = join(REPO_ROOT, 'bench', 'python', 'atspi_walk.py');
/** Three dozen paragraphs: more than a window shows, so the document's own bound (what is in view) counts. */
const FILLED = Array.from({ length: 36 }, (_, i) => `Absatz ${i + 1}: Grüße aus dem Bench, café.`).join('\n');
const TYPED = 'Bench typing into Writer, 50 characters ASCII only';
/** Each get_window_state of a LibreOffice window takes about a second: fewer rounds than the GTK rows. */
const WINDOW_RUNS = { warmup: 1, iterations: 5 };
const TYPE_RUNS = { warmup: 2, iterations: 10 };

function missingWalk(): string | null {
  const r = spawnSync('/usr/bin/python3', ['-c', "import gi; gi.require_version('Atspi', '2.0')"], {
    stdio: 'ignore',
  });
  return r.status === 0 ? null : 'gir1.2-atspi-2.0 is missing';
}

async function timed<T>(
  ctx: BenchContext,
  label: string,
  runs: { warmup: number; iterations: number },
  act: () => Promise<T>,
  prepare?: () => Promise<void>,
  check?: (result: T) => Promise<void>,
): Promise<Cell> {
  try {
    const config = { warmup: runs.warmup, iterations: Math.min(runs.iterations, Math.max(ctx.config.iterations, 3)) };
    const s = await measure(config, { prepare, act, check });
    ctx.log(`office: ${label}: ${s.median.toFixed(1)} ms (${describe(s)})`);
    return ok(s.median, describe(s));
  } catch (e) {
    ctx.log(`office: ${label}: FAILED: ${(e as Error).message}`);
    return failed(e);
  }
}

/** The walk peer as a child answering one JSON line per title. */
function startWalker(d: Desktop): { walk(title: string): Promise<number>; child: ChildProcess } {
  const child = spawn('/usr/bin/python3', [WALK_PY], { env: { ...process.env, ...d.env }, stdio: 'pipe' });
  const lines = createInterface({ input: child.stdout! });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  return {
    child,
    walk: (title) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the libatspi walk of "${title}" took over 60 s`)), 60_000);
        waiting.push((line) => {
          clearTimeout(timer);
          const out = JSON.parse(line);
          if (out.error) reject(new Error(out.error));
          else resolve(out.nodes);
        });
        child.stdin!.write(`${title}\n`);
      }),
  };
}

export const officeSection: Section = {
  name: 'office',
  async run(ctx) {
    const missing = missingTools() ?? missingOffice() ?? missingWalk();
    if (missing) {
      ctx.notes.push(`office section skipped: ${missing}`);
      return [];
    }
    let desktop: Desktop | null = null;
    let office: Office | null = null;
    let verity: McpSession | null = null;
    let walker: ChildProcess | null = null;
    let atspi: Atspi | null = null;
    const saved = { ...process.env };
    try {
      desktop = await startDesktop();
      const d = desktop;
      office = await startOffice(d);
      const o = office;
      // An X11 desktop: every document's window has its X id.
      const open = async (...args: Parameters<Office['open']>) => {
        const id = await o.open(...args);
        if (id === null) throw new Error(`"${args[1]}" has no X11 window`);
        return id;
      };
      const writerId = await open('writer', 'Bench Writer', FILLED);
      const calcId = await open('calc', 'Bench Calc', 'Anfang');
      const typingId = await open('writer', 'Bench Typing');
      // Verity's MCP server and the in-process AT-SPI reader on this desktop (desktop.ts hands the reader this process's environment).
      Object.assign(process.env, d.env);
      verity = await startMcp(ctx.procs, {
        name: 'verity-office',
        command: process.execPath,
        args: [join(REPO_ROOT, 'bin', 'verity.js'), 'mcp', '--headless'],
        cwd: REPO_ROOT,
      });
      atspi = await Atspi.connect({ profiles: profileFor });
      const v = verity;
      const w = startWalker(d);
      walker = w.child;

      const stateRow = async (label: string, windowId: number, title: string): Promise<Row> => {
        const target = { kind: 'window', pid: o.pid(), window_id: windowId };
        let elements = 0;
        let complete = true;
        const verityCell = await timed(ctx, `Verity get_window_state, ${label}`, WINDOW_RUNS, async () => {
          const { result } = await v.timed('get_window_state', { target, include_screenshot: false });
          if (result.isError) throw new Error(`get_window_state refused: ${JSON.stringify(result.structuredContent)}`);
          const sc = result.structuredContent as { element_count: number; elements_complete: boolean };
          elements = sc.element_count;
          complete = sc.elements_complete;
        });
        let nodes = 0;
        const walkCell = await timed(ctx, `libatspi walk, ${label}`, WINDOW_RUNS, async () => {
          nodes = await w.walk(title);
        });
        return {
          metric: `native get_window_state, LibreOffice ${label}`,
          unit: 'ms',
          cells: { verity: verityCell, floor: walkCell },
          checks: [],
          note: `floor = a bare libatspi walk (python3-gi) of the same window: ${nodes} shown nodes, each with role, name, states and extents. Verity lists ${elements} elements (unnamed containers folded, values and tokens, elements_complete ${complete}), without the screenshot.`,
        };
      };
      const writerRow = await stateRow(
        'Writer document (36 paragraphs)',
        writerId,
        'Bench Writer - LibreOffice Writer',
      );
      const calcRow = await stateRow('Calc sheet', calcId, 'Bench Calc - LibreOffice Calc');

      // Typing: the blank document's one paragraph, emptied before each run.
      d.x('xdotool', ['windowactivate', '--sync', String(typingId)]);
      const snap = await v.call('get_window_state', {
        target: { kind: 'window', pid: o.pid(), window_id: typingId },
        include_screenshot: false,
        format: 'full',
      });
      const els = (snap.structuredContent as { elements: Array<{ role: string; element_token: string }> }).elements;
      const token = els.find((e) => e.role === 'paragraph')?.element_token;
      if (!token) throw new Error('the typing document lists no paragraph');
      const paragraph = await findParagraph(atspi, o.pid(), 'Bench Typing - LibreOffice Writer');
      const a = atspi;
      const empty = async () => {
        await a.setTextContents(paragraph, '');
      };
      const holds = async () => {
        const deadline = performance.now() + 10_000;
        while (performance.now() < deadline) {
          if ((await a.text(paragraph)) === TYPED) return;
          await new Promise((r) => setTimeout(r, 1));
        }
        throw new Error(`the paragraph never held the text (holds ${JSON.stringify(await a.text(paragraph))})`);
      };
      const verityType = await timed(
        ctx,
        'Verity type_text into a Writer paragraph',
        TYPE_RUNS,
        async () => {
          const { result } = await v.timed('type_text', { element_token: token, text: TYPED });
          const effect = (result.structuredContent as { effect?: string }).effect;
          if (effect !== 'confirmed') throw new Error(`type_text: ${JSON.stringify(result.structuredContent)}`);
        },
        empty,
        async () => {
          if ((await a.text(paragraph)) !== TYPED) throw new Error('Verity confirmed, but the paragraph disagrees');
        },
      );
      const xdotool = await timed(
        ctx,
        'xdotool type into a Writer paragraph',
        TYPE_RUNS,
        async () => {
          const r = spawnSync('xdotool', ['type', '--delay', '0', TYPED], { env: { ...process.env, ...d.env } });
          if (r.status !== 0) throw new Error(`xdotool type: ${String(r.stderr)}`);
          await holds();
        },
        async () => {
          await empty();
          await a.grabFocus(paragraph);
        },
      );
      return [
        writerRow,
        calcRow,
        {
          metric: `native type_text into a LibreOffice Writer paragraph, ${TYPED.length} chars, vs \`xdotool type\``,
          unit: 'ms',
          cells: { verity: verityType, floor: xdotool },
          checks: [],
          note: 'Verity = the MCP type_text round trip (AT-SPI insertion, confirmed by its read-back); floor column here = `xdotool type --delay 0` into the focused paragraph, timed until the paragraph reads back the text. The paragraph is emptied before each run.',
        },
      ];
    } finally {
      for (const k of Object.keys(desktop?.env ?? {})) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
      atspi?.disconnect();
      if (walker?.pid) walker.kill('SIGTERM');
      await verity?.close().catch(() => undefined);
      await office?.close();
      await desktop?.close();
    }
  },
};

/** The first paragraph of the window titled `title` (its document), found the way Verity's walk finds it. */
async function findParagraph(atspi: Atspi, pid: number, title: string): Promise<AccRef> {
  const app = (await atspi.apps()).find((x) => x.pid === pid);
  if (!app) throw new Error('LibreOffice is not on the AT-SPI bus');
  for (const top of await atspi.children(app.ref)) {
    if (String(await atspi.prop(top, 'org.a11y.atspi.Accessible', 'Name')) !== title) continue;
    const row = (await walkWindow(atspi, top)).rows.find((r) => r.item.role === 73 /* paragraph */);
    if (row) return row.item.ref;
  }
  throw new Error(`no paragraph in "${title}"`);
}
