// The page agent's event watches: which events reach an element (or leave the page) while an action runs.
// One watch is armed at a time for a click, a key or a hover (watchEvents, watchPoint, pointFor); each field
// a type_text holds has its own (fieldWatch). Listeners are added once per element and type and report to
// the watches listening now; their state is the page's (state.ts).
import type { Watched } from './replies.js';
import { type Watch, pageState } from './state.js';
import { deepActiveElement, element, describe, nextFrame, frameThenTask } from './core.js';

/** Every watch listening now. */
function listening(): Watch[] {
  return pageState.watch ? [pageState.watch, ...pageState.fieldWatches] : [...pageState.fieldWatches];
}

/** Records the pointer/key events that reach the element (capture phase on the element itself). */
export function watchEvents(snapshotId: string | null, index: number, types: string[]) {
  const target = snapshotId ? element(snapshotId, index) : (deepActiveElement() ?? document.body);
  return armWatch(target, types);
}

// Listeners are added once per element and event type (never one per call), and report to whatever
// watch is armed now.
function onTargetEvent(e: Event) {
  for (const w of listening()) {
    if (e.currentTarget !== w.target) continue;
    // Each input (a multi-line insertion has several) needs a frame after it: one still to come serves.
    if (e.type === 'input' && pageState.fieldWatches.has(w) && (!w.afterInput || w.afterInput.framed))
      w.afterInput = frameThenTask();
    w.events.push({
      type: e.type,
      trusted: e.isTrusted,
      onTarget: true,
      prevented: false,
      hit: describe(e.composedPath()[0] as Element),
    });
  }
}

// Bubble listener on window: runs after the page's handlers, so it sees a cancelled event.
function onWindowEvent(e: Event) {
  for (const w of listening()) {
    const seen = w.events.find((r) => r.type === e.type && r.onTarget && !r.prevented);
    if (seen) seen.prevented = e.defaultPrevented;
    else if (!w.events.some((r) => r.type === e.type && r.onTarget)) {
      w.events.push({
        type: e.type,
        trusted: e.isTrusted,
        onTarget: false,
        prevented: e.defaultPrevented,
        hit: describe(e.composedPath()[0] as Element),
      });
    }
  }
}

/**
 * Capture listeners on window (once) for what can lead out of the page: a click on or in a link or image-map
 * area (trusted or a script's a.click(), as long as the link is in the document), a form's submit, and
 * beforeunload (a script's navigation begins). They only note it on the armed watch.
 */
function hearLeaving() {
  if (pageState.leavingHeard) return;
  pageState.leavingHeard = true;
  const note = () => {
    for (const w of listening()) w.leaving = true;
  };
  window.addEventListener(
    'click',
    (e) => {
      const path = e.composedPath();
      const link = path.find((n): n is Element => n instanceof Element && n.matches('a[href], area[href]'));
      if (!link) return;
      note();
      if (link.hasAttribute('download')) for (const w of listening()) w.downloadClick = e;
      // Read as attributes: an SVG link's `target` and `href` are not strings.
      else if (
        loadsHere(link.getAttribute('target') ?? '', link.getAttribute('href') ?? link.getAttribute('xlink:href') ?? '')
      )
        for (const w of listening()) w.navigateEvent = e;
    },
    { capture: true },
  );
  window.addEventListener(
    'submit',
    (e) => {
      note();
      const form = e.target instanceof HTMLFormElement ? e.target : null;
      const submitter = (e as SubmitEvent).submitter;
      const target = submitter?.getAttribute('formtarget') ?? form?.target ?? '';
      const action = submitter?.getAttribute('formaction') ?? form?.action ?? location.href;
      const method = submitter?.getAttribute('formmethod') ?? form?.method ?? '';
      if (form && method.toLowerCase() !== 'dialog' && loadsHere(target, action, false))
        for (const w of listening()) w.navigateEvent = e;
    },
    { capture: true },
  );
  window.addEventListener('beforeunload', note, { capture: true });
}

/**
 * Whether following `href` in the browsing context named `target` loads another document in this tab: not
 * another window or frame, not a script URL, and (a link's `jumps`) not a jump within this document; a
 * form's submit loads a document even to its own page's fragment.
 */
function loadsHere(target: string, href: string, jumps = true): boolean {
  const named = target || document.querySelector('base[target]')?.getAttribute('target') || '';
  if (named && named.toLowerCase() !== '_self' && !(window === window.top && /^_(top|parent)$/i.test(named)))
    return false;
  let url: URL;
  try {
    url = new URL(href, document.baseURI); // as the browser resolves it: against a <base href> too
  } catch {
    return false;
  }
  if (url.protocol === 'javascript:') return false;
  return !(jumps && url.href.includes('#') && url.href.split('#')[0] === location.href.split('#')[0]);
}

export function armWatch(target: Element, types: string[]) {
  listenOn(target, types);
  pageState.watch = { target, events: [] };
  return describe(target);
}

/** A watch of its own for a field a type_text action holds (held.ts), heard beside the armed one; dropped with dropFieldWatch. */
export function fieldWatch(target: Element, types: string[]): Watch {
  listenOn(target, types);
  const own: Watch = { target, events: [] };
  pageState.fieldWatches.add(own);
  return own;
}

export function dropFieldWatch(own: Watch): void {
  pageState.fieldWatches.delete(own);
}

/** The listeners a watch of `target` for `types` needs, added once per element and type. */
function listenOn(target: Element, types: string[]): void {
  hearLeaving();
  let onTarget = pageState.armedOn.get(target);
  if (!onTarget) pageState.armedOn.set(target, (onTarget = new Set()));
  for (const type of types) {
    if (!onTarget.has(type)) {
      target.addEventListener(type, onTargetEvent, { capture: true });
      onTarget.add(type);
    }
    if (!pageState.armedOnWindow.has(type)) {
      window.addEventListener(type, onWindowEvent);
      pageState.armedOnWindow.add(type);
    }
  }
}

/** What the armed watch saw. `fresh` means no watch exists here: the frame navigated since it was armed. */
export async function watched(waitFrame: boolean): Promise<Watched> {
  if (waitFrame) await nextFrame();
  if (!pageState.watch) return { target: 'nothing', events: [], fresh: true };
  return {
    target: describe(pageState.watch.target),
    events: pageState.watch.events.slice(),
    ...(pageState.watch.leaving ? { leaving: true } : {}),
    // Read after the click's handlers ran: one that prevented the default started no download.
    ...(pageState.watch.downloadClick && !pageState.watch.downloadClick.defaultPrevented ? { downloading: true } : {}),
    ...(pageState.watch.navigateEvent && !pageState.watch.navigateEvent.defaultPrevented ? { navigating: true } : {}),
  };
}
