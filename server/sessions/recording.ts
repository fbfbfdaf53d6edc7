// Recording: each action of a recording session appends to its trajectory folder: the call, its result
// (effect, evidence) and before/after screenshots, numbered in order.
import { appendFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Session } from './manager.js';

export interface RecordedStep {
  tool: string;
  args: unknown;
  result: unknown;
  isError: boolean;
  before?: string | null;
  after?: string | null;
}

const counters = new WeakMap<Session, number>();

export function startRecording(session: Session, dir: string): void {
  mkdirSync(dir, { recursive: true });
  session.recordingDir = dir;
  // A folder that already holds a recording (a revived session's) is appended to, never overwritten.
  const numbered = readdirSync(dir).map((f) => /^(\d{4,})-/.exec(f)?.[1]).filter((n): n is string => !!n).map(Number);
  counters.set(session, Math.max(0, ...numbered));
  appendFileSync(join(dir, 'trajectory.jsonl'), JSON.stringify({ event: 'start', session: session.label ?? 'implicit', at: new Date().toISOString() }) + '\n');
  session.hooks.set('recording', (s, reason) => stopRecording(s, reason));
}

export function stopRecording(session: Session, reason: string): void {
  const dir = session.recordingDir;
  if (!dir) return;
  appendFileSync(join(dir, 'trajectory.jsonl'), JSON.stringify({ event: 'end', reason, steps: counters.get(session) ?? 0, at: new Date().toISOString() }) + '\n');
  session.recordingDir = null;
}

export function recordStep(session: Session, step: RecordedStep): void {
  const dir = session.recordingDir;
  if (!dir) return;
  const n = (counters.get(session) ?? 0) + 1;
  counters.set(session, n);
  const stem = String(n).padStart(4, '0');
  const files: Record<string, string> = {};
  for (const which of ['before', 'after'] as const) {
    const png = step[which];
    if (!png) continue;
    files[which] = `${stem}-${which}.png`;
    writeFileSync(join(dir, files[which]), Buffer.from(png, 'base64'));
  }
  const entry = { event: 'action', step: n, tool: step.tool, args: step.args, result: step.result, isError: step.isError, screenshots: files, at: new Date().toISOString() };
  writeFileSync(join(dir, `${stem}-${step.tool}.json`), JSON.stringify(entry, null, 2));
  appendFileSync(join(dir, 'trajectory.jsonl'), JSON.stringify(entry) + '\n');
}
