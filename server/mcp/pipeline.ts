// The call pipeline: the one path every tool call takes, direct or as a run_actions step. Arguments are
// checked, the policy's approval list consulted, the call admitted to a session, the handler run with the
// narrow ToolContext, the step recorded when its session records, and the operators' action log told.
// The read-ahead for type_text (anticipate) lives here too: it is the one place that knows MCP requests.
import type { Activity, ActionEntry } from '../activity.js';
import { summarizeArgs } from '../activity.js';
import { APPROVAL_TIMEOUT_MS, type ApprovalTarget, type Approvals } from '../approvals.js';
import { readFileSync } from 'node:fs';
import type { Policy } from '../policy.js';
import { reportWhile } from '../progress.js';
import { pagesOf } from '../routing/pages.js';
import type { Router } from '../routing/router.js';
import type { CursorPreferences } from '../sessions/cursor-preferences.js';
import type { SessionManager } from '../sessions/manager.js';
import { recordStep } from '../sessions/recording.js';
import type { CallContext, Reply, ToolContext, ToolDef } from '../tools/context.js';
import { parseArgs } from '../tools/define.js';
import { refusalReply } from '../tools/reply.js';
import type { UiCommands } from '../ui-commands.js';
import { asRefusal } from './refusals.js';
import { isDefect } from '../errors.js';
import { Refusal } from '../contract/refusal.js';
import { surfaceOf, type Capability } from '../contract/capabilities.js';
import { abandonOnAbort, type Brake } from '../sessions/brake.js';
import type { AuditStore, AuditUnavailable } from '../audit/store.js';
import { noteCall } from '../audit/trail.js';
import type { ResolvedToken } from '../routing/snapshots.js';
import type { SecretEcho } from '../contract/secret-echo.js';
import { expectSecrets, settleSecrets } from './secret-echo.js';
import { type ArgumentPasses, CallArguments, type KeptArguments, labelsOf, tokensIn } from './call-args.js';

export interface PipelineParts {
  router: Router;
  sessions: SessionManager;
  policy: Policy;
  approvals: Approvals;
  activity: Activity;
  cursor: CursorPreferences;
  uiCommands: UiCommands;
  options: {
    allowJavascript?: boolean;
    allowClipboardRead?: boolean;
    allowLaunch?: string[];
    uploadRoots?: string[];
    approvalTimeoutS?: number;
    tools?: 'default' | 'full';
    caps?: Capability[];
  };
  /** The operator's brake (stop, pause) and the audit trail every call goes into. */
  brake: Brake;
  audit: AuditStore;
  /** Texts typed into secret fields, masked wherever they come back (contract/secret-echo.ts). */
  echo: SecretEcho;
}

type Trace = {
  approval?: { id: string; by?: string };
  /** The call was held for an operator (whatever the operator then said). */
  approvalAsked?: boolean;
  recording?: {
    dir: string;
    step: number;
    before?: string;
    after?: string;
    target?: { x: number; y: number; w: number; h: number };
  };
  /** Tells the operators' action log, once the call's audit entry exists (so the line can open that entry). */
  noteAction?: (kept: KeptArguments, auditId: number | undefined) => void;
};

/** The ToolContext over the server's parts: only what tools use, each member delegating (never a copy). */
function toolContextOf(parts: PipelineParts): ToolContext {
  const { router } = parts;
  return {
    options: {
      allowJavascript: !!parts.options.allowJavascript,
      allowClipboardRead: !!parts.options.allowClipboardRead,
      allowLaunch: parts.options.allowLaunch ?? [],
      uploadRoots: parts.options.uploadRoots,
      surface: surfaceOf(parts.options),
    },
    snapshots: router.snapshots,
    policy: parts.policy,
    sessions: parts.sessions,
    cursor: parts.cursor,
    sendUiCommand: (connId, command) => parts.uiCommands.send(connId, command),
    operatorWaits: () => ({ approvals: parts.approvals.list().length, heldAgents: parts.brake.heldCount }),
    resolve: (args, caller, options) => router.resolve(args, caller, options),
    pages: pagesOf(router),
    nativeRoute: () => router.nativeRoute(),
    get browserInUse() {
      return router.browserInUse;
    },
    get launchedBrowserPid() {
      return router.launchedBrowserPid;
    },
    browserVersion: () => router.browserVersion(),
    drivenBrowserPid: () => router.drivenBrowserPid(),
    belongsToDrivenBrowser: (pid, browserPid) => router.belongsToDrivenBrowser(pid, browserPid),
    cursorShown: (tabId) => router.cursorShown(tabId),
  };
}

