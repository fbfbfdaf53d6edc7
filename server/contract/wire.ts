// Every shape that crosses a boundary, declared once, zod first, its TypeScript type inferred: what an
// action's result carries (evidence, side effects, what it caused), the activity and approval shapes the
// gateway sends the Control UI, the brake's status, a session row, a browser panel's input. The backends,
// tools, activity, approvals, sessions and gateway/protocol.ts (whose typed method and event tables use
// these) all import them from here; nothing here imports anything but zod.
import { z } from 'zod';

export const effect = z.enum(['confirmed', 'partial', 'mismatch', 'no_effect', 'unverifiable']);
export type Effect = z.infer<typeof effect>;
export const route = z.enum(['dom', 'accessibility', 'synthetic_events', 'pixel']);
export type Route = z.infer<typeof route>;

/** One piece of read-back evidence. */
export const evidence = z.object({
  kind: z.string(),
  expected: z.unknown().optional(),
  observed: z.unknown().optional(),
  detail: z.string().optional(),
});
export type Evidence = z.infer<typeof evidence>;
/** Evidence as the gateway and the audit trail pass it on: extra fields kept. */
export const evidenceItem = evidence.loose();
export type EvidenceItem = z.infer<typeof evidenceItem>;

/** A download as the agent is told of it: its file name and size, never where the host keeps it. */
export const downloadEffect = z.object({
  kind: z.literal('download'),
  file: z.string(),
  state: z.enum(['completed', 'in_progress', 'canceled', 'refused']),
  size_bytes: z.number().optional(),
  /** Why it was refused (cancelled before it was kept): download_without_action, download_quota_exceeded. */
  code: z.string().optional(),
  detail: z.string().optional(),
});
export type DownloadEffect = z.infer<typeof downloadEffect>;

/** What else an action caused: a tab opened, a download, a dialog now blocking the page. */
export const sideEffect = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('tab_opened'), tab_id: z.string(), url: z.string() }),
  downloadEffect,
  z.object({ kind: z.literal('dialog'), type: z.string(), message: z.string() }),
]);
export type SideEffect = z.infer<typeof sideEffect>;

/**
 * What the action caused on its page, beside side_effects (absent when nothing): the top-level navigation,
 * the requests it started (failed first, bounded; `more_requests` counts the rest), the console errors and
 * uncaught exceptions it raised. URLs as the origin policy and secret masking allow them to be shown.
 */
export const actionCaused = z.object({
  navigated: z.string().optional(),
  requests: z
    .array(
      z.object({
        method: z.string(),
        url: z.string(),
        status: z.number().int().optional(),
        failed: z.string().optional(),
        pending: z.literal(true).optional(),
      }),
    )
    .optional(),
  more_requests: z.number().int().optional(),
  console: z
    .array(z.object({ level: z.enum(['exception', 'error', 'warning', 'info', 'debug']), text: z.string() }))
    .optional(),
  more_console: z.number().int().optional(),
});
export type ActionCaused = z.infer<typeof actionCaused>;

/** What a native action may disturb on the operator's desktop: the focused window, the stacking order, the pointer. */
export const deskAspect = z.enum(['focus', 'z_order', 'pointer']);
export type DeskAspect = z.infer<typeof deskAspect>;

/**
 * The native routes' account of the desktop around an action (issue 44 item 7), read before and after it,
 * each aspect in exactly one of `unchanged`, `moved` and `unread`: `unchanged` read back as it was; `moved`
 * read back otherwise (or, where it cannot be read, moved by the route itself: its pointer motion);
 * `restored` the moved ones put back and read back as they were (background delivery only); `unread` what
 * the platform does not tell. `note` says, in one line, why an aspect is unread or was not put back. Absent
 * on a tab: CDP's input never reaches the desktop's pointer, focus or stacking, and none of them is read.
 */
export const deskCheck = z.object({
  unchanged: z.array(deskAspect).optional(),
  moved: z.array(deskAspect).optional(),
  restored: z.array(deskAspect).optional(),
  unread: z.array(deskAspect).optional(),
  note: z.string().optional(),
});
export type DeskCheck = z.infer<typeof deskCheck>;

/** An element as an action's `changes` names it: its token resolves like one of get_window_state's. */
const changedElement = z.object({ role: z.string(), name: z.string(), element_token: z.string() });

/**
 * What an action changed on its tab or window since the target's held observation (its last get_window_state,
 * as earlier actions' changes brought it up to date): elements that appeared or went away, values and states
 * that changed (`was`: the value before), the page's text that appeared, a navigation, a dialog that opened.
 * Empty lists are left out; capped lists say how many more in `more` (then `changes_complete` is false).
 */
