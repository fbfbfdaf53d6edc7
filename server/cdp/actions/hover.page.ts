// hover's read-back: which things became visible while the pointer rested on an element (a CSS :hover menu,
// a mouseenter menu, a tooltip). The set of visible shown things (interactive elements and elements with
// their own text) is taken before the pointer moves and compared after, bounded in time.
import { nextFrame } from '../page-agent/core.js';
import { pageState } from '../page-agent/state.js';

/** How long a hover gets to open something (tooltips commonly wait 300-500 ms). */
const HOVER_WAIT_MS = 1000;
/** Elements looked at per reading: a bound on a huge page (what lies beyond is not compared). */
const SCAN_CAP = 30_000;
const INTERACTIVE = 'a[href], button, input, select, textarea, summary, [role], [tabindex]';

function hasOwnText(el: Element): boolean {
  for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE && n.textContent?.trim()) return true;
  return false;
}

/** Interactive elements and elements with their own text that a user can see now. */
function visibleShown(): Set<Element> {
  const out = new Set<Element>();
  const walker = document.createTreeWalker(document.body ?? document.documentElement, NodeFilter.SHOW_ELEMENT);
  for (
    let n = 0, el = walker.nextNode() as Element | null;
    el && n < SCAN_CAP;
    el = walker.nextNode() as Element | null, n++
  ) {
    if (!hasOwnText(el) && !el.matches(INTERACTIVE)) continue;
    if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) out.add(el);
  }
  return out;
}

/** Takes the reading before the pointer moves; returns how many shown things it holds. */
export function hoverBaseline(): number {
  pageState.hoverBaseline = visibleShown();
  return pageState.hoverBaseline.size;
}

function shortName(el: Element): string {
  const role = el.getAttribute('role') ?? el.localName;
  const text = (el.getAttribute('aria-label') || (el as HTMLElement).innerText || el.getAttribute('title') || '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 60);
  return text ? `${role} '${text}'` : role;
}

/**
 * After the move: what became visible (outermost first, at most 10 named) once something did, or nothing
 * when HOVER_WAIT_MS passed. A menu that opens shows its items together; one more frame lets it finish.
 */
export async function hoverAppeared(): Promise<{ count: number; shown: string[] }> {
  const before = pageState.hoverBaseline ?? new Set<Element>();
  const deadline = performance.now() + HOVER_WAIT_MS;
  let appeared: Element[] = [];
  for (;;) {
    appeared = [...visibleShown()].filter((el) => !before.has(el));
    if (appeared.length || performance.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 40));
  }
  if (appeared.length) {
    await nextFrame();
    appeared = [...visibleShown()].filter((el) => !before.has(el));
  }
  pageState.hoverBaseline = null;
  const set = new Set(appeared);
  const outermost = appeared.filter((el) => {
    for (let p = el.parentElement; p; p = p.parentElement) if (set.has(p)) return false;
    return true;
  });
  return { count: appeared.length, shown: outermost.slice(0, 10).map(shortName) };
}
