// What goes into the audit trail, in one place: a call (with its verdict, evidence, labels, approval and
// recording step), an approval's life, the brake, and the operator's own input in the browser panel. The
// call path, the approvals, the brake and the gateway each call one function here.
import { readFileSync } from 'node:fs';
import { basename, join, resolve, sep } from 'node:path';
import type { Reply } from '../tools/context.js';
import { labelledSummary, summarizeArgs } from '../activity.js';
import { recordingsRoot } from '../sessions/recording.js';
import type { ApprovalOutcome, ApprovalRequest } from '../approvals.js';
import { cut } from './entry-bounds.js';
import type { AuditEntry, AuditEvidence, AuditStore } from './store.js';
import { zip } from './zip.js';

/** A call as the pipeline hands it over (mcp/call-args.ts): its arguments masked and summarized once, there. */
export interface CallRecord {
  sessionKey: string;
  tool: string;
  /** As sent, masked. */
  args: Record<string, unknown>;
  /** The arguments' log line, each token shown as its label. */
  summary: string;
  reply: Reply;
  labels?: Record<string, string>;
  approval?: { id: string; by?: string };
  durationMs: number;
  recording?: AuditEntry['recording'];
}

/** A call's verdict as the log shows it: the effect, `refused`, or `ok`/`failed` for tools that report no effect. */
export function verdictOf(reply: Reply): string {
  const s = reply.structured as { effect?: unknown; status?: unknown };
  if (typeof s?.effect === 'string') return s.effect;
  if (s?.status === 'refused') return 'refused';
  // verify_state: the check's outcome is its verdict (satisfied, unsatisfied, unknown).
  if (s?.status === 'satisfied' || s?.status === 'unsatisfied' || s?.status === 'unknown') return s.status;
  return reply.isError ? 'failed' : 'ok';
}

/** Characters of each argument string a refused call's entry keeps (nothing ran: what was asked, in short). */
const REFUSED_STRING_MAX = 256;

/**
 * A call's entry; null when the trail had no room to keep it (a refused call while its session or the
 * trail was full: counted, not kept). A refused call is kept compactly: its refusal, and its arguments cut
 * short, or only their size when they were refused as malformed (an agent's 1 MB label is not evidence).
 */
export function noteCall(store: AuditStore, call: CallRecord): AuditEntry | null {
  const s = call.reply.structured as { evidence?: AuditEvidence[]; refusal?: { code: string; message: string } };
  const verdict = verdictOf(call.reply);
  const malformed = s?.refusal?.code === 'invalid_arguments';
  const args =
    verdict !== 'refused'
      ? call.args
      : malformed
        ? { refused_args_chars: argumentSize(call.args) }
        : (cut(call.args, 0, REFUSED_STRING_MAX) as Record<string, unknown>);
  return store.append({
    kind: 'call',
    sessionKey: call.sessionKey,
    tool: call.tool,
    verdict,
    summary: malformed ? `malformed arguments (${argumentSize(call.args)} chars)` : call.summary,
    args,
    result: call.reply.structured,
    isError: !!call.reply.isError,
    ...(s?.refusal ? { refusal: { code: s.refusal.code, message: s.refusal.message } } : {}),
    ...(Array.isArray(s?.evidence) && s.evidence.length ? { evidence: s.evidence.slice(0, 16) } : {}),
    ...(call.labels ? { labels: call.labels } : {}),
    ...(call.approval ? { approval: call.approval } : {}),
    duration_ms: Math.round(call.durationMs),
    ...(call.recording ? { recording: call.recording } : {}),
  });
}

/** About how many characters the arguments' JSON has (bounded work: they passed checkLimits, or are {}). */
function argumentSize(args: Record<string, unknown>): number {
  try {
    return JSON.stringify(args)?.length ?? 0;
  } catch {
    return 0;
  }
}

export function noteApprovalRequested(store: AuditStore, r: ApprovalRequest): void {
  store.append({
    kind: 'approval',
    sessionKey: r.sessionKey,
    tool: r.tool,
    verdict: 'requested',
    summary: labelledSummary(r.arguments, r.labels, r.tool),
    args: r.arguments,
    approval: { id: r.id },
    ...(r.labels ? { labels: r.labels } : {}),
    ...(r.target ? { target: r.target } : {}),
  });
}

