// Code editors (Ace, CodeMirror 5 and 6, Monaco): the one home of their quirks. Each keeps its document
// in a model of its own and makes automatic edits as a person types: Enter re-indents the new line,
// `{` `(` `[` and quotes are closed in pairs, a completion popup takes Enter. Text typed line by line
// (Enter per newline, or key by key) comes out changed. Each of the four takes a paste as one insertion
// that none of those edits touch, so text goes in through the editor's own paste path: a ClipboardEvent
// 'paste' holding text/plain, dispatched at the editor's input element (verified for each editor below by
// test/browser/widgets-code-editors.test.ts). Input.insertText of a whole block is not that: Monaco
// re-indents every line of it, and every one of the four closes a lone `(` typed by itself.
//
// The proof is the editor's own document, read whole from its model. Verity's page agent lives in an
// isolated world: it shares the DOM with the page but none of the page's JavaScript objects, so the
// properties an editor hangs on its elements (Ace's `env`, CodeMirror 5's `CodeMirror`, CodeMirror 6's
// `cmTile`) read as undefined there. The same table is therefore bundled twice
// (scripts/build-page-agent.mjs): into the page agent, which finds an editor by its DOM and asks for its
// model, and into a small script run in the page's own world at document start (main-world.ts, installed
// by cdp/tab/tab.ts), which answers. DOM events are the one channel both worlds share: the agent dispatches
// ASK at the editor's root element and the answer comes back as REPLY (a JSON string) at the same
// element, synchronously, within the agent's own call. The page can see that channel and could answer
// falsely, as it could make its editor's getValue() lie: what it tells is what the page says it holds.
// No imports: core.ts, surfaces.ts, fields.ts and actions/type-text.page.ts all use this.

/** The code editors Verity knows, by name. */
export type CodeEditorName = 'ace' | 'codemirror5' | 'codemirror6' | 'monaco';

/** A code editor's document and selection, as its own model holds them (offsets in UTF-16 units). */
export interface CodeModel {
  text: string;
  anchor: number;
  head: number;
  /** More than one cursor or selection: an insertion lands at each. */
  cursors: number;
  readOnly: boolean;
  /**
   * The editor formats what is pasted, a while after the paste (Monaco's formatOnPaste, with a formatter
   * for the model's language): the document read right after a paste is not yet what it will hold.
   */
  formatsOnPaste?: boolean;
}

/** An editor's model as main-world code reaches it from the editor's root element. */
type ModelReader = (root: Element) => CodeModel | null;

interface CodeEditor {
  name: CodeEditorName;
  /** How the editor and its model are named in evidence. */
  label: string;
  /** Its root element: what it renders into; found from any element inside it. */
  root: string;
  /** Its input surfaces inside the root (selectors), the element that takes the focus and the paste, preferred first. */
  input: readonly string[];
  /**
   * How text goes in: `paste` through the editor's paste handler (one insertion, no automatic edit), or
   * `insert_text`, one Input.insertText of the whole text. Each of the four editors is verified with paste.
   */
  delivery: 'paste' | 'insert_text';
  /** The handle the page exposes to the editor's model (main world only), and why it is the reliable one. */
  model: ModelReader;
}

// The editors' APIs, as far as the readers below use them (main world; the page's objects).
interface AcePosition {
  row: number;
  column: number;
}
interface AceEditor {
  session: { getValue(): string; doc: { positionToIndex(p: AcePosition, startRow?: number): number } };
  selection: { getSelectionAnchor(): AcePosition; getSelectionLead(): AcePosition; rangeCount?: number };
  getReadOnly(): boolean;
}
interface Cm5Position {
  line: number;
  ch: number;
}
interface Cm5Editor {
  getValue(): string;
  getCursor(which: 'anchor' | 'head'): Cm5Position;
  indexFromPos(p: Cm5Position): number;
  listSelections(): unknown[];
  getOption(name: 'readOnly'): unknown;
}
interface Cm6View {
  state: {
    doc: { toString(): string };
    selection: { main: { anchor: number; head: number }; ranges: unknown[] };
    readOnly: boolean;
  };
}
interface Cm6Tile {
  root?: { view?: Cm6View };
  rootView?: { view?: Cm6View };
  view?: Cm6View;
}
interface MonacoPosition {
  lineNumber: number;
  column: number;
}
interface MonacoEditor {
  getDomNode(): Element | null;
  getModel(): { getValue(): string; getOffsetAt(p: MonacoPosition): number } | null;
  getSelection(): {
    selectionStartLineNumber: number;
    selectionStartColumn: number;
    getPosition(): MonacoPosition;
  } | null;
  getSelections(): unknown[] | null;
  getRawOptions?(): { readOnly?: boolean; formatOnPaste?: boolean };
  getOption?(id: number): unknown;
  getAction?(id: string): { isSupported(): boolean } | null;
}
interface MonacoGlobal {
  editor?: { getEditors?(): MonacoEditor[]; EditorOption?: { formatOnPaste?: number } };
}

