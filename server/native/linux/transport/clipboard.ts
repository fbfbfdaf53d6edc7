// The desktop's clipboard as text, and where its pointer is. On X11 the clipboard is the CLIPBOARD
// selection, a conversation with its owner: whoever writes it must stay to answer every later paste until
// another client takes it. xclip does exactly that (it forks an owner that serves UTF8_STRING and TARGETS
// and exits when the selection is taken), which Verity's own X connection, made for requests, would have to
// grow an event loop for. On Wayland wl-clipboard's wl-copy does the same through the compositor. A write
// is confirmed by reading the selection back through a separate request, as any other app would paste it.
import { spawn } from 'node:child_process';
import { machineEnv } from '../../../contract/machine-env.js';
import type { ClipboardContent } from '../../../contract/native-host.js';
import { Refusal } from '../../../contract/refusal.js';
import { session } from './wayland.js';

/** How long a clipboard tool may take (an owner that never answers a conversion holds a reader). */
const CLIPBOARD_TIMEOUT_MS = 5000;

/** Which tools speak to this desktop's clipboard: wl-clipboard in a Wayland session, else xclip on X. */
function clipboardTools(): 'wayland' | 'x11' {
  const s = session();
  if (s.kind === 'wayland') return 'wayland';
  if (s.kind === 'x11') return 'x11';
  throw new Refusal(
    'unavailable',
    'the clipboard needs an X display or a Wayland session: neither DISPLAY nor WAYLAND_DISPLAY is set',
  );
}

const install = (bin: string) => (bin.startsWith('wl-') ? 'wl-clipboard' : bin);

/**
 * Starts an owner of the clipboard that serves `text`: the tool reads its input, forks the owner and exits;
 * the owner keeps the output pipes, so only the first process's exit is waited for.
 */
function own(bin: string, args: string[], text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env: { ...machineEnv() }, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill();
      reject(new Refusal('unavailable', `${bin} did not take the clipboard within ${CLIPBOARD_TIMEOUT_MS} ms`));
    }, CLIPBOARD_TIMEOUT_MS);
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(notStarted(bin, e));
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      // The forked owner holds stderr open: stop listening so that it never holds this process.
      child.stderr.destroy();
      if (code === 0) resolve();
      else reject(new Refusal('unavailable', `${bin} failed: ${stderr.trim().split('\n')[0] || `exit ${code}`}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(text);
  });
}

/** Why a clipboard tool did not start: not installed (saying which package has it), or the spawn's error. */
function notStarted(bin: string, e: NodeJS.ErrnoException): Error {
  return e.code === 'ENOENT'
    ? new Refusal('unavailable', `${bin} is not installed (apt-get install ${install(bin)})`)
    : e;
}

/** A reading tool's output; null when the clipboard holds nothing (or nothing of that type). */
async function paste(bin: string, args: string[]): Promise<string | null> {
  try {
    return await readTool(bin, args);
  } catch (e) {
    if (e instanceof Refusal) throw e;
    const stderr = String((e as { stderr?: string }).stderr ?? '');
    // xclip: "Error: target ... not available"; wl-paste: "Nothing is copied" / "No selection" / "No suitable type".
    if (/not available|nothing is copied|no selection|no suitable type/i.test(stderr)) return null;
    if ((e as { killed?: boolean }).killed)
      throw new Refusal(
        'unavailable',
        `the clipboard's owner did not answer ${bin} within ${CLIPBOARD_TIMEOUT_MS} ms (an app holds it and does not serve it)`,
      );
    throw new Refusal('unavailable', `${bin} failed: ${stderr.trim().split('\n')[0] || (e as Error).message}`);
  }
}

/** A reading tool's stdout, untrimmed (a clipboard's text comes back byte for byte), in the machine's environment. */
function readTool(bin: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env: { ...machineEnv() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c) => {
      stderr += c;
    });
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill();
    }, CLIPBOARD_TIMEOUT_MS);
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(notStarted(bin, e));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0 && !killed) resolve(stdout);
      else reject(Object.assign(new Error(`${bin} exited ${code}`), { stderr, killed }));
    });
  });
}

/** What the clipboard holds now, as text, and the types its owner offers. */
export async function readClipboard(): Promise<ClipboardContent> {
  if (clipboardTools() === 'wayland') {
    const types = ((await paste('wl-paste', ['--list-types'])) ?? '').split('\n').filter(Boolean);
    const text = types.length ? await paste('wl-paste', ['--no-newline', '--type', 'text/plain']) : null;
    return { text: text ?? '', types };
  }
  const targets = await paste('xclip', ['-selection', 'clipboard', '-o', '-t', 'TARGETS']);
  const types = (targets ?? '').split('\n').filter(Boolean);
  const kind = types.includes('UTF8_STRING') ? 'UTF8_STRING' : types.includes('STRING') ? 'STRING' : null;
  const text = kind ? await paste('xclip', ['-selection', 'clipboard', '-o', '-t', kind]) : null;
  return { text: text ?? '', types };
}

/**
 * How long a write waits for its owner to serve the text. The owner the tool forks sends its claim on the
 * selection when it first runs, after the tool has exited: on a busy machine a read at once found the old
 * owner or none (a false `mismatch`), and the late owner then took the clipboard from whoever copied next.
 */
const OWNER_WAIT_MS = 3000;
const OWNER_POLL_MS = 20;

/**
 * Makes `text` the clipboard's content; returns what a separate read then finds there: read until it is
 * `text` (the new owner serving it), or what it held when OWNER_WAIT_MS ran out (the verdict's evidence).
 */
export async function writeClipboard(text: string): Promise<ClipboardContent> {
  if (clipboardTools() === 'wayland') await own('wl-copy', ['--type', 'text/plain;charset=utf-8'], text);
  else await own('xclip', ['-selection', 'clipboard', '-i', '-t', 'UTF8_STRING'], text);
  const deadline = performance.now() + OWNER_WAIT_MS;
  let now = await readClipboard();
  while (now.text !== text && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, OWNER_POLL_MS));
    now = await readClipboard();
  }
  return now;
}
