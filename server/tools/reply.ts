// What a tool's answer says and how it goes out: an action's result as its reply (isError by its effect), the
// text of a result or a refusal (all a model sees on an error), and a reply as an MCP CallToolResult.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ActionResult } from '../contract/driver.js';
import { Refusal } from '../contract/refusal.js';
import type { Reply } from './context.js';

/** An action's result: isError for partial, mismatch and no_effect (the contract). */
export function actionReply(result: ActionResult): Reply {
  const failed = result.effect === 'partial' || result.effect === 'mismatch' || result.effect === 'no_effect';
  return { structured: result as unknown as Record<string, unknown>, isError: failed, text: summarize(result) };
}

/**
 * The text of an action's result. On isError (partial, mismatch, no_effect) clients show the model this
 * text and nothing else, so it carries every field of the result but the timings: what was delivered
 * (delivered_count), each piece of evidence with expected and observed, what the target holds now, and
 * what to try next. Long strings are cut (TEXT_FIELD_MAX) and say how long they were.
 */
export function summarize(result: ActionResult): string {
  const head = `${result.effect}${result.method ? ` (${result.method})` : ''}${result.target ? ` on ${result.target}` : ''}, route ${result.route}`;
  const lines = [head];
  lines.push(deliveryLine(result.delivery));
  for (const e of result.evidence ?? []) {
    const parts = [
      e.expected !== undefined ? `expected ${show(e.expected)}` : '',
      e.observed !== undefined ? `observed ${show(e.observed)}` : '',
      e.detail ?? '',
    ].filter(Boolean);
    lines.push(`evidence ${e.kind}: ${parts.join(', ')}`);
  }
  if (result.observed !== undefined) lines.push(`holds now: ${show(result.observed)}`);
  if (result.escalation) lines.push(`next: ${result.escalation.target}: ${result.escalation.reason}`);
  for (const e of result.side_effects ?? []) {
    lines.push(
      e.kind === 'tab_opened'
        ? `Opened tab ${e.tab_id} (${e.url || 'its URL not known yet'}); drive it with its tab_id`
        : e.kind === 'download'
          ? e.state === 'refused'
            ? `Download ${e.file} refused: ${e.code}: ${e.detail}`
            : `Downloaded ${e.file}${e.size_bytes !== undefined ? ` (${e.size_bytes} bytes)` : ''} (${e.state})`
          : `A ${e.type} dialog is open (${show(e.message)}); answer it with page handle_dialog`,
    );
  }
  lines.push(...causedLines(result.caused));
  lines.push(...changesLines(result));
  const known = new Set([
    'effect',
    'method',
    'target',
    'route',
    'delivery',
    'evidence',
    'observed',
    'escalation',
    'side_effects',
    'caused',
    'changes',
    'changes_complete',
    'timings_ms',
  ]);
  for (const [k, v] of Object.entries(result)) if (!known.has(k) && v !== undefined) lines.push(`${k}: ${show(v)}`);
  return lines.join('\n');
}

const TEXT_FIELD_MAX = 2000;

/** The delivery in one line: its mode, what was delivered, and the desktop's account (native routes). */
function deliveryLine(d: ActionResult['delivery']): string {
  const parts = [`delivery: ${d.mode}`];
  if (d.delivered_count !== undefined) parts.push(`delivered_count ${d.delivered_count}`);
  if (d.unchanged?.length) parts.push(`unchanged: ${d.unchanged.join(' ')}`);
  if (d.moved?.length) parts.push(`moved: ${d.moved.join(' ')}`);
  if (d.restored?.length) parts.push(`restored: ${d.restored.join(' ')}`);
  if (d.unread?.length) parts.push(`unread: ${d.unread.join(' ')}`);
  if (d.note) parts.push(`(${d.note})`);
  return parts.join(', ');
}

/** What the action caused on its page, one line each (the result's `caused`). */
function causedLines(caused: ActionResult['caused']): string[] {
  if (!caused) return [];
  const lines: string[] = [];
  if (caused.navigated !== undefined) lines.push(`Navigated to ${caused.navigated}`);
  for (const r of caused.requests ?? [])
    lines.push(
      `Request ${r.method} ${r.url}: ${r.failed !== undefined ? `failed (${r.failed})` : r.status !== undefined ? r.status : 'no answer yet'}`,
    );
  if (caused.more_requests) lines.push(`…and ${caused.more_requests} more requests (page network_requests lists them)`);
  for (const m of caused.console ?? [])
    lines.push(`${m.level === 'exception' ? 'Uncaught exception' : `Console ${m.level}`}: ${m.text}`);
  if (caused.more_console)
    lines.push(`…and ${caused.more_console} more console errors (page console_messages lists them)`);
  return lines;
}

