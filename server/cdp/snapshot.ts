// get_window_state for a tab: every frame's interactive elements (cross-origin iframes and closed shadow
// roots included), merged into one list in document order, with frames in screenshot pixels.
import type { ResolvedTarget, Snapshot, SnapshotText } from '../contract/driver.js';
import type { HeldObservation, Reobservation, Reobserved } from '../contract/changes.js';
import { Refusal } from '../contract/refusal.js';
import { elementToken } from '../contract/element-token.js';
import type { AgentReply, Frame, Tab } from './tab/tab.js';
import type { SnapshotRow } from './page-agent/core.js';
import type { TextRow } from './page-agent/outline-text.js';
import { cutName, squash, withoutIconGlyphs } from './page-agent/names.js';
import { mergedRole } from './ax-roles.js';

/** How an element of a tab snapshot is found again: its frame and its index in that frame's list. */
export interface TabElementRef {
  sessionId: string;
  frameId: string;
  local: number;
  /** A probe's element (verify_state's read): its index in the frame's latest observation, -1 when not listed there. */
  latest?: number;
}

type Row = SnapshotRow;

/** Most elements of one frame whose name and role are asked of the accessibility tree, per snapshot. */
const AX_LOOKUPS_MAX = 500;
interface FrameSnapshot {
  frame: Frame;
  rows: Row[];
  text: TextRow[];
  latestOf?: number[];
  selectedOf?: boolean[];
  origin: { x: number; y: number };
  ownerIndex: number;
  /** Re-observing: each row's index in the frame's latest snapshot (page agent reobserve). */
  locals?: number[];
}

/**
 * Per tab, its latest snapshot's element index by (frame, index in the frame): to name an element the page
 * agent reports (what covers a target) by the token the model holds. One per tab, dropped with the tab.
 */
const latestIndex = new WeakMap<Tab, { snapshotId: string; globalOf: Map<string, number> }>();
const refKey = (sessionId: string, frameId: string, local: number) => `${sessionId}/${frameId}/${local}`;

/** The token of a frame's element in the tab's latest snapshot, when `snapshotId` is still that snapshot. */
export function tokenInLatest(tab: Tab, frame: Frame, snapshotId: string | null, local: number): string | null {
  const latest = latestIndex.get(tab);
  if (!latest || local < 0 || (snapshotId !== null && latest.snapshotId !== snapshotId)) return null;
  const index = latest.globalOf.get(refKey(frame.session.id(), frame.frameId, local));
  return index === undefined ? null : elementToken(latest.snapshotId, index);
}

/** The page agent's answer to reobserve asked alone: the document's rows, `full` (it does not stand alone) or null. */
type Reread = AgentReply<'reobserve'>;

/**
 * The re-read an action made of its tab's top document in its own last page call (type_text's read-back
 * re-reads the document after the field, in the same round trip), kept for that call's `changes`: keyed by the
 * call's target, so only that call's reobserveTab takes it, and only while the tab shows the same document.
 */
const rereads = new WeakMap<ResolvedTarget, { snapshotId: string; documents: number; reread: Reread }>();

export function keepReread(target: ResolvedTarget, tab: Tab, snapshotId: string, reread: Reread): void {
  rereads.set(target, { snapshotId, documents: tab.documents, reread });
}

/** What the action re-read for `target`, once; undefined when it did not, or the tab shows another document since. */
function takeReread(target: ResolvedTarget | undefined, tab: Tab, snapshotId: string): Reread | undefined {
  const kept = target && rereads.get(target);
  if (!kept) return undefined;
  rereads.delete(target);
  return kept.snapshotId === snapshotId && kept.documents === tab.documents ? kept.reread : undefined;
}

/** `probe`: a read that is no observation (verify_state): the latest observation's tokens stay good. */
export async function snapshotTab(
  tab: Tab,
  snapshotId: string,
  includeScreenshot: boolean,
  probe = false,
): Promise<Snapshot> {
  return (await observeTab(tab, snapshotId, includeScreenshot, null, [], probe))!;
}

