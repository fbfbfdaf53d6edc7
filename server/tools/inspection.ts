// Inspection tools: what is there to act on.
import { z } from 'zod';
import { SnapshotRegistry } from '../routing/snapshots.js';
import { Refusal } from '../contract/refusal.js';
import { READ_ONLY, defineTool } from './define.js';
import { encodeOutline, encodeText, legendOf, renderOutline, shownText, tokenHint, webNormOf } from './outline.js';
import { elementSchema, session, target } from './schemas.js';

const MAX_ELEMENTS = 5000;

/** What `incomplete` means, said once for the three formats. */
const INCOMPLETE =
  'Why not every element shown is listed (a read failed, a bound cut the walk, a window could not be placed); then elements_complete is false.';
/** What `text_cut` means, said once for the three formats. */
const TEXT_CUT = "What of the page's text is left out (a cap, or a frame's bound) and how to read it.";
const textBlock = z.object({
  kind: z.enum(['heading', 'text', 'row', 'status', 'alert']),
  text: z.string(),
  before_index: z.number().int(),
  parent_index: z.number().int().nullable(),
});

export const getWindowState = defineTool({
  name: 'get_window_state',
  description:
    'Observe a tab or window: its interactive elements as an outline of role, name, value, states and [t=N] (element_token "<snapshot_id>:N"). A newer observation makes older tokens stale.',
  input: z.strictObject({
    target: target.optional(),
    pid: z
      .number()
      .int()
      .positive()
      .max(2 ** 31)
      .optional(),
    window_id: z
      .number()
      .int()
      .nonnegative()
      .max(2 ** 32)
      .optional(),
    include_screenshot: z
      .boolean()
      .optional()
      .describe("Attach a PNG (default: windows yes, tabs no); actions' x,y are its px."),
    max_elements: z.number().int().min(0).max(MAX_ELEMENTS).default(MAX_ELEMENTS),
    query: z.string().max(200).optional().describe('Keep elements (role, name, value) and text with this.'),
    format: z
      .enum(['outline', 'full', 'compact'])
      .default('outline')
      .describe('"full": element objects with frames, for programs.'),
    session,
  }),
  output: z.union([
    z.object({
      snapshot_id: z.string(),
      target: z.record(z.string(), z.unknown()),
      format: z.literal('outline'),
      element_count: z.number().int(),
      returned_element_count: z.number().int(),
      elements_complete: z.boolean(),
      incomplete: z.string().optional().describe(INCOMPLETE),
      tokens: z.string(),
      outline: z.string(),
      cut: z.string().optional(),
      text_cut: z.string().optional().describe(TEXT_CUT),
      screenshot_width: z.number().int().optional(),
      screenshot_height: z.number().int().optional(),
    }),
    z.object({
      snapshot_id: z.string(),
      target: z.record(z.string(), z.unknown()),
      elements: z.array(elementSchema),
      text: z.array(textBlock).optional(),
      text_cut: z.string().optional().describe(TEXT_CUT),
      element_count: z.number().int(),
      returned_element_count: z.number().int(),
      elements_complete: z.boolean(),
      incomplete: z.string().optional().describe(INCOMPLETE),
      screenshot_width: z.number().int(),
      screenshot_height: z.number().int(),
    }),
    z.object({
      snapshot_id: z.string(),
      target: z.record(z.string(), z.unknown()),
      format: z.literal('compact'),
      element_count: z.number().int(),
      returned_element_count: z.number().int(),
      elements_complete: z.boolean(),
      incomplete: z.string().optional().describe(INCOMPLETE),
      screenshot_width: z.number().int(),
      screenshot_height: z.number().int(),
      token_prefix: z.string(),
      roles: z.record(z.string(), z.string()),
      legend: z.string(),
      outline: z.string(),
      text: z.string().optional(),
      text_cut: z.string().optional().describe(TEXT_CUT),
    }),
  ]),
  annotations: READ_ONLY,
  async handler(args, core, ctx) {
    const { target: resolved, driver } = await core.resolve(
      { target: args.target, pid: args.pid, window_id: args.window_id },
      ctx,
    );
    const snapshotId = core.snapshots.nextId();
    // A tab's outline names what a screenshot would show, at a fraction of its cost (docs/observation.md: What the
    // model reads); a native window may have nothing better than pixels, so it keeps its screenshot.
    const includeScreenshot = args.include_screenshot ?? resolved.kind !== 'tab';
    const snap = await driver.snapshot(resolved, snapshotId, { includeScreenshot });
    core.snapshots.record(snapshotId, resolved.kind, resolved.key, snap);
    const needle = args.query?.toLowerCase();
    const matching = needle
      ? snap.elements.filter((e) => `${e.role} ${e.label} ${e.value ?? ''}`.toLowerCase().includes(needle))
      : snap.elements;
    // The page's text (tabs): the blocks holding the query, capped; the elements' names are not repeated.
    const shown = shownText(snap.text ?? [], needle, snap.text_incomplete);
    const textCut = shown.cut ? { text_cut: shown.cut } : {};
    const images = snap.screenshot ? [{ data: snap.screenshot.data, mimeType: snap.screenshot.mimeType }] : [];
    const header = (returned: number) =>
      `${snapshotId} ${JSON.stringify(snap.target)} elements=${snap.elements.length} returned=${returned}${snap.incomplete ? ` not every element could be read: ${snap.incomplete}` : ''}`;
    if (args.format === 'outline') {
      const returned = matching.slice(0, args.max_elements);
      const webNorm = webNormOf(snap.target.kind);
      const outline = renderOutline(returned, (i) => snap.elements[i]?.parent_index ?? null, webNorm, shown.blocks);
      const complete = returned.length === matching.length && !snap.incomplete;
      // `cut` is about max_elements and query; what the walk could not read is `incomplete`.
      const cut =
        returned.length === matching.length
          ? undefined
          : `listed ${returned.length} of ${matching.length} elements${needle ? ' matching the query' : ''} (max_elements ${args.max_elements}); pass query (a word of the role, name or value) to list the ones you need`;
      const tokens = tokenHint(snapshotId);
      const structured = {
        snapshot_id: snapshotId,
        target: snap.target,
        format: 'outline',
        element_count: snap.elements.length,
        returned_element_count: returned.length,
        elements_complete: complete,
        ...(cut ? { cut } : {}),
        ...(snap.incomplete ? { incomplete: snap.incomplete } : {}),
        ...textCut,
        tokens,
        outline,
        ...(snap.screenshot
          ? { screenshot_width: snap.screenshot_width, screenshot_height: snap.screenshot_height }
          : {}),
      };
      const where = Object.entries(snap.target)
        .filter(([k]) => k !== 'kind')
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
      const counted = needle
        ? `${matching.length} of ${snap.elements.length} elements match ${JSON.stringify(args.query)}`
        : `${snap.elements.length} elements`;
      const head = `Snapshot ${snapshotId} of ${snap.target.kind} ${where}: ${counted}${cut ? `; ${cut}` : ''}${snap.incomplete ? `; not every element could be read: ${snap.incomplete}` : ''}${shown.cut ? `; ${shown.cut}` : ''}. ${tokens}.`;
      return { structured, images, text: `${head}\n${outline}` };
    }
    if (args.format === 'compact') {
      const returned = matching.slice(0, args.max_elements);
      const webNorm = webNormOf(snap.target.kind);
      const { roles, outline } = encodeOutline(returned, webNorm);
      const tokenPrefix = SnapshotRegistry.tokenPrefix(snapshotId);
      const legend = legendOf(webNorm);
      const structured = {
        snapshot_id: snapshotId,
        target: snap.target,
        format: 'compact',
        element_count: snap.elements.length,
        returned_element_count: returned.length,
        elements_complete: returned.length === matching.length && !snap.incomplete,
        ...(snap.incomplete ? { incomplete: snap.incomplete } : {}),
        screenshot_width: snap.screenshot_width,
        screenshot_height: snap.screenshot_height,
        token_prefix: tokenPrefix,
        roles,
        legend: shown.blocks.length
          ? `${legend} | text: a line per block of the page's text, "before_index kind words"`
          : legend,
        outline,
        ...(shown.blocks.length ? { text: encodeText(shown.blocks) } : {}),
        ...textCut,
      };
      const codes = Object.entries(roles)
        .map(([code, role]) => `${code}=${JSON.stringify(role)}`)
        .join(' ');
      return {
        structured,
        images,
        text: `${header(returned.length)} token_prefix=${tokenPrefix} roles: ${codes} | ${structured.legend}${shown.cut ? ` | ${shown.cut}` : ''}\n${outline}${structured.text ? `\ntext:\n${structured.text}` : ''}`,
      };
    }
    const returned = matching
      .slice(0, args.max_elements)
      .map(({ ref: _ref, secret: _secret, selected: _selected, ...e }) => ({
        ...e,
        element_token: SnapshotRegistry.token(snapshotId, e.element_index),
      }));
    const structured = {
      snapshot_id: snapshotId,
      target: snap.target,
      elements: returned,
      ...(shown.blocks.length ? { text: shown.blocks } : {}),
      ...textCut,
      element_count: snap.elements.length,
      returned_element_count: returned.length,
      elements_complete: returned.length === matching.length && !snap.incomplete,
      ...(snap.incomplete ? { incomplete: snap.incomplete } : {}),
      screenshot_width: snap.screenshot_width,
      screenshot_height: snap.screenshot_height,
    };
    const lines = returned.map(
      (e) =>
        `[${e.element_index}] ${e.role} "${e.label}"${e.value !== undefined ? ` = "${e.value}"` : ''}${e.enabled ? '' : ' (disabled)'}${e.focused ? ' (focused)' : ''}`,
    );
    const textLines = shown.blocks.map((t) => `before [${t.before_index}] ${t.kind}: ${t.text}`);
    return {
      structured,
      images,
      text: `${header(returned.length)}${shown.cut ? ` ${shown.cut}` : ''}\n${[...lines, ...textLines].join('\n')}`,
    };
  },
});

