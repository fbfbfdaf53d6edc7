// What the launch_app tests start: the GTK test app (app.py) behind an executable wrapper (named by path),
// a desktop file in a temporary XDG data dir that runs it (named by id), and a desktop file whose Exec line
// runs a shell (named by id, which must not be enough). Removed with its folder; the apps are stopped by PID.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APP_PY, alive } from './desktop.js';

export interface LaunchFixture {
  /** The wrapper's absolute path (it execs python3 app.py with its arguments: the same pid). */
  wrapper: string;
  /** The desktop-file id that runs the wrapper with `desktopTitle`. */
  desktopId: string;
  desktopTitle: string;
  /** The desktop-file id whose Exec line runs sh -c. */
  shellId: string;
  /** XDG_DATA_DIRS with the fixture's data dir first. */
  dataDirs: string;
  /** Whether the shell desktop file's command ran (it never may). */
  shellRan(): boolean;
  /** Stops every pid given (process group first: a launched app leads its own), then removes the folder. */
  close(pids: number[]): Promise<void>;
}

export function launchFixture(desktopTitle: string): LaunchFixture {
  const dir = mkdtempSync(join(tmpdir(), 'verity-launch-'));
  const wrapper = join(dir, 'verity-test-app');
  writeFileSync(wrapper, `#!/bin/sh\nexec /usr/bin/python3 ${JSON.stringify(APP_PY)} "$@"\n`);
  chmodSync(wrapper, 0o755);
  const apps = join(dir, 'share', 'applications');
  mkdirSync(apps, { recursive: true });
  writeFileSync(
    join(apps, 'verity-launch-test.desktop'),
    `[Desktop Entry]\nType=Application\nName=Verity launch test\nExec=${wrapper} "${desktopTitle}" %U\nTerminal=false\n`,
  );
  writeFileSync(
    join(apps, 'verity-shell-test.desktop'),
    `[Desktop Entry]\nType=Application\nName=Verity shell test\nExec=sh -c "touch ${join(dir, 'ran')}"\n`,
  );
  return {
    wrapper,
    desktopId: 'verity-launch-test',
    desktopTitle,
    shellId: 'verity-shell-test',
    dataDirs: `${join(dir, 'share')}:/usr/share`,
    shellRan: () => existsSync(join(dir, 'ran')),
    async close(pids) {
      for (const pid of pids) {
        for (const target of [-pid, pid])
          try {
            process.kill(target, 'SIGKILL');
          } catch {
            /* gone */
          }
        for (let i = 0; i < 40 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
