// One browser tab as the CDP route sees it: a protocol session to the page, one more per out-of-process
// iframe, and in every frame an isolated world running the page agent. Coordinates are converted here
// from a frame's own viewport to the tab's top-level viewport (what Input.dispatchMouseEvent expects).
import { readFileSync } from 'node:fs';
import type { CDPSession, Page, Protocol } from 'puppeteer-core';
import { bounded } from '../../contract/bounded.js';
import { Refusal } from '../../contract/refusal.js';
import type { PageAgent } from '../page-agent/index.js';
import { foldTabLock, WARM_TAB_LOCK } from './tab-lock.js';
import { HANDLER_HOOK_SOURCE } from './handler-hook.js';
import { PageActivity } from './page-activity.js';
import { attachSession } from './attach.js';

/** The page agent (server/cdp/page-agent/), bundled into one script by scripts/build-page-agent.mjs. */
const AGENT_BUNDLE = new URL('../page-agent.bundle.js', import.meta.url);
let agentSource: string | undefined;
/** What a new world evaluates: the page agent, then the tab lock's warm-up (tab-lock.ts), read and joined once. */
function pageAgentSource(): string {
  if (agentSource === undefined) {
    try {
      agentSource = `${readFileSync(AGENT_BUNDLE, 'utf8')};\n${WARM_TAB_LOCK}`;
    } catch (e) {
      throw new Error(
        `the page agent bundle is missing (${AGENT_BUNDLE.pathname}); run npm run build: ${(e as Error).message}`,
      );
    }
  }
  return agentSource;
}

/**
 * The page agent's main-world part (page-agent/main-world.ts: what only the page's own world can tell, a code
 * editor's model), bundled beside it.
 */
const MAIN_WORLD_BUNDLE = new URL('../main-world.bundle.js', import.meta.url);
let mainWorldScript: string | undefined;
/** What every document evaluates in its own world at its start: the handler hook, then the main-world part. */
function mainWorldSource(): string {
  if (mainWorldScript === undefined) {
    try {
      mainWorldScript = `${HANDLER_HOOK_SOURCE};\n${readFileSync(MAIN_WORLD_BUNDLE, 'utf8')}`;
    } catch (e) {
      throw new Error(
        `the page agent's main-world bundle is missing (${MAIN_WORLD_BUNDLE.pathname}); run npm run build: ${(e as Error).message}`,
      );
    }
  }
  return mainWorldScript;
}

/** A page agent method's name, and what it takes and answers (JSON both ways). */
export type AgentMethod = keyof PageAgent;
export type AgentArgs<K extends AgentMethod> = Parameters<PageAgent[K]>;
export type AgentReply<K extends AgentMethod> = Awaited<ReturnType<PageAgent[K]>>;
const WORLD = 'verity';
/** Bound on any single question asked of a page (a frozen page or an open dialog must not hang a call). */
export const PAGE_CALL_TIMEOUT_MS = 10_000;
/** Bound on waiting for Chrome's error page after a failed load (it usually commits within milliseconds). */
const ERROR_PAGE_SETTLE_MS = 2_000;

export interface Frame {
  session: CDPSession;
  frameId: string;
  parentFrameId: string | null;
  /** The session that holds this frame's <iframe> element (differs from `session` for an OOPIF root). */
  ownerSession: CDPSession | null;
  url: string;
}

export class Tab {
  private readonly children = new Map<string, { session: CDPSession; parent: CDPSession }>();
  private readonly worlds = new Map<string, number>();
  dialog: { type: string; message: string; defaultPrompt?: string } | null = null;
  /**
   * How many documents the tab's main frame has committed: a download counts as an action's only while
   * the tab still shows the document the action acted on (browser/side-effects.ts). A navigation whose response is
   * a file commits none, so it keeps its count.
   */
  documents = 0;
  /** The top frame's id (stable across navigations of the tab). */
  mainFrameId = '';
  private readonly dialogWaiters = new Set<() => void>();
  /** The page's requests and console messages, recorded once a session drives the tab (page-activity.ts). */
  readonly activity: PageActivity;

  private constructor(
    readonly page: Page,
    readonly session: CDPSession,
    readonly id: string,
  ) {
    this.activity = new PageActivity(page);
  }

