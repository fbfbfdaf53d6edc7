// Recording: each action of a recording session appends to its trajectory folder: the call, its result
// (effect, evidence) and before/after screenshots, numbered in order.
import { appendFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { Refusal } from '../routing/refusal.js';
import { configDir } from '../token.js';
import type { Session } from './manager.js';

/** Where every recording goes: recording_dir names a folder under it, never a path elsewhere. */
export function recordingsRoot(): string {
  return join(configDir(), 'recordings');
}

/**
 * The folder a recording_dir names: a relative name under <config dir>/recordings/. Absolute paths and `..`
 * are refused (an agent must not write files where it likes).
 */
export function recordingPath(name: string): string {
  if (isAbsolute(name) || /^[a-z]:/i.test(name))
    throw new Refusal(
      'invalid_arguments',
      `recording_dir: must be a relative folder name (it is created under ${recordingsRoot()}), not an absolute path`,
    );
  if (name.split(/[\\/]/).includes('..'))
    throw new Refusal(
      'invalid_arguments',
      'recording_dir: ".." is not allowed; recordings stay under <config dir>/recordings',
    );
  const root = recordingsRoot();
  const dir = resolve(root, name);
  if (dir !== root && !dir.startsWith(root + sep))
    throw new Refusal('invalid_arguments', `recording_dir: must stay under ${root}`);
  return dir;
}

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
  const numbered = readdirSync(dir)
    .map((f) => /^(\d{4,})-/.exec(f)?.[1])
    .filter((n): n is string => !!n)
    .map(Number);
  counters.set(session, Math.max(0, ...numbered));
  appendFileSync(
    join(dir, 'trajectory.jsonl'),
    JSON.stringify({ event: 'start', session: session.label ?? 'implicit', at: new Date().toISOString() }) + '\n',
  );
  session.hooks.set('recording', (s, reason) => stopRecording(s, reason));
}

export function stopRecording(session: Session, reason: string): void {
  const dir = session.recordingDir;
  if (!dir) return;
  appendFileSync(
    join(dir, 'trajectory.jsonl'),
    JSON.stringify({ event: 'end', reason, steps: counters.get(session) ?? 0, at: new Date().toISOString() }) + '\n',
  );
  session.recordingDir = null;
}

/** Writes one step; returns where it went (the audit trail links to its before/after images). */
export function recordStep(
  session: Session,
  step: RecordedStep,
): { dir: string; step: number; before?: string; after?: string } | undefined {
  const dir = session.recordingDir;
  if (!dir) return undefined;
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
  const entry = {
    event: 'action',
    step: n,
    tool: step.tool,
    args: step.args,
    result: step.result,
    isError: step.isError,
    screenshots: files,
    at: new Date().toISOString(),
  };
  writeFileSync(join(dir, `${stem}-${step.tool}.json`), JSON.stringify(entry, null, 2));
  appendFileSync(join(dir, 'trajectory.jsonl'), JSON.stringify(entry) + '\n');
  return { dir, step: n, ...files };
}
