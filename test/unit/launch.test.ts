// launch_app's pure parts (server/native/shared/launch.ts, server/contract/programs.ts), in process: a desktop
// file's Exec line as the Desktop Entry spec reads it, which programs are terminals, shells or interpreters,
// and the environment a launched app gets. The launches themselves are test/native/apps*.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { programKind } from '../../server/contract/programs.js';
import { execWords, ordinaryEnvironment } from '../../server/native/shared/launch.js';

describe('launch_app: Exec lines, program kinds, the environment', () => {
  test('an Exec line: quoted words, escapes, field codes removed, args where the file code was', () => {
    assert.deepEqual(execWords('libreoffice --calc %U', ['--norestore', 'a b']), [
      'libreoffice',
      '--calc',
      '--norestore',
      'a b',
    ]);
    assert.deepEqual(execWords('app %i %c --x', ['f']), ['app', '--x', 'f']);
    assert.deepEqual(execWords('"/opt/My App/bin" "say \\"hi\\"" 100%%', []), ['/opt/My App/bin', 'say "hi"', '100%']);
    assert.deepEqual(execWords('a\\sb c', []), ['a', 'b', 'c']);
    assert.deepEqual(execWords('app --file=%f', []), ['app', '--file=']);
  });

  test('terminals, shells and interpreters by name; an ordinary app is none', () => {
    for (const t of ['xterm', 'gnome-terminal', 'kitty', 'foot']) assert.equal(programKind(t), 'terminal', t);
    for (const s of ['sh', '/bin/bash', 'env', 'sudo', 'xargs', 'busybox']) assert.equal(programKind(s), 'shell', s);
    for (const i of ['python3', 'python3.11', '/usr/bin/perl', 'node', 'lua5.4', 'osascript'])
      assert.equal(programKind(i), 'interpreter', i);
    for (const a of ['soffice', 'soffice.bin', 'gedit', 'firefox', 'verity-test-app'])
      assert.equal(programKind(a), null, a);
  });

  test("the ordinary environment: the desktop's variables, none of Verity's or the operator's secrets", () => {
    const env = ordinaryEnvironment({
      HOME: '/home/u',
      DISPLAY: ':1',
      LC_ALL: 'C',
      XDG_RUNTIME_DIR: '/run/user/1',
      QT_ACCESSIBILITY: '1',
      VERITY_TOKEN: 'secret',
      VERITY_AGENT_TOKEN: 'secret',
      AWS_SECRET_ACCESS_KEY: 'secret',
      GITHUB_TOKEN: 'secret',
      NODE_OPTIONS: '--require x',
    });
    assert.deepEqual(Object.keys(env).sort(), ['DISPLAY', 'HOME', 'LC_ALL', 'QT_ACCESSIBILITY', 'XDG_RUNTIME_DIR']);
  });
});
