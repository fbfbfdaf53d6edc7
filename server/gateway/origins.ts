// The gateway's allow-list of extension origins (chrome-extension://<id>), written by pairing.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDir } from '../token.js';

const file = () => join(configDir(), 'allowed-origins.json');

export function loadAllowedOrigins(): string[] {
  if (!existsSync(file())) return [];
  try { return JSON.parse(readFileSync(file(), 'utf8')) as string[]; } catch { return []; }
}

export function allowOrigin(origin: string): void {
  const list = new Set(loadAllowedOrigins());
  list.add(origin);
  mkdirSync(configDir(), { recursive: true, mode: 0o700 });
  writeFileSync(file(), JSON.stringify([...list], null, 2), { mode: 0o600 });
}
