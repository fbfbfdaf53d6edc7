// The gateway token: generated on first start, kept in the user's config dir with mode 0600.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, timingSafeEqual } from 'node:crypto';

export function configDir(): string {
  return process.env.VERITY_CONFIG_DIR ?? join(process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'verity');
}

export function loadOrCreateToken(log: (line: string) => void): string {
  const dir = configDir();
  const file = join(dir, 'token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const token = randomBytes(24).toString('base64url');
  writeFileSync(file, token + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  log(`generated a gateway token in ${file}`);
  return token;
}

export function tokenMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given), b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Where a running gateway can be found by `verity mcp --gateway` (mode 0600: it holds the token). */
interface GatewayFile { mcp_url: string; token: string; pid: number }
const gatewayFile = () => join(configDir(), 'gateway.json');

export function writeGatewayFile(info: GatewayFile): void {
  mkdirSync(configDir(), { recursive: true, mode: 0o700 });
  writeFileSync(gatewayFile(), JSON.stringify(info), { mode: 0o600 });
}

export function removeGatewayFile(): void {
  rmSync(gatewayFile(), { force: true });
}

export function readGatewayFile(): GatewayFile | null {
  if (!existsSync(gatewayFile())) return null;
  try {
    const info = JSON.parse(readFileSync(gatewayFile(), 'utf8')) as GatewayFile;
    process.kill(info.pid, 0); // still running?
    return info;
  } catch { return null; }
}
