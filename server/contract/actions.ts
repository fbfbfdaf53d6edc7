// The actions, in one table: each action a Driver performs, and the tools that ask for it (their public
// names, descriptions and arguments, as docs/contract.md states them) with how a tool's arguments become the
// action's. Everything else is derived from it, so that a missing piece is an error, not a silent gap:
// - the Driver's action methods (ActionMethods, in driver.ts): a backend without one does not compile;
// - the queue's membership (routing/queue.ts `isAction`): every action waits its turn on its target;
// - the action tools and run_actions' step kinds (tools/actions.ts, tools/batch.ts), in this order.
// A new action: an entry here, then its halves (docs/architecture.md, "Where a new piece goes").
import { z } from 'zod';
import type { Capability } from './capabilities.js';
import { deliveryMode, elementToken, plainName, session, target, targeting } from './tool-args.js';

export interface ClickOptions {
  button: 'left' | 'right' | 'middle';
  count: 1 | 2 | 3;
  modifiers: string[];
}
export interface TypeOptions {
  delayMs: number;
}
export interface ScrollOptions {
  direction: 'up' | 'down' | 'left' | 'right';
  amount: number;
  by: 'line' | 'page';
}
export interface DragOptions {
  from: { x: number; y: number };
  to: { x: number; y: number };
  durationMs: number;
  steps: number;
  button: 'left' | 'right' | 'middle';
}

/** What each action takes besides its target: the one argument its driver method receives. */
export interface ActionArgs {
  click: ClickOptions;
  typeText: TypeOptions & { text: string };
  /** A list chooses several options of a multi-select list (the whole selection becomes the list). */
  setValue: { value: string | string[] };
  pressKey: { key: string; modifiers: string[] };
  scroll: ScrollOptions;
  drag: DragOptions;
  /**
   * Moves the pointer onto the target (a hover menu, a tooltip); nothing is pressed. `pointer`: the move is
   * the goal (move_cursor), so the verdict is the pointer's position read back where the platform tells it,
   * not what the move opened.
   */
  hover: { pointer: boolean };
  /** Windows (--caps windows): the target's window raised and given focus. */
  bringToFront: Record<string, never>;
  /** The window's area as list_windows reports it (its client area), in screen pixels. */
  setWindowFrame: WindowFrame;
  setWindowState: { state: WindowState };
  /**
   * Menus (--caps menus): the item at `path` (names, one per level) chosen from the window's menu bar, or,
   * when the target is an element, from that element's context menu; each level opened, the last activated.
   */
  invokeMenu: { path: string[] };
}
export interface WindowFrame {
  x: number;
  y: number;
  width: number;
  height: number;
}
export type WindowState = 'minimized' | 'maximized' | 'normal' | 'closed';
export type ActionName = keyof ActionArgs;

/** A tool's effect hints (MCP annotations). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint?: boolean;
}
export const DESTRUCTIVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false };

/** One tool that asks for an action: its public face, and its parsed arguments as the action's. */
export interface ActionTool<A> {
  name: string;
  description: string;
  input: z.ZodObject;
  annotations: ToolAnnotations;
  /** Arguments accepted but advertised only on the complete surface (`--tools full`). */
  advanced?: readonly string[];
  /** The capability that lists and admits it (`--caps`); none: always on. */
  cap?: Capability;
  args(parsed: Record<string, unknown>): A;
}

/** Declares a tool of the table: `args` is typed by the tool's own input. */
function tool<S extends z.ZodObject, A>(
  def: Omit<ActionTool<A>, 'input' | 'args'> & { input: S; args(parsed: z.infer<S>): A },
): ActionTool<A> {
  return def as unknown as ActionTool<A>;
}

const button = z.enum(['left', 'right', 'middle']).default('left');
// The aliases (control, option, cmd, command) are accepted; the four names are what tools/list shows.
const modifiers = z
  .array(
    z
      .enum(['ctrl', 'control', 'shift', 'alt', 'option', 'meta', 'cmd', 'command'])
      .meta({ advertise: ['ctrl', 'shift', 'alt', 'meta'] }),
  )
  .max(4)
  .default([]);