export class CallPipeline {
  /** What every tool handler is given. */
  readonly tools: ToolContext;
  /** How often calls' arguments were masked and summarized, all calls together (a debug stat: tests count them). */
  readonly argumentPasses: ArgumentPasses = { shown: 0, kept: 0, summary: 0 };

  constructor(private readonly parts: PipelineParts) {
    this.tools = toolContextOf(parts);
  }

  /**
   * The one path every call takes, direct or as a batch step: the operator's brake, arguments, the
   * policy's approval list, admission to a session (which may be ended or another connection's), then the
   * handler, recorded when the session records. Every failure becomes a refusal, so the server keeps
   * serving; every call, refused or not, goes into the audit trail.
   */
  async call(tool: ToolDef, rawArgs: unknown, connection: CallContext): Promise<Reply> {
    const started = performance.now();
    // Bounded, keyed to its session, and from here on carried: nothing after this reads rawArgs again.
    const args = new CallArguments(rawArgs, connection.connectionId, this.argumentPasses, tool.name);
    const trace: Trace = {};
    let reply: Reply;
    // The call's boundary: whatever happens in it becomes this call's refusal, never the process's end.
    try {
      if (args.breach) {
        reply = refusalReply(new Refusal('invalid_arguments', args.breach.message, { field: args.breach.field }));
      } else {
        // Tokens are resolved once, before the call runs (its own snapshot would make them stale): the
        // labels for the audit trail and the approval card, and the router's target, all come from this.
        args.tokens = this.resolveTokens(args.sent);
        args.labels = this.parts.echo.scrub(labelsOf(args.tokens));
        reply = await this.admitAndRun(tool, args, { ...connection, tokens: args.tokens }, trace);
      }
    } catch (e) {
      reply = internalError(tool.name, 'call', e);
    }
    reply = this.parts.echo.scrubReply(reply); // a secret typed earlier never comes back (secret-echo.ts)
    // The call's entry is kept before its result is returned (a shared store: in its database, or the
    // result says audit_unavailable); a failure to log must never reach the caller or the process.
    let auditId: number | undefined;
    let kept: KeptArguments | undefined;
    let unavailable: AuditUnavailable | null = null;
    try {
      // A secret typed into a password field (the result says `masked`) is kept masked.
      kept = args.kept(reply.structured, (value) => this.parts.echo.scrub(value));
      const entry = noteCall(this.parts.audit, {
        sessionKey: args.sessionKey,
        tool: tool.name,
        args: kept.sent,
        summary: kept.summary,
        reply,
        labels: args.labels,
        approval: trace.approval,
        durationMs: performance.now() - started,
        recording: trace.recording,
      });
      auditId = entry?.id;
      const written = entry && this.parts.audit.written(entry);
      if (written) unavailable = await written;
    } catch (e) {
      logDefect(tool.name, 'audit', e);
    }
    if (unavailable) {
      // Said, never hidden: the call's effect stands, and the caller and the operator hear where its entry is.
      process.stderr.write(`verity: ${tool.name}: ${unavailable.code}: ${unavailable.message}\n`);
      reply = { ...reply, audit: unavailable };
    }
    // The operators' action log after the reply is on its way.
    setImmediate(() => {
      try {
        kept ??= args.kept(reply.structured, (value) => this.parts.echo.scrub(value));
        if (trace.noteAction) trace.noteAction(kept, auditId);
        // A call refused before it ran (the brake, its arguments, the policy, an operator's denial or an
        // approval that timed out) is a decision the operators' log shows too, in the session's pane.
        else if (reply.isError && (!tool.annotations.readOnlyHint || trace.approvalAsked))
          this.noteAction(args, undefined, tool.name, kept, reply, trace.approval, auditId);
      } catch (e) {
        logDefect(tool.name, 'action log', e);
      }
    });
    return reply;
  }

