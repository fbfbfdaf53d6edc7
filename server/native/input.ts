// XTest keyboard and mouse, and screen capture, through nut-js. nut-js is loaded only after the display
// answered (its native module segfaults the whole process without one), and only on first use.
import { PNG } from 'pngjs';
import { Refusal } from '../routing/refusal.js';
import { requireDisplay } from './env.js';

type Nut = typeof import('@nut-tree-fork/nut-js');
let loading: Promise<Nut> | null = null;

export async function nut(): Promise<Nut> {
  await requireDisplay();
  loading ??= import('@nut-tree-fork/nut-js').then((m) => {
    const n = ((m as unknown as { default?: Nut }).default ?? m) as Nut;
    n.keyboard.config.autoDelayMs = 0;
    n.mouse.config.autoDelayMs = 0;
    n.mouse.config.mouseSpeed = 100_000;
    return n;
  }, (e) => { loading = null; throw new Refusal('unavailable', `nut-js (XTest input) could not be loaded: ${(e as Error).message}`); });
  return loading;
}

/** A PNG of a screen region (absolute pixels), base64. */
export async function capture(region: { x: number; y: number; w: number; h: number }): Promise<{ data: string; width: number; height: number }> {
  const n = await nut();
  const screenSize = { w: await n.screen.width(), h: await n.screen.height() };
  const x = Math.max(0, region.x), y = Math.max(0, region.y);
  const w = Math.max(1, Math.min(region.w - (x - region.x), screenSize.w - x));
  const h = Math.max(1, Math.min(region.h - (y - region.y), screenSize.h - y));
  const image = await n.screen.grabRegion(new n.Region(x, y, w, h));
  const png = new PNG({ width: image.width, height: image.height });
  const src = image.data, dst = png.data;
  const bgr = image.colorMode === n.ColorMode.BGR;
  for (let i = 0; i < dst.length; i += 4) {
    dst[i] = src[i + (bgr ? 2 : 0)];
    dst[i + 1] = src[i + 1];
    dst[i + 2] = src[i + (bgr ? 0 : 2)];
    dst[i + 3] = 255;
  }
  return { data: PNG.sync.write(png, { deflateLevel: 1, filterType: 1 }).toString('base64'), width: image.width, height: image.height };
}

const KEY_NAMES: Record<string, string> = {
  return: 'Enter', enter: 'Enter', esc: 'Escape', escape: 'Escape', del: 'Delete', delete: 'Delete', backspace: 'Backspace',
  tab: 'Tab', space: 'Space', up: 'Up', down: 'Down', left: 'Left', right: 'Right', arrowup: 'Up', arrowdown: 'Down',
  arrowleft: 'Left', arrowright: 'Right', home: 'Home', end: 'End', pageup: 'PageUp', pagedown: 'PageDown', insert: 'Insert',
  ctrl: 'LeftControl', control: 'LeftControl', shift: 'LeftShift', alt: 'LeftAlt', option: 'LeftAlt', meta: 'LeftSuper',
  cmd: 'LeftSuper', command: 'LeftSuper', super: 'LeftSuper', ' ': 'Space',
};

/** nut-js Key for a key name (Enter, Tab, F5, a, 7, ctrl, ...), or invalid_arguments. */
export function keyFor(n: Nut, name: string): number {
  const lower = name.toLowerCase();
  let keyName = KEY_NAMES[lower];
  if (!keyName && /^f([1-9]|1[0-9]|2[0-4])$/.test(lower)) keyName = lower.toUpperCase();
  if (!keyName && /^[a-z]$/.test(lower)) keyName = lower.toUpperCase();
  if (!keyName && /^[0-9]$/.test(lower)) keyName = `Num${lower}`;
  const key = keyName ? (n.Key as unknown as Record<string, number>)[keyName] : undefined;
  if (key === undefined) throw new Refusal('invalid_arguments', `key: "${name}" is not a key this route can press (Enter, Tab, Escape, arrows, Backspace, Delete, Home, End, PageUp, PageDown, F1-F24, a-z, 0-9)`);
  return key;
}

export async function pressKeys(names: string[]): Promise<void> {
  const n = await nut();
  const keys = names.map((k) => keyFor(n, k));
  await n.keyboard.pressKey(...keys);
  await n.keyboard.releaseKey(...keys.slice().reverse());
}

/** Characters XTest can type through nut-js: printable ASCII, newline and tab (it drops the rest). */
export const TYPABLE = /^[\x20-\x7e\n\t]*$/;

export async function typeKeys(text: string, delayMs: number): Promise<void> {
  const n = await nut();
  n.keyboard.config.autoDelayMs = delayMs;
  try {
    for (const line of text.split(/(\n)/)) {
      if (line === '\n') await n.keyboard.type(n.Key.Enter);
      else if (line) await n.keyboard.type(line);
    }
  } finally {
    n.keyboard.config.autoDelayMs = 0;
  }
}

const BUTTON: Record<string, number> = { left: 0, middle: 1, right: 2 };

export async function moveTo(x: number, y: number): Promise<void> {
  const n = await nut();
  await n.mouse.setPosition(new n.Point(Math.round(x), Math.round(y)));
}

export async function clickAt(button: 'left' | 'right' | 'middle', count: number, modifiers: string[]): Promise<void> {
  const n = await nut();
  const mods = modifiers.map((m) => keyFor(n, m));
  if (mods.length) await n.keyboard.pressKey(...mods);
  try {
    for (let i = 0; i < count; i++) await n.mouse.click(BUTTON[button] as never);
  } finally {
    if (mods.length) await n.keyboard.releaseKey(...mods.slice().reverse());
  }
}

export async function wheel(direction: 'up' | 'down' | 'left' | 'right', steps: number): Promise<void> {
  const n = await nut();
  if (direction === 'up') await n.mouse.scrollUp(steps);
  else if (direction === 'down') await n.mouse.scrollDown(steps);
  else if (direction === 'left') await n.mouse.scrollLeft(steps);
  else await n.mouse.scrollRight(steps);
}

export async function dragPath(from: { x: number; y: number }, to: { x: number; y: number }, steps: number, durationMs: number, button: 'left' | 'right' | 'middle'): Promise<void> {
  const n = await nut();
  await moveTo(from.x, from.y);
  await n.mouse.pressButton(BUTTON[button] as never);
  try {
    for (let i = 1; i <= steps; i++) {
      const t = i / steps;
      await moveTo(from.x + (to.x - from.x) * t, from.y + (to.y - from.y) * t);
      if (durationMs > 0) await new Promise((r) => setTimeout(r, durationMs / steps));
    }
  } finally {
    await n.mouse.releaseButton(BUTTON[button] as never);
  }
}
