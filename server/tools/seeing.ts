// Seeing (issue 44 item 6): zoom (capability `zoom`) and get_desktop_state (capability `windows`). Both read,
// neither acts, so they are plain tools, not actions of the table: nothing to deliver, verify or queue.
// zoom resolves its target as every call does (the operator's app policy refuses a window agents may not
// see as one that does not exist) and asks the target's route, which captures where its screenshots are
// captured; get_desktop_state asks the native host what its window manager or compositor says.
import { z } from 'zod';
import { Refusal } from '../contract/refusal.js';
import { ZOOM_MAX_PIXELS, ZOOM_MAX_SCALE, ZOOM_MIN_SCALE } from '../contract/zoom.js';
import { READ_ONLY, defineTool } from './define.js';
import { session, target } from './schemas.js';

const rect = z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() });
const coordinate = z.number().int().min(-100_000).max(100_000);
const extent = z.number().int().min(1).max(100_000);

export const zoom = defineTool({
  name: 'zoom',
  description: `A PNG of a region of a window (client-area px, as its screenshot), tab (viewport CSS px) or the desktop, at full resolution times scale (at most ${ZOOM_MAX_PIXELS} px).`,
  input: z.strictObject({
    target: target.optional(),
    region: z
      .strictObject({ x: coordinate, y: coordinate, width: extent, height: extent })
      .describe("In the target's px; a part past its edge is cut off, and said."),
    scale: z
      .number()
      .min(ZOOM_MIN_SCALE)
      .max(ZOOM_MAX_SCALE)
      .optional()
      .describe('Output px per target px (default 1, less if the image would pass the bound).'),
    session,
  }),
  output: z.object({
    target: z.record(z.string(), z.unknown()),
    region: rect,
    scale: z.number(),
    width: z.number().int(),
    height: z.number().int(),
    screen_region: rect.optional(),
    blacked_out: z.number().int().optional(),
    policy: z.string().optional(),
    notes: z.array(z.string()).optional(),
  }),
  annotations: READ_ONLY,
  cap: 'zoom',
  async handler(args, core, ctx) {
    const { target: resolved, driver } = await core.resolve({ target: args.target }, ctx);
    const shot = await driver.zoom(resolved, { region: args.region, scale: args.scale });
    const about =
      resolved.kind === 'tab'
        ? { kind: 'tab', tab_id: resolved.tab.id }
        : resolved.kind === 'window'
          ? { kind: 'window', pid: resolved.pid ?? null, window_id: resolved.windowId }
          : { kind: 'desktop', display_id: 'primary' };
    const r = shot.region;
    const structured = {
      target: about,
      region: r,
      scale: shot.scale,
      width: shot.width,
      height: shot.height,
      ...(shot.screen_region ? { screen_region: shot.screen_region } : {}),
      ...(shot.blacked_out
        ? { blacked_out: shot.blacked_out, policy: "windows of apps the operator's policy keeps agents off are black" }
        : {}),
      ...(shot.notes.length ? { notes: shot.notes } : {}),
    };
    const said = [
      `zoom of ${JSON.stringify(about)} region (${r.x}, ${r.y}) ${r.width}x${r.height} at scale ${shot.scale}: ${shot.width}x${shot.height} PNG`,
      ...(shot.blacked_out ? [`${shot.blacked_out} window(s) agents may not see blacked out`] : []),
      ...shot.notes,
    ];
    return { structured, images: [{ data: shot.data, mimeType: 'image/png' }], text: said.join('\n') };
  },
});

const frame = z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() });

export const getDesktopState = defineTool({
  name: 'get_desktop_state',
  description:
    'The screens, every window (pid, window_id, title, app, frame in screen px, focused, z: 0 bottom) and the pointer, as the window manager says.',
  input: z.strictObject({ session }),
  output: z.object({
    screens: z.array(z.object({ width: z.number(), height: z.number(), x: z.number(), y: z.number() })),
    windows: z.array(
      z.object({
        pid: z.number().int().nullable(),
        window_id: z.number().int(),
        title: z.string(),
        app: z.string(),
        frame,
        focused: z.boolean(),
        z: z.number().int().nullable(),
      }),
    ),
    focused_window_id: z.number().int().nullable(),
    cursor: z.object({ x: z.number(), y: z.number() }).nullable(),
    unknown: z.array(z.string()).optional(),
    policy: z.string().optional(),
  }),
  annotations: READ_ONLY,
  cap: 'windows',
  async handler(_args, core) {
    const host = (await core.nativeRoute()).host;
    const state = await host.desktopState();
    const { unknown, ...known } = state;
    const structured = {
      ...known,
      ...(unknown.length ? { unknown } : {}),
      // Said whether or not a window is left out now, so that it tells nothing of what runs.
      ...(host.filtersApps
        ? {
            policy:
              "windows of apps the operator's policy keeps agents off are not listed (as in list_windows), and a focused one is not named",
          }
        : {}),
    };
    if (!state.screens.length && !state.windows.length)
      throw new Refusal('unavailable', `the desktop's state could not be read: ${unknown.join('; ')}`);
    const lines = [
      `screens: ${state.screens.map((s) => `${s.width}x${s.height} at (${s.x}, ${s.y})`).join(', ') || 'unknown'}`,
      `cursor: ${state.cursor ? `(${state.cursor.x}, ${state.cursor.y})` : 'unknown'}; focused window: ${state.focused_window_id ?? 'none'}`,
      ...state.windows
        .slice()
        .reverse()
        .map(
          (w) =>
            `z=${w.z ?? '?'} window_id=${w.window_id} pid=${w.pid ?? '?'} app=${JSON.stringify(w.app)} ${JSON.stringify(w.title)} at (${w.frame.x}, ${w.frame.y}) ${w.frame.w}x${w.frame.h}${w.focused ? ' focused' : ''}`,
        ),
      ...unknown.map((u) => `unknown: ${u}`),
    ];
    return { structured, text: lines.join('\n') };
  },
});

export const seeingTools = [zoom, getDesktopState];