  private async admitAndRun(tool: ToolDef, call: CallArguments, connection: CallContext, trace: Trace): Promise<Reply> {
    const { sessions, policy, approvals, router, brake } = this.parts;
    const { sessionKey, labels } = call;
    let running: AbortController | undefined;
    try {
      // The brake comes first: a stopped agent is refused whatever it sends; a paused one waits here.
      await brake.admit(connection.connectionId, connection.progress);
      const args = parseArgs(tool, call.sent) as Record<string, unknown>;
      call.parsed = args;
      // Nothing runs that the audit trail could not record (a flood must not push evidence out).
      const noRoom = this.parts.audit.noRoomFor(sessionKey);
      if (noRoom)
        throw new Refusal('too_many_audit_bytes', noRoom.message, {
          retryable: true,
          retry_after_s: noRoom.retryAfterS,
        });
      running = brake.begin(sessionKey);
      const signal = running.signal;
      // Every tool the policy holds waits for an operator, the session tools included: the check comes
      // before anything of the call runs, and the operator is shown the arguments whole.
      if (policy.needsApproval(tool.name, typeof args.action === 'string' ? args.action : undefined)) {
        // An operator is asked only about a call that can run: its tokens resolve and its page or app is
        // found, or it is refused now (an approved "nope" would fail anyway, after holding the operator).
        const target = await this.targetOf(tool, args, connection);
        // The card shows what the agent sent, not the defaults the schema filled in; text bound for a
        // password, one-time code or card field is masked on it (and in its audit entry).
        const shown = call.approvalView;
        trace.approvalAsked = true;
        trace.approval = await reportWhile(
          connection.progress,
          `waiting for an operator to approve ${tool.name}`,
          approvals.request(tool.name, summarizeArgs(shown, Infinity, tool.name), sessionKey, shown, {
            signal,
            clientGone: connection.clientGone,
            labels,
            target,
            timeoutMs: (this.parts.options.approvalTimeoutS ?? APPROVAL_TIMEOUT_MS / 1000) * 1000,
          }),
        );
      }
      if (tool.sessionless)
        return await abandonOnAbort(tool.handler(args, this.tools, { ...connection, signal }), signal);
      const session = sessions.admit(connection.connectionId, args.session as string | undefined);
      const ctx: CallContext = {
        ...connection,
        session,
        signal,
        runStep: async (step, stepArgs) => {
          const reply = await this.call(step, stepArgs, connection);
          return { structured: reply.structured, isError: !!reply.isError, images: reply.images };
        },
      };
      const recorded = !!session.recordingDir && !tool.annotations.readOnlyHint && tool.name !== 'run_actions';
      session.inFlight++;
      try {
        // The router's one hook around the call: the recording's screenshots, a lost browser, the cursor.
        const around = await router.aroundCall(ctx, recorded);
        let reply: Reply;
        try {
          expectSecrets(this.parts.echo, sessionKey, call);
          reply = await abandonOnAbort(tool.handler(args, this.tools, ctx), signal);
        } catch (e) {
          reply = isDefect(e) ? internalError(tool.name, 'handler', e) : refusalReply(asRefusal(e));
        }
        const { lost, after } = await around.end();
        // The session's pool browser went away while this ran: nothing it says about that browser stands.
        if (lost) reply = refusalReply(lost);
        reply = settleSecrets(this.parts.echo, sessionKey, call, reply);
        if (recorded)
          trace.recording = withTargetFrame(
            recordStep(session, {
              tool: tool.name,
              args: this.parts.echo.scrub(call.masked(reply.structured).parsed),
              result: reply.structured,
              isError: !!reply.isError,
              before: around.before,
              after,
            }),
            connection.tokens,
          );
        // The operators' log hears of it once the reply is on its way: it never delays the caller.
        // The pane shows the arguments as the agent sent them, not the defaults it left out.
        // The task's check marks its session in the operators' list (its last outcome), and is logged like an action.
        const status = (reply.structured as { status?: unknown }).status;
        if (tool.taskCheck && (status === 'satisfied' || status === 'unsatisfied' || status === 'unknown')) {
          session.lastCheck = status;
          this.parts.activity.emit('sessions');
        }
        if (!tool.annotations.readOnlyHint || tool.taskCheck)
          trace.noteAction = (kept, auditId) =>
            this.noteAction(call, session.currentTabId, tool.name, kept, reply, trace.approval, auditId);
        return reply;
      } finally {
        session.inFlight--;
        session.lastActive = Date.now();
      }
    } catch (e) {
      if (isDefect(e)) return internalError(tool.name, 'call', e);
      return refusalReply(asRefusal(e));
    } finally {
      if (running) brake.finish(sessionKey, running);
    }
  }

