// The operators' action log (server/activity.ts) holds a bounded amount: at most 600 entries, and
// thumbnails up to THUMBNAIL_CHARS_KEPT characters in all, the oldest losing theirs first (the soak found
// 500 kept thumbnails to be most of the server's heap growth under load).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Activity, labelledSummary, summarizeArgs, THUMBNAIL_CHARS_KEPT } from '../../server/activity.js';
import { allTools } from '../../server/tools/index.js';

const entry = (i: number) => ({
  sessionKey: `c/${i % 3}`,
  tool: 'click',
  summary: `element_token=s:${i}`,
  effect: 'confirmed',
  refusal: null,
  evidence: [],
  isError: false,
});

test('thumbnails are held up to a bound in all, the newest kept, the entries themselves all listed', () => {
  const activity = new Activity();
  const thumb = 'j'.repeat(40_000);
  const thumbnails: string[] = [];
  activity.on('thumbnail', (e) => thumbnails.push(e.thumbnail!));
  for (let i = 0; i < 700; i++) activity.attachThumbnail(activity.record(entry(i)), thumb + i);
  const listed = activity.list();
  assert.equal(listed.length, 200);
  const held = listed.reduce((n, e) => n + (e.thumbnail?.length ?? 0), 0);
  assert.ok(held <= THUMBNAIL_CHARS_KEPT, `thumbnails hold ${held} characters, over ${THUMBNAIL_CHARS_KEPT}`);
  assert.equal(activity.thumbnailsHeld, held, 'the count is what the entries hold');
  assert.equal(listed.at(-1)!.thumbnail, `${thumb}699`, 'the newest keeps its thumbnail');
  assert.equal(listed[0].thumbnail, undefined, 'an older one gave its up');
  assert.equal(thumbnails.length, 700, 'every thumbnail was still sent on as it came');
});

test('entries trimmed off the log take their thumbnails with them; a replaced thumbnail is counted once', () => {
  const activity = new Activity();
  const first = activity.record(entry(0));
  activity.attachThumbnail(first, 'a'.repeat(1000));
  activity.attachThumbnail(first, 'b'.repeat(500));
  assert.equal(activity.thumbnailsHeld, 500);
  for (let i = 1; i < 700; i++) activity.record(entry(i));
  assert.equal(activity.thumbnailsHeld, 0, 'the trimmed entry no longer counts');
});

test('the log line reads a menu path, a region and a target as an operator says them', () => {
  assert.equal(
    summarizeArgs({ target: { kind: 'window', pid: 7, window_id: 4 }, path: ['Format', 'Character…'] }),
    'target=window 4 (pid 7) path=Format › Character…',
  );
  assert.equal(
    summarizeArgs({ region: { x: 10, y: 20, width: 300, height: 200 }, scale: 2 }),
    'region=10,20 300×200 scale=2',
  );
  // Not a plain rectangle (a field besides the four): shown key by key; not a path of names: as sent.
  assert.equal(
    summarizeArgs({ region: { x: 1, y: 2, width: 3, height: 4, z: 5 } }),
    'region=(x=1, y=2, width=3, height=4, z=5)',
  );
  assert.equal(summarizeArgs({ path: ['a', 1] }), 'path=["a",1]');
  // A word of a list is quoted where a space, quote or comma would hide where it ends.
  assert.equal(
    summarizeArgs({ app: 'x', args: ['--calc', 'my file.ods', ''], session: 's' }),
    'app=x args=--calc "my file.ods" ""',
  );
  const cut = summarizeArgs({ path: ['x'.repeat(70)] }, 60);
  assert.ok(cut.endsWith('…') && cut.length <= 'path='.length + 60, `cut at the bound like any value: ${cut}`);
  const lead = summarizeArgs({ path: ['x'.repeat(70)] }, 60, 'invoke_menu');
  assert.ok(lead.endsWith('…') && lead.length <= 60, `a lead is cut at the bound too: ${lead}`);
  assert.ok(summarizeArgs({ path: ['x'.repeat(70)] }, Infinity, 'invoke_menu').length === 70, 'whole for approvals');
});

const tab = { kind: 'tab', tab_id: 't2' };
const win = { kind: 'window', pid: 4242, window_id: 71303175 };

/**
 * One call of every tool in the registry, as an agent would send it, and the line operators read (the action
 * log, the audit trail and the approval card's main line). A tool added without a line here fails.
 */
