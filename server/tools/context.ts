// What a tool sees of the server: a narrow ToolContext (only what tools use: add a member only when a
// tool needs it), the per-call CallContext, and the shape of a tool and of its reply. The MCP call
// pipeline (server/mcp/pipeline.ts) builds both contexts; tools import no backend and speak no CDP.
import type { z } from 'zod';
import type { Capability, ToolSurface } from '../contract/capabilities.js';
import type { Policy } from '../policy.js';
import type { WaitHook } from '../routing/queue.js';
import type { Pages } from '../routing/pages.js';
import type { Router } from '../routing/router.js';
import type { ResolvedToken, SnapshotRegistry } from '../routing/snapshots.js';
import type { Session, SessionManager } from '../sessions/manager.js';
import type { CursorPreferences } from '../sessions/cursor-preferences.js';

/** Per-call state handed to every tool: the connection, and the session the call was admitted to. */
export interface CallContext {
  connectionId: string;
  session?: Session;
  /** The Control UI connection this MCP session is bound to (captured when its link was accepted). */
  uiTarget?: { connId: string; caps: string[] };
  /** Reports how the call is getting on (MCP notifications/progress), when the client asked for it. */
  progress?: (message: string) => void;
  /** How the client reached us, for the operator's session list. */
  transport?: 'stdio' | 'http';
  /** The credential the connection presented, as an id for the audit trail (never the secret). */
  credential?: string;
  /** Runs one tool call through the full admission path (run_actions uses it for its steps). */
  runStep?: (
    tool: ToolDef,
    args: Record<string, unknown>,
  ) => Promise<{ structured: any; isError: boolean; images?: unknown[] }>;
  /** Told when an action waits for earlier ones on its target (e.g. to send an MCP progress notification). */
  onQueued?: WaitHook;
  /** Fires when the operator stops the agent or ends the session (sessions/brake.ts): waits give up. */
  signal?: AbortSignal;
  /** Fires when the client gave up on this call (notifications/cancelled, or its connection closed); the reason says which. */
  clientGone?: AbortSignal;
  /** The call's element tokens, resolved once as it arrived (the pipeline): the router's resolve uses them. */
  tokens?: ReadonlyMap<string, ResolvedToken>;
}

/** The router's part tools use: target resolution and the routes' facts (tabs and pages: `pages`). */
type ToolRouting = Pick<
  Router,
  | 'resolve'
  | 'nativeRoute'
  | 'browserInUse'
  | 'launchedBrowserPid'
  | 'browserVersion'
  | 'drivenBrowserPid'
  | 'belongsToDrivenBrowser'
  | 'cursorShown'
>;

export interface ToolContext extends ToolRouting {
  /** Tabs under the router's ownership, and what the page tool does with one (an opaque handle, never a Tab). */
  readonly pages: Pages;
  /** The operator's switches tools obey. */
  readonly options: {
    readonly allowJavascript: boolean;
    /** clipboard_read is refused without it (--allow-clipboard-read). */
    readonly allowClipboardRead: boolean;
    /** What launch_app may start (--allow-launch): desktop-file ids, executable names or paths; none: it is off. */
    readonly allowLaunch: readonly string[];
    readonly uploadRoots?: readonly string[];
    /** What tools/list offers (a batch step of a tool that is off is refused like a direct call). */
    readonly surface: ToolSurface;
  };
  readonly snapshots: Pick<SnapshotRegistry, 'resolve' | 'nextId' | 'record' | 'forget' | 'held' | 'update'>;
  readonly policy: Pick<Policy, 'checkUrl' | 'checkNavigation'>;
  readonly sessions: Pick<SessionManager, 'start' | 'find' | 'list' | 'end' | 'keyOf' | 'keyFor'>;
  readonly cursor: Pick<CursorPreferences, 'motionOf'>;
  /** Delivers a ui.command to one Control UI connection; false when it is gone (or no gateway runs). */
  sendUiCommand(connId: string, command: Record<string, unknown>): boolean;
  /** What waits for the operator now (the `screen` tool never hides the sidebar while something does). */
  operatorWaits(): { approvals: number; heldAgents: number };
}

export interface Reply {
  structured: Record<string, unknown>;
  isError?: boolean;
  text?: string;
  images?: Array<{ data: string; mimeType: string }>;
  /** The call's audit entry did not reach the shared audit store (kept locally, sent later): said beside the result. */
  audit?: { code: 'audit_unavailable'; message: string };
}

export interface ToolDef<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  input: S;
  output: z.ZodType;
  /** From the seed's "Effect:" line. */
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint?: boolean };
  /** Hidden from tools/list unless this says otherwise for the calling connection (the `screen` tool). */
  listed?: (ctx: CallContext) => boolean;
  /** Session tools manage sessions themselves instead of being admitted to one. */
  sessionless?: boolean;
  /** Deprecated seed tools: callable always, listed only on the complete surface (`--tools full`). */
  deprecated?: boolean;
  /** Arguments accepted but advertised only on the complete surface (besides SEED_ONLY). */
  advanced?: readonly string[];
  /** The task's check (verify_state): the operators' log shows it though it is read-only, and its outcome marks the session. */
  taskCheck?: boolean;
  /** The capability that lists and admits it (`--caps`, contract/capabilities.ts); none: always on. */
  cap?: Capability;
  handler(args: z.infer<S>, core: ToolContext, ctx: CallContext): Promise<Reply>;
}
