// How a tool is declared (schema, annotations, handler) and how its answer becomes an MCP result.
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ActionResult } from '../routing/driver.js';
import { Refusal } from '../routing/refusal.js';
import type { Verity, CallContext } from '../core.js';
import { refusal as refusalSchema } from './schemas.js';

export interface Reply {
  structured: Record<string, unknown>;
  isError?: boolean;
  text?: string;
  images?: Array<{ data: string; mimeType: string }>;
}

export interface ToolDef<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  input: S;
  output: z.ZodType;
  /** From the seed's "Effect:" line. */
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint?: boolean };
  /** Hidden from tools/list unless this says otherwise for the calling connection (the `screen` tool). */
  listed?: (ctx: CallContext) => boolean;
  /** Session tools manage sessions themselves instead of being admitted to one. */
  sessionless?: boolean;
  handler(args: z.infer<S>, core: Verity, ctx: CallContext): Promise<Reply>;
}

export function defineTool<S extends z.ZodObject>(def: ToolDef<S>): ToolDef {
  return def as unknown as ToolDef;
}

export const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true } as const;
export const DESTRUCTIVE = { readOnlyHint: false, destructiveHint: true, idempotentHint: false } as const;

/** `{type:"object", anyOf:[<success>, <refusal>]}`, so strict clients accept refusals too. */
export function outputSchemaOf(def: ToolDef): Record<string, unknown> {
  return { type: 'object', anyOf: [objectSchema(jsonSchema(def.output)), jsonSchema(refusalSchema)] };
}

/** A success that has several forms (a union of objects) is still advertised as an object. */
function objectSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const branches = schema.anyOf as Array<Record<string, unknown>> | undefined;
  if (schema.type !== undefined || !branches?.every((b) => b.type === 'object')) return schema;
  return { type: 'object', ...schema };
}

export function inputSchemaOf(def: ToolDef): Record<string, unknown> {
  return jsonSchema(def.input, 'input');
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

/** Validates arguments; a bad one is refused with `invalid_arguments` naming the field. */
export function parseArgs<S extends z.ZodObject>(def: ToolDef<S>, args: unknown): z.infer<S> {
  const parsed = def.input.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue.path.length ? issue.path.join('.') : (issue.code === 'unrecognized_keys' ? (issue as any).keys.join(', ') : 'arguments');
  throw new Refusal('invalid_arguments', `${field}: ${issue.message}`, { field, issues: parsed.error.issues.length });
}

/** An action's result: isError for partial, mismatch and no_effect (the contract). */
export function actionReply(result: ActionResult): Reply {
  const failed = result.effect === 'partial' || result.effect === 'mismatch' || result.effect === 'no_effect';
  return { structured: result as unknown as Record<string, unknown>, isError: failed, text: summarize(result) };
}

function summarize(result: ActionResult): string {
  const head = `${result.effect}${result.method ? ` (${result.method})` : ''}${result.target ? ` on ${result.target}` : ''}`;
  const proof = (result.evidence ?? []).map((e) => `${e.kind}: ${e.observed !== undefined ? JSON.stringify(e.observed) : e.detail ?? ''}`).join('; ');
  const next = result.escalation ? ` Next: ${result.escalation.target}: ${result.escalation.reason}` : '';
  const also = (result.side_effects ?? []).map((e) => e.kind === 'tab_opened' ? ` Opened tab ${e.tab_id} (${e.url}).` : e.kind === 'download' ? ` Downloaded ${e.file} to ${e.path} (${e.state}).` : ` A ${e.type} dialog is open ("${e.message}"); answer it with page handle_dialog.`).join('');
  return `${head}. ${proof}${next}${also}`.slice(0, 2000);
}

export function refusalReply(refusal: Refusal): Reply {
  return {
    structured: { status: 'refused', refusal: { code: refusal.code, message: refusal.message, ...refusal.details } },
    isError: true,
    text: `refused (${refusal.code}): ${refusal.message}`,
  };
}

export function toCallToolResult(reply: Reply): CallToolResult {
  const content: CallToolResult['content'] = [];
  for (const image of reply.images ?? []) content.push({ type: 'image', data: image.data, mimeType: image.mimeType });
  content.push({ type: 'text', text: reply.text ?? JSON.stringify(reply.structured) });
  return { content, structuredContent: reply.structured, ...(reply.isError ? { isError: true } : {}) };
}
