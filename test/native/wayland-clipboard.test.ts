// The clipboard and the pointer on a Wayland session (sway, headless, no XWayland): clipboard_write through
// wl-clipboard, confirmed, and pasted exactly by another client (wl-paste); clipboard_read of what that
// client copied; get_cursor_position refused by name, since no compositor tells a client where its pointer is.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingWaylandTools, startWaylandDesktop, until, type Desktop } from './desktop.js';

const missing =
  missingWaylandTools() ?? (existsSync('/usr/bin/wl-copy') ? null : '/usr/bin/wl-copy is missing (wl-clipboard)');
let d: Desktop;
let v: Verity;

before(async () => {
  if (missing) return;
  d = await startWaylandDesktop();
  v = await startVerity(['--caps', 'clipboard,cursor', '--allow-clipboard-read'], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
});

/** Runs a wl-clipboard tool as another client of the compositor would, bounded. */
function wl(command: string, args: string[], input?: string): string {
  const r = spawnSync(command, args, {
    env: { ...process.env, ...d.env },
    encoding: 'utf8',
    input,
    timeout: 10_000,
    // wl-copy's forked owner keeps serving: its output goes nowhere, so this returns once the first exits.
    stdio: [input === undefined ? 'ignore' : 'pipe', command === 'wl-copy' ? 'ignore' : 'pipe', 'pipe'],
  });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${r.status ?? r.signal} ${r.stderr}`);
  return r.stdout ?? '';
}

/** What another client pastes now ('' when nothing is offered). */
function pasted(): string {
  try {
    return wl('wl-paste', ['--no-newline']);
  } catch {
    return '';
  }
}

describe('Wayland (sway): the clipboard and the pointer', { skip: missing ?? false }, () => {
  test('clipboard_write is confirmed, and wl-paste pastes exactly that text [matrix sway any clipboard_write confirmed]', async () => {
    const r = await v.call('clipboard_write', { text: 'sway clipboard ✓ 3' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(wl('wl-paste', ['--no-newline']), 'sway clipboard ✓ 3');
  });

  test('clipboard_read returns what another client copied, with its MIME types [matrix sway any clipboard_read confirmed]', async () => {
    wl('wl-copy', [], 'copied on sway 9');
    // wl-copy's forked owner offers the text in its own time: until a paste gives it back.
    await until(
      () => pasted() === 'copied on sway 9' || null,
      () => `wl-copy's owner offering "copied on sway 9" (pasted: ${JSON.stringify(pasted())})`,
    );
    const r = await v.call('clipboard_read', {});
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured.text, 'copied on sway 9', r.text);
    assert.ok(
      r.structured.types.some((t: string) => t.startsWith('text/plain')),
      r.text,
    );
  });

  test('get_cursor_position is refused by name: the compositor tells no client where the pointer is [matrix sway any get_cursor_position refused]', async () => {
    const r = await v.call('get_cursor_position', {});
    assert.equal(r.structured.refusal?.code, 'unavailable', r.text);
    assert.match(r.text, /Wayland/, r.text);
  });
});