function clickTool(
  name: string,
  description: string,
  fixed: { button?: 'right'; count?: 2 },
  advanced?: readonly string[],
) {
  return tool({
    name,
    description,
    ...(advanced ? { advanced } : {}),
    input: z.strictObject({
      ...targeting,
      ...(fixed.button ? {} : { button }),
      modifier: modifiers,
      delivery_mode: deliveryMode,
    }),
    annotations: DESTRUCTIVE,
    args: (args): ClickOptions => ({
      button: fixed.button ?? (args as { button?: 'left' | 'right' | 'middle' }).button ?? 'left',
      count: fixed.count ?? 1,
      modifiers: args.modifier,
    }),
  });
}

/** The table. Its order is the order tools/list shows the action tools in. */
export const ACTIONS: { readonly [K in ActionName]: { readonly tools: readonly ActionTool<ActionArgs[K]>[] } } = {
  click: {
    tools: [
      clickTool(
        'click',
        "Click element_token's element or a point (x,y). confirmed: the element itself got the trusted click.",
        {},
      ),
      // A double click with another button is rare: accepted, not advertised by default.
      clickTool('double_click', 'Double-click an element or a point.', { count: 2 }, ['button']),
      clickTool('right_click', 'Right-click (context menu) an element or a point.', { button: 'right' }),
    ],
  },
  typeText: {
    tools: [
      tool({
        // Seed 003: insert at the caret, exactly once, and say what landed.
        name: 'type_text',
        description:
          "Insert text at the focused element's caret or at the end of element_token's; never clears. Read back.",
        input: z.strictObject({
          ...targeting,
          text: z.string().min(1).max(200_000),
          delivery_mode: deliveryMode,
          delay_ms: z
            .number()
            .int()
            .min(0)
            .max(200)
            .default(30)
            .describe('ms between synthesized keystrokes (native fallback).'),
        }),
        annotations: DESTRUCTIVE,
        advanced: ['delay_ms'],
        args: (args) => ({ text: args.text, delayMs: args.delay_ms }),
      }),
    ],
  },
  setValue: {
    tools: [
      tool({
        name: 'set_value',
        description:
          'Set a control: a select option (a list for a multi-select), a checkbox or radio ("true"/"false"), a range, date or color, or a field\'s whole text. Read back.',
        input: z.strictObject({
          ...targeting,
          element_token: targeting.element_token.unwrap(),
          value: z.union([z.string().max(100_000), z.array(z.string().max(1000)).max(200)]),
        }),
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
        args: (args) => ({ value: args.value }),
      }),
    ],
  },
  pressKey: {
    tools: [
      tool({
        name: 'press_key',
        description:
          "Press one key (Enter, Tab, Escape, arrows, F1-F12, a character) at the focused element or element_token's.",
        input: z.strictObject({ ...targeting, key: z.string().min(1).max(32), modifiers, delivery_mode: deliveryMode }),
        annotations: DESTRUCTIVE,
        args: (args) => ({ key: args.key, modifiers: args.modifiers }),
      }),
      tool({
        name: 'hotkey',
        description: 'Press a key combination, modifiers first: ["ctrl","a"].',
        input: z.strictObject({
          ...targeting,
          keys: z.array(z.string().min(1).max(32)).min(2).max(5),
          delivery_mode: deliveryMode,
        }),
        annotations: DESTRUCTIVE,
        args: ({ keys }) => ({ key: keys[keys.length - 1], modifiers: keys.slice(0, -1) }),
      }),
    ],
  },
  scroll: {
    tools: [
      tool({
        name: 'scroll',
        description: 'Wheel-scroll at an element, a point or the page; confirmed when it moved.',
        input: z.strictObject({
          ...targeting,
          direction: z.enum(['up', 'down', 'left', 'right']),
          amount: z.number().int().min(1).max(50).default(3),
          by: z.enum(['line', 'page']).default('line'),
          delivery_mode: deliveryMode,
        }),
        annotations: DESTRUCTIVE,
        args: (args) => ({ direction: args.direction, amount: args.amount, by: args.by }),
      }),
    ],
  },
  drag: {
    tools: [
      tool({
        name: 'drag',
        description: 'Drag from a point to a point, in screenshot px.',
        input: z.strictObject({
          ...targeting,
          from_x: z.number().finite(),
          from_y: z.number().finite(),
          to_x: z.number().finite(),
          to_y: z.number().finite(),
          duration_ms: z.number().int().min(0).max(10_000).default(300),
          steps: z.number().int().min(1).max(200).default(12),
          button,
          delivery_mode: deliveryMode,
        }),
        annotations: DESTRUCTIVE,
        advanced: ['duration_ms', 'steps', 'button'],
        args: (args) => ({
          from: { x: args.from_x, y: args.from_y },
          to: { x: args.to_x, y: args.to_y },
          durationMs: args.duration_ms,
          steps: args.steps,
          button: args.button,
        }),
      }),
    ],
  },
  hover: {
    tools: [
      tool({
        name: 'hover',
        description:
          'Move the pointer onto an element or a point (a hover menu, a tooltip); confirmed when something new shows.',
        input: z.strictObject({ ...targeting, delivery_mode: deliveryMode }),
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
        args: () => ({ pointer: false }),
      }),
      // The same motion as hover (its halves, its aim and policy checks): only the verdict differs, the
      // pointer's position read back (a tab has none to read: there it is hover at the point).
      tool({
        name: 'move_cursor',
        description:
          'Move the pointer to an element or a point (x,y). confirmed: the pointer read back there (native); on a tab, a hover.',
        input: z.strictObject({ ...targeting, delivery_mode: deliveryMode }),
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
        cap: 'cursor',
        args: () => ({ pointer: true }),
      }),
    ],
  },
  ...windowActions(),
  ...menuActions(),
};

