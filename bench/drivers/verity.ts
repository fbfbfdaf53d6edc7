// Verity's MCP server (node bin/verity.js mcp --browser-url ...) attached to the shared Chromium.
import { readBack } from '../cdp.js';
import { assertOk, type McpSession, type ToolResult } from '../mcp.js';
import { measure, median } from '../stats.js';
import type { BenchContext } from '../types.js';
import { COUNT_VALUE, expectEqual, FIELD_VALUE, type ActionDriver, type DriverFactory } from './driver.js';

export interface VerityElement {
  element_index: number;
  element_token: string;
  role: string;
  label: string;
  value?: unknown;
}

export interface VerityTab {
  session: McpSession;
  tabId: string;
  /** The URL the tab was last sent to (unique per navigation, used for the bench's own read-back). */
  url: string;
  /** What `page new_tab` returned (the reference task counts its bytes). */
  opened?: ToolResult;
}

function structured(result: ToolResult): Record<string, unknown> {
  if (!result.structuredContent) throw new Error('result has no structuredContent');
  return result.structuredContent;
}

/** Opens a tab through Verity's own `page new_tab` and finds its tab_id. */
export async function verityOpenTab(session: McpSession, url: string): Promise<VerityTab> {
  const opened = await session.call('page', { action: 'new_tab', url });
  const r = structured(opened);
  let tabId = typeof r.tab_id === 'string' ? r.tab_id : (r.tab as { tab_id?: string } | undefined)?.tab_id;
  if (!tabId) {
    const tabs = (structured(await session.call('page', { action: 'list_tabs' })).tabs ?? []) as Array<{
      tab_id: string;
      url: string;
    }>;
    tabId = tabs.find((t) => t.url === url)?.tab_id;
  }
  if (!tabId) throw new Error(`could not find the tab_id of the new tab at ${url}`);
  return { session, tabId, url, opened };
}

/** `page navigate` aimed at our tab, whichever way the tool's schema names the tab. */
export async function verityNavigate(tab: VerityTab, url: string): Promise<void> {
  const props = await tab.session.inputProperties('page');
  const aim =
    'tab_id' in props ? { tab_id: tab.tabId } : 'target' in props ? { target: { kind: 'tab', tab_id: tab.tabId } } : {};
  await tab.session.call('page', { action: 'navigate', url, ...aim });
  tab.url = url;
}

export async function verityState(tab: VerityTab, extra: Record<string, unknown> = {}): Promise<ToolResult> {
  return tab.session.call('get_window_state', {
    target: { kind: 'tab', tab_id: tab.tabId },
    include_screenshot: false,
    ...extra,
  });
}

export async function verityToken(tab: VerityTab, role: RegExp, label: string): Promise<string> {
  const elements = (structured(await verityState(tab, { format: 'full' })).elements ?? []) as VerityElement[];
  const hit = elements.find((e) => e.label === label && role.test(e.role)) ?? elements.find((e) => e.label === label);
  if (!hit) {
    const seen = elements
      .slice(0, 10)
      .map((e) => `${e.role}:${JSON.stringify(e.label)}`)
      .join(', ');
    throw new Error(`get_window_state has no element labelled ${JSON.stringify(label)} (saw ${seen})`);
  }
  return hit.element_token;
}

export type Timings = {
  resolve?: number;
  deliver?: number;
  verify?: number;
  queue?: number;
  lock?: number;
  side_effects?: number;
  changes?: number;
};

function confirmed(tool: string, result: ToolResult, timings: Timings[]): void {
  assertOk('verity', tool, result);
  const s = structured(result);
  if (s.effect !== 'confirmed')
    throw new Error(`verity ${tool}: effect ${JSON.stringify(s.effect)}, expected "confirmed"`);
  if (s.timings_ms && typeof s.timings_ms === 'object') timings.push(s.timings_ms as Timings);
}

const AROUND: ReadonlyArray<keyof Timings> = ['queue', 'lock', 'side_effects', 'changes'];

export function timingNote(what: string, timings: Timings[]): string {
  const m = (k: keyof Timings) => {
    // An around-phase under 1 ms is left out of the result: it counts here as 0.
    const xs = timings
      .map((t) => t[k] ?? (AROUND.includes(k) ? 0 : undefined))
      .filter((x): x is number => typeof x === 'number');
    return xs.length ? median(xs).toFixed(1) : 'n/a';
  };
  return `Verity ${what} server-side timings_ms (median): resolve ${m('resolve')} (of it the tab lock ${m('lock')}), deliver ${m('deliver')}, verify ${m('verify')}; around them: queue ${m('queue')}, side-effect watch ${m('side_effects')}, the re-read for changes ${m('changes')}.`;
}

export const verityDriver: DriverFactory = {
  column: 'verity',
  label: 'Verity',
  async open(ctx: BenchContext): Promise<ActionDriver> {
    const session = await ctx.startVerity();
    let tab: VerityTab;
    try {
      tab = await verityOpenTab(session, ctx.fixtures.url('/input', 'verity'));
    } catch (e) {
      await session.close();
      throw new Error(`${(e as Error).message}${session.describeFailure()}`);
    }
    const notes: string[] = [];

    return {
      async typeText(text) {
        const timings: Timings[] = [];
        let token = '';
        const sample = await measure(ctx.config, {
          // Untimed: a fresh page (empty field), then a fresh token.
          prepare: async () => {
            await verityNavigate(tab, ctx.fixtures.url('/input', 'verity'));
            token = await verityToken(tab, /text|edit|input/i, 'Field');
          },
          act: () => session.timed('type_text', { text, element_token: token }),
          check: async ({ result }) => {
            confirmed('type_text', result, timings);
            expectEqual('verity type_text', await readBack<string>(ctx.browserUrl, tab.url, FIELD_VALUE), text);
          },
        });
        notes.push(timingNote(`type_text (${text.length} chars)`, timings));
        return sample;
      },

      async click() {
        const timings: Timings[] = [];
        await verityNavigate(tab, ctx.fixtures.url('/button', 'verity'));
        let token = '';
        let expected = 0;
        const sample = await measure(ctx.config, {
          prepare: async () => {
            token = await verityToken(tab, /button/i, 'Press me');
          },
          act: () => session.timed('click', { element_token: token }),
          check: async ({ result }) => {
            confirmed('click', result, timings);
            expectEqual(
              'verity click counter',
              await readBack<number>(ctx.browserUrl, tab.url, COUNT_VALUE),
              ++expected,
            );
          },
        });
        notes.push(timingNote('click', timings));
        return sample;
      },

      notes: () => notes,

      close: () => session.close(),
    };
  },
};
