// The permission policy: which origins and apps agents may act on, and which tools need an operator's
// approval. Read from --policy FILE, VERITY_POLICY, or <config dir>/policy.json (see policy.sample.json).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { Refusal } from './routing/refusal.js';
import { configDir } from './token.js';

const policySchema = z.strictObject({
  allowed_origins: z.array(z.string().min(1)).optional().describe('Origins (scheme://host[:port], "*" wildcards) tabs may be on; omitted = any.'),
  allowed_apps: z.array(z.string().min(1)).optional().describe('Native app names (or pids as strings) that may be driven; omitted = any.'),
  require_approval: z.array(z.string().min(1)).default([]).describe('Tools (or page actions as "page.<action>") that need an operator\'s approval before they run.'),
});
export type PolicyFile = z.infer<typeof policySchema>;

export class Policy {
  constructor(readonly rules: PolicyFile = { require_approval: [] }, readonly source = 'built-in (everything allowed)') {}

  static load(explicit?: string): Policy {
    const file = explicit ?? process.env.VERITY_POLICY ?? join(configDir(), 'policy.json');
    if (!existsSync(file)) {
      if (explicit) throw new Error(`policy file ${file} does not exist`);
      return new Policy();
    }
    let json: unknown;
    try { json = JSON.parse(readFileSync(file, 'utf8')); } catch (e) { throw new Error(`policy file ${file}: not valid JSON (${(e as Error).message})`); }
    const parsed = policySchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`policy file ${file}: ${issue.path.join('.') || 'root'}: ${issue.message}`);
    }
    return new Policy(parsed.data, file);
  }

  /** Refuses a policy whose require_approval names no tool (a typo would silently let the tool through). */
  checkNames(known: string[]): void {
    const unknown = this.rules.require_approval.filter((name) => !known.includes(name));
    if (unknown.length) {
      throw new Error(`policy file ${this.source}: require_approval: unknown tool ${unknown.map((n) => `"${n}"`).join(', ')}; known: ${known.join(', ')}`);
    }
  }

  /** Whether the policy holds this tool (or page action) for an operator's approval. */
  needsApproval(tool: string, action?: string): boolean {
    return this.rules.require_approval.includes(tool) || (!!action && this.rules.require_approval.includes(`${tool}.${action}`));
  }

  /** A tab may be acted on only while its page is on an allowed origin. */
  checkUrl(url: string, what = 'the tab'): void {
    const allowed = this.rules.allowed_origins;
    if (!allowed || url === 'about:blank' || url === '') return;
    let origin: string;
    try { origin = new URL(url).origin; } catch { origin = url; }
    if (!allowed.some((pattern) => matches(pattern, origin))) {
      throw new Refusal('not_permitted', `${what} is on ${origin}, which the policy (${this.source}) does not allow; allowed: ${allowed.join(', ')}`, { origin });
    }
  }

  checkApp(name: string, pid: number): void {
    const allowed = this.rules.allowed_apps;
    if (!allowed) return;
    if (!allowed.some((a) => a === String(pid) || a.toLowerCase() === name.toLowerCase())) {
      throw new Refusal('not_permitted', `the app ${name} (pid ${pid}) is not allowed by the policy (${this.source}); allowed: ${allowed.join(', ')}`);
    }
  }
}

function matches(pattern: string, origin: string): boolean {
  const regex = new RegExp('^' + pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&')).join('[^/]*') + '$');
  return regex.test(origin);
}