/** The window tools (--caps windows): a window or a tab's browser window, never a point or an element. */
function windowActions() {
  const onWindow = { target: target.describe('The window, or a tab (its browser window).'), session };
  const pixels = z.number().int().min(-100_000).max(100_000);
  const size = z.number().int().min(1).max(100_000);
  const changes = { readOnlyHint: false, destructiveHint: false, idempotentHint: true } as const;
  return {
    bringToFront: {
      tools: [
        tool({
          name: 'bring_to_front',
          description: "Raise a window (or a tab's browser window) and give it focus; confirmed by the window manager.",
          input: z.strictObject(onWindow),
          annotations: changes,
          cap: 'windows',
          args: () => ({}),
        }),
      ],
    },
    setWindowFrame: {
      tools: [
        tool({
          name: 'set_window_frame',
          description:
            "Move and resize a window (or a tab's browser window): its area as list_windows gives it, screen px. partial: the window manager clamped it.",
          input: z.strictObject({ ...onWindow, x: pixels, y: pixels, width: size, height: size }),
          annotations: changes,
          cap: 'windows',
          args: (args): WindowFrame => ({ x: args.x, y: args.y, width: args.width, height: args.height }),
        }),
      ],
    },
    setWindowState: {
      tools: [
        tool({
          name: 'set_window_state',
          description: 'Minimize, maximize, restore ("normal") or close a window; read back from the window manager.',
          input: z.strictObject({ ...onWindow, state: z.enum(['minimized', 'maximized', 'normal', 'closed']) }),
          annotations: DESTRUCTIVE,
          cap: 'windows',
          args: (args) => ({ state: args.state }),
        }),
      ],
    },
  } as const;
}

/** invoke_menu (--caps menus): a window's menu bar, or an element's context menu (element_token). */
function menuActions() {
  return {
    invokeMenu: {
      tools: [
        tool({
          name: 'invoke_menu',
          description:
            'Choose a menu item by its path of names, e.g. ["Format", "Bold"]: from the window\'s menu bar, or from element_token\'s context menu. confirmed: its effect read back.',
          input: z.strictObject({
            element_token: elementToken.optional().describe("Its context menu, instead of the window's menu bar."),
            target: target.optional().describe('The window (its menu bar).'),
            path: z.array(plainName(200, 1)).min(1).max(8).describe('Item names, one per level.'),
            delivery_mode: deliveryMode,
            session,
          }),
          annotations: DESTRUCTIVE,
          cap: 'menus',
          args: (args) => ({ path: args.path }),
        }),
      ],
    },
  } as const;
}

export const ACTION_NAMES = Object.keys(ACTIONS) as ActionName[];

/** Whether `name` is an action (a Driver method that runs in its target's queue). */
export function isAction(name: PropertyKey): name is ActionName {
  return typeof name === 'string' && Object.hasOwn(ACTIONS, name);
}
