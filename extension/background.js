// Verity extension service worker: shares the tabs of the "Verity" tab group with the paired gateway.
//
// Consent: a tab is shared only while it is in a tab group titled "Verity". That is checked before every
// attach and before every relayed command; a tab that leaves the group is detached at once and the
// gateway is told (relay.tabs). Tabs join the group by the operator's hand or the context menu item.
//
// Relay: one gateway WebSocket (client id verity-extension, cap tab-relay). The gateway sends
// `relay.command` events {id, targetId, sessionId?, method, params}; each is run once with
// chrome.debugger.sendCommand and answered with `relay.result`; debugger events go up as `relay.event`.
// A command id is run at most once; a result that cannot be sent is dropped (the gateway has already
// refused that command as "result unknown"), so nothing is ever doubled.
//
// Resilience: reconnect with backoff; the shared set lives in chrome.storage.session so a restarted
// service worker re-attaches; an alarm and the socket heartbeat keep it going while sharing; a tab whose
// debugger detached (navigation, crash) is re-attached while it stays in the group.
importScripts('browser-polyfill.min.js');

const GROUP_TITLE = 'Verity';
const CLIENT = { id: 'verity-extension', version: '0.1.0', mode: 'relay', displayName: 'Verity extension' };
const HEARTBEAT_MS = 20_000;
const MAX_BACKOFF_MS = 5_000;

/** tabId -> { targetId, attachId, url, title } for tabs attached with chrome.debugger. */
const attached = new Map();
let attachSeq = 0;
let ws = null;
let helloOk = false;
let backoffMs = 250;
let reconnectTimer = null;
let heartbeat = null;
let reqSeq = 0;
const waiters = new Map();
/** Ids of relay commands already run (each runs at most once). */
const done = new Set();
/** What needs the operator's attention now (shown on the badge), keyed by topic. */
const attention = new Map();
let pairingCache;

// ---- state that survives the worker being stopped ----

const restored = (async () => {
  const saved = (await browser.storage.session.get('relay')).relay;
  if (saved) {
    attachSeq = saved.attachSeq ?? 0;
    // Attached before the worker stopped: the debugger may or may not still be attached; checked on reconcile.
    for (const [tabId, info] of saved.attached ?? []) attached.set(tabId, { ...info, stale: true });
  }
})().catch(() => {});

function persist() {
  return browser.storage.session.set({ relay: { attachSeq, attached: [...attached] } }).catch(() => {});
}

async function pairing() {
  if (pairingCache === undefined) pairingCache = (await browser.storage.local.get('pairing')).pairing ?? null;
  return pairingCache;
}

// ---- the badge: connected, sharing (count) or needs-attention ----

let badging = Promise.resolve();
/** Updates are serialized: interleaved, one update's text and another's title could stay on the badge. */
function badge() {
  badging = badging.then(badgeNow, badgeNow);
  return badging;
}

async function badgeNow() {
  const p = await pairing();
  let text = '', color = '#2e7d32', title;
  if (!p) {
    text = '!'; color = '#c62828';
    title = 'Verity: not paired. Run `verity start` and open the "Pair the Chrome extension" link it prints.';
  } else if (attention.size) {
    text = '!'; color = '#c62828';
    title = `Verity: ${[...attention.values()].join(' ')}`;
  } else if (!helloOk) {
    text = '…'; color = '#757575';
    title = `Verity: connecting to ${p.gateway}…`;
  } else if (attached.size) {
    text = String(attached.size);
    title = `Verity: sharing ${attached.size} tab${attached.size === 1 ? '' : 's'} (the "${GROUP_TITLE}" tab group) with ${p.gateway}`;
  } else {
    text = 'on';
    title = `Verity: connected to ${p.gateway}. Put tabs in a tab group named "${GROUP_TITLE}" (or right-click → "Share this tab with Verity") to share them.`;
  }
  try {
    await chrome.action.setBadgeText({ text });
    await chrome.action.setBadgeBackgroundColor({ color });
    await chrome.action.setTitle({ title });
  } catch { /* no action UI (tests): fine */ }
}

function needs(topic, message) {
  if (message) attention.set(topic, message); else attention.delete(topic);
  void badge();
}

// ---- the gateway connection ----

function send(frame) {
  if (ws && ws.readyState === WebSocket.OPEN) { ws.send(JSON.stringify(frame)); return true; }
  return false;
}

function request(method, params) {
  const id = `x${++reqSeq}`;
  return new Promise((resolve, reject) => {
    if (!send({ type: 'req', id, method, params })) return reject(new Error('not connected to the gateway'));
    waiters.set(id, { resolve, reject });
  });
}