const LINES: Record<string, Array<[args: Record<string, unknown>, line: string]>> = {
  start_session: [[{ session: 'calc', recording_dir: 'runs/a' }, 'recording_dir=runs/a']],
  escalate_session: [
    [{ session: 's', reason: 'other', detail: 'the pane is blank' }, 'reason=other detail=the pane is blank'],
  ],
  get_session: [[{ session: 's' }, '']],
  list_sessions: [[{ limit: 10, cursor: 'c1' }, 'limit=10 cursor=c1']],
  get_session_state: [[{}, '']],
  end_session: [[{ session: 's' }, '']],
  set_agent_cursor_motion: [[{ style: 'classic', effects: { trail: false } }, 'style=classic effects=(trail=false)']],
  list_apps: [[{}, '']],
  list_windows: [[{ pid: 4242 }, 'pid=4242']],
  get_window_state: [
    [
      { target: win, query: 'Bold', include_screenshot: false },
      'target=window 71303175 (pid 4242) query=Bold include_screenshot=false',
    ],
  ],
  click: [
    [{ element_token: 's3:7' }, 'element_token=s3:7'],
    [{ target: tab, x: 120, y: 45, modifier: ['ctrl', 'shift'] }, 'target=tab t2 x=120 y=45 modifier=ctrl+shift'],
  ],
  double_click: [[{ element_token: 's3:7' }, 'element_token=s3:7']],
  right_click: [[{ target: { kind: 'desktop' }, x: 5, y: 6 }, 'target=the desktop x=5 y=6']],
  type_text: [[{ element_token: 's3:7', text: 'hello world' }, 'element_token=s3:7 text=hello world']],
  set_value: [[{ element_token: 's3:9', value: ['Red', 'Dark blue'] }, 'element_token=s3:9 value=Red "Dark blue"']],
  press_key: [[{ key: 'Enter', modifiers: ['shift'] }, 'key=Enter modifiers=shift']],
  hotkey: [[{ target: win, keys: ['ctrl', 's'] }, 'target=window 71303175 (pid 4242) keys=ctrl+s']],
  scroll: [[{ element_token: 's3:2', direction: 'down', amount: 5 }, 'element_token=s3:2 direction=down amount=5']],
  drag: [[{ from_x: 1, from_y: 2, to_x: 30, to_y: 40 }, 'from_x=1 from_y=2 to_x=30 to_y=40']],
  hover: [[{ element_token: 's3:4' }, 'element_token=s3:4']],
  move_cursor: [
    [{ target: win, x: 200, y: 150 }, 'to 200,150 on window 71303175 (pid 4242)'],
    [{ element_token: 's5:3', delivery_mode: 'foreground' }, 'to s5:3 delivery_mode=foreground'],
  ],
  bring_to_front: [
    [{ target: win }, 'window 71303175 (pid 4242)'],
    [{ target: tab }, 'tab t2'],
  ],
  set_window_frame: [
    [{ target: win, x: 10, y: 20, width: 800, height: 600 }, 'x 10, y 20, 800×600 on window 71303175 (pid 4242)'],
  ],
  set_window_state: [[{ target: { kind: 'window', window_id: 9 }, state: 'maximized' }, 'maximized on window 9']],
  invoke_menu: [
    [{ target: win, path: ['Format', 'Character…'] }, 'Format › Character… on window 71303175 (pid 4242)'],
    [{ element_token: 's4:12', path: ['Insert Comment'] }, 'Insert Comment in the context menu of s4:12'],
  ],
  run_actions: [
    [
      {
        steps: [
          { tool: 'bring_to_front', args: { target: win } },
          {
            tool: 'invoke_menu',
            args: { target: win, path: ['Edit', 'Copy'] },
            expect: [{ window: { title_contains: 'Calc' }, focused: true }],
          },
          { tool: 'type_text', args: { text: 'B2' } },
        ],
      },
      '3 steps: bring_to_front window 71303175 (pid 4242); invoke_menu Edit › Copy on window 71303175 (pid 4242) expect window titled *Calc* focused; type_text text=B2',
    ],
  ],
  verify_state: [
    [
      {
        target: tab,
        expect: [
          { element: { role: 'button', name: 'Save' }, enabled: true },
          { element: { name_contains: 'Total' }, value_equals: '42' },
          { url_contains: '/done' },
          { request: { url_contains: '/api/claims', status_min: 200, status_max: 299 }, since: 3 },
          { no_console_errors_since: 3 },
        ],
        timeout_ms: 5000,
      },
      'button "Save" enabled; element named *Total* value equals "42"; url contains "/done"; request url contains "/api/claims" status 200–299 since mark 3; no console errors since mark 3 on tab t2 timeout_ms=5000',
    ],
    [
      {
        target: win,
        expect: [
          {
            window: { title: 'Untitled 1 - LibreOffice Calc' },
            frame: { x: 0, y: 0, width: 800, height: 600, tolerance: 4 },
          },
          { element: { element_token: 's2:5' }, checked: false },
        ],
      },
      'window "Untitled 1 - LibreOffice Calc" frame 0,0 800×600 ±4; element s2:5 not checked on window 71303175 (pid 4242)',
    ],
  ],
  page: [[{ action: 'navigate', url: 'https://example.com/claims' }, 'action=navigate url=https://example.com/claims']],
  screen: [[{ action: 'split_right' }, 'action=split_right']],
  clipboard_write: [
    [{ text: 'Total: 42' }, '"Total: 42"'],
    [{ text: 'two\nlines', target: tab }, '"two\\nlines" on tab t2'],
  ],
  clipboard_read: [
    [{}, ''],
    [{ target: tab }, 'on tab t2'],
  ],
  get_cursor_position: [[{}, '']],
  zoom: [
    [
      { target: win, region: { x: 10, y: 20, width: 300, height: 200 }, scale: 2 },
      '10,20 300×200 at scale 2 on window 71303175 (pid 4242)',
    ],
    [{ region: { x: 0, y: 0, width: 64, height: 32 } }, '0,0 64×32'],
  ],
  get_desktop_state: [[{}, '']],
  launch_app: [
    [{ app: 'libreoffice-calc' }, 'libreoffice-calc'],
    [
      { app: '/usr/bin/gedit', args: ['--new-window', 'my notes.txt'], timeout_ms: 10000 },
      '/usr/bin/gedit --new-window "my notes.txt" timeout_ms=10000',
    ],
  ],
  kill_app: [[{ pid: 4242 }, 'pid 4242']],
};