  static async open(page: Page): Promise<Tab> {
    const session = await attachSession(page);
    const { targetInfo } = await session.send('Target.getTargetInfo');
    const tab = new Tab(page, session, targetInfo.targetId);
    await tab.watchSession(session);
    session.on('Page.javascriptDialogOpening', (e: Protocol.Page.JavascriptDialogOpeningEvent) => {
      tab.dialog = { type: e.type, message: e.message, defaultPrompt: e.defaultPrompt };
      for (const notify of tab.dialogWaiters) notify();
    });
    session.on('Page.javascriptDialogClosed', () => {
      tab.dialog = null;
    });
    // A navigation (history back/forward and bfcache restores included) replaces the frame's isolated
    // world: forget the cached context so the next question builds a fresh one.
    session.on('Page.frameNavigated', (e: Protocol.Page.FrameNavigatedEvent) => {
      tab.worlds.delete(`${session.id()}/${e.frame.id}`);
      if (!e.frame.parentId) tab.documents++;
    });
    await session.send('Page.enable');
    tab.mainFrameId = (await session.send('Page.getFrameTree')).frameTree.frame.id;
    // Background delivery: the tab behaves as focused (document.hasFocus(), focus events, editors that
    // only track the selection while focused) without raising the window or taking OS focus.
    await session.send('Emulation.setFocusEmulationEnabled', { enabled: true });
    return tab;
  }

  /** Follows out-of-process iframes: each one gets its own session, found through auto-attach. */
  private async watchSession(session: CDPSession): Promise<void> {
    session.on('sessionattached', (child: CDPSession) => {
      this.children.set(child.id(), { session: child, parent: session });
      child.on('sessiondetached', () => this.children.delete(child.id()));
      void this.watchSession(child).catch(() => {});
      void child.send('Runtime.runIfWaitingForDebugger').catch(() => {});
    });
    session.on('sessiondetached', (child: CDPSession) => this.children.delete(child.id()));
    // Records which elements the page's scripts make clickable (handler-hook.ts) and answers what only the
    // page's world can tell (a code editor's model: page-agent/main-world.ts), in this document and every
    // later one; a frame whose hook cannot be installed keeps the other ways of finding its controls.
    const source = mainWorldSource();
    await session
      .send('Page.addScriptToEvaluateOnNewDocument', { source, runImmediately: true })
      .catch(() => undefined);
    await session.send('Target.setAutoAttach', {
      autoAttach: true,
      waitForDebuggerOnStart: false,
      flatten: true,
      filter: [{ type: 'iframe' }],
    });
  }

  get closed(): boolean {
    return this.page.isClosed();
  }

  /**
   * Awaits input that was just sent (Input.dispatch*), or stops waiting the moment a JavaScript dialog
   * opens: the renderer does not acknowledge the input until the dialog is answered, so waiting for the
   * send would hang the call. Returns 'dialog' then; the send settles on its own once the dialog is closed.
   */
  async unlessDialog(sent: Promise<unknown>): Promise<'sent' | 'dialog'> {
    let notify = () => {};
    const opened = new Promise<'dialog'>((resolve) => {
      notify = () => resolve('dialog');
    });
    this.dialogWaiters.add(notify);
    try {
      if (this.dialog) return 'dialog';
      return await Promise.race([sent.then(() => 'sent' as const), opened]);
    } finally {
      this.dialogWaiters.delete(notify);
      sent.catch(() => {}); // a send still pending behind the dialog must not become an unhandled rejection
    }
  }

  async url(): Promise<string> {
    return this.page.url();
  }
  async title(): Promise<string> {
    return bounded(this.page.title(), PAGE_CALL_TIMEOUT_MS, 'the tab title');
  }

  async navigate(url: string): Promise<void> {
    this.worlds.clear();
    let outcome: 'sent' | 'dialog';
    try {
      // A beforeunload handler that asks holds the navigation until its dialog is answered: say so at once.
      outcome = await this.unlessDialog(this.page.goto(url, { waitUntil: 'load', timeout: 30_000 }));
    } catch (e) {
      const message = (e as Error).message;
      if (/net::ERR_(?!ABORTED)/.test(message)) await this.errorPageCommitted();
      throw new Refusal('target_not_found', `navigation to ${url} failed: ${message}`);
    }
    if (outcome === 'dialog') {
      const d = this.dialog;
      throw new Refusal(
        'dialog_open',
        `a ${d?.type ?? 'JavaScript'} dialog opened ("${d?.message ?? ''}") and holds the navigation to ${url}; answer it with page {action:"handle_dialog", accept:true} to leave the page (the navigation then goes on) or accept:false to stay`,
        { dialog: { type: d?.type ?? null, message: d?.message ?? '' } },
      );
    }
  }

