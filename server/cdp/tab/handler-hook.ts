// Which elements a page's scripts made clickable: a script run at document start in the page's own world
// (Verity's page agent lives in an isolated world and cannot see the page's listeners) that records the
// elements given a click-like listener through addEventListener (jQuery's .on, plain handlers). A snapshot
// asks for them by a DOM event (`verity-list-handlers` on the document); the hook answers with one
// non-bubbling `verity-handler-target` event dispatched at each recorded element, which the isolated
// world hears in the capture phase: DOM events are the one channel both worlds share. It also tells a
// jQuery UI slider handle's range and value (`verity-slider-range`, a string detail), which only that world can read.
//
// Measured cost: one Set lookup per addEventListener call, and per snapshot one event per recorded element.
// Bounded: at most HOOK_MAX elements are recorded; the rest are still listed when they show a pointer cursor.

/**
 * Event types whose listener (on any element, the document or the window) can defer work after a focus
 * (the usual select-on-focus timer): while none is registered, the hook answers `verity-focus-listeners`
 * with `no` (a `verity-focus-answer` CustomEvent), and the page agent places a caret without waiting a timer.
 */
export const FOCUS_TYPES = ['focus', 'focusin'];

/** Event types whose listener makes an element something a person clicks. */
export const CLICK_TYPES = ['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchstart', 'dblclick'];
const HOOK_MAX = 5000;

/** The hook's source, evaluated in the main world of every document (Page.addScriptToEvaluateOnNewDocument). */
export const HANDLER_HOOK_SOURCE = `(() => {
  const proto = EventTarget.prototype;
  const mark = Symbol.for('verity.handler-hook');
  if (Object.prototype.hasOwnProperty.call(proto, mark)) return;
  Object.defineProperty(proto, mark, { value: true });
  const TYPES = new Set(${JSON.stringify(CLICK_TYPES)});
  const FOCUS = new Set(${JSON.stringify(FOCUS_TYPES)});
  let focusListened = false;
  const MAX = ${HOOK_MAX};
  const listeners = new WeakMap(); // element -> Set of "type|capture" keys per listener
  let recorded = [];
  const add = proto.addEventListener;
  const remove = proto.removeEventListener;
  const dispatch = proto.dispatchEvent;
  const keyOf = (type, options) => type + '|' + !!(typeof options === 'object' && options ? options.capture : options);
  const apply = (change) => function (type, listener, options) {
    try {
      if (listener && TYPES.has(type) && this instanceof Element) change(this, listener, keyOf(type, options));
    } catch {}
  };
  const record = apply((el, listener, key) => {
    let byListener = listeners.get(el);
    if (!byListener) {
      if (recorded.length >= MAX) recorded = recorded.filter((r) => r.deref()?.isConnected);
      if (recorded.length >= MAX) return;
      listeners.set(el, (byListener = new Map()));
      recorded.push(new WeakRef(el));
    }
    if (!byListener.has(listener)) byListener.set(listener, new Set());
    byListener.get(listener).add(key);
  });
  const forget = apply((el, listener, key) => {
    const byListener = listeners.get(el);
    const keys = byListener?.get(listener);
    if (!keys) return;
    keys.delete(key);
    if (keys.size === 0) byListener.delete(listener);
  });
  const wrap = (original, before) => new Proxy(original, {
    apply(target, self, args) {
      before.apply(self, args);
      return Reflect.apply(target, self, args);
    },
  });
  const noteFocus = function (type, listener) {
    if (listener && FOCUS.has(type)) focusListened = true; // never unset: a removal is not tracked
  };
  proto.addEventListener = wrap(wrap(add, record), noteFocus);
  add.call(document, 'verity-focus-listeners', () => {
    dispatch.call(document, new CustomEvent('verity-focus-answer', { detail: focusListened ? 'yes' : 'no' }));
  });
  proto.removeEventListener = wrap(remove, forget);
  add.call(document, 'verity-list-handlers', () => {
    recorded = recorded.filter((r) => r.deref());
    for (const ref of recorded) {
      const el = ref.deref();
      if (el && el.isConnected && listeners.get(el)?.size) dispatch.call(el, new Event('verity-handler-target', { composed: true }));
    }
    // A jQuery UI slider's range lives in the page's world only (the widget's options).
    try {
      const $ = window.jQuery;
      if (!$?.fn?.slider) return;
      for (const slider of document.querySelectorAll('.ui-slider')) {
        const widget = $(slider).slider('instance');
        if (!widget) continue;
        const { min, max, values, value } = widget.options;
        slider.querySelectorAll('.ui-slider-handle').forEach((handle, i) => {
          const at = values?.length ? values[i] : value;
          dispatch.call(handle, new CustomEvent('verity-slider-range', { detail: min + ' ' + max + ' ' + at, composed: true }));
        });
      }
    } catch {}
  });
})();`;