/** Every string and number the agent sent (the session and the target's `kind` aside): the line must say each. */
function leaves(value: unknown, key = ''): string[] {
  if (key === 'session' || key === 'kind') return [];
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (typeof value === 'number') return [String(value)];
  if (Array.isArray(value)) return value.flatMap((v) => leaves(v));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => leaves(v, k));
  return [];
}

test('every tool in the registry has a legible line: no JSON, every argument said, whole for approvals', () => {
  const tools = allTools();
  const missing = tools.map((t) => t.name).filter((name) => !LINES[name]);
  assert.deepEqual(missing, [], `tools with no legible line in this test: ${missing.join(', ')}`);
  for (const tool of tools) {
    for (const [args, line] of LINES[tool.name]) {
      // The sample is a call the tool accepts: the line is checked against what can really be sent.
      const parsed = tool.input.safeParse(args);
      assert.ok(parsed.success, `${tool.name} ${JSON.stringify(args)}: ${parsed.error?.message}`);
      const shown = summarizeArgs(args, Infinity, tool.name);
      assert.equal(shown, line, `${tool.name}'s line`);
      assert.doesNotMatch(shown, /[{}[\]]|":/, `${tool.name}'s line holds no JSON: ${shown}`);
      for (const leaf of leaves(args))
        assert.ok(
          shown.includes(leaf) || shown.includes(JSON.stringify(leaf).slice(1, -1)),
          `${tool.name}'s line says ${JSON.stringify(leaf)}: ${shown}`,
        );
    }
  }
});

test('each token in a line shows as its label, a lead included', () => {
  const labels = { 's4:12': 'cell "B2"' };
  assert.equal(
    labelledSummary({ element_token: 's4:12', path: ['Insert Comment'] }, labels, 'invoke_menu'),
    'Insert Comment in the context menu of cell "B2"',
  );
  assert.equal(
    labelledSummary({ expect: [{ element: { element_token: 's4:12' }, focused: true }] }, labels, 'verify_state'),
    'element cell "B2" focused',
  );
});
