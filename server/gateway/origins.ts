// Pairings of the companion extension, kept in <config dir>/pairings.json (mode 0600). Each pairing is
// made by POST /pair with the operator credential from the extension's fixed origin, and holds a relay
// secret of its own (kept here only as a sha256): the extension presents that secret to connect as the
// tab relay. The extension's origin is allowed on the gateway while at least one pairing holds it.
// Revoking a pairing invalidates its secret (and, when it was the last, the origin's allow-list entry).
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDir, newSecret } from '../token.js';

export interface Pairing {
  id: string;
  origin: string;
  createdAt: string;
  secretSha256: string;
}
export type PairingInfo = Omit<Pairing, 'secretSha256'>;

/** More pairings than this are refused (re-pairing the same extension replaces its old pairing). */
export const MAX_PAIRINGS = 32;

const file = () => join(configDir(), 'pairings.json');
const sha256 = (s: string) => createHash('sha256').update(s).digest();

export class Pairings {
  private list: Pairing[] = [];

  constructor() {
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
  }

  private save(): void {
    mkdirSync(configDir(), { recursive: true, mode: 0o700 });
    writeFileSync(file(), JSON.stringify(this.list, null, 2), { mode: 0o600 });
  }

  all(): PairingInfo[] {
    return this.list.map(({ id, origin, createdAt }) => ({ id, origin, createdAt }));
  }

  origins(): string[] {
    return [...new Set(this.list.map((p) => p.origin))];
  }

  /** A new pairing with its secret (returned once, never stored in clear); `replaces` drops an older one. */
  add(origin: string, replaces?: string): { pairing: PairingInfo; secret: string } | null {
    if (replaces) this.list = this.list.filter((p) => p.id !== replaces);
    if (this.list.length >= MAX_PAIRINGS) return null;
    const secret = newSecret();
    const pairing: Pairing = {
      id: randomUUID(),
      origin,
      createdAt: new Date().toISOString(),
      secretSha256: sha256(secret).toString('hex'),
    };
    this.list.push(pairing);
    this.save();
    return { pairing: { id: pairing.id, origin, createdAt: pairing.createdAt }, secret };
  }

  remove(id: string): PairingInfo | null {
    const found = this.list.find((p) => p.id === id);
    if (!found) return null;
    this.list = this.list.filter((p) => p.id !== id);
    this.save();
    return { id: found.id, origin: found.origin, createdAt: found.createdAt };
  }

  /** The pairing whose relay secret this is, compared in constant time over the hashes. */
  bySecret(secret: string): PairingInfo | null {
    const given = sha256(secret);
    for (const p of this.list) {
      const stored = Buffer.from(p.secretSha256, 'hex');
      if (stored.length === given.length && timingSafeEqual(stored, given))
        return { id: p.id, origin: p.origin, createdAt: p.createdAt };
    }
    return null;
  }
}
