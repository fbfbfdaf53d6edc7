// Verified type_text (20 and 2000 chars) and click: Verity vs the raw CDP floor vs Playwright MCP.
// Each tool runs in its own phase (started, measured, stopped) so no tool's attachment slows another.
import { closeNewPages, pageIds, type ActionDriver, type DriverFactory } from '../drivers/driver.js';
import { floorDriver } from '../drivers/floor.js';
import { playwrightDriver } from '../drivers/playwright.js';
import { verityDriver } from '../drivers/verity.js';
import { describe, type Sample } from '../stats.js';
import { failed, ok, type BenchContext, type Cell, type Column, type Row, type Section } from '../types.js';

const SHORT = 'The quick brown fox.'; // 20 chars
const LONG = Array.from({ length: 2000 }, (_, i) => 'abcdefghij klmnopqrstuvwxyz0123456789'[i % 37]).join('');

type Metric = 'type20' | 'type2000' | 'click';

async function runPhase(ctx: BenchContext, factory: DriverFactory, metrics: Metric[]): Promise<Record<Metric, Cell>> {
  const out = {} as Record<Metric, Cell>;
  const before = await pageIds(ctx.browserUrl);
  let driver: ActionDriver | null = null;
  try {
    ctx.log(`latency: ${factory.label}: starting`);
    driver = await factory.open(ctx);
  } catch (e) {
    ctx.log(`latency: ${factory.label}: could not start: ${(e as Error).message}`);
    for (const m of metrics) out[m] = failed(e);
    await closeNewPages(ctx.browserUrl, before);
    return out;
  }
  try {
    for (const m of metrics) {
      try {
        const s: Sample = m === 'click' ? await driver.click() : await driver.typeText(m === 'type20' ? SHORT : LONG);
        out[m] = ok(s.median, describe(s));
        ctx.log(`latency: ${factory.label}: ${m}: ${s.median.toFixed(1)} ms (${describe(s)})`);
      } catch (e) {
        out[m] = failed(e);
        ctx.log(`latency: ${factory.label}: ${m}: FAILED: ${(e as Error).message}`);
      }
    }
    ctx.notes.push(...driver.notes());
  } finally {
    await driver.close().catch(() => undefined);
    await closeNewPages(ctx.browserUrl, before);
  }
  return out;
}

export const latencySection: Section = {
  name: 'latency',
  async run(ctx) {
    const all: Metric[] = ['type20', 'type2000', 'click'];
    const cells: Partial<Record<Column, Record<Metric, Cell>>> = {};
    cells.floor = await runPhase(ctx, floorDriver, all);
    cells.verity = await runPhase(ctx, verityDriver, all);
    cells.playwright = await runPhase(ctx, playwrightDriver(), all);
    // Playwright MCP sleeps --timeout-settle (default 500 ms) after every click; show it without, for context.
    const noSettle = await runPhase(
      ctx,
      playwrightDriver(['--timeout-settle', '0'], 'Playwright MCP (--timeout-settle 0)'),
      ['click'],
    );

    const pick = (m: Metric): Row['cells'] => ({
      verity: cells.verity?.[m],
      floor: cells.floor?.[m],
      playwright: cells.playwright?.[m],
    });
    const typeChecks = (floor: number) =>
      [
        { of: 'verity', over: 'floor', max: floor },
        { of: 'verity', over: 'playwright', max: 0.5 },
      ] as const;
    return [
      // #25: a verified type_text of 20 characters within 1.3x the raw floor, a verified click within 2x.
      { metric: 'verified type_text, 20 chars', unit: 'ms', cells: pick('type20'), checks: [...typeChecks(1.3)] },
      { metric: 'verified type_text, 2000 chars', unit: 'ms', cells: pick('type2000'), checks: [...typeChecks(1.5)] },
      {
        metric: 'verified click',
        unit: 'ms',
        cells: pick('click'),
        checks: [
          { of: 'verity', over: 'floor', max: 2 },
          { of: 'verity', over: 'playwright', max: 0.25 },
        ],
      },
      {
        metric: 'click, Playwright MCP --timeout-settle 0 (info)',
        unit: 'ms',
        cells: { verity: cells.verity?.click, playwright: noSettle.click },
        checks: [],
        note: 'Playwright MCP waits a fixed --timeout-settle (default 500 ms) after each click; this row shows it with 0, no target.',
      },
    ];
  },
};
