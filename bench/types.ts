// Shared shapes for the benchmark: a Section measures something and returns table rows.
import type { McpSession } from './mcp.js';
import type { Fixtures } from './fixtures.js';
import type { ProcessRegistry } from './procs.js';

/** The three tools compared side by side in the table. */
export type Column = 'verity' | 'floor' | 'playwright';

/** A measured value, or why there is none. */
export type Cell = { value: number; detail?: string } | { error: string } | undefined;

/** A pass/fail target: value[of] / value[over] must be ≤ max. */
export interface Check {
  of: Column;
  over: Column;
  max: number;
}

export interface Row {
  metric: string;
  unit: 'ms' | 'bytes' | 'calls';
  cells: Partial<Record<Column, Cell>>;
  checks: Check[];
  /** Free text shown under the table (e.g. what the number includes). */
  note?: string;
}

export interface BenchConfig {
  warmup: number;
  iterations: number;
}

export interface BenchContext {
  config: BenchConfig;
  /** http://127.0.0.1:PORT — the DevTools HTTP endpoint of the one Chromium under test. */
  browserUrl: string;
  fixtures: Fixtures;
  procs: ProcessRegistry;
  /** Spawns Verity's MCP server attached to the shared Chromium; close it when the phase ends. */
  startVerity(): Promise<McpSession>;
  /** Spawns Playwright MCP attached to the shared Chromium over CDP; close it when the phase ends. */
  startPlaywright(extraArgs?: string[]): Promise<McpSession>;
  log(line: string): void;
  /** Lines appended under the table (oddities, element counts, ...). */
  notes: string[];
  /** Whole markdown tables of their own, after the main one (a section whose figures are not the three columns). */
  tables: string[];
}

export interface Section {
  name: string;
  run(ctx: BenchContext): Promise<Row[]>;
}

export function ok(value: number, detail?: string): Cell {
  return detail === undefined ? { value } : { value, detail };
}

export function failed(e: unknown): Cell {
  const msg = e instanceof Error ? e.message : String(e);
  return { error: msg.split('\n')[0]!.slice(0, 200) };
}
