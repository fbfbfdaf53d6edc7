// MCP logging (notifications/message) and progress (notifications/progress), through the SDK's public API
// only: Server.sendLoggingMessage, and the request handler's `extra` (its `_meta.progressToken` and
// `sendNotification`, which ties each notification to its request, so HTTP clients get it on that stream).
// What a call reports is up to the code doing the work (server/progress.ts).
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { LoggingLevel, ServerNotification } from '@modelcontextprotocol/sdk/types.js';

import { SAME_MESSAGE_EVERY_MS, type Progress } from '../progress.js';

/** Bound on the progress notifications of one call. */
export const MAX_PROGRESS_PER_CALL = 1000;

export function progressOf(extra: {
  _meta?: { progressToken?: string | number };
  sendNotification: (n: ServerNotification) => Promise<void>;
}): Progress | undefined {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  let progress = 0;
  let last = { message: '', at: 0 };
  return (message) => {
    const now = Date.now();
    if (progress >= MAX_PROGRESS_PER_CALL || (message === last.message && now - last.at < SAME_MESSAGE_EVERY_MS))
      return;
    last = { message, at: now };
    void extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken, progress: ++progress, message } })
      .catch(() => {
        /* the client went away */
      });
  };
}

/** Initialized MCP connections, which hear the server's log lines. */
const listeners = new Set<Server>();
export const listen = (server: Server) => {
  listeners.add(server);
};
export const unlisten = (server: Server) => {
  listeners.delete(server);
};

/** A log line to every connected client (at or above the level each set with logging/setLevel). */
export function broadcastLog(level: LoggingLevel, line: string): void {
  for (const server of listeners) {
    void server.sendLoggingMessage({ level, logger: 'verity', data: line }, server.transport?.sessionId).catch(() => {
      /* closing */
    });
  }
}

/** A log line to one client. */
export function logTo(server: Server, level: LoggingLevel, line: string): void {
  void server.sendLoggingMessage({ level, logger: 'verity', data: line }, server.transport?.sessionId).catch(() => {
    /* closing */
  });
}