export const CODE_EDITORS: readonly CodeEditor[] = [
  {
    name: 'ace',
    label: 'Ace',
    root: '.ace_editor',
    input: ['textarea.ace_text-input'],
    delivery: 'paste',
    // ace.edit(element) keeps its environment on the element (`element.env.editor`); Ace's own
    // ace.edit returns that editor when called again on the element, so the page's editor is that one.
    model(root) {
      const editor = (root as Element & { env?: { editor?: AceEditor } }).env?.editor;
      if (!editor?.session) return null;
      const doc = editor.session.doc;
      return {
        text: editor.session.getValue(),
        // Not selection.anchor: an empty selection leaves it where it was (getSelectionAnchor is the lead then).
        anchor: doc.positionToIndex(editor.selection.getSelectionAnchor(), 0),
        head: doc.positionToIndex(editor.selection.getSelectionLead(), 0),
        cursors: editor.selection.rangeCount || 1,
        readOnly: editor.getReadOnly(),
      };
    },
  },
  {
    name: 'codemirror5',
    label: 'CodeMirror 5',
    root: '.CodeMirror',
    // Its hidden textarea (inputStyle "textarea", the desktop default) or its contenteditable lines.
    input: [':scope > div > textarea', '.CodeMirror-code[contenteditable="true"]'],
    delivery: 'paste',
    // CodeMirror 5 sets `wrapper.CodeMirror = instance` on every editor it makes (its documented way to
    // get the instance from the DOM).
    model(root) {
      const cm = (root as Element & { CodeMirror?: Cm5Editor }).CodeMirror;
      if (!cm || typeof cm.getValue !== 'function') return null;
      return {
        text: cm.getValue(),
        anchor: cm.indexFromPos(cm.getCursor('anchor')),
        head: cm.indexFromPos(cm.getCursor('head')),
        cursors: cm.listSelections().length,
        readOnly: !!cm.getOption('readOnly'),
      };
    },
  },
  {
    name: 'codemirror6',
    label: 'CodeMirror 6',
    root: '.cm-editor',
    input: ['.cm-content'],
    delivery: 'paste',
    // EditorView.findFromDOM's own path, without the class (each page bundles its own copy): the
    // .cm-content element carries the view's tile (`cmTile` since @codemirror/view 6.39, `cmView` before),
    // whose root holds the view.
    model(root) {
      const content = root.querySelector('.cm-content') as (Element & { cmTile?: Cm6Tile; cmView?: Cm6Tile }) | null;
      const tile = content?.cmTile ?? content?.cmView;
      const view = tile?.root?.view ?? tile?.rootView?.view ?? tile?.view;
      if (!view?.state?.doc) return null;
      const { main, ranges } = view.state.selection;
      return {
        text: view.state.doc.toString(),
        anchor: main.anchor,
        head: main.head,
        cursors: ranges.length,
        readOnly: view.state.readOnly,
      };
    },
  },
  {
    name: 'monaco',
    label: 'Monaco',
    root: '.monaco-editor',
    // Its EditContext surface, or its textarea where EditContext is off or missing (not the aria-hidden IME
    // textarea it keeps beside an EditContext).
    input: ['.native-edit-context', 'textarea.inputarea'],
    delivery: 'paste',
    // Monaco hangs nothing on its DOM. Its editors are listed by `monaco.editor.getEditors()` where the
    // page has the `monaco` global (Monaco's AMD loader, its min build and most embeddings put it there);
    // the editor whose DOM node is this root is the one. A bundle without the global exposes no handle:
    // then what the editor shows is read instead (fields.ts, actions/type-text.page.ts), with what that cannot prove said.
    model(root) {
      const monaco = (globalThis as { monaco?: MonacoGlobal }).monaco;
      const editor = monaco?.editor?.getEditors?.().find((e) => e.getDomNode() === root);
      const model = editor?.getModel();
      const selection = editor?.getSelection();
      if (!editor || !model || !selection) return null;
      // formatOnPaste formats the pasted range once the paste is in, asynchronously (its formatter's
      // edits go through Monaco's editor worker, raced with a 1 s timer): it acts only where a range
      // formatter is registered for the language, which is exactly when Format Selection is supported.
      const option = monaco?.editor?.EditorOption?.formatOnPaste;
      const formatOnPaste =
        typeof option === 'number' && editor.getOption
          ? !!editor.getOption(option)
          : !!editor.getRawOptions?.().formatOnPaste;
      const formatter = !!editor.getAction?.('editor.action.formatSelection')?.isSupported();
      return {
        text: model.getValue(),
        anchor: model.getOffsetAt({
          lineNumber: selection.selectionStartLineNumber,
          column: selection.selectionStartColumn,
        }),
        head: model.getOffsetAt(selection.getPosition()),
        cursors: editor.getSelections()?.length ?? 1,
        readOnly: !!editor.getRawOptions?.().readOnly,
        ...(formatOnPaste && formatter ? { formatsOnPaste: true } : {}),
      };
    },
  },
];