  /**
   * A request as it arrives, before the SDK and the call path have checked it: a type_text for a native
   * element starts the reads its insertion will need, so that they overlap with that checking (see
   * Router.prefetchNativeField). Anything unexpected here just means no head start.
   */
  anticipate(request: { method: string; params?: Record<string, unknown> }): void {
    if (request.method !== 'tools/call' || request.params?.name !== 'type_text') return;
    try {
      const token = (request.params.arguments as { element_token?: unknown } | undefined)?.element_token;
      if (typeof token !== 'string') return;
      let found: ResolvedToken;
      try {
        found = this.parts.router.snapshots.resolve(token);
      } catch {
        return; // a stale or invalid token is refused by the call itself
      }
      // The call takes this resolution over (resolveTokens) instead of resolving the token again.
      this.readAhead.delete(token);
      this.readAhead.set(token, found);
      if (this.readAhead.size > MAX_READ_AHEAD) this.readAhead.delete(this.readAhead.keys().next().value!);
      this.parts.router.prefetchNativeField(found);
    } catch (e) {
      // It runs on the transport's own path, before the call's boundary: a defect here costs the head start only.
      logDefect('type_text', 'read-ahead', e);
    }
  }

  /** Tokens resolved by anticipate() for calls that have not started yet (bounded: the oldest go first). */
  private readonly readAhead = new Map<string, ResolvedToken>();

  /**
   * Each element token of a call, resolved once (or taken from its read-ahead while still current); a
   * stale or invalid one is left out here and refused by the call itself when it uses it.
   */
  private resolveTokens(args: Record<string, unknown>): Map<string, ResolvedToken> {
    const { snapshots } = this.parts.router;
    const resolved = new Map<string, ResolvedToken>();
    for (const token of tokensIn(args)) {
      const early = this.readAhead.get(token);
      this.readAhead.delete(token);
      if (early && snapshots.isCurrent(early)) {
        resolved.set(token, early);
        continue;
      }
      try {
        resolved.set(token, snapshots.resolve(token));
      } catch {
        /* stale or invalid: the call itself says so */
      }
    }
    return resolved;
  }

  /**
   * What a held call acts on, for its approval card: the tab of its element (or of its `target`, or the
   * session's current tab) with its origin and title, or a native window's app. A token that does not
   * resolve, or a tab or window that is not there, refuses the call here, before anyone is asked.
   */
  private async targetOf(
    tool: ToolDef,
    args: Record<string, unknown>,
    connection: CallContext,
  ): Promise<ApprovalTarget | undefined> {
    const { router, sessions } = this.parts;
    // A token left out of the call's resolution is stale or invalid: resolving it again throws its refusal.
    const tokens = tokensIn(args);
    for (const token of tokens) if (!connection.tokens?.has(token)) router.snapshots.resolve(token);
    if (tool.sessionless) return undefined;
    const element = tokens.length ? connection.tokens?.get(tokens[0]) : undefined;
    const explicit = args.target as { kind?: string; tab_id?: string; pid?: number; window_id?: number } | undefined;
    let tabId: string | undefined;
    if (element?.kind === 'tab') tabId = element.key;
    else if (element?.kind === 'window') return appTarget(Number(element.key.split(':')[0]));
    else if (element?.kind === 'desktop') return { kind: 'app', app: 'the desktop' };
    else if (explicit?.kind === 'tab') tabId = explicit.tab_id;
    else if (explicit?.kind === 'window' || args.pid !== undefined)
      return appTarget(Number(explicit?.pid ?? args.pid ?? 0));
    else if (!router.browserInUse)
      return undefined; // no tab yet: the call opens one
    else tabId = sessions.find(connection.connectionId, args.session as string | undefined)?.currentTabId ?? undefined;
    if (!tabId) {
      const own = await router.tabsFor(connection).catch(() => []);
      if (own.length !== 1) return undefined; // which one the call picks is the router's choice: none is claimed
      tabId = own[0].id;
    }
    // A tab the call names (its element's, its target's) that is gone refuses it now; the session's current
    // tab that is gone does not (the call falls back to another), the card just cannot name it.
    const named = element?.kind === 'tab' || explicit?.kind === 'tab';
    const tab = await router.tabFor(connection, tabId).catch((e) => {
      if (named) throw e;
      return null;
    });
    if (!tab) return undefined;
    const [url, title] = await Promise.all([tab.url(), tab.title().catch(() => '')]);
    return { kind: 'tab', tab_id: tab.id, origin: originOf(url), title };
  }

