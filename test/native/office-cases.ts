// The LibreOffice cases (Writer, Calc, Impress; SAL_USE_VCLPLUGIN=gtk3), shared by the X11 desktop
// (office.test.ts: Xvfb + openbox) and the Wayland one (office-wayland.test.ts: headless sway with no
// DISPLAY, where LibreOffice is a Wayland client). LibreOffice's accessibility tree is what screen readers
// walk: its cache links the root pane to a parent that is not in the cache, and its documents and sheets
// manage their own children (child count -1). Every confirmed effect is checked against the document's own
// model, read through UNO (office.py). LibreOffice starts once per file (slow: a bounded wait), stopped by PID;
// each case group opens its own documents, so a LibreOffice started again after a hang costs one group.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import {
  missingTools,
  missingWaylandTools,
  startDesktop,
  startWaylandDesktop,
  until,
  type Desktop,
} from './desktop.js';
import { missingOffice, startOffice, type Office } from './libreoffice.js';

export function officeCases(kind: 'x11' | 'wayland'): void {
  // The rows each case proves, in the counted matrix's words (docs/action-matrix.md): sway is the Wayland desktop.
  const row = (action: string, outcome: string) =>
    `[matrix ${kind === 'wayland' ? 'sway' : 'x11'} libreoffice ${action} ${outcome}]`;
  const missing = (kind === 'wayland' ? missingWaylandTools() : missingTools()) ?? missingOffice();
  const FILLED = 'Erste Zeile\nZweite Zeile';
  const SHEET_A1 = 'Anfang';

  let d: Desktop;
  let office: Office;
  let v: Verity;
  const windows = new Map<string, number>();
  const started = Date.now();

  before(
    async () => {
      if (missing) return;
      d = kind === 'wayland' ? await startWaylandDesktop() : await startDesktop();
      office = await startOffice(d);
      v = await startVerity([], d.env);
      process.stderr.write(`office (${kind}): LibreOffice up in ${Date.now() - started} ms\n`);
    },
    { timeout: 240_000 },
  );
  after(async () => {
    await v?.close();
    await office?.close();
    await d?.close();
    if (!missing) process.stderr.write(`office (${kind}): the file took ${Date.now() - started} ms\n`);
  });

  type Doc = { name: string; app: 'writer' | 'calc' | 'impress'; title: string; text?: string };
  /**
   * A case group's documents, opened in its before(): if LibreOffice hangs creating one and is started again
   * (libreoffice.ts), only this group's documents went with it, and those opened before the restart are
   * opened again. They stay open, as before: with the Writer documents closed after their group, the Calc
   * document opened next was gone by its first snapshot once (not understood, and not needed).
   */
  function documents(docs: Doc[]): void {
    before(
      async () => {
        if (missing) return;
        const t0 = Date.now();
        const openedIn = new Map<Doc, number>();
        for (const doc of docs) {
          windows.set(doc.name, await open(doc.app, doc.title, doc.text));
          openedIn.set(doc, office.starts());
        }
        for (const doc of docs)
          if (openedIn.get(doc) !== office.starts()) windows.set(doc.name, await open(doc.app, doc.title, doc.text));
        process.stderr.write(
          `office (${kind}): ${docs.map((doc) => doc.name).join(', ')} up in ${Date.now() - t0} ms\n`,
        );
      },
      { timeout: 240_000 },
    );
  }

  /**
   * Opens a document and gives its window's id: the X11 id on X11; on Wayland, where LibreOffice is a
   * Wayland client with no X id, the id Verity's list_windows gives the window of that title.
   */
  async function open(app: 'writer' | 'calc' | 'impress', title: string, text?: string): Promise<number> {
    const xid = await office.open(app, title, text);
    if (xid !== null) return xid;
    const full = `${title} - LibreOffice ${{ writer: 'Writer', calc: 'Calc', impress: 'Impress' }[app]}`;
    return until(
      async () => {
        const r = await v.call('list_windows');
        return (r.structured.windows as Array<{ title: string; window_id: number }>).find((w) => w.title === full)
          ?.window_id;
      },
      `"${full}" in list_windows`,
      60_000,
      200,
    );
  }

  type El = {
    element_index: number;
    element_token: string;
    role: string;
    label: string;
    value?: string;
    focused: boolean;
    parent_index: number | null;
    frame: { x: number; y: number; w: number; h: number };
  };

  const target = (name: string) => ({ kind: 'window', pid: office.pid(), window_id: windows.get(name)! });

  /** A full snapshot of a document's window, once its document is listed (LibreOffice fills its tree as it draws). */
  async function snap(
    name: string,
    wanted: (els: El[], incomplete: string) => boolean = (els) => els.some((e) => e.role === 'paragraph'),
  ) {
    let last = '';
    return until(
      async () => {
        const r = await v.call('get_window_state', { format: 'full', target: target(name), include_screenshot: false });
        assert.equal(r.isError, false, r.text);
        const elements = r.structured.elements as El[];
        const incomplete = String(r.structured.incomplete ?? '');
        last = `${elements.map((e) => `${e.role}:${e.label}`).join(', ')}${incomplete ? `; incomplete: ${incomplete}` : ''}`;
        return wanted(elements, incomplete) ? { r, elements } : null;
      },
      () => `the document of "${name}" in its window's snapshot (last: ${last.slice(0, 600)})`,
      30_000,
      300,
    );
  }

  /** Activates a window (keystroke routes and focus need it) and waits until X (or sway) says so. */
  async function activate(name: string) {
    const id = windows.get(name)!;
    if (kind === 'x11') {
      d.x('xdotool', ['windowactivate', '--sync', String(id)]);
      await until(() => Number(d.x('xdotool', ['getactivewindow'])) === id || null, `window ${name} to be active`);
      return;
    }
    const title = (await v.call('list_windows')).structured.windows.find((w: any) => w.window_id === id)?.title;
    d.x('swaymsg', [`[title="^${title}$"]`, 'focus']);
    await until(() => focusedTitle(d) === title, `window ${name} to be focused`);
  }

  /** The title of the window sway says has focus. */
  function focusedTitle(desktop: Desktop): string | null {
    let found: string | null = null;
    const walk = (n: any) => {
      if (n.focused && n.pid) found = n.name;
      for (const c of [...(n.nodes ?? []), ...(n.floating_nodes ?? [])]) walk(c);
    };
    walk(JSON.parse(desktop.x('swaymsg', ['-t', 'get_tree', '-r'])));
    return found;
  }

  describe(`LibreOffice Writer, Calc and Impress on the native route (${kind})`, { skip: missing ?? false }, () => {
    describe('Writer', () => {
      documents([
        { name: 'blank', app: 'writer', title: 'Verity Blank' },
        { name: 'filled', app: 'writer', title: 'Verity Filled', text: FILLED },
      ]);
      test(`Writer: the document and its paragraphs are listed with tokens; off-screen items are not; complete ${row('get_window_state', 'confirmed')}`, async () => {
        for (const name of ['blank', 'filled']) {
          const { r, elements } = await snap(name);
          assert.equal(r.structured.elements_complete, true, r.text.slice(0, 400));
          const doc = elements.find((e) => e.role === 'document text');
          assert.ok(doc, `no document in ${elements.map((e) => e.role).join(', ')}`);
          const paragraphs = elements.filter((e) => e.role === 'paragraph');
          assert.ok(paragraphs.length >= 1, 'no paragraph');
          for (const p of paragraphs) {
            assert.ok(p.element_token, 'a paragraph without a token');
            // Under the document, drawn inside it.
            assert.equal(p.parent_index, doc.element_index);
            assert.ok(p.frame.w > 0 && p.frame.y >= doc.frame.y, JSON.stringify(p.frame));
          }
          // Nothing placed off the screen (LibreOffice puts closed menus' separators at INT32_MIN).
          const off = elements.filter((e) => e.frame.x < -10_000 || e.frame.y < -10_000);
          assert.deepEqual(
            off.map((e) => `${e.role}:${e.label}`),
            [],
          );
          if (name === 'filled')
            assert.deepEqual(
              paragraphs.map((p) => p.value),
              FILLED.split('\n'),
            );
        }
      });

      test('an app cache that does not answer within its bound: the window is read live, complete, the same paragraphs', async () => {
        // A 1 ms bound for Cache.GetItems: LibreOffice's whole cache (thousands of objects) never comes that fast.
        const hurried = await startVerity([], { ...d.env, VERITY_NATIVE_CACHE_WAIT_MS: '1' });
        try {
          const r = await hurried.call('get_window_state', {
            format: 'full',
            target: target('filled'),
            include_screenshot: false,
          });
          assert.equal(r.isError, false, r.text);
          assert.equal(r.structured.elements_complete, true, r.text.slice(0, 400));
          const elements = r.structured.elements as El[];
          const doc = elements.find((e) => e.role === 'document text');
          assert.ok(doc, `no document in ${elements.map((e) => e.role).join(', ')}`);
          const paragraphs = elements.filter((e) => e.role === 'paragraph' && e.parent_index === doc.element_index);
          assert.deepEqual(
            paragraphs.map((p) => p.value),
            FILLED.split('\n'),
          );
          assert.ok(paragraphs.every((p) => p.element_token));
        } finally {
          await hurried.close();
        }
      });

      test(`Writer: type by token into a paragraph (non-ASCII, emoji, a newline) is confirmed and the model agrees ${row('type_text', 'confirmed')}`, async () => {
        const { elements } = await snap('filled');
        const first = elements.find((e) => e.role === 'paragraph' && e.value === 'Erste Zeile')!;
        const text = ' Grüße 😀 世界\nneu';
        const r = await v.call('type_text', { element_token: first.element_token, text });
        assert.equal(r.structured.effect, 'confirmed', r.text);
        assert.equal(r.structured.route, 'accessibility');
        // A token's paragraph that did not have focus takes the text at its end; Writer keeps the newline as
        // a line break inside the paragraph, and its model reads it back as "\n".
        const want = `Erste Zeile${text}\nZweite Zeile`;
        assert.equal(await office.text('Verity Filled'), want);
        const after = await snap('filled', (els) => els.some((e) => e.value === `Erste Zeile${text}`));
        assert.ok(after.elements.some((e) => e.role === 'paragraph' && e.value === 'Zweite Zeile'));
      });

      test(`Writer: type by focus into the focused paragraph is confirmed and the model agrees ${row('type_text', 'confirmed')}`, async () => {
        await activate('blank');
        // The caret is in the blank document's one paragraph: libatspi reports it focused.
        const { elements } = await snap('blank', (els) => els.some((e) => e.role === 'paragraph' && e.focused));
        assert.ok(elements.some((e) => e.role === 'paragraph' && e.focused));
        const text = 'Fokus ✓ café\nzweite';
        const r = await v.call('type_text', { target: target('blank'), text });
        assert.equal(r.structured.effect, 'confirmed', r.text);
        assert.equal(await office.text('Verity Blank'), text);
        // And again at the caret, which followed the text.
        const more = await v.call('type_text', { target: target('blank'), text: ' Ende' });
        assert.equal(more.structured.effect, 'confirmed', more.text);
        assert.equal(await office.text('Verity Blank'), `${text} Ende`);
      });
    });

    describe('Calc', () => {
      documents([{ name: 'sheet', app: 'calc', title: 'Verity Sheet', text: SHEET_A1 }]);
      test('Calc: the sheet and its showing cells are listed (not the million off-screen ones); complete', async () => {
        // Once the sheet is laid out: while its window is mapped and sized (late on a busy machine) its grid
        // moves under the read, and the snapshot says so rather than list cells of a grid it no longer has.
        const { r, elements } = await snap(
          'sheet',
          (els, incomplete) => els.some((e) => e.role === 'table cell') && !/being laid out/.test(incomplete),
        );
        assert.equal(r.structured.elements_complete, true, `incomplete: ${r.structured.incomplete}`);
        const table = elements.find((e) => e.role === 'table');
        assert.ok(table, 'no table');
        const cells = elements.filter((e) => e.role === 'table cell');
        const a1 = cells.find((c) => c.label === 'A1');
        assert.ok(a1, `no A1 among ${cells.length} cells`);
        assert.equal(a1.value, SHEET_A1);
        assert.equal(a1.parent_index, table.element_index);
        // The cells in view, and only they: each drawn inside the table.
        assert.ok(cells.length >= 50 && cells.length <= 2000, `${cells.length} cells`);
        for (const c of cells) {
          assert.ok(c.frame.w > 0 && c.frame.h > 0, `${c.label} ${JSON.stringify(c.frame)}`);
          assert.ok(c.frame.y >= table.frame.y - 1 && c.frame.y < table.frame.y + table.frame.h, c.label);
        }
      });

      test('no false elements_complete: a sheet with more cells in view than the bound is listed as incomplete', async () => {
        const bounded = await startVerity([], { ...d.env, VERITY_MAX_NATIVE_MANAGED_CHILDREN: '40' });
        try {
          const full = await bounded.call('get_window_state', {
            format: 'full',
            target: target('sheet'),
            include_screenshot: false,
          });
          assert.equal(full.isError, false, full.text);
          assert.equal(full.structured.elements_complete, false);
          assert.match(full.structured.incomplete, /the table shows \d+ cells; the first \d+ were read/);
          const cells = (full.structured.elements as El[]).filter((e) => e.role === 'table cell');
          assert.ok(cells.length > 0 && cells.length <= 40, `${cells.length} cells`);
          // The default outline says it too, in its text.
          const outline = await bounded.call('get_window_state', {
            target: target('sheet'),
            include_screenshot: false,
          });
          assert.equal(outline.structured.elements_complete, false);
          assert.match(outline.text, /not every element could be read/);
        } finally {
          await bounded.close();
        }
      });

      test(`Calc: typing into a cell (by token, by focus) is committed, confirmed by its read-back, and the model agrees ${row('type_text', 'confirmed')} ${row('type_text', 'refused')}`, async () => {
        await activate('sheet');
        const { elements } = await snap('sheet', (els) => els.some((e) => e.label === 'B2'));
        const b2 = elements.find((e) => e.label === 'B2')!;
        const r = await v.call('type_text', { element_token: b2.element_token, text: 'Grüße 世界' });
        assert.equal(r.structured.effect, 'confirmed', r.text);
        assert.equal(await office.cell('Verity Sheet', 'B2'), 'Grüße 世界');
        // A newline cannot go into a cell (Enter commits it): refused before anything is typed.
        const again = (await snap('sheet', (els) => els.some((e) => e.label === 'C3'))).elements;
        const refused = await v.call('type_text', {
          element_token: again.find((e) => e.label === 'C3')!.element_token,
          text: 'a\nb',
        });
        assert.equal(refused.structured.refusal?.code, 'text_not_deliverable', refused.text);
        assert.equal(await office.cell('Verity Sheet', 'C3'), '');
        // By focus: Enter moved the sheet's cursor to B3, which libatspi reports focused.
        const byFocus = await v.call('type_text', { target: target('sheet'), text: 'fokus' });
        assert.equal(byFocus.structured.effect, 'confirmed', byFocus.text);
        assert.equal(await office.cell('Verity Sheet', 'B3'), 'fokus', byFocus.text);
      });
    });

    describe('Impress', () => {
      documents([{ name: 'slides', app: 'impress', title: 'Verity Slides' }]);
      test(`Impress: the slide and its text placeholders are listed; typing into the title is checked against the model ${row('type_text', 'confirmed')}`, async () => {
        const { r, elements } = await snap('slides');
        assert.equal(r.structured.elements_complete, true);
        assert.ok(elements.some((e) => e.role === 'document presentation'));
        const title = elements.find((e) => e.role === 'paragraph' && e.value === 'Click to add Title');
        assert.ok(title, elements.map((e) => `${e.role}:${e.value ?? e.label}`).join(', '));
        const typed = await v.call('type_text', { element_token: title.element_token, text: 'Folie ✓' });
        assert.equal(typed.structured.effect, 'confirmed', typed.text);
        // Impress's accessible text of an empty placeholder is its prompt, and an insertion at its end keeps
        // the prompt as text: what the read-back saw is what the slide's model holds.
        assert.equal((await office.shapes('Verity Slides'))[0], 'Click to add TitleFolie ✓');
      });

      // By focus: a click into a placeholder focuses its shape (no Text of its own) on X11, where the keys go
      // to it, land, and cannot be read back: unverifiable. Where the click leaves the focus in the title's
      // paragraph (under sway), the text goes there and is read back: confirmed. Either way the slide's model
      // holds it, and nothing is confirmed that it does not hold.
      test('Impress: type by focus after a click into a placeholder: confirmed only where read back, and the model holds it', async () => {
        await activate('slides');
        const { elements } = await snap('slides');
        const sub = elements.find((e) => e.role === 'paragraph' && e.value === 'Click to add Text');
        assert.ok(sub, elements.map((e) => `${e.role}:${e.value ?? e.label}`).join(', '));
        const clicked = await v.call('click', { element_token: sub.element_token });
        assert.equal(clicked.isError, false, clicked.text);
        const r = await v.call('type_text', { target: target('slides'), text: 'Fokus é' });
        if (r.structured.effect === 'unverifiable') {
          assert.equal(r.structured.escalation?.target, 'verify', r.text);
          assert.match(r.text, /no AT-SPI Text to read back/);
        } else assert.equal(r.structured.effect, 'confirmed', r.text);
        const shapes = await until(async () => {
          const now = await office.shapes('Verity Slides');
          return now.some((t) => t.endsWith('Fokus é')) ? now : null;
        }, `the typed text in the slide's model (${r.structured.effect})`);
        assert.ok(
          shapes.some((t) => t.endsWith('Fokus é')),
          JSON.stringify(shapes),
        );
      });
    });

    test('LibreOffice not answering for a while (stopped 7 s): its window is not taken for closed, and keeps its id', {
      skip: kind !== 'wayland',
    }, async () => {
      // On X11 the X server says whether a window is shown; under Wayland only the app's AT-SPI tree does.
      const pid = office.pid();
      process.kill(pid, 'SIGSTOP');
      const resumed = new Promise<void>((resolve) =>
        setTimeout(() => {
          process.kill(pid, 'SIGCONT');
          resolve();
        }, 7000),
      );
      try {
        const r = await v.call('get_window_state', {
          format: 'full',
          target: target('filled'),
          include_screenshot: false,
        });
        // Answered once LibreOffice went on, or refused as the timeout it is: never "not shown".
        if (r.isError) assert.equal(r.structured.refusal?.code, 'timeout', r.text);
        else
          assert.ok(
            (r.structured.elements as El[]).some((e) => e.role === 'document text'),
            r.text.slice(0, 400),
          );
      } finally {
        await resumed;
      }
      const { elements } = await snap('filled');
      assert.ok(elements.some((e) => e.role === 'document text'));
    });

    test(`no false confirmed: typing into a paragraph whose document closed is refused ${row('type_text', 'refused')}`, async () => {
      windows.set('doomed', await open('writer', 'Verity Doomed', 'weg'));
      const { elements } = await snap('doomed');
      const p = elements.find((e) => e.role === 'paragraph')!;
      await office.closeDoc('Verity Doomed');
      const r = await v.call('type_text', { element_token: p.element_token, text: 'nie' });
      assert.equal(r.isError, true, r.text);
      assert.notEqual(r.structured.effect, 'confirmed', r.text);
      assert.equal(r.structured.refusal?.code, 'target_not_found', r.text);
    });
  });
}
