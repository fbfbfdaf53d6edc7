// The `page` tool: tabs, navigation and page-level reads of the browser route.
import { basename } from 'node:path';
import { z } from 'zod';
import { Refusal } from '../routing/refusal.js';
import type { Verity, CallContext } from '../core.js';
import type { Tab } from '../cdp/tab.js';
import { reportWhile } from '../progress.js';
import { DESTRUCTIVE, defineTool, type Reply } from './define.js';
import { elementToken, session } from './schemas.js';

export const PAGE_ACTIONS = ['list_tabs', 'new_tab', 'select_tab', 'close_tab', 'navigate', 'back', 'forward', 'reload', 'get_text',
  'query_dom', 'wait_for', 'screenshot', 'handle_dialog', 'set_input_files', 'execute_javascript'] as const;

const input = z.strictObject({
  action: z.enum(PAGE_ACTIONS),
  tab_id: z.string().min(1).optional().describe('Tab to act on; defaults to the session\'s current tab.'),
  url: z.string().min(1).max(8192).optional().describe('new_tab, navigate: the URL; wait_for: a substring the URL must contain.'),
  css_selector: z.string().min(1).max(1000).optional(),
  attributes: z.array(z.string().max(100)).max(20).optional().describe('query_dom: attributes to return per match.'),
  text: z.string().min(1).max(1000).optional().describe('wait_for: text that must appear in the page.'),
  timeout_ms: z.number().int().min(0).max(60_000).default(5000),
  accept: z.boolean().optional(),
  prompt_text: z.string().max(10_000).optional(),
  element_token: elementToken.optional(),
  paths: z.array(z.string().min(1)).min(1).max(20).optional(),
  code: z.string().min(1).max(100_000).optional(),
  session,
});
type Args = z.infer<typeof input>;

function need<K extends keyof Args>(args: Args, key: K): NonNullable<Args[K]> {
  const value = args[key];
  if (value === undefined || value === null) throw new Refusal('invalid_arguments', `${String(key)}: required for action "${args.action}"`);
  return value as NonNullable<Args[K]>;
}

function checkUrl(url: string): string {
  try { return new URL(url).href; } catch { throw new Refusal('invalid_arguments', `url: "${url}" is not an absolute URL`); }
}

async function tabOf(args: Args, core: Verity, ctx: CallContext): Promise<Tab> {
  if (args.tab_id) {
    const tab = await core.browser.findTab(args.tab_id);
    core.setCurrentTab(ctx, tab.id);
    return tab;
  }
  return core.currentTab(ctx);
}

async function describeTab(tab: Tab) {
  return { tab_id: tab.id, url: tab.page.url(), title: await tab.title().catch(() => '') };
}

