// The pairing page: chrome-extension://<id>/pair.html#gateway=<ws-url>&token=<token>, the link
// `verity start` prints. It asks the gateway (POST /pair with the operator credential) to pair this
// extension: its origin goes on the gateway's allow-list and the answer carries the pairing's relay secret
// (the service worker presents it to connect as the tab relay). It keeps {gateway, token, relaySecret,
// pairingId} in storage, and says what happened and what to do next. Only a loopback gateway is paired:
// a link naming another host would hand the operator credential to it. Opened without a link, it shows
// the pairing and what the service worker says of it (connected, tabs shared, what needs attention).
import browser from 'webextension-polyfill';
import type { Pairing, WorkerMessage, WorkerStatus } from './messages.js';

const status = document.getElementById('status')!;
const next = document.getElementById('next')!;
const FRESH =
  'Copy a fresh pairing link from `verity start` (the line "Pair the Chrome extension: chrome-extension://…") and open it in this browser.';

function show(state: string, text: string, what?: string): void {
  status.dataset.state = state;
  status.textContent = text;
  next.hidden = !what;
  next.textContent = what ?? '';
  document.getElementById('open')!.hidden = state !== 'paired';
}

const stored = async () => (await browser.storage.local.get('pairing')).pairing as Pairing | undefined;
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The worker's own account of the pairing, in a line. */
async function workerLine(): Promise<string> {
  const s = (await browser.runtime
    .sendMessage({ type: 'status' } satisfies WorkerMessage)
    .catch(() => null)) as WorkerStatus | null;
  if (!s) return '';
  const sharing = s.shared.length
    ? `sharing ${s.shared.length} tab${s.shared.length === 1 ? '' : 's'}`
    : 'no tab shared';
  return ` (${s.connected ? 'connected' : 'not connected'}, ${sharing})${s.attention.length ? `: ${s.attention.join(' ')}` : ''}`;
}

async function pair(): Promise<void> {
  const hash = new URLSearchParams(location.hash.slice(1));
  const gateway = hash.get('gateway');
  const token = hash.get('token');
  // The token is not left in the address bar or history.
  history.replaceState(null, '', location.pathname);
  if (!gateway || !token) {
    const pairing = await stored();
    if (pairing)
      return show(
        'paired',
        `Paired with ${pairing.gateway}${await workerLine()}`,
        'To pair again (a new token or port), open the pairing link `verity start` prints.',
      );
    return show('error', 'This pairing link is incomplete: it needs #gateway=…&token=….', FRESH);
  }
  let pairUrl: string;
  try {
    const ws = new URL(gateway);
    if (ws.protocol !== 'ws:' && ws.protocol !== 'wss:') throw new Error('not a ws:// address');
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(ws.hostname))
      throw new Error('only a gateway on this computer (127.0.0.1, localhost or [::1]) can be paired');
    if (ws.pathname !== '/gateway' || ws.username || ws.password)
      throw new Error('not a Verity gateway address (ws://127.0.0.1:PORT/gateway)');
    pairUrl = new URL('/pair', `${ws.protocol === 'wss:' ? 'https:' : 'http:'}//${ws.host}`).href;
  } catch (e) {
    return show('error', `The gateway address in this link (${gateway}) is not usable: ${messageOf(e)}.`, FRESH);
  }
  let res: Response;
  try {
    // text/plain keeps it a simple request; the gateway reads the JSON body either way.
    // The previous pairing (if any) is replaced, not piled up.
    const previous = await stored();
    res = await fetch(pairUrl, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ token, ...(previous?.pairingId ? { replaces: previous.pairingId } : {}) }),
    });
  } catch (e) {
    return show(
      'error',
      `Could not reach the Verity gateway at ${pairUrl} (${messageOf(e)}).`,
      'Is `verity start` running? Start it, then open the pairing link it prints.',
    );
  }
  const body = (await res.json().catch(() => ({}))) as { error?: string; relay_secret?: unknown; pairing_id?: unknown };
  if (res.status !== 200) {
    return show(
      'error',
      `The gateway refused the pairing (${res.status}): ${body.error ?? res.statusText}`,
      res.status === 401 ? FRESH : 'Open the pairing link `verity start` prints in this browser.',
    );
  }
  if (typeof body.relay_secret !== 'string' || typeof body.pairing_id !== 'string') {
    return show(
      'error',
      'The gateway answered the pairing without a relay secret: it is an older Verity; update it, then pair again.',
      FRESH,
    );
  }
  const pairing: Pairing = {
    gateway,
    token,
    relaySecret: body.relay_secret,
    pairingId: body.pairing_id,
    pairedAt: new Date().toISOString(),
  };
  await browser.storage.local.set({ pairing });
  await browser.runtime.sendMessage({ type: 'paired' } satisfies WorkerMessage).catch(() => {});
  show(
    'paired',
    `Paired with ${gateway}`,
    'Open the Control UI from the Verity toolbar button (side panel) or below. To share a tab, put it in a tab group named "Verity" or right-click the page → "Share this tab with Verity".',
  );
}

pair().catch((e) => show('error', `Pairing failed: ${messageOf(e)}`, FRESH));
