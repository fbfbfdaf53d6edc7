// What the model reads, against Playwright MCP and (when installed) Chrome DevTools MCP, all attached to
// the one Chromium: the tool definitions a client sends every turn, the default observation of a
// 1,000-element page, and how long that observation takes.
//
// Bytes are counted as a client hands them to the model: tool definitions as name + description +
// inputSchema of each listed tool (what ../shared/hooks/contract-tools.mjs counts); a result as the larger
// of its text and its structuredContent JSON (Claude Code and VS Code forward structuredContent on success,
// the text on isError: never both).
import { CAPABILITIES } from '../../server/contract/capabilities.js';
import { closeNewPages, pageIds } from '../drivers/driver.js';
import { pwOpenTab } from '../drivers/playwright.js';
import { verityOpenTab, verityState } from '../drivers/verity.js';
import { startDevtools, startVerity, textOf, type McpSession, type ToolResult } from '../mcp.js';
import { measure } from '../stats.js';
import { failed, ok, type BenchContext, type Cell, type Row, type Section } from '../types.js';

export const MANY = 1000;

const bytesOf = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

const B = (n: number) => `${n.toLocaleString('en-US')} B`;

/** What a model reads of a result: its text, or its structuredContent as JSON, whichever a client picks (the larger). */
export function modelBytes(result: ToolResult): number {
  const text = Buffer.byteLength(textOf(result), 'utf8');
  return Math.max(text, result.structuredContent ? bytesOf(result.structuredContent) : 0);
}

/** Where the bytes of a CallToolResult go: its content parts, its structuredContent, and the whole. */
function breakdown(result: ToolResult): string {
  const parts = (result.content ?? []).map((c) => `${c.type} ${B(bytesOf(c))}`);
  if (result.structuredContent) parts.push(`structuredContent ${B(bytesOf(result.structuredContent))}`);
  parts.push(`whole result ${B(bytesOf(result))}`, `model-facing ${B(modelBytes(result))}`);
  return parts.join(', ');
}

/** name + description + inputSchema of every listed tool, as a client sends them each turn. */
async function definitionBytes(
  s: McpSession,
  keep: (name: string) => boolean = () => true,
): Promise<{ bytes: number; count: number }> {
  const tools = ((await s.tools()) as Array<{ name: string; description?: string; inputSchema: unknown }>).filter((t) =>
    keep(t.name),
  );
  return {
    bytes: bytesOf(tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))),
    count: tools.length,
  };
}

/** How many of the page's MANY element names ("Button 0" .. "Check 999") a text holds. */
function namesIn(text: string): number {
  let n = 0;
  for (let i = 0; i < MANY; i++) {
    const name = `${['Button', 'Link', 'Text', 'Check'][i % 4]} ${i}`;
    if (new RegExp(`${name}(?!\\d)`).test(text)) n++;
  }
  return n;
}

async function phase(ctx: BenchContext, label: string, run: () => Promise<Cell>): Promise<Cell> {
  const before = await pageIds(ctx.browserUrl);
  try {
    const cell = await run();
    ctx.log(`bytes: ${label}: ${cell && 'value' in cell ? cell.value : JSON.stringify(cell)}`);
    return cell;
  } catch (e) {
    ctx.log(`bytes: ${label}: FAILED: ${(e as Error).message}`);
    return failed(e);
  } finally {
    await closeNewPages(ctx.browserUrl, before);
  }
}

async function withSession<T>(start: () => Promise<McpSession>, use: (s: McpSession) => Promise<T>): Promise<T> {
  const s = await start();
  try {
    return await use(s);
  } finally {
    await s.close().catch(() => undefined);
  }
}

/** A timed observation: median of the configured iterations (each call re-reads the whole page). */
async function timedObservation(ctx: BenchContext, call: () => Promise<unknown>): Promise<Cell> {
  const sample = await measure(ctx.config, {
    act: async () => {
      await call();
    },
  });
  return ok(sample.median, `median of ${sample.n}, min ${sample.min.toFixed(1)}, max ${sample.max.toFixed(1)}`);
}

