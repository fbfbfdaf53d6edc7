// Playwright MCP (@playwright/mcp) attached over CDP to the same Chromium.
import { readBack } from '../cdp.js';
import type { McpSession, ToolResult } from '../mcp.js';
import { assertOk, textOf } from '../mcp.js';
import { measure } from '../stats.js';
import type { BenchContext } from '../types.js';
import { COUNT_VALUE, expectEqual, FIELD_VALUE, type ActionDriver, type DriverFactory } from './driver.js';

/** The ref of the first snapshot line matching `role "name"`, e.g. `- textbox "Field" [ref=f1e3]`. */
export function findRef(snapshot: string, role: string, name: string): string {
  for (const line of snapshot.split('\n')) {
    const m = /^\s*- (\w+)(?: "([^"]*)")?.*\[ref=([^\]]+)\]/.exec(line);
    if (m && m[1] === role && m[2] === name) return m[3]!;
  }
  throw new Error(`no ${role} "${name}" in the Playwright MCP snapshot:\n${snapshot.slice(0, 600)}`);
}

/**
 * The name of the argument that carries the element reference: `ref` in older releases,
 * `target` in 0.0.83 (read from the tool's input schema, never assumed).
 */
export async function refArgName(pw: McpSession, tool: string): Promise<string> {
  const props = await pw.inputProperties(tool);
  if ('ref' in props) return 'ref';
  if ('target' in props) return 'target';
  throw new Error(`${tool} takes neither ref nor target: ${Object.keys(props).join(', ')}`);
}

/** Opens a fresh tab of its own (it would otherwise take over the first existing tab). */
export async function pwOpenTab(pw: McpSession, url: string): Promise<ToolResult> {
  const props = await pw.inputProperties('browser_tabs');
  if ('action' in props) return pw.call('browser_tabs', { action: 'new', url });
  return pw.call('browser_navigate', { url });
}

export async function pwSnapshot(pw: McpSession): Promise<string> {
  return textOf(await pw.call('browser_snapshot', {}));
}

export function playwrightDriver(extraArgs: string[] = [], label = 'Playwright MCP'): DriverFactory {
  return {
    column: 'playwright',
    label,
    async open(ctx: BenchContext): Promise<ActionDriver> {
      const pw = await ctx.startPlaywright(extraArgs);
      try {
        await pwOpenTab(pw, ctx.fixtures.url('/input', 'pw'));
      } catch (e) {
        await pw.close();
        throw e;
      }
      const typeRef = await refArgName(pw, 'browser_type');
      const clickRef = await refArgName(pw, 'browser_click');

      return {
        async typeText(text) {
          let url = '';
          let ref = '';
          return measure(ctx.config, {
            prepare: async () => {
              url = ctx.fixtures.url('/input', 'pw');
              await pw.call('browser_navigate', { url });
              ref = findRef(await pwSnapshot(pw), 'textbox', 'Field');
            },
            act: () => pw.timed('browser_type', { element: 'Field text box', [typeRef]: ref, text }),
            check: async ({ result }) => {
              assertOk('playwright-mcp', 'browser_type', result);
              expectEqual('playwright-mcp type', await readBack<string>(ctx.browserUrl, url, FIELD_VALUE), text);
            },
          });
        },

        async click() {
          const url = ctx.fixtures.url('/button', 'pw');
          await pw.call('browser_navigate', { url });
          let ref = '';
          let expected = 0;
          return measure(ctx.config, {
            // Refs die with every new snapshot (a click takes one), so re-snapshot before each click.
            prepare: async () => {
              ref = findRef(await pwSnapshot(pw), 'button', 'Press me');
            },
            act: () => pw.timed('browser_click', { element: 'Press me button', [clickRef]: ref }),
            check: async ({ result }) => {
              assertOk('playwright-mcp', 'browser_click', result);
              expectEqual(
                'playwright-mcp click counter',
                await readBack<number>(ctx.browserUrl, url, COUNT_VALUE),
                ++expected,
              );
            },
          });
        },

        notes: () => [
          `Playwright MCP: element reference argument is \`${typeRef}\` (browser_type) / \`${clickRef}\` (browser_click); browser_type (no slowly/submit) is a bare locator.fill() with no settle sleep, no snapshot and no read-back of its own; browser_click sleeps --timeout-settle (500 ms) and saves a snapshot file.`,
        ],

        close: () => pw.close(),
      };
    },
  };
}