export function noteApprovalResolved(store: AuditStore, o: ApprovalOutcome): void {
  const verdict =
    o.reason === 'operator' ? (o.approved ? 'approved' : 'denied') : o.reason === 'timeout' ? 'timed_out' : o.reason;
  store.append({
    kind: 'approval',
    sessionKey: o.sessionKey,
    tool: o.tool,
    verdict,
    summary: `${o.id} ${verdict}${o.by ? ` by ${o.by}` : ''}${o.detail ? `: ${o.detail}` : ''}`,
    approval: { id: o.id, ...(o.by ? { by: o.by } : {}) },
    ...(o.by ? { by: o.by } : {}),
  });
}

export function noteBrake(
  store: AuditStore,
  sessionKey: string,
  verb: 'stop' | 'pause' | 'resume' | 'end',
  by: string,
): void {
  const verdict = { stop: 'stopped', pause: 'paused', resume: 'resumed', end: 'ended' }[verb];
  store.append({ kind: 'brake', sessionKey, tool: verb, verdict, summary: `${verdict} by ${by}`, by });
}

/**
 * The operator's own input in the browser panel (a click, a key, text, a wheel): logged like an agent's
 * call, under the session whose tab it went to. The browser panel's owner calls this for every input.
 */
export function noteOperatorInput(
  store: AuditStore,
  sessionKey: string,
  input: { tab_id: string; type: string; x?: number; y?: number; key?: string; text?: string; deltaY?: number },
  by: string,
): void {
  const { tab_id, ...rest } = input;
  store.append({
    kind: 'operator_input',
    sessionKey,
    tool: 'browser.input',
    verdict: 'input',
    summary: `${input.type} ${summarizeArgs(rest)} on ${tab_id}`.trim(),
    args: input,
    by,
  });
}

/** A recording step's image, read only from under the recordings root (the entry's folder is not trusted blindly). */
export function recordingImage(entry: AuditEntry, which: 'before' | 'after'): Buffer | null {
  const file = entry.recording?.[which];
  if (!entry.recording || !file) return null;
  const root = recordingsRoot();
  const path = resolve(entry.recording.dir, basename(file));
  if (!path.startsWith(root + sep)) return null;
  try {
    return readFileSync(path);
  } catch {
    return null;
  }
}

/**
 * A session's trail in the recording format (sessions/recording.ts): a start line, one `action` line per
 * call ({event, step, tool, args, result, isError, screenshots, at} plus verdict, labels, approval), the
 * approvals, the brake and operator input as their own events, and an end line.
 */
export function exportJsonl(
  entries: AuditEntry[],
  sessionKey: string,
  imageNames?: Map<number, { before?: string; after?: string }>,
): string {
  const lines: unknown[] = [
    { event: 'start', session: sessionKey, at: entries[0]?.at ?? new Date().toISOString(), source: 'audit' },
  ];
  let step = 0;
  for (const e of entries) {
    if (e.kind === 'call') {
      lines.push({
        event: 'action',
        step: ++step,
        tool: e.tool,
        args: e.args ?? {},
        result: e.result ?? null,
        isError: !!e.isError,
        screenshots: imageNames?.get(e.id) ?? {},
        at: e.at,
        verdict: e.verdict,
        audit_id: e.id,
        ...(e.labels ? { labels: e.labels } : {}),
        ...(e.approval ? { approval: e.approval } : {}),
        ...(e.duration_ms !== undefined ? { duration_ms: e.duration_ms } : {}),
      });
    } else {
      const { kind, ...rest } = e;
      lines.push({ event: kind, ...rest });
    }
  }
  lines.push({ event: 'end', reason: 'export', steps: step, at: entries.at(-1)?.at ?? new Date().toISOString() });
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

/** The export as a zip: trajectory.jsonl and the before/after PNGs of recorded calls (images/<id>-before.png). */
export function exportZip(entries: AuditEntry[], sessionKey: string): Buffer {
  const files: Array<{ name: string; data: Buffer }> = [];
  const names = new Map<number, { before?: string; after?: string }>();
  for (const e of entries) {
    for (const which of ['before', 'after'] as const) {
      const png = recordingImage(e, which);
      if (!png) continue;
      const name = join('images', `${e.id}-${which}.png`).split(sep).join('/');
      files.push({ name, data: png });
      names.set(e.id, { ...names.get(e.id), [which]: name });
    }
  }
  return zip([{ name: 'trajectory.jsonl', data: Buffer.from(exportJsonl(entries, sessionKey, names)) }, ...files]);
}
