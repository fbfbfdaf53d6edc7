// Inspection tools: what is there to act on.
import { z } from 'zod';
import { SnapshotRegistry } from '../routing/snapshots.js';
import { READ_ONLY, defineTool } from './define.js';
import { elementSchema, session, target } from './schemas.js';

export const getWindowState = defineTool({
  name: 'get_window_state',
  description: 'Snapshot a target: its interactive elements (with element_token handles for actions, frames in screenshot pixels; iframes, cross-origin ones included, and open and closed shadow roots are listed) and a screenshot. For a browser tab the elements come from the DOM. A newer snapshot of the same target makes older tokens stale. Use query to filter the returned elements (indices stay stable) and max_elements to bound the answer.',
  input: z.strictObject({
    target: target.optional(),
    pid: z.number().int().positive().optional(),
    window_id: z.number().int().nonnegative().optional(),
    include_screenshot: z.boolean().default(true).describe('Attach a PNG screenshot (default true).'),
    max_elements: z.number().int().min(0).max(5000).default(400).describe('Most elements to return (default 400).'),
    query: z.string().max(200).optional().describe('Case-insensitive filter over role, label and value; indices stay those of the full list.'),
    session,
  }),
  output: z.object({
    snapshot_id: z.string(), target: z.record(z.string(), z.unknown()), elements: z.array(elementSchema),
    element_count: z.number().int(), returned_element_count: z.number().int(), elements_complete: z.boolean(),
    screenshot_width: z.number().int(), screenshot_height: z.number().int(),
  }),
  annotations: READ_ONLY,
  async handler(args, core, ctx) {
    const { target: resolved, driver } = await core.resolve({ target: args.target, pid: args.pid, window_id: args.window_id }, ctx);
    const snapshotId = core.snapshots.nextId();
    const snap = await driver.snapshot(resolved, snapshotId, { includeScreenshot: args.include_screenshot });
    core.snapshots.record(snapshotId, resolved.kind, resolved.key, snap);
    const needle = args.query?.toLowerCase();
    const matching = needle
      ? snap.elements.filter((e) => `${e.role} ${e.label} ${e.value ?? ''}`.toLowerCase().includes(needle))
      : snap.elements;
    const returned = matching.slice(0, args.max_elements).map(({ ref: _ref, ...e }) => ({ ...e, element_token: SnapshotRegistry.token(snapshotId, e.element_index) }));
    const structured = {
      snapshot_id: snapshotId, target: snap.target, elements: returned,
      element_count: snap.elements.length, returned_element_count: returned.length,
      elements_complete: returned.length === matching.length,
      screenshot_width: snap.screenshot_width, screenshot_height: snap.screenshot_height,
    };
    const lines = returned.map((e) => `[${e.element_index}] ${e.role} "${e.label}"${e.value !== undefined ? ` = "${e.value}"` : ''}${e.enabled ? '' : ' (disabled)'}${e.focused ? ' (focused)' : ''}`);
    return {
      structured,
      images: snap.screenshot ? [{ data: snap.screenshot.data, mimeType: snap.screenshot.mimeType }] : [],
      text: `${snapshotId} ${JSON.stringify(snap.target)} elements=${snap.elements.length} returned=${returned.length}\n${lines.join('\n')}`,
    };
  },
});

export const listApps = defineTool({
  name: 'list_apps',
  description: 'List the running apps Verity can act on, with their pids. The browser Verity drives over CDP is marked driven.',
  input: z.strictObject({ session }),
  output: z.object({ apps: z.array(z.object({ name: z.string(), pid: z.number().int().nullable(), driven_over_cdp: z.boolean() })) }),
  annotations: READ_ONLY,
  async handler(_args, core) {
    const browser = await core.browser.get();
    const version = await browser.version();
    const apps = [{ name: version, pid: core.browser.launchedPid, driven_over_cdp: true }];
    return { structured: { apps }, text: apps.map((a) => `${a.name} pid=${a.pid ?? 'attached'}`).join('\n') };
  },
});

export const listWindows = defineTool({
  name: 'list_windows',
  description: 'List windows with their ids, bounds and, for a browser Verity drives, its tabs (tab_id for tab targets).',
  input: z.strictObject({ pid: z.number().int().positive().optional(), session }),
  output: z.object({ windows: z.array(z.looseObject({ window_id: z.number().int(), tabs: z.array(z.object({ tab_id: z.string(), url: z.string(), title: z.string() })) })) }),
  annotations: READ_ONLY,
  async handler(_args, core) {
    const tabs = await core.browser.tabs_();
    const windows = new Map<number, { window_id: number; pid: number | null; bounds: unknown; tabs: Array<{ tab_id: string; url: string; title: string }> }>();
    for (const tab of tabs) {
      const { windowId, bounds } = await tab.session.send('Browser.getWindowForTarget', {}).catch(() => ({ windowId: 0, bounds: {} }));
      const entry = windows.get(windowId) ?? { window_id: windowId, pid: core.browser.launchedPid, bounds, tabs: [] };
      entry.tabs.push({ tab_id: tab.id, url: tab.page.url(), title: await tab.title().catch(() => '') });
      windows.set(windowId, entry);
    }
    const list = [...windows.values()];
    return { structured: { windows: list }, text: list.map((w) => `window ${w.window_id}: ${w.tabs.map((t) => t.title || t.url).join(' | ')}`).join('\n') };
  },
});