/** A request whose answer nobody waits for (events, results). */
function post(method, params) {
  return send({ type: 'req', id: `p${++reqSeq}`, method, params });
}

async function connect() {
  await restored;
  if (ws && (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING)) return;
  clearTimeout(reconnectTimer); reconnectTimer = null;
  const p = await pairing();
  if (!p) { void badge(); return; }
  let socket;
  try { socket = new WebSocket(p.gateway); } catch (e) {
    needs('gateway', `the paired gateway address ${p.gateway} is not usable (${e.message}); pair again with the link \`verity start\` prints.`);
    return;
  }
  ws = socket;
  helloOk = false;
  socket.onopen = async () => {
    try {
      // The relay presents its pairing's relay secret (not the operator credential): only it may relay.
      if (!p.relaySecret) throw new Error('this pairing has no relay secret (made by an older Verity)');
      await request('connect', { client: CLIENT, caps: ['tab-relay'], role: 'operator', scopes: ['operator.read', 'operator.write'], auth: { token: p.relaySecret } });
      helloOk = true;
      backoffMs = 250;
      needs('gateway', null);
      clearInterval(heartbeat);
      heartbeat = setInterval(() => { void announce(); }, HEARTBEAT_MS);
      await reconcile();
      await announce();
    } catch (e) {
      // A link that dropped during the hello is not a refusal: onclose has said so (lost / cannot reach).
      if (ws !== socket || socket.readyState !== WebSocket.OPEN) return;
      needs('gateway', `the gateway at ${p.gateway} refused the connection (${e.message}). Pair again: open the link \`verity start\` prints.`);
      socket.close();
    }
  };
  socket.onmessage = (message) => {
    let frame;
    try { frame = JSON.parse(message.data); } catch { return; }
    if (frame.type === 'res') {
      const waiter = waiters.get(frame.id);
      if (!waiter) return;
      waiters.delete(frame.id);
      if (frame.ok) waiter.resolve(frame.payload); else waiter.reject(new Error(frame.error?.message ?? 'refused'));
    } else if (frame.type === 'event' && frame.event === 'relay.command') {
      void runCommand(frame.payload);
    }
  };
  socket.onclose = (e) => {
    if (ws !== socket) return;
    ws = null;
    const wasUp = helloOk;
    helloOk = false;
    clearInterval(heartbeat); heartbeat = null;
    for (const w of waiters.values()) w.reject(new Error('the gateway connection closed'));
    waiters.clear();
    if (!attention.has('gateway')) {
      needs('gateway', wasUp
        ? `lost the gateway at ${p.gateway} (${e.code}); reconnecting. If \`verity start\` was restarted with a new token, pair again with its link.`
        : `cannot reach the gateway at ${p.gateway}: is \`verity start\` running? If it is, pair again with the link it prints (the gateway refuses unpaired extensions).`);
    }
    scheduleReconnect();
  };
}

function scheduleReconnect() {
  if (reconnectTimer) return;
  const delay = backoffMs;
  backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
  reconnectTimer = setTimeout(() => { reconnectTimer = null; void connect(); }, delay);
}

function reconnectNow() {
  pairingCache = undefined;
  backoffMs = 250;
  const old = ws;
  ws = null; helloOk = false;
  if (old) { old.onclose = null; old.close(); }
  clearTimeout(reconnectTimer); reconnectTimer = null;
  attention.delete('gateway');
  void connect();
}

async function announce() {
  if (!helloOk) return;
  const tabs = [...attached].map(([tabId, a]) => ({ tabId, targetId: a.targetId, attachId: a.attachId, url: a.url ?? '', title: a.title ?? '' }));
  await request('relay.tabs', { tabs }).catch(() => {});
}

// ---- consent: the "Verity" tab group ----

async function verityGroupIds() {
  const groups = await chrome.tabGroups.query({});
  return new Set(groups.filter((g) => (g.title ?? '').trim().toLowerCase() === GROUP_TITLE.toLowerCase()).map((g) => g.id));
}

async function inVerityGroup(tabId) {
  try {
    const tab = await chrome.tabs.get(tabId);
    if (tab.groupId === undefined || tab.groupId < 0) return false;
    const group = await chrome.tabGroups.get(tab.groupId);
    return (group.title ?? '').trim().toLowerCase() === GROUP_TITLE.toLowerCase();
  } catch { return false; }
}

const shareable = (url) => /^(https?|file):/.test(url ?? '') || url === 'about:blank';