/** The event the page agent asks with (detail: the editor's name), and the one the answer comes in. */
const ASK = 'verity-code-model';
const REPLY = 'verity-code-model-reply';

/** A code editor found around an element: which one, its root, and its input surface. */
export interface FoundCodeEditor {
  name: CodeEditorName;
  label: string;
  delivery: CodeEditor['delivery'];
  root: Element;
  /** The element that takes the focus and the text; null when the editor has none (not ready). */
  input: Element | null;
}

/**
 * The code editor `el` belongs to (its root, its input surface or anything inside it that is no field of its
 * own), by the DOM; null for everything else, a field inside an editor (its find box, a rename input) included.
 */
export function codeEditorOf(el: Element): FoundCodeEditor | null {
  for (const editor of CODE_EDITORS) {
    const root = el.closest(editor.root);
    if (!root) continue;
    let input: Element | null = null;
    for (const selector of editor.input) {
      const surfaces = Array.from(root.querySelectorAll(selector));
      input = surfaces.includes(el) ? el : (surfaces[0] ?? null);
      if (input) break;
    }
    if (input !== el && isFieldOfItsOwn(el)) return null;
    return { name: editor.name, label: editor.label, delivery: editor.delivery, root, input };
  }
  return null;
}

/** An input, a textarea, an editing host or an EditContext host: something that takes text itself. */
function isFieldOfItsOwn(el: Element): boolean {
  if (el.localName === 'input' || el.localName === 'textarea') return true;
  if ((el as Element & { editContext?: unknown }).editContext) return true;
  const h = el as HTMLElement;
  return h.isContentEditable && !h.parentElement?.isContentEditable;
}

/**
 * The editor's model, asked of the page's world (see the top of this file); null when the page exposes no
 * handle to it (or the answering script is not in this document).
 */
export function askCodeModel(found: FoundCodeEditor): CodeModel | null {
  let reply: unknown = null;
  const hear = (e: Event) => {
    reply = (e as CustomEvent).detail;
  };
  found.root.addEventListener(REPLY, hear);
  try {
    found.root.dispatchEvent(new CustomEvent(ASK, { detail: found.name, composed: true }));
  } finally {
    found.root.removeEventListener(REPLY, hear);
  }
  return typeof reply === 'string' ? parseModel(reply) : null;
}

/** The answer, checked: a document and a selection inside it, else nothing. */
function parseModel(json: string): CodeModel | null {
  try {
    const m = JSON.parse(json) as Partial<CodeModel> | null;
    if (!m || typeof m.text !== 'string') return null;
    const inside = (n: unknown): n is number =>
      typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= (m.text as string).length;
    if (!inside(m.anchor) || !inside(m.head)) return null;
    return {
      text: m.text,
      anchor: m.anchor,
      head: m.head,
      cursors: typeof m.cursors === 'number' && m.cursors > 0 ? m.cursors : 1,
      readOnly: m.readOnly === true,
      ...(m.formatsOnPaste === true ? { formatsOnPaste: true } : {}),
    };
  } catch {
    return null;
  }
}

/**
 * Main world only (main-world.ts): answers ASK with the model of the editor whose root it was dispatched
 * at. Listens on the document in the capture phase, so an editor in an open shadow root is reached too
 * (its root is the event's first target); one in a closed shadow root is not (no answer: no model).
 */
export function answerCodeModelQuestions(): void {
  const stringify = JSON.stringify;
  const dispatch = EventTarget.prototype.dispatchEvent;
  document.addEventListener(
    ASK,
    (e) => {
      const root = e.composedPath()[0];
      const editor = CODE_EDITORS.find((c) => c.name === (e as CustomEvent).detail);
      if (!(root instanceof Element) || !editor) return;
      let model: CodeModel | null = null;
      try {
        model = editor.model(root);
      } catch {
        model = null; // an editor of another version, shaped otherwise: no model
      }
      if (model) dispatch.call(root, new CustomEvent(REPLY, { detail: stringify(model) }));
    },
    true,
  );
}

/**
 * Delivers `text` through the editor's paste path: a ClipboardEvent 'paste' holding it as text/plain,
 * dispatched at the input surface. `taken`: the editor handled it (each of the four cancels the event's
 * default once it has inserted the text); not taken, nothing listened, and nothing was inserted.
 */
export function pasteInto(input: Element, text: string): boolean {
  const data = new DataTransfer();
  data.setData('text/plain', text);
  const paste = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true, composed: true });
  return !input.dispatchEvent(paste);
}
