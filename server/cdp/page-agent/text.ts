// The page agent's reads for the page tool: the page's text, a CSS query, and whether a text or selector
// is there yet (wait_for).
import { textOf } from './core.js';

export function pageText(max: number) {
  const text = (document.body?.innerText ?? '').slice(0, max);
  return { text, truncated: (document.body?.innerText.length ?? 0) > max, title: document.title, url: location.href };
}

export function queryDom(selector: string, attributes: string[], limit: number) {
  let found: Element[];
  try {
    found = Array.from(document.querySelectorAll(selector));
  } catch (e) {
    return { error: (e as Error).message };
  }
  const matches = found.slice(0, limit).map((el) => ({
    tag: el.localName,
    text: textOf(el, 200),
    attributes: Object.fromEntries(attributes.map((a) => [a, el.getAttribute(a)])),
  }));
  return { count: found.length, matches };
}

export function pageHas(text: string | null, selector: string | null): boolean {
  if (selector) {
    try {
      return !!document.querySelector(selector);
    } catch {
      return false;
    }
  }
  return !!text && (document.body?.innerText ?? '').includes(text);
}