export const listApps = defineTool({
  name: 'list_apps',
  description: 'Running apps with pids (the browser driven over CDP, AT-SPI apps).',
  input: z.strictObject({ session }),
  output: z.object({
    apps: z.array(
      z.object({
        name: z.string(),
        pid: z.number().int().nullable(),
        driven_over_cdp: z.boolean(),
        accessibility: z.boolean().optional(),
      }),
    ),
    native: z.string().optional(),
  }),
  annotations: READ_ONLY,
  async handler(_args, core) {
    const apps: Array<{ name: string; pid: number | null; driven_over_cdp: boolean; accessibility?: boolean }> = [];
    let browserPid: number | null = null;
    if (core.browserInUse) {
      const version = await core.browserVersion();
      browserPid = await core.drivenBrowserPid().catch(() => null);
      apps.push({ name: version, pid: core.launchedBrowserPid ?? browserPid, driven_over_cdp: true });
    }
    let native: string | undefined;
    try {
      for (const app of await (await core.nativeRoute()).host.apps()) {
        const driven = core.belongsToDrivenBrowser(app.pid, browserPid);
        if (driven && apps[0]) {
          apps[0].accessibility = true;
          continue;
        }
        // The nutjs backend says its apps have no accessibility here; AT-SPI's always do.
        const accessibility = (app as { accessibility?: boolean }).accessibility ?? true;
        apps.push({ name: app.name, pid: app.pid, driven_over_cdp: false, accessibility });
      }
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      native = `native apps are not listed: ${e.message}`;
    }
    return {
      structured: { apps, ...(native ? { native } : {}) },
      text: [
        ...apps.map((a) => `${a.name} pid=${a.pid ?? 'attached'}${a.driven_over_cdp ? ' (driven over CDP)' : ''}`),
        ...(native ? [native] : []),
      ].join('\n'),
    };
  },
});

