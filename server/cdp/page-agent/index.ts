// The page agent: an ordinary typed module that runs inside each frame, in Verity's own isolated world
// (invisible to the page's scripts, sharing only the DOM). scripts/build-page-agent.mjs bundles this
// entry with esbuild into one script (dist/server/cdp/page-agent.bundle.js) that cdp/tab/tab.ts evaluates
// in every world it creates; it installs `globalThis.__verity` once per world.
//
// The server never imports this module at run time: it imports the `PageAgent` type only, so that
// `Tab.call(frame, name, ...args)` is checked against these methods' own signatures. Every method takes
// and returns JSON (arguments are written with JSON.stringify, results read back by value).
import * as setValue from '../actions/set-value.page.js';
import * as typeText from '../actions/type-text.page.js';
import * as core from './core.js';
import * as pointing from './pointing.js';
import * as watches from './watches.js';
import * as held from './held.js';
import * as hover from '../actions/hover.page.js';
import * as drag from '../actions/drag.page.js';
import * as scroll from '../actions/scroll.page.js';
import * as cursor from './cursor.js';
import * as sinks from './sinks.js';
import * as text from './text.js';

const pageAgent = {
  // core.ts, pointing.ts, watches.ts: snapshot, aiming, event watches
  snapshot: core.snapshot,
  reobserve: core.reobserve,
  pointFor: pointing.pointFor,
  watchPoint: pointing.watchPoint,
  watchEvents: watches.watchEvents,
  watched: watches.watched,
  hasFocus: core.hasFocus,
  focusElement: core.focusElement,
  maskSecretFields: core.maskSecretFields,
  // core.ts, called by tab/tab.ts / snapshot.ts with object handles rather than through Tab.call
  closedRootCandidates: core.closedRootCandidates,
  registerClosedRoot: core.registerClosedRoot,
  element: core.element,
  indexInLatest: core.indexInLatest,
  elementsAt: core.elementsAt,
  // actions/type-text.page.ts: text fields and editors, held for the action
  prepareField: typeText.prepareField,
  assignPreparedValue: typeText.assignPreparedValue,
  readBack: typeText.readBack,
  preparedFieldNow: typeText.preparedFieldNow,
  pasteText: typeText.pasteIntoField,
  rearmField: typeText.rearmField,
  releaseField: typeText.releaseHeldField,
  heldFieldCount: held.heldFieldCount,
  // actions/set-value.page.ts: values, comboboxes, a list of choices
  settledValue: setValue.settledValue,
  setValue: setValue.setValue,
  selectAllIn: setValue.selectAllIn,
  readElementValue: setValue.readElementValue,
  findOption: setValue.findOption,
  offeredOptions: setValue.offeredOptions,
  comboboxAfter: setValue.comboboxAfter,
  planChoices: setValue.planChoices,
  choicePoint: setValue.choicePoint,
  choicesNow: setValue.choicesNow,
  // sinks.ts: hidden inputs a widget collects keys with
  sinkShown: sinks.sinkShown,
  // actions/hover.page.ts: what a hover made visible
  hoverBaseline: hover.hoverBaseline,
  hoverAppeared: hover.hoverAppeared,
  // actions/scroll.page.ts, actions/drag.page.ts: scrolling, dragging
  scrollState: scroll.scrollState,
  scrollAim: scroll.scrollAim,
  scrollSettled: scroll.scrollSettled,
  watchDrag: drag.watchDrag,
  dragSeen: drag.dragSeen,
  // cursor.ts: the agent cursor
  cursorShow: cursor.cursorShow,
  cursorHide: cursor.cursorHide,
  cursorVisible: cursor.cursorVisible,
  // text.ts: the page tool's reads
  pageText: text.pageText,
  queryDom: text.queryDom,
  pageHas: text.pageHas,
};

export type PageAgent = typeof pageAgent;

// The world may already hold an agent (a second evaluation into the same world): keep the first, whose
// state (the latest snapshot, armed watches) the server relies on.
const world = globalThis as { __verity?: PageAgent };
world.__verity ??= pageAgent;
