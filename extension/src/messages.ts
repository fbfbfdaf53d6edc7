// What the extension's pages and its service worker share: the pairing kept in storage.local, and the
// messages pages send the worker (runtime.sendMessage).
import type { SharedTab } from '../../server/gateway/protocol.js';

/** What the pairing page keeps in storage.local (key `pairing`); the Control UI hosted here reads it too. */
export interface Pairing {
  gateway: string;
  token: string;
  relaySecret?: string;
  pairingId?: string;
  pairedAt?: string;
}

export type WorkerMessage = { type: 'paired' } | { type: 'status' };

/** The worker's answer to `status`. */
export interface WorkerStatus {
  paired: boolean;
  gateway: string | null;
  connected: boolean;
  shared: SharedTab[];
  attention: string[];
}
