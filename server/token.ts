// The gateway's credentials, each generated on first start and kept in the user's config dir (mode 0600):
// - the operator credential (`token`): the Control UI, the gateway WebSocket, pairing the extension;
// - the agent credential (`agent-token`): MCP over HTTP at /mcp, and nothing else.
// They are two secrets, not one secret with a flag, so handing an agent its credential never hands it the
// operator's. Neither is ever taken from the command line (`ps` shows argv to every local user).
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** The config dir the CLI chose (--config-dir, else under XDG_CONFIG_HOME), or a test's; null: the default. */
let chosenConfigDir: string | null = null;

/** Where the credentials, policy.json, config.json, the audit trail and gateway.json are kept. */
export function configDir(): string {
  return chosenConfigDir ?? join(homedir(), '.config', 'verity');
}

/** Sets the config dir at start (the CLI) or for a test (null: the default again). */
export function setConfigDir(dir: string | null): void {
  chosenConfigDir = dir;
}

export type CredentialKind = 'operator' | 'agent';
const FILES: Record<CredentialKind, string> = { operator: 'token', agent: 'agent-token' };

export function credentialFile(kind: CredentialKind): string {
  return join(configDir(), FILES[kind]);
}

/** A credential must fit in a URL and a header as printed: no whitespace, bounded (connect allows 512). */
export function checkCredential(value: string, where: string): string {
  if (!/^[\x21-\x7e]{8,512}$/.test(value))
    throw new Error(`${where}: a credential is 8..512 printable characters without spaces`);
  return value;
}

export function newSecret(): string {
  return randomBytes(24).toString('base64url');
}

export function loadOrCreateCredential(kind: CredentialKind, log: (line: string) => void): string {
  const file = credentialFile(kind);
  if (existsSync(file)) return checkCredential(readFileSync(file, 'utf8').trim(), file);
  mkdirSync(configDir(), { recursive: true, mode: 0o700 });
  const token = newSecret();
  writeFileSync(file, token + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  log(`generated the ${kind} credential in ${file}`);
  return token;
}

/** Reads a credential from a file named by --token-file / --agent-token-file (trimmed). */
export function readCredentialFile(file: string, flag: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`${flag} ${file}: ${(e as Error).message}`);
  }
  return checkCredential(text.trim(), `${flag} ${file}`);
}

export function tokenMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given),
    b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Where a running gateway can be found by `verity mcp` (mode 0600). It holds the agent credential only:
 * whatever reads it joins as an agent, never as the operator.
 */
interface GatewayFile {
  mcp_url: string;
  token: string;
  pid: number;
}
const gatewayFile = () => join(configDir(), 'gateway.json');

export function writeGatewayFile(info: GatewayFile): void {
  mkdirSync(configDir(), { recursive: true, mode: 0o700 });
  writeFileSync(gatewayFile(), JSON.stringify(info), { mode: 0o600 });
}

export function removeGatewayFile(): void {
  rmSync(gatewayFile(), { force: true });
}

/**
 * One gateway per config dir: two would append to the same audit segment with overlapping ids, and the first
 * to stop would delete the other's gateway.json. `gateway.lock` (created exclusively) holds the pid of the
 * gateway that owns the dir; one left by a gateway that is gone is taken over. Throws, naming the fix, when
 * a running gateway holds it.
 */
export function claimConfigDir(): void {
  const file = lockFile();
  mkdirSync(configDir(), { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const holder = lockHolder();
    if (holder !== null && holder !== process.pid && running(holder))
      throw new Error(
        `another gateway (pid ${holder}) already uses the config dir ${configDir()} (its audit trail and gateway.json); give each gateway its own --config-dir (or VERITY_CONFIG_DIR) and the same VERITY_AGENT_TOKEN`,
      );
    rmSync(file, { force: true }); // left by a gateway that is gone
  }
  throw new Error(`could not create ${file}: another gateway is starting with the same config dir`);
}

/** Gives the config dir up (only when this process holds it). */
export function releaseConfigDir(): void {
  if (lockHolder() === process.pid) rmSync(lockFile(), { force: true });
}

const lockFile = () => join(configDir(), 'gateway.lock');

function lockHolder(): number | null {
  try {
    const pid = Number(readFileSync(lockFile(), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}

export function readGatewayFile(): GatewayFile | null {
  if (!existsSync(gatewayFile())) return null;
  try {
    const info = JSON.parse(readFileSync(gatewayFile(), 'utf8')) as GatewayFile;
    process.kill(info.pid, 0); // still running?
    return info;
  } catch {
    return null;
  }
}
