// invoke_menu on LibreOffice Writer on X11 (issue 44 item 5, --caps menus), its VCL plugin GTK 3: Format >
// Character… opens the Character dialog, which the window manager lists (the truth: xdotool's own query of
// the X server); a missing item is refused naming the items of Format, and no dialog opens. The text's
// context menu, opened by a right click on a paragraph's element_token, gives Paragraph > Paragraph… its dialog the same way.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startDesktop, until, type Desktop } from './desktop.js';
import { missingOffice, startOffice, type Office } from './libreoffice.js';

const missing = missingTools() ?? missingOffice();

describe('invoke_menu on LibreOffice Writer (X11)', { skip: missing ?? false }, () => {
  let d: Desktop;
  let office: Office;
  let v: Verity;
  let id: number;
  before(async () => {
    d = await startDesktop();
    office = await startOffice(d);
    id = (await office.open('writer', 'Menus Doc', 'hello'))!;
    v = await startVerity(['--caps', 'menus'], d.env);
  });
  after(async () => {
    await v?.close();
    await office?.close();
    await d?.close();
  });
  const target = () => ({ kind: 'window', pid: office.pid(), window_id: id });
  /** The X windows named exactly `name`, as xdotool finds them. */
  const windowsNamed = (name: string) => {
    try {
      return d
        .x('xdotool', ['search', '--onlyvisible', '--name', `^${name}$`])
        .split('\n')
        .filter(Boolean);
    } catch {
      return [];
    }
  };

  test('a missing item in Format: refused, naming the items there [matrix x11 libreoffice invoke_menu refused]', async () => {
    const r = await v.call('invoke_menu', { target: target(), path: ['Format', 'No Such Item'] });
    assert.equal(r.structured.refusal?.code, 'target_not_found', r.text);
    assert.match(r.text, /no item "No Such Item"/);
    assert.match(r.text, /Character/);
    assert.deepEqual(windowsNamed('Character'), [], 'no Character dialog');
  });

  test("the paragraph's context menu: Paragraph > Paragraph… confirmed by its dialog, which the X server lists [matrix x11 libreoffice invoke_menu confirmed]", async () => {
    const snap = await v.call('get_window_state', { target: target(), format: 'full', include_screenshot: false });
    const paragraph = snap.structured.elements.find((e: any) => e.role === 'paragraph' && e.value === 'hello');
    assert.ok(paragraph, snap.text.slice(0, 1500));
    assert.deepEqual(windowsNamed('Paragraph'), [], 'no Paragraph dialog before');
    // Foreground: the right click goes where the paragraph is drawn.
    const r = await v.call('invoke_menu', {
      element_token: paragraph.element_token,
      path: ['Paragraph', 'Paragraph...'],
      delivery_mode: 'foreground',
    });
    await until(() => windowsNamed('Paragraph').length > 0, `the Paragraph dialog (${r.text})`, 20_000, 100);
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.ok(
      r.structured.evidence.some((e: any) => e.kind === 'window_shown'),
      r.text,
    );
    // The dialog is modal: closed again (Escape, as a user would), so the menu bar below can open.
    const dialog = Number(windowsNamed('Paragraph')[0]);
    const closed = await v.call('press_key', {
      target: { kind: 'window', pid: office.pid(), window_id: dialog },
      key: 'Escape',
      delivery_mode: 'foreground',
    });
    await until(
      () => windowsNamed('Paragraph').length === 0,
      `the Paragraph dialog closed (${closed.text})`,
      20_000,
      100,
    );
  });

  test('Format > Character…: confirmed by the dialog, which the X server lists [matrix x11 libreoffice invoke_menu confirmed]', async () => {
    const r = await v.call('invoke_menu', { target: target(), path: ['Format', 'Character...'] });
    await until(() => windowsNamed('Character').length > 0, `the Character dialog (${r.text})`, 20_000, 100);
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.ok(
      r.structured.evidence.some((e: any) => e.kind === 'window_shown'),
      r.text,
    );
  });
});
