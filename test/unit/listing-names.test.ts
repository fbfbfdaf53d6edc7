// The pure parts of listing what a person can act on (#24 item 2): icon-font glyphs are no name, and a
// guessed or colour name keeps its mark through every form of get_window_state (the outline says
// "(guessed)"; the compact form's ~guess/~colour decode back to the full form's name_source).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withoutIconGlyphs } from '../../server/cdp/page-agent/names.js';
import { decodeOutline, encodeOutline, outlineLine, type OutlineElement } from '../../server/tools/outline.js';

const el = (i: number, over: Partial<OutlineElement> = {}): OutlineElement => ({
  element_index: i,
  role: 'generic',
  label: `G${i}`,
  enabled: true,
  focused: false,
  in_web_content: true,
  frame: { x: i, y: 0, w: 1, h: 1 },
  parent_index: null,
  ...over,
});

describe('icon-font glyphs', () => {
  test('private-use characters (Font Awesome, Material Symbols codepoints) are dropped from a name', () => {
    assert.equal(withoutIconGlyphs('\uf3e5'), '');
    assert.equal(withoutIconGlyphs('\uf3e5 Reply'), 'Reply');
    assert.equal(withoutIconGlyphs('\u{F0001}x'), 'x');
    assert.equal(withoutIconGlyphs('Café ☕'), 'Café ☕', 'ordinary text and symbols stay');
  });
});

describe('a guessed name keeps its mark', () => {
  test('the outline marks a name guessed from an icon, not a colour or a given name', () => {
    assert.equal(
      outlineLine(el(1, { label: 'reply', name_source: 'icon_guess' }), true),
      "- generic 'reply' (guessed) [t=1]",
    );
    assert.equal(outlineLine(el(2, { label: '#ff0000', name_source: 'colour' }), true), "- generic '#ff0000' [t=2]");
    assert.equal(outlineLine(el(3, { label: 'Reply' }), true), "- generic 'Reply' [t=3]");
  });

  test('the compact form round-trips name_source, and a label that starts with ~ is quoted', () => {
    const elements = [
      el(0, { label: 'reply', name_source: 'icon_guess' }),
      el(1, { label: '#008080', name_source: 'colour' }),
      el(2, { label: '~guess' }),
      el(3, { label: 'Forward', parent_index: 0 }),
    ];
    const { roles, outline } = encodeOutline(elements, true);
    assert.match(outline, /^0 \S+ 0,0,1x1 ~guess reply$/m);
    assert.match(outline, /^1 \S+ 1,,1x1 ~colour #008080$/m);
    assert.match(outline, /^2 \S+ 2,,1x1 '~guess'$/m);
    assert.deepEqual(decodeOutline(outline, roles, true), elements);
  });
});
