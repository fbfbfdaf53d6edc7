// The nut-js child process (forked by nutjs.ts): the only place nut-js and its native binary run. Under X11
// nut-js goes through Xlib, which kills its process when the X server goes away; here that ends this child,
// and the server that forked it answers with a refusal instead of dying. One request at a time, over IPC.
import { PNG } from 'pngjs';
import { resampleRgba, scaledSize } from '../../contract/zoom.js';

type Nut = typeof import('@nut-tree-fork/nut-js');
type Rect = { x: number; y: number; w: number; h: number };
export type NutRequest = { id: number; op: string; args: Record<string, any> };
export type NutReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

let nut: Nut | null = null;

async function load(): Promise<Nut> {
  if (nut) return nut;
  const n = await import('@nut-tree-fork/nut-js');
  // Verity paces its own input (delay_ms, drag steps): nut-js adds none of its own.
  n.keyboard.config.autoDelayMs = 0;
  n.mouse.config.autoDelayMs = 0;
  n.mouse.config.mouseSpeed = 100_000;
  nut = n;
  return n;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function regionOf(w: { region: Promise<import('@nut-tree-fork/nut-js').Region> }): Promise<Rect> {
  const r = await w.region;
  return { x: r.left, y: r.top, w: r.width, h: r.height };
}

/** Presses `keys` in order and releases them in reverse (a hotkey); key names are nut-js Key names. */
async function chord(n: Nut, keys: string[]): Promise<void> {
  const codes = keys.map((k) => n.Key[k as keyof typeof n.Key] as number);
  await n.keyboard.pressKey(...codes);
  await n.keyboard.releaseKey(...codes.reverse());
}

/** Types a run of characters; those in `shifted` with Shift held (nut-js on X11 shifts only capitals). */
async function typeRun(n: Nut, text: string, shifted: Set<string>): Promise<void> {
  let plain = '';
  for (const c of text) {
    if (!shifted.has(c)) {
      plain += c;
      continue;
    }
    if (plain) await n.keyboard.type(plain);
    plain = '';
    await n.keyboard.pressKey(n.Key.LeftShift);
    try {
      await n.keyboard.type(c);
    } finally {
      await n.keyboard.releaseKey(n.Key.LeftShift);
    }
  }
  if (plain) await n.keyboard.type(plain);
}

async function windowById(n: Nut, id: number) {
  return (await n.getWindows()).find((x) => (x as unknown as { windowHandle: number }).windowHandle === id) ?? null;
}

const OPS: Record<string, (n: Nut, a: Record<string, any>) => Promise<unknown>> = {
  async load() {
    return { platform: process.platform };
  },
  async screen(n) {
    return { width: await n.screen.width(), height: await n.screen.height() };
  },
  /** A PNG of a region (logical units) or the screen, at the screen's own pixels, and how many per unit. */
  async grab(n, a) {
    const region = a.region as Rect | undefined;
    const hidden = (a.hidden ?? []) as Rect[];
    const shot = region
      ? await n.screen.grabRegion(new n.Region(region.x, region.y, region.w, region.h))
      : await n.screen.grab();
    // One pass from nut-js's rows (BGR(A) or RGB(A), rows byteWidth apart) into RGBA: no toRGB() copy first.
    const png = new PNG({ width: shot.width, height: shot.height });
    const ch = shot.channels;
    const bgr = shot.colorMode === n.ColorMode.BGR;
    const [r0, b0] = bgr ? [2, 0] : [0, 2];
    const src = shot.data;
    const dst = png.data;
    for (let y = 0; y < shot.height; y++) {
      let s = y * shot.byteWidth;
      let d = y * shot.width * 4;
      for (let x = 0; x < shot.width; x++, s += ch, d += 4) {
        dst[d] = src[s + r0];
        dst[d + 1] = src[s + 1];
        dst[d + 2] = src[s + b0];
        dst[d + 3] = 255;
      }
    }
    // Windows agents may not see come out black (their rectangles are in logical units, like `region`).
    const scale = shot.pixelDensity?.scaleX || 1;
    const left = region?.x ?? 0;
    const top = region?.y ?? 0;
    for (const r of hidden) {
      const x0 = Math.max(0, Math.round((r.x - left) * scale));
      const x1 = Math.min(png.width, Math.round((r.x + r.w - left) * scale));
      for (
        let y = Math.max(0, Math.round((r.y - top) * scale));
        y < Math.min(png.height, (r.y + r.h - top) * scale);
        y++
      )
        if (x1 > x0) png.data.fill(0, (y * png.width + x0) * 4, (y * png.width + x1) * 4);
    }
    if (hidden.length) for (let i = 3; i < png.data.length; i += 4) png.data[i] = 255;
    // zoom's scale (output pixels per screen pixel), applied after the blackout so no hidden pixel blends in.
    const zoom = typeof a.zoom === 'number' ? a.zoom : 1;
    let out = png;
    if (zoom !== 1) {
      const size = scaledSize(png.width, png.height, zoom);
      out = new PNG(size);
      out.data = Buffer.from(resampleRgba(png.data, png.width, png.height, size.width, size.height).buffer);
    }
    return {
      data: PNG.sync.write(out, { deflateLevel: 1, filterType: 1 }).toString('base64'),
      width: out.width,
      height: out.height,
      scale,
    };
  },
  async windows(n) {
    const out: Array<{ id: number; title: string; bounds: Rect }> = [];
    for (const w of await n.getWindows()) {
      const id = (w as unknown as { windowHandle: number }).windowHandle;
      out.push({
        id,
        title: await w.title.catch(() => ''),
        bounds: await regionOf(w).catch(() => ({ x: 0, y: 0, w: 0, h: 0 })),
      });
    }
    return out;
  },
  async active(n) {
    const w = await n.getActiveWindow();
    return { id: (w as unknown as { windowHandle: number }).windowHandle, title: await w.title.catch(() => '') };
  },
  async focus(n, a) {
    const w = (await n.getWindows()).find((x) => (x as unknown as { windowHandle: number }).windowHandle === a.id);
    return w ? await w.focus().catch(() => false) : false;
  },
  /** nut-js's clipboard (its default provider: the platform's own clipboard, as text). */
  async clipboardWrite(n, a) {
    await n.clipboard.setContent(String(a.text));
    return null;
  },
  async clipboardRead(n) {
    return await n.clipboard.getContent();
  },
  async pointer(n) {
    const p = await n.mouse.getPosition();
    return { x: p.x, y: p.y };
  },
  // The window tools: nut-js moves, resizes, minimizes and restores a window; the region is read back.
  async frame(n, a) {
    const w = await windowById(n, a.id);
    if (!w) return null;
    await w.move(new n.Point(a.x, a.y));
    await w.resize(new n.Size(a.w, a.h));
    return regionOf(w);
  },
  async region(n, a) {
    const w = await windowById(n, a.id);
    return w ? regionOf(w) : null;
  },
  async minimize(n, a) {
    const w = await windowById(n, a.id);
    return w ? await w.minimize() : null;
  },
  async restore(n, a) {
    const w = await windowById(n, a.id);
    return w ? await w.restore() : null;
  },
  async move(n, a) {
    await n.mouse.setPosition(new n.Point(a.x, a.y));
    return null;
  },
  async click(n, a) {
    const button = n.Button[a.button.toUpperCase() as 'LEFT' | 'RIGHT' | 'MIDDLE'];
    const mods = a.modifiers as string[];
    await n.mouse.setPosition(new n.Point(a.x, a.y));
    if (mods.length) await n.keyboard.pressKey(...mods.map((k) => n.Key[k as keyof typeof n.Key] as number));
    try {
      for (let i = 0; i < a.count; i++) await n.mouse.click(button);
    } finally {
      if (mods.length)
        await n.keyboard.releaseKey(...mods.map((k) => n.Key[k as keyof typeof n.Key] as number).reverse());
    }
    return null;
  },
  async scroll(n, a) {
    await n.mouse.setPosition(new n.Point(a.x, a.y));
    const by = { up: 'scrollUp', down: 'scrollDown', left: 'scrollLeft', right: 'scrollRight' } as const;
    await n.mouse[by[a.direction as keyof typeof by]](a.amount);
    return null;
  },
  async drag(n, a) {
    const button = n.Button[a.button.toUpperCase() as 'LEFT' | 'RIGHT' | 'MIDDLE'];
    await n.mouse.setPosition(new n.Point(a.from.x, a.from.y));
    await n.mouse.pressButton(button);
    try {
      for (let i = 1; i <= a.steps; i++) {
        const t = i / a.steps;
        await n.mouse.setPosition(
          new n.Point(Math.round(a.from.x + (a.to.x - a.from.x) * t), Math.round(a.from.y + (a.to.y - a.from.y) * t)),
        );
        await sleep(a.durationMs / a.steps);
      }
    } finally {
      await n.mouse.releaseButton(button);
    }
    return null;
  },
  async type(n, a) {
    n.keyboard.config.autoDelayMs = a.delayMs;
    try {
      // Newlines and tabs as their keys (what a keyboard does for them), the rest as nut-js types it.
      for (const part of String(a.text).split(/([\n\t])/)) {
        if (part === '\n') await chord(n, ['Enter']);
        else if (part === '\t') await chord(n, ['Tab']);
        else if (part) await typeRun(n, part, new Set(a.shifted as string[]));
      }
    } finally {
      n.keyboard.config.autoDelayMs = 0;
    }
    return null;
  },
  async keys(n, a) {
    await chord(n, a.keys);
    return null;
  },
};

process.on('message', async (msg: NutRequest) => {
  let reply: NutReply;
  try {
    const op = OPS[msg.op];
    if (!op) throw new Error(`no operation ${msg.op}`);
    reply = { id: msg.id, ok: true, value: await op(await load(), msg.args) };
  } catch (e) {
    reply = { id: msg.id, ok: false, error: (e as Error).message?.split('\n')[0] ?? String(e) };
  }
  process.send?.(reply);
});
// The server going away takes this child with it.
process.on('disconnect', () => process.exit(0));
