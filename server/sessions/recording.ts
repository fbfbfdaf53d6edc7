// Recording: each action of a recording session appends to its trajectory folder: the call, its result
// (effect, evidence) and before/after screenshots, numbered in order.
// A folder belongs to the session that created it (issue #22 item 7): its owner is written into the folder
// (OWNER_FILE) when it is claimed, and another session's start_session with it, or with a folder inside it,
// is refused `not_permitted`. Before, B's recording into A's folder overwrote A's step files, and the
// operator's audit image for A's step showed B's action. Step files are also created exclusively, so no
// step ever overwrites another whatever else writes there.
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { Refusal } from '../contract/refusal.js';
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

/** The file in a recording folder naming the session it belongs to. */
export const OWNER_FILE = '.verity-owner.json';

/**
 * Connection ids are unique within one server process only, and several processes (`verity start`, each
 * `verity mcp`) share the recordings folder: an owner is this process's random id plus the session's key.
 */
const PROCESS_ID = randomUUID();
export function recordingOwner(sessionKey: string): string {
  return `${PROCESS_ID}/${sessionKey}`;
}

function ownerOf(folder: string): { owner: string; created_at?: string } | null {
  try {
    const parsed = JSON.parse(readFileSync(join(folder, OWNER_FILE), 'utf8'));
    return typeof parsed?.owner === 'string' ? parsed : { owner: '' };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    return { owner: '' }; // unreadable or not JSON: nobody's it can prove, so not this session's
  }
}

function notYours(name: string, detail: string): Refusal {
  return new Refusal(
    'not_permitted',
    `recording_dir: "${name}" ${detail}; a recording folder belongs to the session that created it: choose another folder name`,
    { field: 'recording_dir' },
  );
}

/**
 * Claims `dir` (from recordingPath) for `owner` before the session records into it: a new or empty folder
 * becomes the owner's; the owner's own folder (a revived session) is its again; a folder of another session,
 * inside one, or holding files of no session (an older version's recording) is refused `not_permitted`.
 */
export function claimRecording(dir: string, owner: string, name: string): void {
  const root = recordingsRoot();
  for (let folder = dirname(dir); folder !== root && folder.startsWith(root + sep); folder = dirname(folder)) {
    const held = ownerOf(folder);
    if (held && held.owner !== owner) throw notYours(name, "is inside another session's recording folder");
  }
  const held = ownerOf(dir);
  if (held) {
    if (held.owner === owner) return;
    throw notYours(
      name,
      `belongs to another session's recording${held.created_at ? ` (started ${held.created_at})` : ''}`,
    );
  }
  mkdirSync(dir, { recursive: true });
  if (readdirSync(dir).length > 0) throw notYours(name, 'already holds files that belong to no session of this one');
  try {
    // wx: of two sessions claiming the same new folder at once, exactly one wins.
    writeFileSync(join(dir, OWNER_FILE), JSON.stringify({ owner, created_at: new Date().toISOString() }), {
      flag: 'wx',
      mode: 0o600,
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    if (ownerOf(dir)?.owner !== owner) throw notYours(name, "belongs to another session's recording");
  }
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
  const { n, stem } = claimStem(session, dir, step.tool);
  const files: Record<string, string> = {};
  for (const which of ['before', 'after'] as const) {
    const png = step[which];
    if (!png) continue;
    files[which] = `${stem}-${which}.png`;
    writeFileSync(join(dir, files[which]), Buffer.from(png, 'base64'), { flag: 'wx' });
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
  writeFileSync(join(dir, `${stem}-${step.tool}.json`), JSON.stringify(entry, null, 2)); // claimed by claimStem
  appendFileSync(join(dir, 'trajectory.jsonl'), JSON.stringify(entry) + '\n');
  return { dir, step: n, ...files };
}

/** Bounds the search for a free step number when something else took the next ones. */
const MAX_STEP_PROBES = 1000;

/**
 * The next step number whose files nobody has written: its JSON is created exclusively (wx) as the claim,
 * so a number already taken (by whatever wrote into the folder) is skipped, never overwritten.
 */
function claimStem(session: Session, dir: string, tool: string): { n: number; stem: string } {
  for (let probe = 0; probe < MAX_STEP_PROBES; probe++) {
    const n = (counters.get(session) ?? 0) + 1;
    counters.set(session, n);
    const stem = String(n).padStart(4, '0');
    const taken = readdirSync(dir).some((f) => f.startsWith(`${stem}-`));
    if (taken) continue;
    try {
      writeFileSync(join(dir, `${stem}-${tool}.json`), '', { flag: 'wx' });
      return { n, stem };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  throw new Error(`recording: no free step number after ${MAX_STEP_PROBES} tries in ${dir}`);
}
