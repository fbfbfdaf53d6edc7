// Evidence and arguments as an operator reads them: labelled fields, text shown as the text itself (not a
// JSON string with its quotes escaped), and before/after images cropped around the call's target with the
// element outlined, the whole page one click away.
import { html, nothing, type TemplateResult } from 'lit';
import type { EvidenceItem } from '../../server/gateway/protocol.js';

/** A value as read: text as itself, numbers and booleans plainly, anything else as compact JSON. */
export function plain(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return JSON.stringify(value) ?? String(value);
}

/** One piece of evidence: its kind, then expected / observed / detail as labelled fields. */
export function evidenceFields(ev: EvidenceItem): TemplateResult {
  return html`<dl class="evidence fields" data-evidence=${ev.kind}>
    <dt>check</dt><dd>${ev.kind.replace(/_/g, ' ')}</dd>
    ${ev.expected !== undefined ? html`<dt>expected</dt><dd><code class="value" data-expected>${plain(ev.expected)}</code></dd>` : nothing}
    ${ev.observed !== undefined ? html`<dt>observed</dt><dd><code class="value" data-observed>${plain(ev.observed)}</code></dd>` : nothing}
    ${ev.detail ? html`<dt>detail</dt><dd>${ev.detail}</dd>` : nothing}
  </dl>`;
}

/** An object's fields (a call's arguments or its result), one labelled line each; nested objects indented. */
export function objectFields(value: Record<string, unknown>, label: string, depth = 0): TemplateResult {
  return html`<dl class="fields" aria-label=${depth === 0 ? label : nothing}>
    ${Object.entries(value).map(
      ([key, v]) =>
        html`<dt>${key.replace(/_/g, ' ')}</dt><dd>${
          v && typeof v === 'object' && !Array.isArray(v) && depth < 3
            ? objectFields(v as Record<string, unknown>, key, depth + 1)
            : Array.isArray(v) && v.some((item) => item && typeof item === 'object') && depth < 3
              ? html`<ol class="field-list">${v.map((item) => html`<li>${item && typeof item === 'object' ? objectFields(item as Record<string, unknown>, key, depth + 1) : html`<code class="value">${plain(item)}</code>`}</li>`)}</ol>`
              : html`<code class="value">${plain(v)}</code>`
        }</dd>`,
    )}
  </dl>`;
}

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Room kept around the target in a crop (CSS pixels): enough to see what the field is, and its label. */
const MARGIN = { x: 160, y: 70 };

/** The part of an image (width x height) to show around `target`: the target plus a margin, kept inside the image. */
export function cropAround(target: Box, width: number, height: number): Box {
  const x = Math.max(0, Math.floor(target.x - MARGIN.x));
  const y = Math.max(0, Math.floor(target.y - MARGIN.y));
  const right = Math.min(width, Math.ceil(target.x + target.w + MARGIN.x));
  const bottom = Math.min(height, Math.ceil(target.y + target.h + MARGIN.y));
  return { x, y, w: Math.max(1, right - x), h: Math.max(1, bottom - y) };
}

/**
 * A before/after image: cropped around the target at its own scale (readable), the target outlined; or
 * the whole page (scaled to fit) when `whole` or when the call named no element.
 */
export function shotView(
  which: 'before' | 'after',
  src: string,
  size: { width: number; height: number } | undefined,
  target: Box | undefined,
  whole: boolean,
): TemplateResult {
  const alt = `The page ${which} the call${target && !whole ? ', around its target (outlined)' : ''}`;
  if (!target || whole || !size) return html`<img data-audit-image=${which} data-view="page" alt=${alt} src=${src}>`;
  const crop = cropAround(target, size.width, size.height);
  return html`<div class="shot-crop" data-audit-image=${which} data-view="crop" role="img" aria-label=${alt}
    style="width:${crop.w}px;height:${crop.h}px">
    <img alt="" src=${src} style="left:${-crop.x}px;top:${-crop.y}px;width:${size.width}px;height:${size.height}px">
    <span class="target-outline" data-target-outline style="left:${target.x - crop.x - 3}px;top:${target.y - crop.y - 3}px;width:${target.w + 6}px;height:${target.h + 6}px"></span>
  </div>`;
}
