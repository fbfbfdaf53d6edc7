// zoom (capability `zoom`, issue 44 item 6): an image of a region of a window, a tab or the desktop, at the
// target's full resolution times a scale. Every route plans the same way here (the region checked against the
// target's area, clamped or refused naming the field, the output's pixels bounded), then takes the picture
// where its screenshots are taken (the Linux capture, nut-js's grab, CDP's Page.captureScreenshot).
import { Refusal } from './refusal.js';

/**
 * At most this many pixels in a zoom's image. Models see an image of about 1.15 megapixels at full detail
 * and scale a larger one down before reading it, so more pixels cost bytes and show nothing more.
 */
export const ZOOM_MAX_PIXELS = 1_200_000;
export const ZOOM_MIN_SCALE = 0.1;
export const ZOOM_MAX_SCALE = 8;

/** A region in the target's own pixels: a window's client area (its screenshot's), a tab's viewport (CSS), the screen. */
export interface ZoomRegion {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface ZoomRequest {
  region: ZoomRegion;
  /** Output pixels per target pixel (absent: 1, or less to stay within ZOOM_MAX_PIXELS, said in notes). */
  scale?: number;
}

/** The region a route captures, and at what scale, after the checks. */
export interface ZoomPlan {
  /** The region inside the target's area (clamped where it reached past an edge). */
  region: ZoomRegion;
  scale: number;
  /** What was changed from the request, in words (a clamp, a scale chosen to fit the bound). */
  notes: string[];
}

/** A zoom's image as a route took it. */
export interface ZoomImage {
  /** PNG, base64. */
  data: string;
  width: number;
  height: number;
  region: ZoomRegion;
  scale: number;
  /** The region on the screen (screen pixels), for native targets. */
  screen_region?: ZoomRegion;
  /** Regions of windows the operator's policy keeps agents from seeing, blacked out in the image. */
  blacked_out?: number;
  notes: string[];
}

/**
 * Checks a zoom's region against the target's area (`area`: its width and height in target pixels, `what`
 * names it in messages) and picks the scale. `density`: image pixels per target pixel before the scale (a
 * tab's devicePixelRatio, a Retina screen's 2; 1 on X11), so that the bound counts the image's real pixels.
 * A region wholly outside the area is refused naming the field; one reaching past an edge is clamped, and said.
 */
export function planZoom(
  req: ZoomRequest,
  area: { width: number; height: number },
  what: string,
  density = 1,
): ZoomPlan {
  const { x, y, width, height } = req.region;
  const notes: string[] = [];
  const size = `${area.width}x${area.height}`;
  if (x >= area.width)
    throw new Refusal(
      'invalid_arguments',
      `region.x: ${x} is past the right edge of ${what} (${size}); nothing was captured`,
    );
  if (y >= area.height)
    throw new Refusal(
      'invalid_arguments',
      `region.y: ${y} is past the bottom edge of ${what} (${size}); nothing was captured`,
    );
  if (x + width <= 0)
    throw new Refusal(
      'invalid_arguments',
      `region.x: ${x} with region.width ${width} ends left of ${what} (${size}); nothing was captured`,
    );
  if (y + height <= 0)
    throw new Refusal(
      'invalid_arguments',
      `region.y: ${y} with region.height ${height} ends above ${what} (${size}); nothing was captured`,
    );
  const x0 = Math.max(0, x);
  const y0 = Math.max(0, y);
  const x1 = Math.min(area.width, x + width);
  const y1 = Math.min(area.height, y + height);
  const region = { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
  const cut: string[] = [];
  if (x < 0) cut.push(`region.x ${x} is left of it`);
  if (y < 0) cut.push(`region.y ${y} is above it`);
  if (x + width > area.width) cut.push(`region.width reaches past its right edge (${area.width})`);
  if (y + height > area.height) cut.push(`region.height reaches past its bottom edge (${area.height})`);
  if (cut.length)
    notes.push(
      `region clamped to ${what} (${size}): ${cut.join(', ')}; captured (${region.x}, ${region.y}) ${region.width}x${region.height}`,
    );
  const pixelsAt = (s: number) =>
    Math.max(1, Math.round(region.width * density * s)) * Math.max(1, Math.round(region.height * density * s));
  // The largest scale (two decimals, down) whose image stays within the bound.
  const fits = Math.floor(Math.sqrt(ZOOM_MAX_PIXELS / (region.width * region.height * density * density)) * 100) / 100;
  if (req.scale !== undefined) {
    if (pixelsAt(req.scale) > ZOOM_MAX_PIXELS)
      throw new Refusal(
        'invalid_arguments',
        `scale: ${req.scale} makes a ${Math.round(region.width * density * req.scale)}x${Math.round(region.height * density * req.scale)} image of the ${region.width}x${region.height} region, over the bound of ${ZOOM_MAX_PIXELS} pixels; ${fits >= ZOOM_MIN_SCALE ? `at most scale ${fits} for this region, or ` : ''}zoom on a smaller region`,
        { max_pixels: ZOOM_MAX_PIXELS, ...(fits >= ZOOM_MIN_SCALE ? { max_scale: fits } : {}) },
      );
    return { region, scale: req.scale, notes };
  }
  if (pixelsAt(1) <= ZOOM_MAX_PIXELS) return { region, scale: 1, notes };
  const scale = Math.max(ZOOM_MIN_SCALE, fits);
  if (pixelsAt(scale) > ZOOM_MAX_PIXELS)
    throw new Refusal(
      'invalid_arguments',
      `region: ${region.width}x${region.height} is too large for one image even at scale ${ZOOM_MIN_SCALE} (the bound is ${ZOOM_MAX_PIXELS} pixels); zoom on a smaller region`,
      { max_pixels: ZOOM_MAX_PIXELS },
    );
  notes.push(`scale ${scale} (not 1): at full resolution the image would pass the bound of ${ZOOM_MAX_PIXELS} pixels`);
  return { region, scale, notes };
}

/**
 * Resamples RGBA pixels by `scale` (to `outW` x `outH`): nearest pixel up (a zoomed pixel stays one colour,
 * so small text keeps its edges), the mean of the pixels covered down. Pure: the routes that decode their
 * own captures (the Linux one, nut-js's worker) share it.
 */
export function resampleRgba(src: Uint8Array, w: number, h: number, outW: number, outH: number): Uint8Array {
  const out = new Uint8Array(outW * outH * 4);
  const fx = w / outW;
  const fy = h / outH;
  for (let oy = 0; oy < outH; oy++) {
    const sy0 = Math.floor(oy * fy);
    const sy1 = Math.max(sy0 + 1, Math.min(h, Math.floor((oy + 1) * fy)));
    for (let ox = 0; ox < outW; ox++) {
      const sx0 = Math.floor(ox * fx);
      const sx1 = Math.max(sx0 + 1, Math.min(w, Math.floor((ox + 1) * fx)));
      const d = (oy * outW + ox) * 4;
      if (fx <= 1 && fy <= 1) {
        const s = (Math.min(h - 1, sy0) * w + Math.min(w - 1, sx0)) * 4;
        out[d] = src[s];
        out[d + 1] = src[s + 1];
        out[d + 2] = src[s + 2];
        out[d + 3] = src[s + 3];
        continue;
      }
      let r = 0,
        g = 0,
        b = 0,
        a = 0,
        n = 0;
      for (let sy = sy0; sy < sy1; sy++)
        for (let sx = sx0; sx < sx1; sx++) {
          const s = (sy * w + sx) * 4;
          r += src[s];
          g += src[s + 1];
          b += src[s + 2];
          a += src[s + 3];
          n++;
        }
      out[d] = Math.round(r / n);
      out[d + 1] = Math.round(g / n);
      out[d + 2] = Math.round(b / n);
      out[d + 3] = Math.round(a / n);
    }
  }
  return out;
}

/** The size of a region's image at `scale` (at least one pixel each way). */
export function scaledSize(w: number, h: number, scale: number): { width: number; height: number } {
  return { width: Math.max(1, Math.round(w * scale)), height: Math.max(1, Math.round(h * scale)) };
}
