// Recording folders belong to the session that created them (issue #22 item 7), in process: a new folder is
// claimed, its owner gets it again (a revived session), another session, a folder inside another's, and a
// folder of files from no session are refused `not_permitted` naming recording_dir; step files are claimed
// exclusively, so a step number something else already wrote is skipped, never overwritten.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Refusal } from '../../server/contract/refusal.js';
import {
  OWNER_FILE,
  claimRecording,
  recordStep,
  recordingOwner,
  recordingPath,
  startRecording,
} from '../../server/sessions/recording.js';
import type { Session } from '../../server/sessions/manager.js';
import { configDir, setConfigDir } from '../../server/token.js';

const tmp = mkdtempSync(join(tmpdir(), 'verity-recording-unit-'));
const savedConfig = configDir();
before(() => {
  setConfigDir(tmp);
});
after(() => {
  setConfigDir(savedConfig);
  rmSync(tmp, { recursive: true, force: true });
});

const A = recordingOwner('conn-a/alpha');
const B = recordingOwner('conn-b/alpha');

function refusalOf(fn: () => void): Refusal {
  try {
    fn();
  } catch (e) {
    if (e instanceof Refusal) return e;
    throw e;
  }
  assert.fail('expected a refusal');
}

function session(): Session {
  return {
    label: 'alpha',
    connectionId: 'conn-a',
    state: 'active',
    lastActive: Date.now(),
    tabs: new Set(),
    cursor: { theme: { theme_id: 'default', reduced_motion: 'auto' }, visible: false },
    recordingDir: null,
    captureScope: 'auto',
    hooks: new Map(),
    inFlight: 0,
  };
}

describe('claimRecording', () => {
  test("a new folder becomes its session's; the same session (revived) gets it again", () => {
    const dir = recordingPath('run-a');
    claimRecording(dir, A, 'run-a');
    assert.equal(JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')).owner, A);
    claimRecording(dir, A, 'run-a'); // no throw
  });

  test('another session, with the same label on another connection, is refused not_permitted', () => {
    const refused = refusalOf(() => claimRecording(recordingPath('run-a'), B, 'run-a'));
    assert.equal(refused.code, 'not_permitted');
    assert.match(refused.message, /^recording_dir: "run-a" belongs to another session's recording/);
    assert.equal(
      JSON.parse(readFileSync(join(recordingPath('run-a'), OWNER_FILE), 'utf8')).owner,
      A,
      'A still owns it',
    );
  });

  test("a folder inside another session's is refused, and nothing is created in it", () => {
    const refused = refusalOf(() => claimRecording(recordingPath('run-a/inner'), B, 'run-a/inner'));
    assert.equal(refused.code, 'not_permitted');
    assert.match(refused.message, /inside another session's recording folder/);
    assert.deepEqual(readdirSync(recordingPath('run-a')), [OWNER_FILE]);
  });

  test("a folder of files from no session (an older recording) is nobody's to take", () => {
    const dir = recordingPath('legacy');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '0001-click.json'), '{"old":true}');
    const refused = refusalOf(() => claimRecording(dir, A, 'legacy'));
    assert.equal(refused.code, 'not_permitted');
    assert.equal(readFileSync(join(dir, '0001-click.json'), 'utf8'), '{"old":true}');
  });

  test('an owner file that is not JSON proves no one: refused', () => {
    const dir = recordingPath('garbled');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, OWNER_FILE), 'not json');
    assert.equal(refusalOf(() => claimRecording(dir, A, 'garbled')).code, 'not_permitted');
  });
});

describe('recordStep', () => {
  test('a step number already written by something else is skipped, never overwritten', () => {
    const dir = recordingPath('steps');
    claimRecording(dir, A, 'steps');
    const s = session();
    startRecording(s, dir);
    const png = Buffer.from('PNG-A').toString('base64');
    const first = recordStep(s, {
      tool: 'click',
      args: {},
      result: { effect: 'confirmed' },
      isError: false,
      after: png,
    });
    assert.equal(first?.step, 1);
    // Something else writes the next number (the collision of issue #22: B's click over A's 0002-click.json).
    writeFileSync(join(dir, '0002-click.json'), 'not mine');
    writeFileSync(join(dir, '0002-after.png'), 'not mine');
    const second = recordStep(s, {
      tool: 'click',
      args: {},
      result: { effect: 'confirmed' },
      isError: false,
      after: png,
    });
    assert.equal(second?.step, 3, 'the taken number is skipped');
    assert.equal(second?.after, '0003-after.png');
    assert.equal(readFileSync(join(dir, '0002-click.json'), 'utf8'), 'not mine');
    assert.equal(readFileSync(join(dir, '0002-after.png'), 'utf8'), 'not mine');
    assert.equal(JSON.parse(readFileSync(join(dir, '0003-click.json'), 'utf8')).step, 3);
    assert.equal(readFileSync(join(dir, '0003-after.png'), 'utf8'), 'PNG-A');
  });
});