async function attach(tab) {
  const url = tab.url || tab.pendingUrl || '';
  if (!shareable(url)) {
    needs(`tab-${tab.id}`, `the tab "${tab.title ?? url}" cannot be shared (${url.split(':')[0]}: pages cannot be debugged); take it out of the "${GROUP_TITLE}" group.`);
    return;
  }
  if (!(await inVerityGroup(tab.id))) return; // consent, checked right before attaching
  try {
    await chrome.debugger.attach({ tabId: tab.id }, '1.3');
  } catch (e) {
    if (!/already attached/i.test(e.message)) {
      needs(`tab-${tab.id}`, `could not attach to the tab "${tab.title ?? url}": ${e.message}. Close DevTools or other debuggers on it, or take it out of the group and back in.`);
      return;
    }
  }
  try {
    const { targetInfo } = await chrome.debugger.sendCommand({ tabId: tab.id }, 'Target.getTargetInfo');
    attached.set(tab.id, { targetId: targetInfo.targetId, attachId: ++attachSeq, url: targetInfo.url, title: targetInfo.title });
    needs(`tab-${tab.id}`, null);
  } catch (e) {
    needs(`tab-${tab.id}`, `attached to "${tab.title ?? url}" but could not read it: ${e.message}`);
  }
}

async function detach(tabId) {
  attached.delete(tabId);
  needs(`tab-${tabId}`, null);
  await chrome.debugger.detach({ tabId }).catch(() => {});
}

let reconciling = Promise.resolve();
/** Makes the attached set equal the tabs of the "Verity" group(s), then tells the gateway. Serialized. */
function reconcile() {
  reconciling = reconciling.then(reconcileNow, reconcileNow);
  return reconciling;
}

async function reconcileNow() {
  await restored;
  const groups = await verityGroupIds();
  const tabs = groups.size ? (await chrome.tabs.query({})).filter((t) => groups.has(t.groupId)) : [];
  const want = new Map(tabs.map((t) => [t.id, t]));
  let changed = false;
  // The debugger can go away without an onDetach (detached by this extension's own code, or while the
  // worker slept): a tab whose debugger is no longer attached is attached again (a new attachId, so the
  // gateway starts a fresh page session for it).
  const live = new Set((await chrome.debugger.getTargets()).filter((t) => t.attached && t.tabId !== undefined).map((t) => t.tabId));
  for (const [tabId, a] of [...attached]) if (!a.stale && want.has(tabId) && !live.has(tabId)) { attached.delete(tabId); changed = true; }
  for (const tabId of [...attached.keys()]) if (!want.has(tabId)) { await detach(tabId); changed = true; }
  for (const [tabId, tab] of want) {
    // Known from before a worker restart: attach again (attach() accepts a debugger still attached).
    if (attached.get(tabId)?.stale) { attached.delete(tabId); changed = true; }
    if (!attached.has(tabId)) { await attach(tab); changed = true; }
    else { const a = attached.get(tabId); a.url = tab.url; a.title = tab.title; }
  }
  for (const topic of [...attention.keys()]) if (topic.startsWith('tab-') && !want.has(Number(topic.slice(4)))) attention.delete(topic);
  await persist();
  if (changed || helloOk) await announce();
  void badge();
}

// ---- relayed commands ----

async function runCommand(command) {
  const { id, targetId, sessionId, method, params } = command ?? {};
  if (typeof id !== 'string' || done.has(id)) return; // at most once
  done.add(id);
  if (done.size > 5000) done.delete(done.values().next().value);
  const answer = (body) => { post('relay.result', { id, ...body }); };
  const entry = [...attached].find(([, a]) => a.targetId === targetId);
  if (!entry) return answer({ error: `tab ${targetId} is not shared (it is not in the "${GROUP_TITLE}" tab group)` });
  const [tabId] = entry;
  // Consent, checked before every command: a tab out of the group is detached, never driven.
  if (!(await inVerityGroup(tabId))) {
    await detach(tabId);
    await persist();
    void announce();
    return answer({ error: `tab ${targetId} left the "${GROUP_TITLE}" tab group; it is no longer shared` });
  }
  try {
    const result = await chrome.debugger.sendCommand(sessionId ? { tabId, sessionId } : { tabId }, method, params ?? {});
    answer({ result: result ?? {} });
  } catch (e) {
    const message = e?.message ?? String(e);
    if (/not attached/i.test(message)) {
      // Never reached the page: refused (not resent); the tab is attached again while it stays in the group.
      answer({ error: `the debugger was detached from tab ${targetId}, so ${method} was not delivered; it is being re-attached (${message})`, code: 'not_delivered' });
      attached.delete(tabId); void reconcile();
    } else answer({ error: message });
  }
}

