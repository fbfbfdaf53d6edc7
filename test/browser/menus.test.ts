// invoke_menu on a tab (issue 44 item 5, --caps menus): refused, naming the route, and nothing sent: the
// page's own record of its clicks (the hover fixture counts none) stays as it was.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuiteOverStdio, type Suite } from '../helpers/suite.js';
import type { Verity } from '../helpers/mcp.js';

let s: Suite<Verity>;
before(async () => {
  s = await browserSuiteOverStdio(['--caps', 'menus']);
});
after(async () => {
  await s?.close();
});

test('invoke_menu on a tab: refused not_supported, naming the CDP route and what to do instead', async () => {
  const page = await s.open('hover.html');
  const listed = await s.v.call('page', { action: 'list_tabs' });
  const target = { kind: 'tab', tab_id: listed.structured.current_tab_id as string };
  const before = await page.evaluate(() => document.body.innerHTML);
  const r = await s.v.call('invoke_menu', { target, path: ['Format', 'Bold'] });
  assert.equal(r.structured.refusal?.code, 'not_supported', r.text);
  assert.match(r.text, /browser tab, driven over CDP/);
  assert.match(r.text, /click the page's menu element \("Format"\)/);
  assert.equal(await page.evaluate(() => document.body.innerHTML), before, 'the page is as it was');
});
