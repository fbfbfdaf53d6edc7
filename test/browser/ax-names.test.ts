// Names and roles as Chrome computes them (contract, get_window_state: "Roles and names are the
// accessibility tree's"): for every fixture page, each element get_window_state lists is compared with
// Chrome's own accessibility node for the same DOM node, in every frame (same-origin, srcdoc and
// cross-origin iframes, open and closed shadow roots, ElementInternals, EditContext).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { browserSuite, type Suite } from '../helpers/suite.js';
import { ROOT } from '../helpers/fixtures.js';
import { chromeNodesOf, type ChromeNode } from '../helpers/ax-tree.js';
import { CHROME_ROLE_WORDS, saysNothing } from '../../server/cdp/ax-roles.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

/**
 * Whether Verity's role word is Chrome's role: ARIA's words the same, Chrome's internal names by the
 * table in server/cdp/ax-roles.ts. Where Chrome's tree has no role (generic, ignored), Verity lists the
 * element for what only the DOM shows (a pointer cursor, tabindex, a click handler) as "generic", or as
 * "textbox" when it takes typing (an EditContext editor without a role), or as "slider" when it is a widget
 * library's slider handle without ARIA (jQuery UI's `.ui-slider-handle`: Chrome calls it generic).
 */
function sameRole(verityRole: string, chrome: ChromeNode): boolean {
  if (saysNothing(chrome.role)) return /^(generic|textbox|slider)$/.test(verityRole);
  return (CHROME_ROLE_WORDS[chrome.role] ?? [chrome.role]).includes(verityRole);
}

const squash = (t: string) => t.replace(/\s+/g, ' ').trim();

/** Whether Verity's label is Chrome's name (cut at its length bound with "…" counts). */
function sameName(verity: string, chrome: ChromeNode): boolean {
  const want = squash(chrome.name);
  if (verity === want) return true;
  if (verity.endsWith('…') && want.startsWith(verity.slice(0, -1))) return true;
  // Chrome leaves unnamed what the DOM shows only as a clickable (a generic with a pointer cursor): Verity
  // names it by its text so the model can find it.
  return want === '' && saysNothing(chrome.role);
}

const pages = readdirSync(join(ROOT, 'test', 'fixtures'))
  .filter((f) => f.endsWith('.html') && (!process.env.AX_ONLY || f.includes(process.env.AX_ONLY)))
  .sort();

describe('names and roles as Chrome computes them, in every fixture page', () => {
  for (const file of pages) {
    test(file, async () => {
      const page = await s.open(file);
      let st: any;
      let chrome: ChromeNode[] = [];
      // Frames (a cross-origin one especially) may still be loading: observe until the lists agree.
      for (let attempt = 0; attempt < 20; attempt++) {
        const r = await s.v.call('get_window_state', { format: 'full', max_elements: 5000 });
        assert.equal(r.isError, false, r.text);
        st = r.structured;
        chrome = await chromeNodesOf(page, st.snapshot_id);
        if (chrome.length === st.elements.length) break;
        await new Promise((done) => setTimeout(done, 250));
      }
      assert.equal(chrome.length, st.elements.length, 'every listed element has its DOM node');
      const wrong: string[] = [];
      st.elements.forEach((e: any, i: number) => {
        const c = chrome[i];
        if (!sameRole(e.role, c) || !sameName(e.label, c))
          wrong.push(
            `[${i}] <${c.nodeName}> Verity ${e.role} ${JSON.stringify(e.label)}; Chrome ${c.role} ${JSON.stringify(c.name)}`,
          );
      });
      assert.deepEqual(wrong, [], `${file}: ${wrong.length} of ${st.elements.length} differ:\n${wrong.join('\n')}`);
    });
  }
});