/**
 * What the action changed, a line per kind, elements as `role "name" token` (the result's `changes`): said
 * only when the target had an observation to compare with; "changes: none" when nothing changed.
 */
function changesLines(result: ActionResult): string[] {
  if (result.changes_complete === undefined) return [];
  const c = result.changes;
  const named = (e: { role: string; name: string; element_token: string }) =>
    `${e.role} ${JSON.stringify(e.name)} ${e.element_token}`;
  const lines: string[] = [];
  if (c?.navigated !== undefined) lines.push(`changes navigated: ${c.navigated}`);
  if (c?.dialog)
    lines.push(
      `changes dialog: ${c.dialog.role} ${JSON.stringify(c.dialog.name)}${c.dialog.element_token ? ` ${c.dialog.element_token}` : ''}`,
    );
  if (c?.appeared) lines.push(`changes appeared: ${c.appeared.map(named).join(', ')}`);
  if (c?.removed) lines.push(`changes removed: ${c.removed.map(named).join(', ')}`);
  if (c?.changed)
    lines.push(
      `changes changed: ${c.changed
        .map(
          (e) =>
            `${named(e)}${e.value !== undefined ? ` = ${JSON.stringify(e.value)} (was ${JSON.stringify(e.was ?? '')})` : ''}${e.enabled !== undefined ? (e.enabled ? ' enabled' : ' disabled') : ''}`,
        )
        .join(', ')}`,
    );
  if (c?.text_added) lines.push(`changes text: ${c.text_added.map((t) => JSON.stringify(t)).join(' ')}`);
  if (!c && result.changes_complete) lines.push('changes: none');
  if (!result.changes_complete)
    lines.push(
      `changes_complete: false${
        c?.more
          ? ` (${Object.entries(c.more)
              .map(([k, n]) => `${n} more ${k}`)
              .join(', ')}; get_window_state lists all)`
          : ' (get_window_state lists all)'
      }`,
    );
  return lines;
}

/** A value as one line of a result's text: strings quoted (JSON), anything else as JSON, long ones cut. */
function show(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > TEXT_FIELD_MAX ? `${json.slice(0, TEXT_FIELD_MAX)}… (${json.length} chars in all)` : json;
}

/**
 * A refusal: the code and message, then every detail (current_snapshot_ids, max_chunk_chars,
 * covering_element, retryable, ...) one per line, because on an error the text is all the model sees.
 */
export function refusalText(refusal: Refusal): string {
  const lines = [`refused: ${refusal.code}: ${refusal.message}`];
  for (const [k, v] of Object.entries(refusal.details))
    if (v !== undefined) lines.push(`${k}: ${typeof v === 'string' ? v : show(v)}`);
  return lines.join('\n');
}

/** The text of a result known only by its structuredContent (a batch step's): a refusal's or an action's. */
export function textOfStructured(structured: Record<string, any>): string {
  if (structured?.status === 'refused' && structured.refusal) {
    const { code, message, ...details } = structured.refusal;
    return refusalText(new Refusal(code, message, details));
  }
  if (typeof structured?.effect === 'string' && structured.delivery) return summarize(structured as ActionResult);
  return JSON.stringify(structured);
}

export function refusalReply(refusal: Refusal): Reply {
  return {
    structured: { status: 'refused', refusal: { code: refusal.code, message: refusal.message, ...refusal.details } },
    isError: true,
    text: refusalText(refusal),
  };
}

export function toCallToolResult(reply: Reply): CallToolResult {
  const content: CallToolResult['content'] = [];
  for (const image of reply.images ?? []) content.push({ type: 'image', data: image.data, mimeType: image.mimeType });
  content.push({ type: 'text', text: reply.text ?? JSON.stringify(reply.structured) });
  // Beside the structured result, not in it (its schema is the tool's): a text line and the result's _meta.
  if (reply.audit) content.push({ type: 'text', text: `${reply.audit.code}: ${reply.audit.message}` });
  return {
    content,
    structuredContent: reply.structured,
    ...(reply.isError ? { isError: true } : {}),
    ...(reply.audit ? { _meta: { 'verity/audit': reply.audit } } : {}),
  };
}
