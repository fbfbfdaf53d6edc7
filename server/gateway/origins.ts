// Pairings of the companion extension, kept in <config dir>/pairings.json (mode 0600). Each pairing is
// made by POST /pair with the operator credential from the extension's fixed origin, and holds a relay
// secret of its own (kept here only as a sha256): the extension presents that secret to connect as the
// tab relay. The extension's origin is allowed on the gateway while at least one pairing holds it.
// Revoking a pairing invalidates its secret (and, when it was the last, the origin's allow-list entry).
// A pairing unused for --pairing-max-idle-days (its relay secret not presented, its relay not connected)
// is removed: a secret copied off a machine, or an extension profile long gone, stops opening the relay.
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDir, newSecret } from '../token.js';

export interface Pairing {
  id: string;
  origin: string;
  createdAt: string;
  /** When its relay last connected or disconnected (absent in files written before expiry: createdAt). */
  lastUsedAt?: string;
  secretSha256: string;
}
export type PairingInfo = Required<Omit<Pairing, 'secretSha256'>>;

const DAY_MS = 24 * 60 * 60_000;
export const DEFAULT_PAIRING_MAX_IDLE_DAYS = 30;

/** How long a pairing may go unused: --pairing-max-idle-days, else 30 days (a missing or bad value is the default). */
export function pairingMaxIdleMs(days?: number): number {
  return (Number.isSafeInteger(days) && days! >= 1 ? days! : DEFAULT_PAIRING_MAX_IDLE_DAYS) * DAY_MS;
}

export interface PairingsOptions {
  /** A pairing unused this long is removed (default: pairingMaxIdleMs()). */
  maxIdleMs?: number;
  /** Pairings whose relay is connected now: in use, so never expired however long ago they connected. */
  inUse?: () => ReadonlySet<string>;
  /** Told of each pairing removed for lack of use (the gateway logs it). */
  onExpired?: (pairing: PairingInfo) => void;
  now?: () => number;
}

/** More pairings than this are refused (re-pairing the same extension replaces its old pairing). */
export const MAX_PAIRINGS = 32;

const file = () => join(configDir(), 'pairings.json');
const sha256 = (s: string) => createHash('sha256').update(s).digest();

const info = (p: Pairing): PairingInfo => ({
  id: p.id,
  origin: p.origin,
  createdAt: p.createdAt,
  lastUsedAt: p.lastUsedAt ?? p.createdAt,
});

export class Pairings {
  private list: Pairing[] = [];
  private readonly maxIdleMs: number;
  private readonly now: () => number;

  constructor(private readonly options: PairingsOptions = {}) {
    this.maxIdleMs = options.maxIdleMs ?? pairingMaxIdleMs();
    this.now = options.now ?? Date.now;
    this.load();
  }

  /** Re-read from disk: another `verity start` of the same config dir may have paired meanwhile. */
  load(): void {
    if (!existsSync(file())) {
      this.list = [];
      return;
    }
    try {
      const parsed = JSON.parse(readFileSync(file(), 'utf8')) as Pairing[];
      this.list = Array.isArray(parsed)
        ? parsed.filter(
            (p) => typeof p?.id === 'string' && typeof p.secretSha256 === 'string' && typeof p.origin === 'string',
          )
        : [];
    } catch {
      this.list = [];
    }
    this.expire();
  }

  /**
   * Removes the pairings unused for longer than the bound (a time that cannot be read counts as unused).
   * Run before every read, so an expired secret never opens the relay, even between two sweeps.
   */
  private expire(): void {
    const inUse = this.options.inUse?.() ?? new Set<string>();
    const oldest = this.now() - this.maxIdleMs;
    const stale = this.list.filter((p) => !inUse.has(p.id) && !(Date.parse(info(p).lastUsedAt) >= oldest));
    if (stale.length === 0) return;
    this.list = this.list.filter((p) => !stale.includes(p));
    this.save();
    for (const p of stale) this.options.onExpired?.(info(p));
  }

  /**
   * Written whole then renamed into place: the relay's connects and disconnects rewrite the file, and a
   * reader (another `verity start` of this config dir) must never see it half written.
   */
  private save(): void {
    mkdirSync(configDir(), { recursive: true, mode: 0o700 });
    const partial = `${file()}.${process.pid}.tmp`;
    writeFileSync(partial, JSON.stringify(this.list, null, 2), { mode: 0o600 });
    renameSync(partial, file());
  }

  all(): PairingInfo[] {
    this.expire();
    return this.list.map(info);
  }

  origins(): string[] {
    this.expire();
    return [...new Set(this.list.map((p) => p.origin))];
  }

  /** Its relay connected or disconnected now: the pairing's idle time starts again. */
  touch(id: string): void {
    const found = this.list.find((p) => p.id === id);
    if (!found) return;
    found.lastUsedAt = new Date(this.now()).toISOString();
    this.save();
  }

  /** A new pairing with its secret (returned once, never stored in clear); `replaces` drops an older one. */
  add(origin: string, replaces?: string): { pairing: PairingInfo; secret: string } | null {
    if (replaces) this.list = this.list.filter((p) => p.id !== replaces);
    this.expire();
    if (this.list.length >= MAX_PAIRINGS) return null;
    const secret = newSecret();
    const createdAt = new Date(this.now()).toISOString();
    const pairing: Pairing = {
      id: randomUUID(),
      origin,
      createdAt,
      lastUsedAt: createdAt,
      secretSha256: sha256(secret).toString('hex'),
    };
    this.list.push(pairing);
    this.save();
    return { pairing: info(pairing), secret };
  }

  remove(id: string): PairingInfo | null {
    const found = this.list.find((p) => p.id === id);
    if (!found) return null;
    this.list = this.list.filter((p) => p.id !== id);
    this.save();
    return info(found);
  }

  /** The pairing whose relay secret this is, compared in constant time over the hashes. */
  bySecret(secret: string): PairingInfo | null {
    this.expire();
    const given = sha256(secret);
    for (const p of this.list) {
      const stored = Buffer.from(p.secretSha256, 'hex');
      if (stored.length === given.length && timingSafeEqual(stored, given)) return info(p);
    }
    return null;
  }
}