chrome.debugger.onEvent.addListener((source, method, params) => {
  const a = source.tabId !== undefined ? attached.get(source.tabId) : undefined;
  if (!a || !helloOk) return;
  if (method === 'Page.frameNavigated' && !params?.frame?.parentId) a.url = params.frame.url;
  post('relay.event', { targetId: a.targetId, ...(source.sessionId ? { sessionId: source.sessionId } : {}), method, ...(params !== undefined ? { params } : {}) });
});

chrome.debugger.onDetach.addListener((source, reason) => { void onDetach(source, reason); });

/** The debugger left a shared tab: banner dismissed → sharing revoked; anything else → attached again. */
async function onDetach(source, reason) {
  const tabId = source.tabId;
  if (tabId === undefined || !attached.has(tabId)) return;
  attached.delete(tabId);
  void persist();
  void announce();
  if (reason === 'canceled_by_user') {
    // The operator dismissed the "is being debugged" banner: that revokes sharing.
    await chrome.tabs.ungroup(tabId).catch(() => {});
    await reconcile();
    return;
  }
  // Navigation or a renderer swap: re-attach while the tab stays in the group (a few tries).
  let tries = 0;
  const retry = () => setTimeout(async () => {
    await reconcile();
    if (!attached.has(tabId) && (await inVerityGroup(tabId)) && ++tries < 5) retry();
  }, 200 * (tries + 1));
  retry();
}

// ---- what makes the shared set change ----

chrome.tabs.onUpdated.addListener((tabId, change) => {
  if (change.groupId !== undefined || attached.has(tabId) && (change.url !== undefined || change.status === 'complete')) void reconcile();
});
chrome.tabs.onRemoved.addListener((tabId) => { if (attached.has(tabId)) { attached.delete(tabId); void persist(); void announce(); void badge(); } });
chrome.tabs.onAttached.addListener(() => void reconcile());
chrome.tabGroups.onCreated.addListener(() => void reconcile());
chrome.tabGroups.onUpdated.addListener(() => void reconcile());
chrome.tabGroups.onRemoved.addListener(() => void reconcile());

// ---- menu: share a tab (adds it to the "Verity" group, made if needed) ----

async function shareTab(tab) {
  const groups = await chrome.tabGroups.query({ windowId: tab.windowId });
  const existing = groups.find((g) => (g.title ?? '').trim().toLowerCase() === GROUP_TITLE.toLowerCase());
  if (existing) await chrome.tabs.group({ tabIds: [tab.id], groupId: existing.id });
  else {
    const groupId = await chrome.tabs.group({ tabIds: [tab.id] });
    await chrome.tabGroups.update(groupId, { title: GROUP_TITLE, color: 'orange' });
  }
  await reconcile();
}

async function unshareTab(tab) {
  if (await inVerityGroup(tab.id)) await chrome.tabs.ungroup(tab.id);
  await reconcile();
}

function setupMenus() {
  chrome.contextMenus.removeAll(() => {
    chrome.contextMenus.create({ id: 'verity-share', title: 'Share this tab with Verity', contexts: ['page', 'action'] });
    chrome.contextMenus.create({ id: 'verity-unshare', title: 'Stop sharing this tab with Verity', contexts: ['page', 'action'] });
  });
}

/** The context menu (page and toolbar button): share or stop sharing the tab it was opened on. */
async function onMenuClicked(info, tab) {
  if (!tab?.id) return;
  if (info.menuItemId === 'verity-share') await shareTab(tab);
  if (info.menuItemId === 'verity-unshare') await unshareTab(tab);
}
chrome.contextMenus.onClicked.addListener((info, tab) => { void onMenuClicked(info, tab); });

// ---- lifecycle ----

chrome.runtime.onInstalled.addListener(() => {
  setupMenus();
  chrome.sidePanel?.setPanelBehavior?.({ openPanelOnActionClick: true }).catch(() => {});
});
chrome.runtime.onStartup.addListener(() => { void connect(); });

chrome.alarms.create('verity-keepalive', { periodInMinutes: 0.5 });
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name !== 'verity-keepalive') return;
  void connect();
  void reconcile();
});

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === 'local' && changes.pairing) reconnectNow();
});

browser.runtime.onMessage.addListener((message) => {
  if (message?.type === 'paired') { reconnectNow(); return Promise.resolve({ ok: true }); }
  if (message?.type === 'status') {
    return pairing().then((p) => ({ paired: !!p, gateway: p?.gateway ?? null, connected: helloOk, shared: attached.size, attention: [...attention.values()] }));
  }
  return undefined;
});

// Exposed for the tests and for debugging from the service worker console.
self.verity = { reconcile, shareTab, onMenuClicked, onDetach, status: () => ({ connected: helloOk, shared: [...attached].map(([tabId, a]) => ({ tabId, ...a })), attention: [...attention.values()] }) };

void connect();
void reconcile();
void badge();