/**
 * The tab's elements after an action, matched against its held observation (an action's `changes`): the same
 * walk as a snapshot's, each frame's elements matched to its latest snapshot's by the page agent, without
 * making that snapshot stale. Null when the tab's document is no longer the observed one (a navigation):
 * nothing of it can be matched then. What the action re-read itself for `target` (keepReread) is used, not asked again.
 */
export async function reobserveTab(
  tab: Tab,
  held: HeldObservation,
  target?: ResolvedTarget,
): Promise<Reobservation | null> {
  const dialogs: Array<{ role: string; name: string }> = [];
  const reread = takeReread(target, tab, held.snapshotId);
  const snap = await observeTab(tab, held.snapshotId, false, held, dialogs, false, reread);
  if (!snap) return null;
  return {
    ...(dialogs.length ? { dialogs } : {}),
    elements: snap.elements,
    ...(snap.text ? { text: snap.text } : {}),
    ...(snap.incomplete ? { incomplete: snap.incomplete } : {}),
  };
}

async function observeTab(
  tab: Tab,
  snapshotId: string,
  includeScreenshot: boolean,
  held: HeldObservation | null,
  dialogs: Array<{ role: string; name: string }> = [],
  probe = false,
  reread?: Reread,
): Promise<(Snapshot & { elements: Reobserved[] }) | null> {
  const taken: FrameSnapshot[] = [];
  let textCut = false;
  let framesNew = false;
  // Re-observing after an action (its `changes`): a tab with no out-of-process frame is first asked in one
  // round trip whether its document stands alone (no frame element, no custom element not yet pierced); if it
  // does, that same call's rows are the whole re-read: no frame tree, no shadow-root piercing round trips.
  let frames: Frame[] = [];
  if (held && tab.singleSession) {
    const top = tab.topFrame();
    const again = reread !== undefined ? reread : await tab.call(top, 'reobserve', snapshotId, true);
    if (again === null) return null;
    if (again !== 'full') {
      frames = [top];
      await withAccessibleNames(tab, top, snapshotId, again.rows, again.locals);
      if (again.textTruncated) textCut = true;
      for (const [role, name] of again.opened) dialogs.push({ role, name });
      taken.push({
        frame: top,
        rows: again.rows,
        text: again.text,
        origin: { x: 0, y: 0 },
        ownerIndex: -1,
        locals: again.locals,
      });
    }
  }
  if (!taken.length) frames = await tab.frames();
  for (const frame of taken.length ? [] : frames) {
    try {
      await tab.pierceClosedShadowRoots(frame);
      if (held) {
        const again = await tab.call(frame, 'reobserve', snapshotId);
        if (!again || again === 'full') {
          if (frame === frames[0]) return null;
          framesNew = true; // a frame with a document of its own since: its elements are not matched
          continue;
        }
        await withAccessibleNames(tab, frame, snapshotId, again.rows, again.locals);
        if (again.textTruncated) textCut = true;
        for (const [role, name] of again.opened) dialogs.push({ role, name });
        taken.push({
          frame,
          rows: again.rows,
          text: again.text,
          origin: { x: 0, y: 0 },
          ownerIndex: -1,
          locals: again.locals,
        });
        continue;
      }
      const { rows, text, textTruncated, latestOf, selectedOf } = await tab.call(frame, 'snapshot', snapshotId, probe);
      await withAccessibleNames(tab, frame, snapshotId, rows);
      if (textTruncated) textCut = true;
      taken.push({ frame, rows, text, latestOf, selectedOf, origin: { x: 0, y: 0 }, ownerIndex: -1 });
    } catch (e) {
      if (e instanceof Refusal || frame === frames[0]) throw e;
      // A child frame that detached or never committed a document has nothing to list.
    }
  }
  // Re-observing: which element of the held observation each (frame, local) is.
  const heldOf = new Map<string, number>();
  if (held)
    held.elements.forEach((e, index) => {
      const r = e.ref as TabElementRef;
      heldOf.set(refKey(r.sessionId, r.frameId, r.local), index);
    });
  await Promise.all(
    taken.map(async (f) => {
      if (!f.frame.ownerSession) return;
      try {
        f.origin = await tab.frameOrigin(f.frame, frames);
        f.ownerIndex = await tab.ownerIndex(f.frame, frames);
      } catch {
        f.ownerIndex = -2;
      } // its <iframe> is gone or hidden: its elements cannot be reached
    }),
  );

  // Re-observing (every action on an observed tab) keeps the observation's scale: two round trips fewer per
  // action, and its frames stay in the pixels of the observation's screenshot, as its tokens' do.
  const viewport = held?.scale ? { width: 0, height: 0 } : await tab.viewport();
  const shot = includeScreenshot ? await tab.screenshot() : null;
  const scale = shot ? shot.width / viewport.width : (held?.scale ?? (await devicePixelRatio(tab)));
  const elements: Reobserved[] = [];
  const text: SnapshotText[] = [];
  const emit = (f: FrameSnapshot, parentOfRoot: number) => {
    const globalOf: number[] = [];
    // A frame's text blocks go where they stand: before its element `before` (local), inside `parent`.
    let block = 0;
    const textUpTo = (local: number) => {
      for (; block < f.text.length && f.text[block][2] <= local; block++) {
        const [kind, words, , parent] = f.text[block];
        const inside = parent >= 0 ? globalOf[parent] : parentOfRoot;
        text.push({ kind, text: words, before_index: elements.length, parent_index: inside >= 0 ? inside : null });
      }
    };
    f.rows.forEach((row, local) => {
      textUpTo(local);
      const [role, label, value, enabled, focused, x, y, w, h, parentLocal, isFrame, , nameSource, secret] = row;
      const index = elements.length;
      globalOf[local] = index;
      const own = f.locals ? f.locals[local] : local;
      const ref: TabElementRef = { sessionId: f.frame.session.id(), frameId: f.frame.frameId, local: own };
      const heldIndex = held ? heldOf.get(refKey(ref.sessionId, ref.frameId, own)) : undefined;
      if (f.latestOf) ref.latest = f.latestOf[local];
      elements.push({
        ...(heldIndex !== undefined ? { held: heldIndex } : {}),
        element_index: index,
        role,
        label,
        ...(nameSource ? { name_source: nameSource } : {}),
        ...(value !== null ? { value } : {}),
        enabled,
        focused,
        in_web_content: true,
        frame: {
          x: round((f.origin.x + x) * scale),
          y: round((f.origin.y + y) * scale),
          w: round(w * scale),
          h: round(h * scale),
        },
        parent_index: parentLocal >= 0 ? globalOf[parentLocal] : parentOfRoot >= 0 ? parentOfRoot : null,
        ref,
        ...(secret ? { secret } : {}),
        ...(f.selectedOf ? { selected: f.selectedOf[local] } : {}),
      });
      if (isFrame) {
        for (const child of taken) {
          if (child.frame.parentFrameId === f.frame.frameId && child.ownerIndex === own) emit(child, index);
        }
      }
    });
    textUpTo(Number.POSITIVE_INFINITY);
  };
  const main = taken.find((f) => !f.frame.parentFrameId);
  if (main) emit(main, -1);
  // Re-observed elements keep their held index; new ones take the indices diffObservations appends them at.
  let appended = held?.elements.length ?? 0;
  const indexOf = (e: Reobserved) => (held ? (e.held ?? appended++) : e.element_index);
  const keys = elements.map((e) => {
    const r = e.ref as TabElementRef;
    return [refKey(r.sessionId, r.frameId, r.local), indexOf(e)] as [string, number];
  });
  if (held) {
    const latest = latestIndex.get(tab);
    if (latest?.snapshotId === snapshotId) for (const [key, index] of keys) latest.globalOf.set(key, index);
  } else if (!probe) latestIndex.set(tab, { snapshotId, globalOf: new Map(keys) });
  return {
    target: { kind: 'tab', tab_id: tab.id, url: tab.page.url() },
    elements,
    text,
    ...(textCut
      ? { text_incomplete: 'a frame held more text than one observation reads; page get_text reads it' }
      : {}),
    ...(framesNew
      ? { incomplete: 'a frame loaded a new document since the observation: its elements are not listed' }
      : {}),
    ...(shot ? { screenshot: { data: shot.data, mimeType: 'image/png', width: shot.width, height: shot.height } } : {}),
    screenshot_width: shot?.width ?? Math.round(viewport.width * scale),
    screenshot_height: shot?.height ?? Math.round(viewport.height * scale),
    scale,
  };
}