  /** Tells the operators' action log about a call, then (if anyone watches) adds a thumbnail. */
  private noteAction(
    { sessionKey, labels }: CallArguments,
    currentTabId: string | null | undefined,
    tool: string,
    kept: KeptArguments,
    reply: Reply,
    approval?: { id: string; by?: string },
    auditId?: number,
  ): void {
    const { activity, router } = this.parts;
    const structured = reply.structured as {
      effect?: string;
      evidence?: ActionEntry['evidence'];
      refusal?: { code: string; message: string };
      status?: string;
      reason?: string;
      predicates?: Array<{ index: number; holds: boolean | null }>;
    };
    const check = checkOf(kept.sent, structured);
    const entry = activity.record({
      sessionKey,
      tool,
      summary: kept.summary,
      ...(labels ? { labels } : {}),
      ...(approval ? { approval } : {}),
      ...(auditId !== undefined ? { auditId } : {}),
      effect: structured.effect ?? check?.status ?? null,
      ...(check ? { check } : {}),
      refusal: structured.refusal ? `${structured.refusal.code}: ${structured.refusal.message}` : null,
      evidence: (structured.evidence ?? []).slice(0, 4),
      isError: !!reply.isError,
    });
    if (!activity.watched || !currentTabId) return;
    void router
      .thumbnail(currentTabId)
      .then((data) => data && activity.attachThumbnail(entry, data))
      .catch(() => {
        /* a thumbnail is a courtesy */
      });
  }
}

/** A page's origin as an operator reads it: `https://host:port`, or the scheme of a data:, about: or file: page. */
function originOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.origin !== 'null'
      ? parsed.origin
      : `${parsed.protocol}${parsed.protocol === 'file:' ? parsed.pathname : ''}`;
  } catch {
    return url.slice(0, 80);
  }
}

/** A native window's app: its process name (Linux /proc), and pid. */
function appTarget(pid: number): ApprovalTarget {
  let app = pid ? `pid ${pid}` : 'a native window';
  try {
    if (pid) app = readFileSync(`/proc/${pid}/comm`, 'utf8').trim() || app;
  } catch {
    /* not Linux, or the process is gone: the call itself says so */
  }
  return { kind: 'app', app, ...(pid ? { pid } : {}) };
}

/**
 * A recording step with where its target was on the page (the element a tab token names, in the page's CSS
 * pixels, as the before image shows it): the audit view crops the images around it and outlines it.
 */
function withTargetFrame(
  step: Trace['recording'],
  tokens: ReadonlyMap<string, ResolvedToken> | undefined,
): Trace['recording'] {
  const onTab = [...(tokens?.values() ?? [])].find((t) => t.kind === 'tab' && t.element.frame.w > 0);
  if (!step || !onTab) return step;
  const { x, y, w, h } = onTab.element.frame;
  return { ...step, target: { x, y, w, h } };
}

/** How many read-ahead resolutions wait for their calls at most (one per request in flight, in practice). */
const MAX_READ_AHEAD = 32;

/** A defect in Verity's own code on a call's path: written to the log with its stack, once. */
function logDefect(tool: string, where: string, e: unknown): void {
  const detail = e instanceof Error ? (e.stack ?? e.message) : String(e);
  process.stderr.write(`verity: internal error in ${tool} (${where}): ${detail}\n`);
}

/** A defect contained to the one call it happened in: logged, and that call refused `internal_error`. */
function internalError(tool: string, where: string, e: unknown): Reply {
  logDefect(tool, where, e);
  const message = e instanceof Error ? e.message : String(e);
  return refusalReply(
    new Refusal(
      'internal_error',
      `internal error in ${tool} (${where}): ${message.slice(0, 300)}; the call may not have completed, the server is still up (its log has the details)`,
    ),
  );
}

/** What a predicate shows in the operators' log, at most (characters). */
const PREDICATE_SHOWN_MAX = 120;

/** A verify_state's entry for the operators' log: its outcome, and each predicate as asked with whether it held. */
function checkOf(
  sent: Record<string, unknown>,
  r: { status?: string; reason?: string; predicates?: Array<{ index: number; holds: boolean | null }> },
): ActionEntry['check'] {
  if (
    (r.status !== 'satisfied' && r.status !== 'unsatisfied' && r.status !== 'unknown') ||
    !Array.isArray(r.predicates)
  )
    return undefined;
  const asked = Array.isArray(sent.expect) ? sent.expect : [];
  return {
    status: r.status,
    ...(r.reason ? { reason: r.reason } : {}),
    predicates: asked.map((p, i) => {
      const shown = JSON.stringify(p);
      return {
        predicate: shown.length > PREDICATE_SHOWN_MAX ? `${shown.slice(0, PREDICATE_SHOWN_MAX - 1)}…` : shown,
        holds: r.predicates!.find((o) => o.index === i)?.holds ?? null,
      };
    }),
  };
}
