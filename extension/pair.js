// The pairing page: chrome-extension://<id>/pair.html#gateway=<ws-url>&token=<token>, the link
// `verity start` prints. It asks the gateway (POST /pair with the operator credential) to pair this
// extension: its origin goes on the gateway's allow-list and the answer carries the pairing's relay secret
// (the service worker presents it to connect as the tab relay). It keeps {gateway, token, relaySecret,
// pairingId} in storage, and says what happened and what to do next. Only a loopback gateway is paired:
// a link naming another host would hand the operator credential to it.
const status = document.getElementById('status');
const next = document.getElementById('next');
const FRESH = 'Copy a fresh pairing link from `verity start` (the line "Pair the Chrome extension: chrome-extension://…") and open it in this browser.';

function show(state, text, what) {
  status.dataset.state = state;
  status.textContent = text;
  next.hidden = !what;
  next.textContent = what ?? '';
  document.getElementById('open').hidden = state !== 'paired';
}

async function pair() {
  const hash = new URLSearchParams(location.hash.slice(1));
  const gateway = hash.get('gateway');
  const token = hash.get('token');
  // The token is not left in the address bar or history.
  history.replaceState(null, '', location.pathname);
  if (!gateway || !token) {
    const { pairing } = await browser.storage.local.get('pairing');
    if (pairing) return show('paired', `Paired with ${pairing.gateway}`, 'To pair again (a new token or port), open the pairing link `verity start` prints.');
    return show('error', 'This pairing link is incomplete: it needs #gateway=…&token=….', FRESH);
  }
  let pairUrl;
  try {
    const ws = new URL(gateway);
    if (ws.protocol !== 'ws:' && ws.protocol !== 'wss:') throw new Error('not a ws:// address');
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(ws.hostname)) throw new Error('only a gateway on this computer (127.0.0.1, localhost or [::1]) can be paired');
    if (ws.pathname !== '/gateway' || ws.username || ws.password) throw new Error('not a Verity gateway address (ws://127.0.0.1:PORT/gateway)');
    pairUrl = new URL('/pair', `${ws.protocol === 'wss:' ? 'https:' : 'http:'}//${ws.host}`).href;
  } catch (e) {
    return show('error', `The gateway address in this link (${gateway}) is not usable: ${e.message}.`, FRESH);
  }
  let res;
  try {
    // text/plain keeps it a simple request; the gateway reads the JSON body either way.
    // The previous pairing (if any) is replaced, not piled up.
    const previous = (await browser.storage.local.get('pairing')).pairing;
    res = await fetch(pairUrl, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ token, ...(previous?.pairingId ? { replaces: previous.pairingId } : {}) }) });
  } catch (e) {
    return show('error', `Could not reach the Verity gateway at ${pairUrl} (${e.message}).`, 'Is `verity start` running? Start it, then open the pairing link it prints.');
  }
  const body = await res.json().catch(() => ({}));
  if (res.status !== 200) {
    return show('error', `The gateway refused the pairing (${res.status}): ${body.error ?? res.statusText}`, res.status === 401 ? FRESH : 'Open the pairing link `verity start` prints in this browser.');
  }
  if (typeof body.relay_secret !== 'string' || typeof body.pairing_id !== 'string') {
    return show('error', 'The gateway answered the pairing without a relay secret: it is an older Verity; update it, then pair again.', FRESH);
  }
  await browser.storage.local.set({ pairing: { gateway, token, relaySecret: body.relay_secret, pairingId: body.pairing_id, pairedAt: new Date().toISOString() } });
  await browser.runtime.sendMessage({ type: 'paired' }).catch(() => {});
  show('paired', `Paired with ${gateway}`, 'Open the Control UI from the Verity toolbar button (side panel) or below. To share a tab, put it in a tab group named "Verity" or right-click the page → "Share this tab with Verity".');
}

pair().catch((e) => show('error', `Pairing failed: ${e.message}`, FRESH));