export const bytesSection: Section = {
  name: 'snapshot bytes',
  async run(ctx) {
    const none = (): Cell => failed(new Error('not measured'));
    const cell = {
      verityDefs: none(),
      verityFull: none(),
      pwDefs: none(),
      verityObs: none(),
      pwObs: none(),
      verityMs: none(),
      pwMs: none(),
      compact: none(),
    };
    const devtools: string[] = [];

    cell.verityDefs = await phase(ctx, 'Verity tool definitions (default)', () =>
      withSession(
        () => ctx.startVerity(),
        async (s) => {
          const { bytes, count } = await definitionBytes(s);
          return ok(bytes, `${count} tools`);
        },
      ),
    );
    cell.verityFull = await phase(ctx, 'Verity tool definitions (--tools full)', () =>
      withSession(
        () => startVerity(ctx.procs, ctx.browserUrl, ['--tools', 'full']),
        async (s) => {
          // The capability families (--caps) are what an operator adds by turning one on: measured apart.
          const capTools = new Set(Object.values(CAPABILITIES).flatMap((list) => list.split(', ')));
          const { bytes, count } = await definitionBytes(s, (name) => !capTools.has(name));
          const caps = await definitionBytes(s, (name) => capTools.has(name));
          return ok(bytes, `${count} tools; the capabilities' ${caps.count} tools add ${caps.bytes} B`);
        },
      ),
    );

    cell.verityObs = await phase(ctx, 'Verity get_window_state (default)', () =>
      withSession(
        () => ctx.startVerity(),
        async (s) => {
          const tab = await verityOpenTab(s, ctx.fixtures.url('/many', 'verity-bytes'));
          // The default call: no format, no max_elements; the bench's own helper only names the tab (and
          // include_screenshot:false, the tab default anyway).
          const result = await verityState(tab);
          const sc = (result.structuredContent ?? {}) as { element_count?: number; elements_complete?: boolean };
          const names = namesIn(JSON.stringify(result.structuredContent ?? {}));
          const textNames = namesIn(textOf(result));
          if (names < MANY || textNames < MANY)
            throw new Error(
              `the default observation names ${names} (structured) / ${textNames} (text) of the ${MANY} elements`,
            );
          ctx.notes.push(
            `Verity get_window_state (default form) on the ${MANY}-element page: element_count ${sc.element_count ?? 'n/a'}, ` +
              `elements_complete ${sc.elements_complete}, ${names} of ${MANY} names in structuredContent and ${textNames} in the text; ${breakdown(result)}.`,
          );
          cell.verityMs = await timedObservation(ctx, () => verityState(tab));
          const full = await verityState(tab, { format: 'full' });
          ctx.notes.push(
            `Verity get_window_state format "full" (element objects, for programs) on the same page: ${breakdown(full)}.`,
          );
          const compact = await verityState(tab, { format: 'compact' });
          cell.compact = ok(modelBytes(compact), 'format compact');
          return ok(modelBytes(result), `${names} of ${MANY} names`);
        },
      ),
    );

    cell.pwDefs = await phase(ctx, 'Playwright MCP tool definitions', () =>
      withSession(
        () => ctx.startPlaywright(),
        async (s) => {
          const { bytes, count } = await definitionBytes(s);
          return ok(bytes, `${count} tools`);
        },
      ),
    );
    cell.pwObs = await phase(ctx, 'Playwright MCP browser_snapshot', () =>
      withSession(
        () => ctx.startPlaywright(),
        async (s) => {
          await pwOpenTab(s, ctx.fixtures.url('/many', 'pw-bytes'));
          const result = await s.call('browser_snapshot', {});
          const refs = (textOf(result).match(/\[ref=/g) ?? []).length;
          ctx.notes.push(
            `Playwright MCP browser_snapshot on the ${MANY}-element page: ${refs} refs, ${namesIn(textOf(result))} of ${MANY} names; ${breakdown(result)}.`,
          );
          cell.pwMs = await timedObservation(ctx, () => s.call('browser_snapshot', {}));
          return ok(modelBytes(result), `${refs} refs`);
        },
      ),
    );

    // Chrome DevTools MCP, when the devDependency is installed: its figures go in the notes (the table has
    // one peer column).
    try {
      await withSession(
        () => startDevtools(ctx.procs, ctx.browserUrl),
        async (s) => {
          const defs = await definitionBytes(s);
          devtools.push(`tool definitions ${B(defs.bytes)} (${defs.count} tools)`);
          const before = await pageIds(ctx.browserUrl);
          try {
            const opened = await s.call('new_page', { url: ctx.fixtures.url('/many', 'devtools-bytes') });
            const pageId = /pageId[^0-9]{0,4}(\d+)|(\d+): .*devtools-bytes.*\[selected\]/.exec(textOf(opened));
            const args = pageId ? { pageId: Number(pageId[1] ?? pageId[2]) } : {};
            const snap = await s.timed('take_snapshot', args);
            if (snap.result.isError) throw new Error(textOf(snap.result).slice(0, 200));
            devtools.push(
              `take_snapshot ${B(modelBytes(snap.result))} (${namesIn(textOf(snap.result))} of ${MANY} names)`,
            );
            const sample = await measure(ctx.config, {
              act: async () => {
                await s.call('take_snapshot', args);
              },
            });
            devtools.push(`take_snapshot time ${sample.median.toFixed(1)} ms (median of ${sample.n})`);
          } finally {
            await closeNewPages(ctx.browserUrl, before);
          }
        },
      );
    } catch (e) {
      devtools.push(`not measured: ${(e as Error).message.split('\n')[0]!.slice(0, 200)}`);
    }
    ctx.notes.push(`Chrome DevTools MCP (chrome-devtools-mcp, attached with --browserUrl): ${devtools.join('; ')}.`);

    const dt = devtools.join('; ');
    const rows: Row[] = [
      {
        metric: 'tool definitions the model reads every turn, default tool set',
        unit: 'bytes',
        cells: { verity: cell.verityDefs, playwright: cell.pwDefs },
        checks: [{ of: 'verity', over: 'playwright', max: 0.5 }],
        note: `name + description + inputSchema of each tool tools/list sends, as JSON. Chrome DevTools MCP: ${dt}.`,
      },
      {
        metric: "tool definitions, complete surface (verity --tools full), the capabilities' tools aside",
        unit: 'bytes',
        cells: { verity: cell.verityFull, playwright: cell.pwDefs },
        checks: [{ of: 'verity', over: 'playwright', max: 1 }],
        note: "Every tool (the deprecated ones too) and every seed argument advertised; against Playwright MCP's default set.",
      },
      {
        metric: `observation bytes the model reads, ${MANY}-element page, default get_window_state`,
        unit: 'bytes',
        cells: { verity: cell.verityObs, playwright: cell.pwObs },
        checks: [{ of: 'verity', over: 'playwright', max: 0.5 }],
        note: 'get_window_state {target} (nothing else: the default outline, every element) vs browser_snapshot; the larger of the text and the structuredContent JSON. The run fails unless all 1,000 names are in both.',
      },
      {
        metric: `observation bytes, ${MANY}-element page, format "compact" (info)`,
        unit: 'bytes',
        cells: { verity: cell.compact, playwright: cell.pwObs },
        checks: [],
        note: 'The opt-in coded form (frames included, a legend to read it by).',
      },
      {
        metric: `default observation time, ${MANY}-element page`,
        unit: 'ms',
        cells: { verity: cell.verityMs, playwright: cell.pwMs },
        checks: [{ of: 'verity', over: 'playwright', max: 1 }],
        note: 'get_window_state (default) vs browser_snapshot, the MCP round trip, median of warm calls.',
      },
    ];
    return rows;
  },
};