const tabSchema = z.object({ tab_id: z.string(), url: z.string(), title: z.string() });

export const listWindows = defineTool({
  name: 'list_windows',
  description: "Top-level windows (window_id, pid, title) and the driven browser's tabs (tab_id).",
  input: z.strictObject({ pid: z.number().int().positive().optional(), session }),
  output: z.object({
    windows: z.array(
      z.looseObject({
        window_id: z.number().int(),
        pid: z.number().int().nullable().optional(),
        title: z.string().optional(),
        tabs: z.array(tabSchema),
      }),
    ),
    native: z.string().optional(),
  }),
  annotations: READ_ONLY,
  async handler(args, core, ctx) {
    type Entry = {
      window_id: number;
      pid: number | null;
      title?: string;
      bounds: unknown;
      driven_over_cdp?: boolean;
      cdp_window_id?: number;
      tabs: Array<z.infer<typeof tabSchema>>;
    };
    const list: Entry[] = [];
    let native: string | undefined;
    let browserPid: number | null = null;
    if (core.browserInUse) browserPid = await core.drivenBrowserPid().catch(() => null);
    try {
      const { windows, x11Missing } = await (await core.nativeRoute()).host.windowsAndGaps();
      if (x11Missing) native = x11Missing; // a Wayland session whose XWayland does not answer
      for (const w of windows) {
        list.push({
          window_id: w.id,
          pid: w.pid,
          title: w.title,
          bounds: w.bounds,
          driven_over_cdp: core.belongsToDrivenBrowser(w.pid, browserPid),
          tabs: [],
        });
      }
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      native = `native windows are not listed: ${e.message}`;
    }
    if (core.browserInUse) {
      const byCdpWindow = new Map<number, { bounds: unknown; tabs: Entry['tabs']; titles: string[] }>();
      for (const tab of await core.pages.list(ctx)) {
        // another connection's tabs are not listed
        const { windowId, bounds } = await core.pages.windowOf(tab);
        const entry = byCdpWindow.get(windowId) ?? { bounds, tabs: [], titles: [] };
        const title = await core.pages.title(tab).catch(() => '');
        entry.tabs.push({ tab_id: tab.id, url: core.pages.url(tab), title });
        entry.titles.push(title);
        byCdpWindow.set(windowId, entry);
      }
      const browserWindows = list.filter((w) => w.driven_over_cdp);
      for (const [cdpId, entry] of byCdpWindow) {
        // The X11 window of a CDP window: its title starts with one of the window's tab titles.
        const x =
          browserWindows.find((w) => !w.tabs.length && entry.titles.some((t) => t && w.title?.startsWith(t))) ??
          (browserWindows.length === 1 && byCdpWindow.size === 1 ? browserWindows[0] : undefined);
        if (x) {
          x.tabs = entry.tabs;
          x.cdp_window_id = cdpId;
        } else
          list.push({
            window_id: cdpId,
            pid: core.launchedBrowserPid ?? browserPid,
            bounds: entry.bounds,
            driven_over_cdp: true,
            cdp_window_id: cdpId,
            tabs: entry.tabs,
          });
      }
    }
    const windows = args.pid === undefined ? list : list.filter((w) => w.pid === args.pid);
    return {
      structured: { windows, ...(native ? { native } : {}) },
      text: [
        ...windows.map(
          (w) =>
            `window ${w.window_id} pid=${w.pid ?? '?'} ${JSON.stringify(w.title ?? '')}${w.tabs.length ? `: ${w.tabs.map((t) => t.title || t.url).join(' | ')}` : ''}`,
        ),
        ...(native ? [native] : []),
      ].join('\n'),
    };
  },
});
