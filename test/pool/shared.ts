// What the pool tests share (issue #18): the fixed task (task-page.ts) done through Verity with every action
// confirmed, the page's own report of it, and the proof that two sessions never see or drive each other's tabs.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refusalOf, waitFor, type Connection } from '../helpers/gateway.js';
import type { ToolResult } from '../helpers/mcp.js';
import { startTaskServer, TASK_FIELDS, type TaskServer } from '../helpers/task-page.js';

/** The task server and a scratch folder for one test file (torn down after it). */
export function taskSetup(): { task(): TaskServer; dir(name: string): string } {
  const tmp = mkdtempSync(join(tmpdir(), 'verity-pool-'));
  let task: TaskServer | undefined;
  before(async () => {
    task = await startTaskServer();
  });
  after(async () => {
    await task?.close();
    rmSync(tmp, { recursive: true, force: true });
  });
  return { task: () => task!, dir: (name) => join(tmp, name) };
}

export type Call = (name: string, args?: Record<string, unknown>) => Promise<ToolResult>;

export function ok(r: ToolResult, what: string): ToolResult {
  assert.equal(r.isError, false, `${what}: ${r.text}`);
  return r;
}

/** The fixed task: open the page, type into its five fields, click Submit; every action must be confirmed. */
export async function doTask(
  task: TaskServer,
  call: Call,
  run: string,
): Promise<{ tabId: string; tokens: string[]; values: string[] }> {
  const opened = ok(await call('page', { action: 'navigate', url: task.url(run) }), 'navigate');
  const state = ok(await call('get_window_state', { format: 'full', include_screenshot: false }), 'get_window_state');
  const elements = state.structured.elements as Array<{ element_token: string; label: string; role: string }>;
  const token = (label: string) =>
    elements.find((e) => e.label === label)?.element_token ?? assert.fail(`no ${label} in ${state.text}`);
  const values = TASK_FIELDS.map((f) => `${f.toLowerCase()} of ${run}`);
  const tokens = TASK_FIELDS.map((f) => token(f));
  for (let i = 0; i < tokens.length; i++) {
    const typed = await call('type_text', { element_token: tokens[i], text: values[i] });
    assert.equal(typed.structured.effect, 'confirmed', `type_text ${TASK_FIELDS[i]}: ${typed.text}`);
  }
  const clicked = await call('click', { element_token: token('Submit') });
  assert.equal(clicked.structured.effect, 'confirmed', `click: ${clicked.text}`);
  return {
    tabId: opened.structured.tab_id ?? state.structured.target?.tab_id,
    tokens: [...tokens, token('Submit')],
    values,
  };
}

/** The page's own report of what it held when Submit was clicked. */
export async function reported(task: TaskServer, run: string, values: string[]): Promise<void> {
  const report = await waitFor(() => task.report(run), `the page of ${run} to report`);
  assert.deepEqual(report.fields, values, 'the page holds what Verity typed');
  assert.equal(report.clicks, 1, 'the page got one click');
}

/** Two agents, each with its own browser (or context): neither sees nor drives the other's tabs. */
export async function provesApart(task: TaskServer, a: Connection, b: Connection, label: string): Promise<void> {
  const mine = await doTask(task, a.call, `${label}-a`);
  await reported(task, `${label}-a`, mine.values);
  const theirs = await doTask(task, b.call, `${label}-b`);
  await reported(task, `${label}-b`, theirs.values);
  const aTab = (await a.call('page', { action: 'list_tabs' })).structured.current_tab_id as string;
  const bList = ok(await b.call('page', { action: 'list_tabs' }), 'B list_tabs');
  assert.ok(
    !bList.structured.tabs.some(
      (t: { tab_id: string; url: string }) => t.tab_id === aTab || t.url.includes(`${label}-a`),
    ),
    `B lists A's tab: ${bList.text}`,
  );
  for (const action of ['get_text', 'select_tab', 'close_tab']) {
    assert.equal(
      refusalOf(await b.call('page', { action, tab_id: aTab })).code,
      'target_not_found',
      `B ${action} A's tab`,
    );
  }
  assert.equal(
    refusalOf(await b.call('click', { element_token: mine.tokens[5] })).code,
    'target_not_found',
    "B clicks with A's token",
  );
  assert.equal(
    refusalOf(await b.call('type_text', { target: { kind: 'tab', tab_id: aTab }, text: 'x' })).code,
    'target_not_found',
    "B types into A's tab",
  );
  const bState = ok(await b.call('get_window_state', { include_screenshot: false }), 'B get_window_state');
  assert.notEqual(bState.structured.target?.tab_id, aTab, "B's default tab is its own");
  assert.doesNotMatch(bState.text, new RegExp(`${label}-a`));
  // Nothing of B's reached A's page (still one click, A's values), and A still drives its own tab.
  await reported(task, `${label}-a`, mine.values);
  ok(await a.call('page', { action: 'get_text', tab_id: aTab }), 'A reads its own tab');
  // Each browser (or context) keeps its own cookies: B's page saw only B's run.
  assert.deepEqual(task.report(`${label}-b`)!.cookie.split('; ').filter(Boolean), [`seen_${label}-b=1`]);
}
