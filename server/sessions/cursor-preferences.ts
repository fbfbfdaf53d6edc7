// The agent cursor's motion as a session sees it: the operator's saved default (cursor.motion in
// <config dir>/config.json) under each session's own settings, reduced motion on top. The router asks
// for a session's settings as the driver needs them; session summaries show them to agents and operators.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CursorSettings } from '../contract/driver.js';
import { configDir } from '../token.js';
import { effectiveMotion, glideDuration, type MotionInput } from './cursor-config.js';
import type { Session } from './manager.js';

function loadSavedCursorMotion(): MotionInput | undefined {
  const file = join(configDir(), 'config.json');
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8'))?.cursor?.motion;
  } catch {
    return undefined;
  }
}

export class CursorPreferences {
  /** cursor.motion.* from <config dir>/config.json: the saved default under every session's settings. */
  readonly saved: MotionInput | undefined = loadSavedCursorMotion();
  /**
   * @param enabled the agent cursor in driven tabs (default on; --no-cursor turns it off).
   * @param systemReducedMotion the operator's --reduced-motion: the cursor jumps instead of gliding.
   */
  constructor(
    private readonly enabled = true,
    readonly systemReducedMotion = false,
  ) {}

  /** What a session's settings add up to, for its summary. */
  motionOf(session: Session) {
    return effectiveMotion(
      { saved: this.saved, start: session.cursor.start, set: session.cursor.set },
      session.cursor.theme,
      this.systemReducedMotion,
    );
  }

  /** The session's effective cursor motion as the driver needs it (none without a session or with the cursor off). */
  forDriver(session: Session | undefined): CursorSettings | undefined {
    if (!session || !this.enabled) return undefined;
    const motion = this.motionOf(session);
    session.cursor.visible = true;
    return { ...motion, durationFor: (distance: number) => glideDuration(motion, distance) };
  }
}