const handlers: Record<(typeof PAGE_ACTIONS)[number], (args: Args, core: Verity, ctx: CallContext) => Promise<Reply>> = {
  async list_tabs(_args, core, ctx) {
    const tabs = await Promise.all((await core.browser.tabs_()).map(describeTab));
    return { structured: { tabs, current_tab_id: ctx.session?.currentTabId ?? null }, text: tabs.map((t) => `${t.tab_id} ${t.title} ${t.url}`).join('\n') };
  },
  async new_tab(args, core, ctx) {
    const url = args.url ? checkUrl(args.url) : undefined;
    if (url) core.policy.checkUrl(url, 'the new tab\'s URL');
    const tab = await core.browser.newTab(url);
    core.setCurrentTab(ctx, tab.id);
    return { structured: { tabs: [await describeTab(tab)], ...(await describeTab(tab)) } };
  },
  async select_tab(args, core, ctx) {
    const tab = await core.browser.findTab(need(args, 'tab_id'));
    await tab.page.bringToFront();
    core.setCurrentTab(ctx, tab.id);
    return { structured: await describeTab(tab) };
  },
  async close_tab(args, core, ctx) {
    const tab = await core.browser.findTab(need(args, 'tab_id'));
    await tab.page.close();
    core.snapshots.forget('tab', tab.id);
    if (ctx.session?.currentTabId === tab.id) core.setCurrentTab(ctx, undefined);
    return { structured: { closed: tab.id } };
  },
  async navigate(args, core, ctx) {
    const tab = await tabOf(args, core, ctx);
    const url = checkUrl(need(args, 'url'));
    core.policy.checkUrl(url, 'the URL to navigate to');
    await reportWhile(ctx.progress, `navigating to ${url}`, tab.navigate(url));
    return { structured: await describeTab(tab) };
  },
  async back(args, core, ctx) { return history(await tabOf(args, core, ctx), (t) => t.page.goBack({ timeout: 30_000 })); },
  async forward(args, core, ctx) { return history(await tabOf(args, core, ctx), (t) => t.page.goForward({ timeout: 30_000 })); },
  async reload(args, core, ctx) { return history(await tabOf(args, core, ctx), (t) => t.page.reload({ timeout: 30_000 })); },
  async get_text(args, core, ctx) {
    const tab = await tabOf(args, core, ctx);
    const [frame] = await tab.frames();
    const read = await tab.call(frame, 'pageText', 50_000);
    return { structured: read, text: read.text };
  },
  async query_dom(args, core, ctx) {
    const tab = await tabOf(args, core, ctx);
    const [frame] = await tab.frames();
    const matches = await tab.call(frame, 'queryDom', need(args, 'css_selector'), args.attributes ?? [], 100);
    if (matches.error) throw new Refusal('invalid_arguments', `css_selector: ${matches.error}`);
    return { structured: matches };
  },
  async wait_for(args, core, ctx) {
    const tab = await tabOf(args, core, ctx);
    if (!args.text && !args.css_selector && !args.url) throw new Refusal('invalid_arguments', 'text, css_selector or url: wait_for needs one of them');
    const what = args.text ? `text "${args.text}"` : args.css_selector ? `an element matching ${args.css_selector}` : `a URL containing ${args.url}`;
    const deadline = Date.now() + args.timeout_ms;
    for (;;) {
      ctx.progress?.(`waiting for ${what}`);
      const [frame] = await tab.frames();
      const found = args.url ? tab.page.url().includes(args.url)
        : await tab.call<boolean>(frame, 'pageHas', args.text ?? null, args.css_selector ?? null).catch((e) => { if (e instanceof Refusal) throw e; return false; });
      if (found) return { structured: { found: true, waited_for: what, url: tab.page.url() } };
      if (Date.now() >= deadline) throw new Refusal('timeout', `gave up after ${args.timeout_ms} ms waiting for ${what}`, { retryable: true });
      await new Promise((r) => setTimeout(r, 100));
    }
  },
  async screenshot(args, core, ctx) {
    const tab = await tabOf(args, core, ctx);
    const shot = await tab.screenshot();
    return { structured: { tab_id: tab.id, width: shot.width, height: shot.height }, images: [{ data: shot.data, mimeType: 'image/png' }] };
  },
  async handle_dialog(args, core, ctx) {
    const tab = await tabOf(args, core, ctx);
    const dialog = tab.dialog;
    if (!dialog) throw new Refusal('target_not_found', 'no dialog is open in this tab');
    await tab.session.send('Page.handleJavaScriptDialog', { accept: need(args, 'accept'), ...(args.prompt_text !== undefined ? { promptText: args.prompt_text } : {}) });
    tab.dialog = null;
    return { structured: { handled: dialog.type, message: dialog.message, accepted: args.accept } };
  },
  async set_input_files(args, core, ctx) {
    const found = core.snapshots.resolve(need(args, 'element_token'));
    const { target } = await core.resolve({ element_token: args.element_token }, ctx);
    const tab = await core.browser.findTab(found.key);
    const paths = need(args, 'paths');
    const names = await tab.setInputFiles(target.element!, paths);
    const expected = paths.map((p) => basename(p));
    const same = names.length === expected.length && names.every((n, i) => n === expected[i]);
    return { structured: { files: names, expected, effect: same ? 'confirmed' : 'mismatch' }, isError: !same };
  },
  async execute_javascript(args, core, ctx) {
    if (!core.options.allowJavascript) throw new Refusal('not_permitted', 'execute_javascript is off; the operator can enable it with --allow-javascript');
    const tab = await tabOf(args, core, ctx);
    const { result, exceptionDetails } = await tab.session.send('Runtime.evaluate', { expression: need(args, 'code'), awaitPromise: true, returnByValue: true, timeout: 10_000 });
    if (exceptionDetails) return { structured: { error: exceptionDetails.exception?.description ?? exceptionDetails.text }, isError: true };
    return { structured: { value: result.value ?? null } };
  },
};

async function history(tab: Tab, go: (t: Tab) => Promise<unknown>): Promise<Reply> {
  await go(tab).catch((e) => { throw new Refusal('timeout', `the tab did not finish navigating: ${(e as Error).message}`); });
  return { structured: await describeTab(tab) };
}

export const page = defineTool({
  name: 'page',
  description: 'Browser tabs and pages: list_tabs, new_tab {url}, select_tab {tab_id}, close_tab {tab_id}, navigate {url}, back, forward, reload, get_text, query_dom {css_selector, attributes?}, wait_for {text | css_selector | url, timeout_ms}, screenshot, handle_dialog {accept, prompt_text?}, set_input_files {element_token, paths}, execute_javascript {code} (off unless the operator enables it). tab_id defaults to the session\'s current tab.',
  input,
  output: z.looseObject({}),
  annotations: DESTRUCTIVE,
  async handler(args, core, ctx) {
    return handlers[args.action](args, core, ctx);
  },
});