export const actionChanges = z.object({
  navigated: z.string().optional(),
  dialog: changedElement.partial({ element_token: true }).optional(),
  appeared: z.array(changedElement).optional(),
  removed: z.array(changedElement).optional(),
  changed: z
    .array(
      changedElement.extend({
        value: z.string().optional(),
        was: z.string().optional(),
        enabled: z.boolean().optional(),
      }),
    )
    .optional(),
  text_added: z.array(z.string()).optional(),
  more: z
    .object({
      appeared: z.number().int().optional(),
      removed: z.number().int().optional(),
      changed: z.number().int().optional(),
      text_added: z.number().int().optional(),
    })
    .optional(),
});
export type ActionChanges = z.infer<typeof actionChanges>;

/** What every action (click, type_text, ...) returns: the verdict, how it was delivered, and the proof. */
export const actionResult = z.object({
  effect,
  route,
  delivery: z.object({
    mode: z.enum(['background', 'foreground', 'not_applicable']),
    delivered_count: z.number().int().optional(),
    ...deskCheck.shape,
  }),
  evidence: z.array(evidence),
  escalation: z
    .object({ target: z.enum(['page', 'pixel', 'foreground', 'chunk', 'verify']), reason: z.string() })
    .optional(),
  /**
   * The three phases every action reports, and around them (when they took part): the wait in the
   * target's queue, for the tab's cross-process lock (inside resolve), the side-effect watch's own time,
   * and the re-read for `changes`.
   */
  timings_ms: z.object({
    resolve: z.number(),
    deliver: z.number(),
    verify: z.number(),
    queue: z.number().optional(),
    lock: z.number().optional(),
    side_effects: z.number().optional(),
    /** The re-read after the action that says what it changed (`changes`), when it took 1 ms or more. */
    changes: z.number().optional(),
    /**
     * Native keys: how long the call waited, before its first key, for what it changed (a click, a focus
     * change, the keyboard map) to reach the app, and what it waited on, in order, joined by '+':
     * x_roundtrip, pointer_released, x_focus, ping (the app answered _NET_WM_PING), load_scaled_wait (an
     * app that answers no ping: a wait scaled by the machine's load, which proves nothing); a bound that ran
     * out says what was not seen (pointer_still_grabbed, x_focus_elsewhere, ping_unanswered).
     */
    settle: z.number().optional(),
    settle_signal: z.string().optional(),
  }),
  /** Which delivery method produced the effect (type_text: insert_text, key_events, ...). */
  method: z.string().optional(),
  /** What the target holds now, when that says more than the evidence (e.g. after a mismatch). */
  observed: z.unknown().optional(),
  target: z.string().optional(),
  /**
   * Why the target's text is masked in this result (a password field, a one-time code or card number
   * field, an AT-SPI password text): its expected/observed show one • per character. The verdict was
   * reached on the full text before masking (contract/secrets.ts).
   */
  masked: z.string().optional(),
  side_effects: z.array(sideEffect).optional(),
  caused: actionCaused.optional(),
  /** Where the tab's console and requests stood as the action began: verify_state's `since` (a tab's result only). */
  mark: z.number().int().optional(),

  /** What the action changed on its target (absent: nothing, or no observation of it is held to compare with). */
  changes: actionChanges.optional(),
  /** Present when the target had an observation to compare with: false when `changes` was capped or could not be read whole. */
  changes_complete: z.boolean().optional(),
});
export type ActionResult = z.infer<typeof actionResult>;

/**
 * The action result as the tools advertise it (their outputSchema in tools/list): evidence may be absent,
 * and a side effect is promised only its kind (its other fields may grow).
 */
export const advertisedActionResult = actionResult.extend({
  evidence: z.array(evidence).optional(),
  side_effects: z.array(z.looseObject({ kind: z.enum(['tab_opened', 'download', 'dialog']) })).optional(),
});

/** An agent's brake (sessions/brake.ts): running, paused or stopped, by whom, since when, calls waiting. */
export const brakeState = z.strictObject({
  state: z.enum(['running', 'paused', 'stopped']),
  by: z.string().nullable(),
  since: z.string().nullable(),
  waiting: z.number().int(),
});
export type BrakeStatus = z.infer<typeof brakeState>;

