// The pure parts of naming: Chrome's role words merged with the page agent's (cdp/ax-roles.ts) and the
// rules of names.ts that need no DOM (whitespace, the length cut, input buttons' default names, which
// roles are named from content). The DOM rules are compared with Chrome's own tree in
// test/browser/ax-names.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CHROME_ROLE_WORDS, mergedRole, saysNothing } from '../../server/cdp/ax-roles.js';
import {
  cutName,
  defaultInputButtonName,
  namedFromContent,
  splitSelectorList,
  squash,
} from '../../server/cdp/page-agent/names.js';

describe("mergedRole: Chrome's tree and the page agent", () => {
  const cases: Array<[string, unknown, string, string]> = [
    ['generic', 'checkbox', 'checkbox', 'ElementInternals: a role only the tree knows'],
    ['generic', 'button', 'button', 'a custom element the tree calls a button'],
    ['textbox', 'generic', 'textbox', 'an EditContext editor Chrome calls generic stays a text field'],
    ['generic', 'none', 'generic', 'an ignored clickable stays listed as generic'],
    ['iframe', 'Iframe', 'iframe', "Chrome's internal name: Verity's word stands"],
    ['month', 'DateTime', 'month', 'the input type says more than DateTime'],
    ['date', 'Date', 'date', 'Date is spelled as the input type'],
    ['textbox', undefined, 'textbox', 'no node: the agent stands'],
    ['textbox', '', 'textbox', 'an empty role: the agent stands'],
    ['option', 'listitem', 'listitem', 'an ARIA word from the tree wins'],
  ];
  for (const [agent, chrome, want, why] of cases)
    test(`${agent} + ${String(chrome)} -> ${want} (${why})`, () => assert.equal(mergedRole(agent, chrome), want));

  test('every internal name maps to words the agent gives', () => {
    for (const [chrome, words] of Object.entries(CHROME_ROLE_WORDS)) {
      assert.match(chrome, /^[A-Z]/, `${chrome} is an internal (capitalized) name`);
      assert.ok(words.length > 0);
      for (const w of words) assert.equal(mergedRole(w, chrome), w);
    }
  });

  test('roles that say nothing', () => {
    for (const r of ['generic', 'none', 'presentation', 'GenericContainer', 'Unknown', ''])
      assert.ok(saysNothing(r), r);
    for (const r of ['button', 'textbox', 'Iframe', 'group']) assert.ok(!saysNothing(r), r);
  });
});

describe('names.ts rules without a DOM', () => {
  test('whitespace collapsed and trimmed', () => {
    assert.equal(squash('  Plain \n\t button  text '), 'Plain button text');
    assert.equal(squash('\u00a0 '), '');
  });

  test('a long name is cut at 80 characters with an ellipsis; a short one is untouched', () => {
    const long = 'x'.repeat(100);
    assert.equal(cutName(long).length, 80);
    assert.ok(cutName(long).endsWith('…'));
    assert.equal(cutName('x'.repeat(80)), 'x'.repeat(80));
    assert.equal(cutName('short'), 'short');
  });

  test("input buttons' default names", () => {
    assert.equal(defaultInputButtonName('submit'), 'Submit');
    assert.equal(defaultInputButtonName('image'), 'Submit');
    assert.equal(defaultInputButtonName('reset'), 'Reset');
    assert.equal(defaultInputButtonName('button'), '');
  });

  test('roles named from content, and roles named only by their author or label', () => {
    for (const r of ['button', 'link', 'checkbox', 'option', 'tab', 'menuitem', 'treeitem', 'generic'])
      assert.ok(namedFromContent(r), r);
    for (const r of ['textbox', 'combobox', 'listbox', 'slider', 'spinbutton', 'searchbox', 'iframe', 'tablist'])
      assert.ok(!namedFromContent(r), r);
  });
});

describe('splitSelectorList: the selectors of a rule whose ::before/::after may name an element', () => {
  test('top-level commas only', () => {
    assert.deepEqual(splitSelectorList('a::before, .x > b::after'), ['a::before', '.x > b::after']);
    assert.deepEqual(splitSelectorList(':is(a, b)::before,c::after'), [':is(a, b)::before', 'c::after']);
    assert.deepEqual(splitSelectorList('[data-x=","]::before , d'), ['[data-x=","]::before', 'd']);
    assert.deepEqual(splitSelectorList("[title='a,b']::after"), ["[title='a,b']::after"]);
    assert.deepEqual(splitSelectorList(''), []);
  });
});
