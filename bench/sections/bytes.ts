// Observation size on a 1000-element page: Verity get_window_state, in its default (contract) form and in
// its opt-in compact form, vs Playwright MCP browser_snapshot.
//
// The measure is what reaches the model: MCP clients hand it either the content text or, when a tool
// returns structuredContent, that JSON (Claude Code does), never both, so a result costs the larger of the
// two. The whole CallToolResult on the wire (both, as the MCP spec's backward-compatibility advice has it)
// is reported beside it.
import { closeNewPages, pageIds } from '../drivers/driver.js';
import { pwOpenTab } from '../drivers/playwright.js';
import { verityOpenTab, verityState } from '../drivers/verity.js';
import { textOf, type McpSession, type ToolResult } from '../mcp.js';
import { failed, ok, type BenchContext, type Cell, type Section } from '../types.js';

export const MANY = 1000;

const bytesOf = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

const B = (n: number) => `${n.toLocaleString('en-US')} B`;

/** What a model reads of a result: its text, or its structuredContent as JSON, whichever a client picks (the larger). */
function modelBytes(result: ToolResult): number {
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

export const bytesSection: Section = {
  name: 'snapshot bytes',
  async run(ctx) {
    const wire: Record<'verity' | 'compact' | 'playwright', Cell> = { verity: failed(new Error('not measured')), compact: failed(new Error('not measured')), playwright: failed(new Error('not measured')) };
    const verity = await phase(ctx, 'Verity get_window_state', () => withSession(() => ctx.startVerity(), async (s) => {
      const tab = await verityOpenTab(s, ctx.fixtures.url('/many', 'verity-bytes'));
      const result = await verityState(tab, { max_elements: 2 * MANY });
      const sc = (result.structuredContent ?? {}) as { element_count?: number; elements?: unknown[] };
      const listed = sc.elements?.length ?? 0;
      ctx.notes.push(`Verity get_window_state (default form) on the ${MANY}-element page: element_count ${sc.element_count ?? 'n/a'}, ` +
        `${listed} elements listed; ${breakdown(result)}.`);
      wire.verity = ok(bytesOf(result), 'whole CallToolResult');
      return ok(modelBytes(result), `${listed} elements listed`);
    }));

    const compact = await phase(ctx, 'Verity get_window_state format compact', () => withSession(() => ctx.startVerity(), async (s) => {
      const tab = await verityOpenTab(s, ctx.fixtures.url('/many', 'verity-bytes-compact'));
      const result = await verityState(tab, { max_elements: 2 * MANY, format: 'compact' });
      const sc = (result.structuredContent ?? {}) as { element_count?: number; format?: string; outline?: string };
      if (sc.format !== 'compact' || typeof sc.outline !== 'string') throw new Error('get_window_state returned no compact outline');
      const listed = sc.outline === '' ? 0 : sc.outline.split('\n').length;
      // The outline is in the text item and in structuredContent alike; a client shows the model one of them.
      ctx.notes.push(`Verity get_window_state format "compact" on the ${MANY}-element page: element_count ${sc.element_count ?? 'n/a'}, ` +
        `${listed} outline lines; ${breakdown(result)}.`);
      wire.compact = ok(bytesOf(result), 'whole CallToolResult');
      return ok(modelBytes(result), `${listed} outline lines`);
    }));

    const playwright = await phase(ctx, 'Playwright MCP browser_snapshot', () => withSession(() => ctx.startPlaywright(), async (s) => {
      await pwOpenTab(s, ctx.fixtures.url('/many', 'pw-bytes'));
      const result = await s.call('browser_snapshot', {});
      const refs = (textOf(result).match(/\[ref=/g) ?? []).length;
      ctx.notes.push(`Playwright MCP browser_snapshot on the ${MANY}-element page: ${refs} refs in the YAML; ${breakdown(result)}.`);
      wire.playwright = ok(bytesOf(result), 'whole CallToolResult');
      return ok(modelBytes(result), `${refs} refs`);
    }));

    const shape = 'Verity get_window_state (include_screenshot:false, max_elements:2000) vs Playwright MCP browser_snapshot';
    return [{
      metric: `observation bytes the model reads, ${MANY}-element page, default (contract) form`, unit: 'bytes',
      cells: { verity, playwright },
      checks: [{ of: 'verity', over: 'playwright', max: 0.5 }],
      note: `${shape}; the larger of the text and the structuredContent JSON (a client gives the model one of them). The contract's per-element objects (~210 B each) keep this form above the target.`,
    }, {
      metric: `observation bytes the model reads, ${MANY}-element page, compact form`, unit: 'bytes',
      cells: { verity: compact, playwright },
      checks: [{ of: 'verity', over: 'playwright', max: 0.5 }],
      note: `${shape}, with format:"compact" (opt-in; one outline line per element, every field kept); measured as the row above.`,
    }, {
      metric: `observation bytes on the wire, ${MANY}-element page, compact form (info)`, unit: 'bytes',
      cells: { verity: wire.compact, playwright: wire.playwright },
      checks: [],
      note: 'The whole CallToolResult as JSON: the compact outline travels twice (text item and structuredContent), as MCP advises for clients that read only one. The default form is ' +
        `${wire.verity && 'value' in wire.verity ? B(wire.verity.value) : 'n/a'} on the wire.`,
    }];
  },
};
