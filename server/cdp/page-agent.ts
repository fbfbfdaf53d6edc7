// The page agent: code that runs inside each frame, in Verity's own isolated world (invisible to the
// page's scripts, sharing only the DOM). It is serialized with Function.prototype.toString, so it must be
// self-contained: no imports, no references to anything outside the function body.
//
// Everything that must be read from the page to prove an effect lives here, so that one evaluation
// answers one question (a round trip per question, never per element).

export function installPageAgent(): void {
  const g = globalThis as any;
  if (g.__verity) return;

  const closedRoots = new WeakMap<Element, ShadowRoot>();
  let latest: { id: string; elements: Element[] } = { id: '', elements: [] };
  let watch: { target: Element; events: Array<{ type: string; trusted: boolean; onTarget: boolean; prevented: boolean; hit: string }> } | null = null;

  const EDITOR_SELECTION_SYNC_MS = 120;
  const EDITOR_SETTLE_MS = 250;
  const TEXT_INPUT_TYPES = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number']);
  const INTERACTIVE_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'textbox', 'searchbox', 'combobox',
    'listbox', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch', 'slider',
    'spinbutton', 'treeitem']);

  function implicitRole(el: Element): string {
    const tag = el.localName;
    if (tag === 'input') {
      const type = (el as HTMLInputElement).type;
      if (type === 'checkbox' || type === 'radio') return type;
      if (type === 'range') return 'slider';
      if (type === 'number') return 'spinbutton';
      if (type === 'search') return 'searchbox';
      if (['button', 'submit', 'reset', 'image'].includes(type)) return 'button';
      if (type === 'file') return 'button';
      if (TEXT_INPUT_TYPES.has(type)) return 'textbox';
      return type; // date, time, color, ...: the type says more than a generic role would
    }
    if (tag === 'textarea') return 'textbox';
    if (tag === 'select') return (el as HTMLSelectElement).multiple ? 'listbox' : 'combobox';
    if (tag === 'button' || tag === 'summary') return 'button';
    if (tag === 'a') return 'link';
    if (tag === 'iframe' || tag === 'frame') return 'iframe';
    if ((el as HTMLElement).isContentEditable) return 'textbox';
    return 'generic';
  }

  function isEditingHost(el: Element): boolean {
    const h = el as HTMLElement;
    return !!h.isContentEditable && !(h.parentElement && h.parentElement.isContentEditable);
  }

  function isInteractive(el: Element): boolean {
    const tag = el.localName;
    if (tag === 'input') return (el as HTMLInputElement).type !== 'hidden';
    if (tag === 'button' || tag === 'select' || tag === 'textarea' || tag === 'summary') return true;
    if (tag === 'a') return el.hasAttribute('href');
    if (tag === 'iframe' || tag === 'frame') return true;
    if (isEditingHost(el)) return true;
    const role = el.getAttribute('role');
    if (role && INTERACTIVE_ROLES.has(role)) return true;
    const tabindex = el.getAttribute('tabindex');
    if (tabindex !== null && Number(tabindex) >= 0) return true;
    return (el as HTMLElement).onclick != null;
  }

  function textOf(node: Element | null, max = 80): string {
    if (!node) return '';
    const t = ((node as HTMLElement).innerText ?? node.textContent ?? '').replace(/\s+/g, ' ').trim();
    return t.length > max ? t.slice(0, max - 1) + '…' : t;
  }

  function labelOf(el: Element): string {
    const aria = el.getAttribute('aria-label');
    if (aria) return aria.trim();
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const root = el.getRootNode() as Document | ShadowRoot;
      const text = by.split(/\s+/).map((id) => textOf(root.getElementById?.(id) ?? null)).filter(Boolean).join(' ');
      if (text) return text;
    }
    const labels = (el as HTMLInputElement).labels;
    if (labels && labels.length) {
      const text = Array.from(labels).map((l) => textOf(l)).filter(Boolean).join(' ');
      if (text) return text;
    }
    const tag = el.localName;
    if (tag === 'input' || tag === 'textarea') {
      const input = el as HTMLInputElement;
      if (['button', 'submit', 'reset'].includes(input.type) && input.value) return input.value;
      return input.placeholder || el.getAttribute('title') || input.name || '';
    }
    if (tag === 'iframe') return el.getAttribute('title') || el.getAttribute('name') || (el as HTMLIFrameElement).src;
    if (tag === 'select') return el.getAttribute('title') || (el as HTMLSelectElement).name || '';
    if (isEditingHost(el)) return el.getAttribute('title') || el.getAttribute('placeholder') || el.getAttribute('data-placeholder') || '';
    return textOf(el) || el.getAttribute('title') || el.getAttribute('alt') || '';
  }

  function valueOf(el: Element): string | undefined {
    const tag = el.localName;
    if (tag === 'input') {
      const input = el as HTMLInputElement;
      if (input.type === 'checkbox' || input.type === 'radio') return input.checked ? 'true' : 'false';
      if (input.type === 'password') return '•'.repeat(input.value.length);
      if (['button', 'submit', 'reset', 'image', 'file'].includes(input.type)) return undefined;
      return input.value;
    }
    if (tag === 'textarea') return (el as HTMLTextAreaElement).value;
    if (tag === 'select') {
      const sel = el as HTMLSelectElement;
      return Array.from(sel.selectedOptions).map((o) => o.label || o.value).join(', ');
    }
    if (isEditingHost(el)) return textOf(el, 200);
    const checked = el.getAttribute('aria-checked');
    if (checked !== null) return checked;
    const now = el.getAttribute('aria-valuenow');
    if (now !== null) return now;
    return undefined;
  }

  function isEnabled(el: Element): boolean {
    if ((el as HTMLInputElement).disabled) return false;
    if (el.matches(':disabled')) return false;
    return el.getAttribute('aria-disabled') !== 'true';
  }

  function deepActiveElement(): Element | null {
    let active: Element | null = document.activeElement;
    while (active) {
      const inner: Element | null = (active.shadowRoot ?? closedRoots.get(active))?.activeElement ?? null;
      if (!inner) break;
      active = inner;
    }
    return active;
  }

  function shadowOf(el: Element): ShadowRoot | null {
    return el.shadowRoot ?? closedRoots.get(el) ?? null;
  }

  /** Custom elements whose shadow root, if any, is closed: the CDP side pierces those and registers them. */
  function closedRootCandidates(): Element[] {
    const out: Element[] = [];
    const visit = (root: Document | ShadowRoot) => {
      for (const el of Array.from(root.querySelectorAll('*'))) {
        const shadow = shadowOf(el);
        if (shadow) visit(shadow);
        else if (el.localName.includes('-') && !candidatesSeen.has(el)) out.push(el);
      }
    };
    visit(document);
    for (const el of out) candidatesSeen.add(el);
    return out;
  }
  const candidatesSeen = new WeakSet<Element>();

  function registerClosedRoot(root: ShadowRoot): void {
    closedRoots.set(root.host, root);
  }

  /**
   * Lists the visible interactive elements of this frame in document order (descending into open and
   * registered closed shadow roots). Returns rows, not objects, to keep the protocol payload small.
   */
  function snapshot(snapshotId: string) {
    const elements: Element[] = [];
    const rows: unknown[][] = [];
    const active = deepActiveElement();
    const indexOf = new Map<Element, number>();
    const visit = (root: Document | ShadowRoot | Element, parentIndex: number) => {
      for (let child = root.firstElementChild; child; child = child.nextElementSibling) {
        let myIndex = parentIndex;
        if (isInteractive(child)) {
          const rect = child.getBoundingClientRect();
          const visible = rect.width > 0 && rect.height > 0 &&
            (child as HTMLElement).checkVisibility?.({ visibilityProperty: true } as any) !== false;
          if (visible) {
            myIndex = elements.length;
            indexOf.set(child, myIndex);
            elements.push(child);
            const role = child.getAttribute('role') || implicitRole(child);
            rows.push([role, labelOf(child), valueOf(child) ?? null, isEnabled(child), child === active,
              rect.x, rect.y, rect.width, rect.height, parentIndex, child.localName === 'iframe' || child.localName === 'frame']);
          }
        }
        const shadow = shadowOf(child);
        if (shadow) visit(shadow, myIndex);
        if (child.localName !== 'iframe') visit(child, myIndex);
      }
    };
    visit(document, -1);
    latest = { id: snapshotId, elements };
    return { rows, scrollX: window.scrollX, scrollY: window.scrollY, width: innerWidth, height: innerHeight };
  }

  function element(snapshotId: string, index: number): Element {
    if (latest.id !== snapshotId) throw new Error('verity:stale');
    const el = latest.elements[index];
    if (!el) throw new Error('verity:out_of_range');
    if (!el.isConnected) throw new Error('verity:detached');
    return el;
  }

  function indexInLatest(el: Element): number {
    return latest.elements.indexOf(el);
  }

  function describe(el: Element | null): string {
    if (!el) return 'nothing';
    let s = el.localName;
    if (el.id) s += '#' + el.id;
    const cls = typeof el.className === 'string' ? el.className.trim().split(/\s+/).filter(Boolean).slice(0, 2) : [];
    if (cls.length) s += '.' + cls.join('.');
    const label = quickLabel(el);
    if (label) s += ` "${label.slice(0, 40)}"`;
    return s;
  }

  /**
   * A label for descriptions in evidence, from attributes and textContent only: it runs inside event
   * listeners and right after input, where innerText would force a layout on every call.
   */
  function quickLabel(el: Element): string {
    const aria = el.getAttribute('aria-label');
    if (aria) return aria.trim();
    const labels = (el as HTMLInputElement).labels;
    if (labels && labels.length) return (labels[0].textContent ?? '').replace(/\s+/g, ' ').trim();
    const input = el as HTMLInputElement;
    if (el.localName === 'input' || el.localName === 'textarea') {
      if (['button', 'submit', 'reset'].includes(input.type) && input.value) return input.value;
      return input.placeholder || el.getAttribute('title') || input.name || '';
    }
    if ((el as HTMLElement).isContentEditable) return el.getAttribute('title') || el.getAttribute('placeholder') || el.getAttribute('data-placeholder') || '';
    return (el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60) || el.getAttribute('title') || el.getAttribute('alt') || '';
  }

  function nextFrame(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, 100); // rAF never fires in a hidden tab; do not wait forever
      requestAnimationFrame(() => { clearTimeout(timer); resolve(); });
    });
  }

  /** The element this frame considers hit at (x, y), looked up in the target's own tree (closed roots too). */
  function hitAt(el: Element, x: number, y: number): Element | null {
    let hit = document.elementFromPoint(x, y);
    // Descend into shadow roots (open or registered closed) the hit element hosts.
    for (let depth = 0; hit && depth < 32; depth++) {
      const shadow = shadowOf(hit);
      if (!shadow) break;
      const inner = shadow.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    if (hit && hit !== el && !isWithin(hit, el)) {
      // A closed root we never registered: ask the target's own root, which we can reach through the element.
      const own = (el.getRootNode() as Document | ShadowRoot).elementFromPoint?.(x, y) ?? null;
      if (own && (own === el || isWithin(own, el)) && isComposedAncestor(hit, el)) return own;
    }
    return hit;
  }

  function isWithin(node: Element, ancestor: Element): boolean {
    for (let n: Node | null = node; n; n = (n as any).assignedSlot ?? n.parentNode ?? (n as ShadowRoot).host ?? null) {
      if (n === ancestor) return true;
    }
    return false;
  }

  function isComposedAncestor(candidate: Element, el: Element): boolean {
    return isWithin(el, candidate);
  }

  function acceptsHit(el: Element, hit: Element | null): boolean {
    if (!hit) return false;
    if (hit === el || isWithin(hit, el)) return true;
    const labels = (el as HTMLInputElement).labels;
    return !!labels && Array.from(labels).some((label) => hit === label || isWithin(hit, label));
  }

  /**
   * Brings the element into view, waits (bounded) until its box stops moving, then hit-tests the point
   * that will be clicked. Returns the point in this frame's viewport, or why it cannot be clicked.
   */
  async function pointFor(snapshotId: string, index: number, watchTypes: string[]) {
    const el = element(snapshotId, index);
    if (!isEnabled(el)) return { refusal: 'element_disabled', detail: describe(el) };
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' as ScrollBehavior });
    let rect = el.getBoundingClientRect();
    let stable = false;
    for (let i = 0; i < 20 && !stable; i++) { // up to 20 frames for animations to settle
      await nextFrame();
      const next = el.getBoundingClientRect();
      stable = next.x === rect.x && next.y === rect.y && next.width === rect.width && next.height === rect.height;
      rect = next;
    }
    const left = Math.max(rect.left, 0), right = Math.min(rect.right, innerWidth);
    const top = Math.max(rect.top, 0), bottom = Math.min(rect.bottom, innerHeight);
    if (right <= left || bottom <= top) return { refusal: 'not_visible', detail: describe(el) };
    const x = (left + right) / 2, y = (top + bottom) / 2;
    const hit = hitAt(el, x, y);
    if (!acceptsHit(el, hit)) return { refusal: 'element_covered', detail: describe(hit), target: describe(el) };
    if (watchTypes.length) watchEvents(snapshotId, index, watchTypes);
    const href = el.localName === 'a' ? (el as HTMLAnchorElement).href : undefined;
    return { x, y, stable, target: describe(el), href };
  }

  /** Arms a watch on whatever is hit at (x, y) (the px form). */
  function watchPoint(x: number, y: number, types: string[]) {
    const hit = hitAt(document.body, x, y) ?? document.body;
    armWatch(hit, types);
    return { target: describe(hit) };
  }

  function hasFocus(): boolean {
    const active = document.activeElement;
    return document.hasFocus() && !!active && active.localName !== 'iframe' && active.localName !== 'frame';
  }

  function focusElement(snapshotId: string, index: number) {
    const el = element(snapshotId, index) as HTMLElement;
    if (deepActiveElement() !== el) el.focus();
    return describe(el);
  }

  /** Records the pointer/key events that reach the element (capture phase on the element itself). */
  function watchEvents(snapshotId: string | null, index: number, types: string[]) {
    const target = snapshotId ? element(snapshotId, index) : (deepActiveElement() ?? document.body);
    return armWatch(target, types);
  }

  // Listeners are added once per element and event type (never one per call), and report to whatever
  // watch is armed now.
  const armedOn = new WeakMap<Element, Set<string>>();
  const armedOnWindow = new Set<string>();
  function onTargetEvent(e: Event) {
    if (!watch || e.currentTarget !== watch.target) return;
    watch.events.push({ type: e.type, trusted: e.isTrusted, onTarget: true, prevented: false, hit: describe(e.composedPath()[0] as Element) });
  }
  // Bubble listener on window: runs after the page's handlers, so it sees a cancelled event.
  function onWindowEvent(e: Event) {
    if (!watch) return;
    const seen = watch.events.find((r) => r.type === e.type && r.onTarget && !r.prevented);
    if (seen) seen.prevented = e.defaultPrevented;
    else if (!watch.events.some((r) => r.type === e.type && r.onTarget)) {
      watch.events.push({ type: e.type, trusted: e.isTrusted, onTarget: false, prevented: e.defaultPrevented, hit: describe(e.composedPath()[0] as Element) });
    }
  }

  function armWatch(target: Element, types: string[]) {
    let onTarget = armedOn.get(target);
    if (!onTarget) armedOn.set(target, onTarget = new Set());
    for (const type of types) {
      if (!onTarget.has(type)) { target.addEventListener(type, onTargetEvent, { capture: true }); onTarget.add(type); }
      if (!armedOnWindow.has(type)) { window.addEventListener(type, onWindowEvent); armedOnWindow.add(type); }
    }
    watch = { target, events: [] };
    return describe(target);
  }


  /** What the armed watch saw. `fresh` means no watch exists here: the frame navigated since it was armed. */
  async function watched(waitFrame: boolean) {
    if (waitFrame) await nextFrame();
    if (!watch) return { target: 'nothing', events: [], fresh: true };
    return { target: describe(watch.target), events: watch.events.slice() };
  }

  // ---------- text fields ----------

  type FieldState = { kind: 'value' | 'editor'; text: string; start: number; end: number; maxLength: number; focused: boolean; describe: string; lines: number };

  function editableOf(el: Element | null): Element | null {
    if (!el) return null;
    if (el.localName === 'textarea') return el;
    if (el.localName === 'input') return TEXT_INPUT_TYPES.has((el as HTMLInputElement).type) ? el : null;
    const h = el as HTMLElement;
    if (h.isContentEditable) {
      let host: HTMLElement = h;
      while (host.parentElement && host.parentElement.isContentEditable) host = host.parentElement;
      return host;
    }
    return null;
  }

  function selectionIn(host: Element): Selection | null {
    const root = host.getRootNode() as any;
    const sel: Selection | null = typeof root.getSelection === 'function' ? root.getSelection() : document.getSelection();
    return sel;
  }

  /** Text before the caret, measured the same way as the whole text (innerText) so offsets agree. */
  function editorOffsets(host: HTMLElement): { start: number; end: number } {
    const sel = selectionIn(host);
    if (!sel || sel.rangeCount === 0) return { start: -1, end: -1 };
    const range = sel.getRangeAt(0);
    if (!host.contains(range.startContainer)) return { start: -1, end: -1 };
    const measure = (node: Node, offset: number) => {
      const r = document.createRange();
      r.setStart(host, 0);
      r.setEnd(node, offset);
      return r.toString().length; // compare against textContent-based length (see readField)
    };
    return { start: measure(range.startContainer, range.startOffset), end: measure(range.endContainer, range.endOffset) };
  }

  function readField(el: Element): FieldState {
    const editable = editableOf(el) ?? el;
    const focused = deepActiveElement() === editable || (editable as HTMLElement).contains?.(deepActiveElement());
    if (editable.localName === 'input' || editable.localName === 'textarea') {
      const f = editable as HTMLInputElement;
      let start = -1, end = -1;
      try { start = f.selectionStart ?? -1; end = f.selectionEnd ?? -1; } catch { /* number inputs have none */ }
      return { kind: 'value', text: f.value, start, end, maxLength: f.maxLength, focused, describe: describe(f), lines: 0 };
    }
    const host = editable as HTMLElement;
    const { start, end } = editorOffsets(host);
    // Line breaks live in the block structure, not in textContent: count them from innerText.
    const lines = (host.innerText.match(/\n+/g) ?? []).length;
    return { kind: 'editor', text: host.textContent ?? '', start, end, maxLength: -1, focused, describe: describe(host), lines };
  }

  /**
   * Resolves the field to type into: the token's element (focused first, caret at the end unless it was
   * already focused) or the focused element. Reports why a field cannot take text instead of guessing.
   */
  async function prepareField(snapshotId: string | null, index: number) {
    let el: Element | null = snapshotId ? element(snapshotId, index) : deepActiveElement();
    if (!el || el === document.body) return { none: true };
    const editable = editableOf(el);
    if (!editable) return { refusal: 'not_editable', detail: describe(el) };
    if (!isEnabled(editable)) return { refusal: 'element_disabled', detail: describe(editable) };
    if ((editable as HTMLInputElement).readOnly) return { refusal: 'element_readonly', detail: describe(editable) };
    const wasFocused = deepActiveElement() === editable || editable.contains(deepActiveElement());
    if (!wasFocused) {
      (editable as HTMLElement).focus({ preventScroll: false });
      if (editable.localName === 'input' || editable.localName === 'textarea') {
        const f = editable as HTMLInputElement;
        try { f.setSelectionRange(f.value.length, f.value.length); } catch { /* type without selection */ }
      } else {
        // Editors restore their own selection when focused (CodeMirror, Lexical): let them, then move
        // the caret to the end and give them time to read it back into their model (Slate throttles
        // its selectionchange handler to 100 ms; typing before that lands at its stale selection).
        await nextFrame();
        const sel = selectionIn(editable);
        if (sel) { sel.selectAllChildren(editable); sel.collapseToEnd(); }
        await new Promise((r) => setTimeout(r, EDITOR_SELECTION_SYNC_MS));
        await nextFrame();
      }
    }
    const nowFocused = deepActiveElement() === editable || editable.contains(deepActiveElement());
    if (!nowFocused) return { refusal: 'focus_failed', detail: describe(editable) };
    watchEvents(null, 0, ['beforeinput', 'input', 'keydown']);
    const box = editable.getBoundingClientRect();
    return { state: readField(editable), singleLine: editable.localName === 'input', center: { x: box.x + Math.min(box.width / 2, 40), y: box.y + box.height / 2 } };
  }

  /**
   * Reads the field right after delivery, then again once the page has settled (the next frame),
   * so a framework that reverts or rewrites the value is caught. One round trip for both.
   */
  async function readBack() {
    const target = watch?.target ?? deepActiveElement();
    if (!target) return { first: null, settled: null, events: [] };
    const first = readField(target);
    await nextFrame(); // timers and microtasks a framework reverts with run before the next frame
    let settled = readField(target);
    if (settled.kind === 'editor') {
      // Rich editors reconcile their DOM with their own model asynchronously (a render after the
      // input): wait until the text has held still for two frames, bounded.
      const deadline = performance.now() + EDITOR_SETTLE_MS;
      for (let still = 0; still < 2 && performance.now() < deadline;) {
        await nextFrame();
        const next = readField(target);
        still = next.text === settled.text ? still + 1 : 0;
        settled = next;
      }
    }
    const events = watch ? watch.events.slice() : [];
    return { first, settled, events };
  }

  async function settledValue(snapshotId: string, index: number) {
    await nextFrame();
    await new Promise((r) => setTimeout(r, 0));
    return readValue(element(snapshotId, index));
  }

  // ---------- values (select, checkbox, range, date, ...) ----------

  function nativeSetValue(el: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, value: string) {
    // Use the prototype's setter so frameworks that track the value (React) see a real change.
    const proto = Object.getPrototypeOf(el);
    const setter = Object.getOwnPropertyDescriptor(proto, 'value')?.set;
    if (setter) setter.call(el, value); else (el as any).value = value;
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }

  function readValue(el: Element) {
    const tag = el.localName;
    if (tag === 'select') {
      const sel = el as HTMLSelectElement;
      return { value: sel.value, label: sel.selectedOptions[0]?.label ?? '', checked: null };
    }
    if (tag === 'input' || tag === 'textarea') {
      const input = el as HTMLInputElement;
      return { value: input.value, label: '', checked: input.type === 'checkbox' || input.type === 'radio' ? input.checked : null };
    }
    return { value: valueOf(el) ?? '', label: '', checked: el.getAttribute('aria-checked') };
  }

  function setValue(snapshotId: string, index: number, value: string) {
    const el = element(snapshotId, index);
    if (!isEnabled(el)) return { refusal: 'element_disabled', detail: describe(el) };
    if ((el as HTMLInputElement).readOnly) return { refusal: 'element_readonly', detail: describe(el) };
    const before = readValue(el);
    const tag = el.localName;
    if (tag === 'select') {
      const sel = el as HTMLSelectElement;
      const want = value.trim().toLowerCase();
      const option = Array.from(sel.options).find((o) => o.value === value) ??
        Array.from(sel.options).find((o) => o.label.trim().toLowerCase() === want || o.text.trim().toLowerCase() === want);
      if (!option) return { refusal: 'no_such_option', detail: `options: ${Array.from(sel.options).map((o) => `${o.value} (${o.label})`).join(', ')}` };
      nativeSetValue(sel, option.value);
      return { before, expected: { value: option.value, label: option.label, checked: null }, kind: 'select' };
    }
    if (tag === 'input') {
      const input = el as HTMLInputElement;
      if (input.type === 'checkbox' || input.type === 'radio') {
        const want = /^(true|1|on|yes|checked)$/i.test(value.trim());
        if (!want && input.type === 'radio') return { refusal: 'invalid_arguments', detail: 'a radio button can only be selected (value "true"); select another one to clear it' };
        return { before, expected: { value: input.value, label: '', checked: want }, kind: 'toggle', needsClick: input.checked !== want };
      }
      if (TEXT_INPUT_TYPES.has(input.type) && input.type !== 'number') return { before, expected: { value, label: '', checked: null }, kind: 'text' };
      nativeSetValue(input, value);
      return { before, expected: { value, label: '', checked: null }, kind: 'value' };
    }
    if (tag === 'textarea') return { before, expected: { value, label: '', checked: null }, kind: 'text' };
    return { refusal: 'not_settable', detail: describe(el) };
  }

  /** Selects the whole content of a text field so the next insertion replaces it (set_value on text). */
  function selectAllIn(snapshotId: string, index: number) {
    const el = element(snapshotId, index) as HTMLInputElement;
    el.focus();
    el.select();
    return deepActiveElement() === el;
  }

  function readElementValue(snapshotId: string, index: number) {
    return readValue(element(snapshotId, index));
  }

  // ---------- scrolling ----------

  function composedParent(n: Element): Element | null {
    return n.parentElement ?? ((n.getRootNode() as ShadowRoot).host ?? null);
  }

  function isPageScroller(el: Element | null): boolean {
    return !el || el === document.documentElement || el === document.body || el === document.scrollingElement;
  }

  /** The nearest element (itself included) that wheel events scroll; the page when there is none. */
  function scrollContainerOf(el: Element | null): Element | null {
    for (let n: Element | null = el; n && !isPageScroller(n); n = composedParent(n)) {
      if (n.scrollHeight > n.clientHeight + 1 || n.scrollWidth > n.clientWidth + 1) {
        const style = getComputedStyle(n);
        if (/(auto|scroll)/.test(style.overflowY + style.overflowX)) return n;
      }
    }
    return document.scrollingElement;
  }

  function scrollerAt(snapshotId: string | null, index: number, x: number, y: number): Element | null {
    return scrollContainerOf(snapshotId ? element(snapshotId, index) : hitAt(document.body, x, y));
  }

  function offsetsOf(el: Element | null) {
    if (isPageScroller(el)) {
      return { x: Math.round(window.scrollX), y: Math.round(window.scrollY), target: 'the page' };
    }
    return { x: Math.round(el!.scrollLeft), y: Math.round(el!.scrollTop), target: describe(el) };
  }

  let scrollWatched: Element | null = null;
  function scrollState(snapshotId: string | null, index: number, x: number, y: number) {
    scrollWatched = scrollerAt(snapshotId, index, x, y);
    return offsetsOf(scrollWatched);
  }

  type Box = { left: number; top: number; right: number; bottom: number };
  function intersect(a: Box, b: Box): Box | null {
    const box = { left: Math.max(a.left, b.left), top: Math.max(a.top, b.top), right: Math.min(a.right, b.right), bottom: Math.min(a.bottom, b.bottom) };
    return box.right - box.left >= 1 && box.bottom - box.top >= 1 ? box : null;
  }

  /**
   * Where to turn the wheel so that the element's scroll container (or, with no element, the page) is
   * what scrolls: over the element where it shows inside its container, else elsewhere in the container,
   * at a point whose nearest scroller is that container. The element itself is not scrolled into view
   * (that would be an unreported scroll of its own); an off-screen container is brought just into view.
   */
  function scrollAim(snapshotId: string | null, index: number) {
    const el = snapshotId ? element(snapshotId, index) : null;
    const page = document.scrollingElement;
    const pageScrolls = !!page && (page.scrollHeight > page.clientHeight + 1 || page.scrollWidth > page.clientWidth + 1);
    const container = el ? scrollContainerOf(el) : page;
    const viewport = { left: 0, top: 0, right: innerWidth, bottom: innerHeight };
    const clipOf = () => (isPageScroller(container) ? viewport : intersect(container!.getBoundingClientRect(), viewport));
    let clip = clipOf();
    if (!clip && container) {
      container.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' as ScrollBehavior });
      clip = clipOf();
    }
    if (!clip) return { refusal: 'not_visible', detail: describe(container) };
    const boxes: Box[] = [];
    const own = el && intersect(el.getBoundingClientRect(), clip);
    if (own) boxes.push(own);
    boxes.push(clip);
    const points = boxes.map((b) => ({ x: (b.left + b.right) / 2, y: (b.top + b.bottom) / 2 }));
    for (const fx of [0.25, 0.75]) for (const fy of [0.25, 0.75]) points.push({ x: clip.left + (clip.right - clip.left) * fx, y: clip.top + (clip.bottom - clip.top) * fy });
    let first: Element | null = null;
    // With no element and a page that does not scroll (an app whose main pane scrolls), or a page covered
    // by inner scrollers, the wheel goes to the centre and the result names whatever scrolled there.
    for (const p of (el || pageScrolls ? points : [])) {
      const hit = hitAt(el ?? document.body, p.x, p.y);
      const owner = scrollContainerOf(hit);
      first ??= hit;
      if (owner === container || (isPageScroller(owner) && isPageScroller(container))) {
        scrollWatched = container;
        return { x: p.x, y: p.y, offsets: offsetsOf(container) };
      }
    }
    if (el) return { refusal: 'element_covered', detail: describe(first), target: describe(el) };
    return { x: points[0].x, y: points[0].y, offsets: scrollState(null, -1, points[0].x, points[0].y) };
  }

  /** Offsets once a (possibly smooth) scroll has stopped moving: bounded to 60 frames. */
  async function scrollSettled() {
    let last = offsetsOf(scrollWatched);
    for (let i = 0, still = 0; i < 60 && still < 3; i++) {
      await nextFrame();
      const now = offsetsOf(scrollWatched);
      still = now.x === last.x && now.y === last.y ? still + 1 : 0;
      last = now;
    }
    return last;
  }

  // ---------- dragging ----------

  let drag: { source: Element | null; destination: Element | null; down: string | null; up: string | null; moves: number } | null = null;
  function watchDrag(fromX: number, fromY: number, toX: number, toY: number) {
    const source = hitAt(document.body, fromX, fromY);
    const record = { source, destination: null as Element | null, down: null as string | null, up: null as string | null, moves: 0, toX, toY };
    drag = record;
    const on = (type: string, fn: (e: MouseEvent) => void) => window.addEventListener(type, (e) => { if (drag === record && e.isTrusted) fn(e as MouseEvent); }, { capture: true });
    on('mousedown', (e) => { record.down = describe(e.composedPath()[0] as Element); });
    on('mousemove', () => { record.moves++; });
    on('mouseup', (e) => { record.up = describe(e.composedPath()[0] as Element); });
    return describe(source);
  }

  function dragSeen() {
    if (!drag) return { down: null, up: null, source: 'nothing', destination: 'nothing', moves: 0 };
    const d = drag as any;
    return { down: d.down, up: d.up, moves: d.moves, source: describe(d.source), destination: describe(hitAt(document.body, d.toX, d.toY)) };
  }

  // ---------- page text ----------

  function pageText(max: number) {
    const text = (document.body?.innerText ?? '').slice(0, max);
    return { text, truncated: (document.body?.innerText.length ?? 0) > max, title: document.title, url: location.href };
  }

  function queryDom(selector: string, attributes: string[], limit: number) {
    let found: Element[];
    try { found = Array.from(document.querySelectorAll(selector)); } catch (e) { return { error: (e as Error).message }; }
    const matches = found.slice(0, limit).map((el) => ({
      tag: el.localName, text: textOf(el, 200),
      attributes: Object.fromEntries(attributes.map((a) => [a, el.getAttribute(a)])),
    }));
    return { count: found.length, matches };
  }

  function pageHas(text: string | null, selector: string | null): boolean {
    if (selector) { try { return !!document.querySelector(selector); } catch { return false; } }
    return !!text && (document.body?.innerText ?? '').includes(text);
  }

  // ---------- the agent cursor (a visual aid; see cdp/cursor-overlay.ts) ----------

  let cursor: { host: HTMLElement; arrow: HTMLElement; root: ShadowRoot; hideTimer?: number } | null = null;
  function cursorElement() {
    if (cursor && cursor.host.isConnected) return cursor;
    const host = document.createElement('div');
    // Fixed, zero-size, no pointer events: it cannot change layout or receive a click. No paint (or size)
    // containment: on a zero-size host it would clip the arrow away entirely.
    host.style.cssText = 'all: initial; position: fixed; left: 0; top: 0; width: 0; height: 0; pointer-events: none; z-index: 2147483647; contain: layout style;';
    const root = host.attachShadow({ mode: 'closed' });
    root.innerHTML = '<style>.a{position:fixed;left:0;top:0;width:22px;height:22px;pointer-events:none;transition:opacity .25s;will-change:transform}' +
      '.r{position:fixed;width:28px;height:28px;margin:-14px 0 0 -14px;border-radius:50%;border:2px solid #6d5dfc;pointer-events:none;opacity:0}</style>' +
      '<svg class="a" viewBox="0 0 22 22"><path d="M2 2 L2 18 L7 13 L10.5 20 L13 19 L9.5 12 L16 12 Z" fill="#6d5dfc" stroke="white" stroke-width="1.5"/></svg>';
    document.documentElement.appendChild(host);
    cursor = { host, root, arrow: root.querySelector('.a') as HTMLElement };
    return cursor;
  }

  function cursorShow(path: Array<[number, number]>, duration: number, kind: string, fx: { ripple: boolean; trail: boolean; dwell: number; idleHide: number; overshoot: boolean }) {
    const c = cursorElement();
    c.arrow.style.opacity = '1';
    const frames = path.map(([x, y]) => ({ transform: `translate(${x}px, ${y}px)` }));
    if (fx.overshoot && path.length > 2) {
      const [ax, ay] = path[path.length - 2], [bx, by] = path[path.length - 1];
      frames.splice(frames.length - 1, 0, { transform: `translate(${bx + (bx - ax) * 0.6}px, ${by + (by - ay) * 0.6}px)` });
    }
    c.arrow.animate(frames, { duration, easing: 'ease-in-out', fill: 'forwards' });
    const [x, y] = path[path.length - 1];
    if (fx.ripple) {
      const ripple = document.createElement('div');
      ripple.className = 'r';
      ripple.style.left = `${x}px`; ripple.style.top = `${y}px`;
      c.root.appendChild(ripple);
      ripple.animate([{ opacity: 0.9, transform: 'scale(0.4)' }, { opacity: 0, transform: 'scale(1.6)' }], { duration: Math.max(200, fx.dwell + 200), delay: duration, fill: 'forwards' })
        .finished.then(() => ripple.remove(), () => ripple.remove());
    }
    if (c.hideTimer) clearTimeout(c.hideTimer);
    if (fx.idleHide > 0) c.hideTimer = setTimeout(() => { c.arrow.style.opacity = '0'; }, duration + fx.dwell + fx.idleHide) as unknown as number;
    return { kind, visible: true };
  }

  function cursorHide() {
    if (cursor) { cursor.host.remove(); cursor = null; }
    return true;
  }

  function cursorVisible() {
    return !!cursor && cursor.host.isConnected && cursor.arrow.style.opacity !== '0';
  }

  g.__verity = {
    cursorShow, cursorHide, cursorVisible,
    queryDom, pageHas,
    snapshot, closedRootCandidates, registerClosedRoot, pointFor, watchEvents, watched, prepareField,
    readBack, settledValue, setValue, selectAllIn, readElementValue, scrollState, scrollAim, scrollSettled, watchDrag, dragSeen, watchPoint, hasFocus, focusElement, pageText, element, describe, indexInLatest,
  };
}
