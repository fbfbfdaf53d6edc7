// What the gateway's methods and events carry (protocol.ts re-exports them: import from there): the session
// list's deltas, the Control UI's layout commands, pairings, shared tabs and relayed CDP commands, the browser
// panel's frames and viewport, and the policy as the console shows it. Zod only (bundled for the browser).
import { z } from 'zod';
import { sessionRow } from '../../contract/wire.js';

/** sessions.changed: a delta against the rows sent before (sessions.list gives the whole list). */
export const sessionsDelta = z.strictObject({
  added: z.array(sessionRow),
  updated: z.array(sessionRow),
  removed: z.array(z.string()),
});
export type SessionsDelta = z.infer<typeof sessionsDelta>;

/** How the layout of one Control UI changes: an agent's `screen` call or the operator's own click. */
export const uiCommand = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('split'),
    direction: z.enum(['right', 'down']),
    sessionKey: z.string().max(512).optional(),
  }),
  z.strictObject({ kind: z.enum(['close-pane', 'focus', 'navigate']), sessionKey: z.string().max(512).optional() }),
  z.strictObject({ kind: z.literal('sidebar'), visible: z.boolean() }),
  z.strictObject({
    kind: z.literal('panel'),
    panel: z.enum(['terminal', 'browser']),
    open: z.boolean(),
    dock: z.enum(['bottom', 'right']).optional(),
  }),
]);
export type UiCommand = z.infer<typeof uiCommand>;

export const pairingRow = z.strictObject({
  id: z.string(),
  origin: z.string(),
  createdAt: z.string(),
  /** When its relay last connected or disconnected; unused for --pairing-max-idle-days, it is removed. */
  lastUsedAt: z.string(),
  connected: z.boolean(),
});
export type PairingRow = z.infer<typeof pairingRow>;

/** A tab the extension shares (in its "Verity" tab group); attachId changes when it is attached afresh. */
export const sharedTab = z.strictObject({
  targetId: z.string().min(1).max(128),
  tabId: z.number().int(),
  url: z.string().max(8192),
  title: z.string().max(1024),
  attachId: z.number().int(),
});
export type SharedTab = z.infer<typeof sharedTab>;

/** A CDP command the gateway asks the extension to run once on a shared tab (answered with relay.result). */
export const relayCommand = z.strictObject({
  id: z.string(),
  targetId: z.string(),
  sessionId: z.string().optional(),
  method: z.string(),
  params: z.unknown(),
});
export type RelayCommand = z.infer<typeof relayCommand>;

export const screencastFrame = z.strictObject({
  data: z.string(),
  width: z.number(),
  height: z.number(),
  tab_id: z.string(),
});
export type ScreencastFrame = z.infer<typeof screencastFrame>;

/** The browser panel's size in CSS pixels and its device pixel ratio (bounded again in screencast.ts). */
export const panelViewport = z.strictObject({
  width: z.number().finite().min(1).max(10_000),
  height: z.number().finite().min(1).max(10_000),
  dpr: z.number().finite().min(0.25).max(8),
});
export type PanelViewport = z.infer<typeof panelViewport>;

/** The active policy as the operator's console shows it (server/policy.ts summary()): null lists mean "any". */
export const policySummary = z.strictObject({
  source: z.string(),
  allowed_origins: z.array(z.string()).nullable(),
  blocked_origins: z.array(z.string()),
  url_schemes: z.array(z.string()),
  allowed_apps: z.array(z.string()).nullable(),
  blocked_apps: z.array(z.string()),
  require_approval: z.array(z.string()),
  always_refused: z.array(z.string()),
});
export type PolicySummary = z.infer<typeof policySummary>;
