// The README's "Your first five minutes" is this test's transcript: a real `verity mcp` over stdio, driven
// by the MCP SDK client as any client drives it, on a page served from loopback. The test fails when the
// README shows something the server no longer says; `VERITY_UPDATE_README=1` writes the block anew.
// What varies from run to run (the tab id, the port, timings) is written as a placeholder on both sides.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { startVerity, type Verity } from '../helpers/mcp.js';

const README = join(ROOT, 'README.md');
const START = '<!-- first-minutes:start -->';
const END = '<!-- first-minutes:end -->';
let fx: FixtureServer;
let v: Verity;
let configDir: string;

before(async () => {
  fx = await serveFixtures();
  configDir = mkdtempSync(join(tmpdir(), 'verity-first-minutes-'));
  v = await startVerity(['--standalone'], { VERITY_CONFIG_DIR: configDir });
});
after(async () => {
  await v?.close();
  await fx?.close();
  rmSync(configDir, { recursive: true, force: true });
});

/** What the model reads of a reply (structuredContent on success, the text on an error), with the run's particulars as placeholders. */
function shown(reply: { isError: boolean; structured: unknown; text: string }, tabId: string): string {
  // The parts around an action's three phases (queue, lock, side_effects) are shown only when they took
  // 1 ms or more, so whether they appear varies from run to run: the README shows the three phases.
  const structured = reply.structured as { timings_ms?: Record<string, number> } | undefined;
  const timings = structured?.timings_ms;
  const steady = timings
    ? {
        ...structured,
        timings_ms: Object.fromEntries(
          Object.entries(timings).filter(([k]) => ['resolve', 'deliver', 'verify'].includes(k)),
        ),
      }
    : structured;
  const body = reply.isError ? reply.text : JSON.stringify(steady, null, 2);
  return body
    .replaceAll(tabId, '<tab_id>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:8000')
    .replace(/("(?:resolve|deliver|verify)": )[\d.]+/g, '$1…');
}

test('the README shows what a first session really gets back', async () => {
  const url = fx.url('signup.html');
  const steps: string[] = [];
  let tabId = '';
  const step = async (caption: string, tool: string, args: Record<string, unknown>) => {
    const reply = await v.call(tool, args);
    tabId ||= reply.structured?.tab_id ?? '';
    const sent = JSON.stringify(args).replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:8000');
    steps.push(`${caption}\n\n\`\`\`\n→ ${tool} ${sent}\n← ${shown(reply, tabId)}\n\`\`\``);
    return reply;
  };

  const opened = await step('Open a page (the browser starts on this first call):', 'page', {
    action: 'navigate',
    url,
  });
  assert.equal(opened.isError, false, opened.text);
  const seen = await step(
    'Observe it: the controls with their roles, names and tokens (`[t=N]` is the `element_token` `"<snapshot_id>:N"`):',
    'get_window_state',
    {},
  );
  assert.match(seen.structured.outline, /textbox 'Name' \[t=0\]/);
  const id = seen.structured.snapshot_id as string;
  const typed = await step(
    'Type into the field by its token; the verdict comes from reading the field back:',
    'type_text',
    {
      element_token: `${id}:0`,
      text: 'Ada Lovelace',
    },
  );
  assert.equal(typed.structured.effect, 'confirmed', typed.text);
  const clicked = await step(
    'Click the check box: confirmed because the box itself received the trusted click:',
    'click',
    {
      element_token: `${id}:1`,
    },
  );
  assert.equal(clicked.structured.effect, 'confirmed', clicked.text);
  const stale = await step(
    'A token from an older observation is refused, and the text says what to do (on errors clients show the model only the text):',
    'click',
    { element_token: 's0:2' },
  );
  assert.equal(stale.isError, true);

  const block = `${START}\n${steps.join('\n\n')}\n${END}`;
  const readme = readFileSync(README, 'utf8');
  const current = readme.slice(readme.indexOf(START), readme.indexOf(END) + END.length);
  assert.ok(readme.includes(START) && readme.includes(END), `README.md has ${START} … ${END}`);
  if (process.env.VERITY_UPDATE_README === '1') writeFileSync(README, readme.replace(current, block));
  else
    assert.equal(
      current,
      block,
      'README "Your first five minutes" matches a real session (VERITY_UPDATE_README=1 rewrites it)',
    );
});