/**
 * Names and roles as Chrome computes them, for the elements the page agent flagged (aria-labelledby,
 * ElementInternals, EditContext, no name or a generic role): each element's node of the accessibility
 * tree (Accessibility.getPartialAXTree on the agent's own handle, so no DOM walk matches them up). The
 * rest keep the agent's names, which follow the same rules for native controls and labels. A frame whose
 * tree cannot be read keeps the agent's names: the snapshot never fails for it.
 */
async function withAccessibleNames(
  tab: Tab,
  frame: Frame,
  snapshotId: string,
  rows: Row[],
  locals?: number[],
): Promise<void> {
  const flagged = rows.flatMap((row, local) => (row[11] ? [local] : [])).slice(0, AX_LOOKUPS_MAX);
  if (flagged.length === 0) return;
  const contextId = await tab.world(frame);
  const { result } = await frame.session.send('Runtime.evaluate', {
    expression: `globalThis.__verity.elementsAt(${JSON.stringify(snapshotId)}, ${JSON.stringify(locals ? flagged.map((i) => locals[i]) : flagged)})`,
    contextId,
  });
  if (!result.objectId) return;
  try {
    const { result: props } = await frame.session.send('Runtime.getProperties', {
      objectId: result.objectId,
      ownProperties: true,
    });
    const handles = new Map(
      props.filter((p) => /^\d+$/.test(p.name) && p.value?.objectId).map((p) => [Number(p.name), p.value!.objectId!]),
    );
    await Promise.all(
      flagged.map(async (local, i) => {
        const objectId = handles.get(i);
        if (!objectId) return;
        const { nodes } = await frame.session
          .send('Accessibility.getPartialAXTree', { objectId, fetchRelatives: false })
          .catch(() => ({ nodes: [] as any[] }));
        const node = nodes.find((n: any) => !n.ignored) ?? nodes[0];
        const role = node?.role?.value;
        const name = node?.name?.value;
        const row = rows[local];
        // An icon font's glyph is no name: the agent's guess from the icon stands then.
        const named = typeof name === 'string' ? withoutIconGlyphs(name) : '';
        // A Material icon's ligature ("more_vert") is Chrome's name for it too: the guess reads better.
        const ligature = row[12] === 'icon_guess' && /^[a-z0-9_]+$/.test(named);
        if (named !== '' && !ligature) {
          row[1] = cutName(squash(named));
          row[12] = '';
        }
        // A checked state only the tree knows (ElementInternals.ariaChecked) becomes the value, as aria-checked would.
        const checked = node?.properties?.find((p: any) => p.name === 'checked')?.value?.value;
        if (row[2] === null && checked !== undefined) row[2] = String(checked);
        row[0] = mergedRole(row[0], role);
      }),
    );
  } catch {
    /* the agent's names stand */
  } finally {
    await frame.session.send('Runtime.releaseObject', { objectId: result.objectId }).catch(() => undefined);
  }
}

async function devicePixelRatio(tab: Tab): Promise<number> {
  const metrics = await tab.session.send('Page.getLayoutMetrics');
  return metrics.visualViewport.clientWidth / metrics.cssVisualViewport.clientWidth || 1;
}

function round(n: number): number {
  return Math.round(n);
}

/** Finds the frame an element ref lives in, or refuses if that frame is gone. */
export async function frameOf(tab: Tab, ref: TabElementRef): Promise<{ frame: Frame; frames: Frame[] }> {
  const frames = await tab.frames();
  const frame = frames.find((f) => f.session.id() === ref.sessionId && f.frameId === ref.frameId);
  if (!frame)
    throw new Refusal('stale_element_token', 'element_token is stale; call get_window_state again to refresh', {
      detail: 'its frame is gone',
    });
  return { frame, frames };
}

/** The frame of an element ref, cheaply (no frame listing); refuses as stale when it is gone. */
export function quickFrameOf(tab: Tab, ref: TabElementRef): Frame {
  const frame = tab.frameFor(ref.sessionId, ref.frameId);
  if (!frame)
    throw new Refusal('stale_element_token', 'element_token is stale; call get_window_state again to refresh', {
      detail: 'its frame is gone',
    });
  return frame;
}