/** A row of the operator's session list (the gateway's sessions.list and sessions.changed). */
export const sessionRow = z.strictObject({
  sessionKey: z.string(),
  session: z.string().nullable(),
  implicit: z.boolean(),
  state: z.enum(['active', 'ending', 'ended']),
  /** The session's agent cursor: shown or not, its motion settings (as the MCP `session` tool reports them) and theme. */
  cursor: z.strictObject({
    visible: z.boolean(),
    motion: z.unknown(),
    theme: z.strictObject({ theme_id: z.string(), reduced_motion: z.enum(['auto', 'on', 'off']) }),
  }),
  recording_active: z.boolean(),
  idle_seconds: z.number().int(),
  transport: z.string(),
  client: z.string(),
  tab_id: z.string().nullable(),
  /** The agent's brake state (sessions/brake.ts). */
  brake: brakeState,
  /** An agent connected and made no call yet: the row of the default session its first call will have. */
  awaiting_first_call: z.boolean().optional(),
  /** The outcome of the session's last verify_state (the sidebar marks a session whose last check was satisfied). */
  last_check: z.enum(['satisfied', 'unsatisfied', 'unknown']).optional(),
});
export type SessionRow = z.infer<typeof sessionRow>;

/** One action as operators watch it (activity.ts records it; the gateway's action events carry it). */
export const actionEntry = z.strictObject({
  id: z.number().int(),
  at: z.string(),
  sessionKey: z.string(),
  tool: z.string(),
  /** A short, content-light description of the arguments (text is truncated). */
  summary: z.string(),
  effect: z.string().nullable(),
  refusal: z.string().nullable(),
  /** The call's read-back evidence, the first few pieces. */
  evidence: z.array(evidenceItem),
  isError: z.boolean(),
  /** A JPEG (base64) of the page after the action, added after the fact (the entry is sent again). */
  thumbnail: z.string().optional(),
  /** element_token -> `role "name"` (the log shows labels, not tokens). */
  labels: z.record(z.string(), z.string()).optional(),
  /** The approval the call waited for, and who approved it. */
  approval: z.strictObject({ id: z.string(), by: z.string().optional() }).optional(),
  /** The call's entry in the audit trail (audit.query), which has its images and whole result. */
  auditId: z.number().int().optional(),
  /** A verify_state (the task's check): its outcome and each predicate as asked, with whether it held. */
  check: z
    .strictObject({
      status: z.enum(['satisfied', 'unsatisfied', 'unknown']),
      reason: z.string().optional(),
      predicates: z.array(z.strictObject({ predicate: z.string(), holds: z.boolean().nullable() })),
    })
    .optional(),
});
export type ActionEntry = z.infer<typeof actionEntry>;

/** What an approver sees: the tool, a one-line summary, and the call's arguments whole (never cut). */
export const approvalRequest = z.strictObject({
  id: z.string(),
  tool: z.string(),
  summary: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  sessionKey: z.string(),
  requestedAt: z.string(),
  /** When it times out (the Control UI counts down to it). */
  expiresAt: z.string(),
  /** What the call's element tokens name ("button \"Submit claim\""), so the card shows labels, not tokens. */
  labels: z.record(z.string(), z.string()).optional(),
  /** What the call acts on, found before the card was shown: a tab (its origin and title) or a native app. */
  target: z
    .strictObject({
      kind: z.enum(['tab', 'app']),
      /** A tab: its id, origin (`https://example.com`; the scheme for data: and about: pages) and title. */
      tab_id: z.string().optional(),
      origin: z.string().optional(),
      title: z.string().optional(),
      /** An app: its process name, and pid. */
      app: z.string().optional(),
      pid: z.number().int().optional(),
    })
    .optional(),
});
export type ApprovalRequest = z.infer<typeof approvalRequest>;
/** What a held call acts on (the card's page or app line). */
export type ApprovalTarget = NonNullable<ApprovalRequest['target']>;

/**
 * How a request ended: approved or denied by an operator (named), timed out, cancelled by the brake, or
 * withdrawn because its client gave up (cancelled the request or closed its connection; `detail` says which).
 */
export const approvalResolved = z.strictObject({
  id: z.string(),
  approved: z.boolean(),
  reason: z.enum(['operator', 'timeout', 'cancelled', 'withdrawn']),
  by: z.string().optional(),
  detail: z.string().optional(),
  tool: z.string(),
  sessionKey: z.string(),
});
export type ApprovalResolved = z.infer<typeof approvalResolved>;

/** Operator input from the browser panel, in the tab's CSS pixels. */
export const panelInput = z.strictObject({
  tab_id: z.string(),
  type: z.enum(['click', 'wheel', 'key', 'text']),
  x: z.number().finite().optional(),
  y: z.number().finite().optional(),
  deltaY: z.number().finite().optional(),
  key: z.string().max(32).optional(),
  text: z.string().max(10_000).optional(),
});
export type PanelInput = z.infer<typeof panelInput>;
