// Action tools. Each resolves its target, hands it to the route's Driver, and returns the Driver's
// verified result unchanged (defineAction); run_actions reuses `actionTools` so a batch step is exactly a
// single call.
import { z } from 'zod';
import { DESTRUCTIVE, defineAction, type ToolDef } from './define.js';
import { deliveryMode, targeting } from './schemas.js';

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

function clickTool(name: string, description: string, fixed: { button?: 'right'; count?: 2 }) {
  return defineAction({
    name,
    description,
    input: z.strictObject({
      ...targeting,
      ...(fixed.button ? {} : { button }),
      modifier: modifiers,
      delivery_mode: deliveryMode,
    }),
    annotations: DESTRUCTIVE,
    act(driver, target, args) {
      const chosen = fixed.button ?? (args as { button?: 'left' | 'right' | 'middle' }).button ?? 'left';
      return driver.click(target, { button: chosen, count: fixed.count ?? 1, modifiers: args.modifier });
    },
  });
}

export const click = clickTool(
  'click',
  "Click element_token's element or a point (x,y). confirmed: the element itself got the trusted click.",
  {},
);
export const doubleClick = clickTool('double_click', 'Double-click an element or a point.', { count: 2 });
export const rightClick = clickTool('right_click', 'Right-click (context menu) an element or a point.', {
  button: 'right',
});

export const setValue = defineAction({
  name: 'set_value',
  description:
    'Set a control: a select option, a checkbox or radio ("true"/"false"), a range, date or color, or a field\'s whole text; a list of options for a multi-select. Read back.',
  input: z.strictObject({
    ...targeting,
    element_token: targeting.element_token.unwrap(),
    value: z.union([z.string().max(100_000), z.array(z.string().max(1000)).max(200)]),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  act: (driver, target, args) => driver.setValue(target, args.value),
});

export const pressKey = defineAction({
  name: 'press_key',
  description:
    "Press one key (Enter, Tab, Escape, arrows, F1-F12, a character) at the focused element or element_token's.",
  input: z.strictObject({ ...targeting, key: z.string().min(1).max(32), modifiers, delivery_mode: deliveryMode }),
  annotations: DESTRUCTIVE,
  act: (driver, target, args) => driver.pressKey(target, args.key, args.modifiers),
});

export const hotkey = defineAction({
  name: 'hotkey',
  description: 'Press a key combination, modifiers first: ["ctrl","a"].',
  input: z.strictObject({
    ...targeting,
    keys: z.array(z.string().min(1).max(32)).min(2).max(5),
    delivery_mode: deliveryMode,
  }),
  annotations: DESTRUCTIVE,
  act: (driver, target, { keys }) => driver.pressKey(target, keys[keys.length - 1], keys.slice(0, -1)),
});

export const scroll = defineAction({
  name: 'scroll',
  description: 'Scroll with wheel events at an element, a point or the page; confirmed when it moved.',
  input: z.strictObject({
    ...targeting,
    direction: z.enum(['up', 'down', 'left', 'right']),
    amount: z.number().int().min(1).max(50).default(3).describe('Lines or pages.'),
    by: z.enum(['line', 'page']).default('line'),
    delivery_mode: deliveryMode,
  }),
  annotations: DESTRUCTIVE,
  act: (driver, target, args) => driver.scroll(target, { direction: args.direction, amount: args.amount, by: args.by }),
});

export const drag = defineAction({
  name: 'drag',
  description: 'Drag from (from_x,from_y) to (to_x,to_y) in screenshot px.',
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
  act: (driver, target, args) =>
    driver.drag(target, {
      from: { x: args.from_x, y: args.from_y },
      to: { x: args.to_x, y: args.to_y },
      durationMs: args.duration_ms,
      steps: args.steps,
      button: args.button,
    }),
});

export const hover = defineAction({
  name: 'hover',
  description:
    'Move the pointer onto an element or a point, to open a hover menu or tooltip; confirmed when something new shows.',
  input: z.strictObject({ ...targeting, delivery_mode: deliveryMode }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  act: (driver, target) => driver.hover(target),
});

export const actionTools: ToolDef[] = [click, doubleClick, rightClick, setValue, pressKey, hotkey, scroll, drag, hover];