  /**
   * A load that failed (or that the browser blocked) commits Chrome's error page a moment after the failure
   * is reported. Until it has, its late load event would be taken by the NEXT navigation as its own (that
   * navigation would "finish" on chrome-error:), so a failed navigation waits for it, bounded.
   */
  private async errorPageCommitted(): Promise<void> {
    for (
      const end = Date.now() + ERROR_PAGE_SETTLE_MS;
      Date.now() < end && !this.page.url().startsWith('chrome-error:');
    ) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Every frame of the tab, parents before children, with the session that can talk to it. */
  async frames(): Promise<Frame[]> {
    this.refuseIfDialog(); // even the frame tree is answered by the page's renderer, frozen by a dialog
    const out: Frame[] = [];
    const walk = (
      session: CDPSession,
      owner: CDPSession | null,
      tree: Protocol.Page.FrameTree,
      parentFrameId: string | null,
    ) => {
      out.push({ session, frameId: tree.frame.id, parentFrameId, ownerSession: owner, url: tree.frame.url });
      for (const child of tree.childFrames ?? []) walk(session, session, child, tree.frame.id);
    };
    const { frameTree } = await bounded(
      this.session.send('Page.getFrameTree'),
      PAGE_CALL_TIMEOUT_MS,
      "the tab's frame tree (the page is not responding)",
    );
    walk(this.session, null, frameTree, null);
    for (const { session, parent } of this.children.values()) {
      try {
        const { frameTree: childTree } = await session.send('Page.getFrameTree');
        walk(session, parent, childTree, childTree.frame.parentId ?? null);
      } catch {
        /* the frame went away while listing */
      }
    }
    return out;
  }

  /**
   * The frame an element ref names, without listing the tab's frames (the hot path of typing): enough
   * to talk to its world; frameOrigin needs the full list from frames().
   */
  frameFor(sessionId: string, frameId: string): Frame | null {
    const session = sessionId === this.session.id() ? this.session : this.children.get(sessionId)?.session;
    if (!session) return null;
    return { session, frameId, parentFrameId: null, ownerSession: null, url: '' };
  }

  /** True when the tab's frames all answer through its own session (no out-of-process iframe attached). */
  get singleSession(): boolean {
    return this.children.size === 0;
  }

  /** The top frame, without asking the browser (its id is stable across navigations). */
  topFrame(): Frame {
    return this.frameFor(this.session.id(), this.mainFrameId)!;
  }

  private worldKey(frame: Frame): string {
    return `${frame.session.id()}/${frame.frameId}`;
  }

  /** The execution context of Verity's isolated world in this frame, with the page agent installed. */
  async world(frame: Frame): Promise<number> {
    const key = this.worldKey(frame);
    const known = this.worlds.get(key);
    if (known !== undefined) return known;
    const { executionContextId } = await frame.session.send('Page.createIsolatedWorld', {
      frameId: frame.frameId,
      worldName: WORLD,
      grantUniveralAccess: false,
    });
    await frame.session.send('Runtime.evaluate', { expression: pageAgentSource(), contextId: executionContextId });
    this.worlds.set(key, executionContextId);
    return executionContextId;
  }

  /** Calls `__verity.<method>(...args)` in the frame's isolated world and returns its JSON value. */
  async call<K extends AgentMethod>(frame: Frame, method: K, ...args: AgentArgs<K>): Promise<AgentReply<K>> {
    this.refuseIfDialog();
    const expression = `globalThis.__verity.${method}(${args.map((a) => JSON.stringify(a ?? null)).join(',')})`;
    for (let attempt = 0; attempt < 2; attempt++) {
      const contextId = await this.world(frame);
      // Inside an action, its first call also takes the tab's cross-process lock (tab-lock.ts).
      const folded = await foldTabLock(this, frame, contextId, expression, PAGE_CALL_TIMEOUT_MS);
      let reply: Protocol.Runtime.EvaluateResponse;
      let notify = () => {};
      // A dialog freezes the page's scripts: stop waiting the moment one opens.
      const dialogOpened = new Promise<never>((_, reject) => {
        notify = () =>
          reject(
            new Refusal(
              'dialog_open',
              `a ${this.dialog?.type} dialog opened ("${this.dialog?.message}"); answer it with page {action:"handle_dialog"}`,
            ),
          );
      });
      this.dialogWaiters.add(notify);
      try {
        reply = await bounded(
          Promise.race([
            frame.session.send('Runtime.evaluate', {
              expression: folded?.expression ?? expression,
              contextId,
              awaitPromise: true,
              returnByValue: true,
            }),
            dialogOpened,
          ]),
          folded?.timeoutMs ?? PAGE_CALL_TIMEOUT_MS,
          `the page to answer ${method}`,
        );
      } catch (e) {
        const worldGone =
          !(e instanceof Refusal) &&
          /context with specified id|Execution context was destroyed/i.test((e as Error).message);
        folded?.failed(worldGone);
        if (worldGone) {
          this.worlds.delete(this.worldKey(frame));
          continue; // the frame navigated: a fresh world, once
        }
        throw e;
      } finally {
        this.dialogWaiters.delete(notify);
      }
      if (reply.exceptionDetails) {
        folded?.failed(false);
        const text = reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text;
        throw pageError(text);
      }
      if (!folded) return reply.result.value as AgentReply<K>;
      const unwrapped = folded.unwrap(reply.result.value);
      if ('error' in unwrapped) throw pageError(unwrapped.error);
      return unwrapped.value as AgentReply<K>;
    }
    throw new Refusal('target_not_found', 'the frame kept navigating while Verity tried to read it');
  }

  /** An open dialog freezes the page's scripts: anything evaluated there would wait until it is answered. */
  private refuseIfDialog(): void {
    if (this.dialog)
      throw new Refusal(
        'dialog_open',
        `a ${this.dialog.type} dialog is open ("${this.dialog.message}"); answer it with page {action:"handle_dialog"}`,
      );
  }

  /** Registers closed shadow roots with the frame's agent so the walker can enter them (CDP pierces them). */
  async pierceClosedShadowRoots(frame: Frame): Promise<void> {
    this.refuseIfDialog();
    const contextId = await this.world(frame);
    for (let round = 0; round < 4; round++) {
      // closed roots nest; each round finds the next level
      const { result } = await frame.session.send('Runtime.evaluate', {
        expression: 'globalThis.__verity.closedRootCandidates()',
        contextId,
      });
      if (!result.objectId) return;
      const { result: props } = await frame.session.send('Runtime.getProperties', {
        objectId: result.objectId,
        ownProperties: true,
      });
      const hosts = props.filter((p) => /^\d+$/.test(p.name) && p.value?.objectId).map((p) => p.value!.objectId!);
      await frame.session.send('Runtime.releaseObject', { objectId: result.objectId });
      if (hosts.length === 0) return;
      let found = 0;
      for (const objectId of hosts) {
        const { node } = await frame.session.send('DOM.describeNode', { objectId, depth: 1, pierce: true });
        const closed = node.shadowRoots?.find((r) => r.shadowRootType === 'closed');
        if (!closed) continue;
        const { object } = await frame.session.send('DOM.resolveNode', {
          backendNodeId: closed.backendNodeId,
          executionContextId: contextId,
        });
        await frame.session.send('Runtime.callFunctionOn', {
          functionDeclaration: 'function(root) { globalThis.__verity.registerClosedRoot(root); }',
          executionContextId: contextId,
          arguments: [{ objectId: object.objectId }],
        });
        found++;
      }
      if (found === 0) return;
    }
  }

  /** Top-left of the frame's viewport in the tab's top-level viewport (CSS pixels). */
  async frameOrigin(frame: Frame, all: Frame[]): Promise<{ x: number; y: number }> {
    if (!frame.ownerSession) return { x: 0, y: 0 };
    const { backendNodeId } = await frame.ownerSession.send('DOM.getFrameOwner', { frameId: frame.frameId });
    const { model } = await frame.ownerSession.send('DOM.getBoxModel', { backendNodeId });
    // Box models are relative to the owner session's local root (the top frame, or an OOPIF root).
    const localRoot = all.find((f) => f.session === frame.ownerSession && f.ownerSession !== f.session);
    const base = localRoot ? await this.frameOrigin(localRoot, all) : { x: 0, y: 0 };
    return { x: base.x + model.content[0], y: base.y + model.content[1] };
  }

  /** The element index, in its frame's latest snapshot, of the <iframe> that holds `frame`. */
  async ownerIndex(frame: Frame, all: Frame[]): Promise<number> {
    const parent = all.find((f) => f.frameId === frame.parentFrameId);
    if (!parent || !frame.ownerSession) return -1;
    const { backendNodeId } = await frame.ownerSession.send('DOM.getFrameOwner', { frameId: frame.frameId });
    const contextId = await this.world(parent);
    const { object } = await parent.session.send('DOM.resolveNode', { backendNodeId, executionContextId: contextId });
    const { result } = await parent.session.send('Runtime.callFunctionOn', {
      functionDeclaration: 'function() { return globalThis.__verity.indexInLatest(this); }',
      objectId: object.objectId,
      returnByValue: true,
    });
    return result.value as number;
  }

  /** Puts files into an <input type=file> and returns the names it now holds (the read-back). */
  async setInputFiles(element: { snapshotId: string; ref: unknown }, paths: string[]): Promise<string[]> {
    const ref = element.ref as { sessionId: string; frameId: string; local: number };
    const frame = this.frameFor(ref.sessionId, ref.frameId);
    if (!frame)
      throw new Refusal('stale_element_token', 'element_token is stale; call get_window_state again to refresh');
    const contextId = await this.world(frame);
    const { result, exceptionDetails } = await frame.session.send('Runtime.evaluate', {
      expression: `globalThis.__verity.element(${JSON.stringify(element.snapshotId)}, ${ref.local})`,
      contextId,
    });
    if (exceptionDetails || !result.objectId) throw pageError(exceptionDetails?.exception?.description ?? 'no element');
    await frame.session.send('DOM.setFileInputFiles', { files: paths, objectId: result.objectId }).catch((e: Error) => {
      throw new Refusal('invalid_arguments', `element_token: not a file input, or a path is unreadable (${e.message})`);
    });
    const { result: names } = await frame.session.send('Runtime.callFunctionOn', {
      functionDeclaration: 'function() { return Array.from(this.files || []).map((f) => f.name); }',
      objectId: result.objectId,
      returnByValue: true,
    });
    return names.value as string[];
  }

  /**
   * A PNG of the tab's viewport, or of `clip` (CSS pixels of the document, at `scale`: zoom) as CDP takes it,
   * secret fields masked either way: the one capture of a tab.
   */
  async screenshot(clip?: {
    x: number;
    y: number;
    width: number;
    height: number;
    scale: number;
  }): Promise<{ data: string; width: number; height: number }> {
    const data = await this.withSecretsMasked(async () => {
      const shot = await bounded(
        this.session.send('Page.captureScreenshot', { format: 'png', ...(clip ? { clip } : {}) }),
        PAGE_CALL_TIMEOUT_MS,
        'a screenshot of the tab',
      );
      return shot.data;
    });
    // The size is in the PNG's header (IHDR, bytes 16-23): decoding only its first 32 bytes spares a native
    // buffer as large as the image per screenshot, which the allocator keeps in the RSS after it is freed.
    const png = Buffer.from(data.slice(0, 44), 'base64');
    return { data, width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
  }

  /**
   * Runs a capture with the text of one-time code and card fields drawn as discs in every frame, as
   * password fields are (issue #22: a screenshot showed them in clear), and puts the page back after.
   * A frame that cannot be reached (gone, navigating) is captured as it is.
   */
  async withSecretsMasked<T>(capture: () => Promise<T>): Promise<T> {
    const frames = this.dialog ? [] : await this.frames().catch(() => []);
    const mask = (on: boolean) => Promise.all(frames.map((f) => this.call(f, 'maskSecretFields', on).catch(() => 0)));
    const masked = (await mask(true)).some((n) => n > 0);
    try {
      return await capture();
    } finally {
      if (masked) await mask(false);
    }
  }

  /** CSS size of the layout viewport, to relate screenshot pixels to CSS pixels. */
  async viewport(): Promise<{ width: number; height: number }> {
    const metrics = await this.session.send('Page.getLayoutMetrics');
    return { width: metrics.cssLayoutViewport.clientWidth, height: metrics.cssLayoutViewport.clientHeight };
  }

  /** The visible viewport in CSS pixels, where it is in the document (its scroll), and device pixels per CSS pixel. */
  async visibleArea(): Promise<{ width: number; height: number; pageX: number; pageY: number; density: number }> {
    const m = await this.session.send('Page.getLayoutMetrics');
    const css = m.cssVisualViewport;
    return {
      width: css.clientWidth,
      height: css.clientHeight,
      pageX: css.pageX,
      pageY: css.pageY,
      density: m.visualViewport.clientWidth / css.clientWidth || 1,
    };
  }
}

function pageError(text: string): Refusal | Error {
  if (text.includes('verity:stale'))
    return new Refusal('stale_element_token', 'element_token is stale; call get_window_state again to refresh');
  if (text.includes('verity:detached'))
    return new Refusal('target_not_found', 'the element is no longer in the page; call get_window_state again');
  if (text.includes('verity:out_of_range'))
    return new Refusal('invalid_element_token', 'element_token names an element the snapshot does not have');
  return new Error(`the page agent failed: ${text}`);
}
