// The `page` tool: tabs, navigation and page-level reads of the browser route.
import { realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, relative, resolve as resolvePath } from 'node:path';
import { z } from 'zod';
import { changesOf } from './changes.js';
import { Refusal } from '../contract/refusal.js';
import type { TabHandle } from '../contract/driver.js';
import type { SideEffect } from '../contract/wire.js';
import type { HistoryMove } from '../routing/pages.js';
import type { CallContext, ToolContext } from './context.js';
import { reportWhile } from '../progress.js';
import { DESTRUCTIVE, defineTool, type Reply } from './define.js';
import { elementToken, session } from './schemas.js';

export const PAGE_ACTIONS = [
  'list_tabs',
  'new_tab',
  'select_tab',
  'close_tab',
  'navigate',
  'back',
  'forward',
  'reload',
  'get_text',
  'query_dom',
  'wait_for',
  'screenshot',
  'handle_dialog',
  'set_input_files',
  'execute_javascript',
  'console_messages',
  'network_requests',
] as const;

const input = z.strictObject({
  action: z.enum(PAGE_ACTIONS),
  tab_id: z.string().min(1).optional(),
  url: z.string().min(1).max(8192).optional().describe('wait_for: a part of the URL.'),
  css_selector: z.string().min(1).max(1000).optional(),
  attributes: z.array(z.string().max(100)).max(20).optional(),
  text: z.string().min(1).max(1000).optional(),
  // console_messages: this level and the ones above it (exception > error > warning > info > debug).
  level: z
    .enum(['exception', 'error', 'warning', 'info', 'debug'])
    .optional()
    .meta({ advertise: ['error', 'warning', 'info'] }),
  // network_requests: answered with this status; failed: a network error or a status of 400 and above.
  status: z.number().int().min(100).max(599).optional(),
  failed: z.boolean().optional(),
  // console_messages and network_requests: the latest this many (a bounded reply).
  limit: z.number().int().min(1).max(500).default(50),
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
  if (value === undefined || value === null)
    throw new Refusal('invalid_arguments', `${String(key)}: required for action "${args.action}"`);
  return value as NonNullable<Args[K]>;
}

function checkUrl(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    throw new Refusal('invalid_arguments', `url: "${url}" is not an absolute URL`);
  }
}

/**
 * The tab an action works on (tab_id, else the session's current tab): another connection's tab is not
 * found, and the origin policy holds on the tab's CURRENT url (after redirects, clicks, history moves).
 * `leaving` actions (navigate away, close) may start from a refused page: they do not read it.
 */
async function tabOf(args: Args, core: ToolContext, ctx: CallContext, leaving = false): Promise<TabHandle> {
  const { pages } = core;
  const tab = args.tab_id ? await pages.find(ctx, args.tab_id) : await pages.current(ctx);
  if (!leaving) core.policy.checkUrl(pages.url(tab));
  if (args.tab_id) pages.setCurrent(ctx, tab.id);
  return tab;
}

/**
 * Goes to a URL the policy allowed; a redirect the browser blocked is the policy's refusal, not a failed load.
 * Returns what the navigation caused beside its page: a download its own response was (side_effects).
 */
async function go(core: ToolContext, ctx: CallContext, tab: TabHandle, url: string): Promise<SideEffect[]> {
  const { pages } = core;
  if (url.toLowerCase().startsWith('javascript:')) {
    // Allowed by the operator (--allow-url-schemes javascript): it runs in the page, as a typed URL would.
    core.policy.checkUrl(pages.url(tab));
    await pages.runScript(tab, `location.href = ${JSON.stringify(url)}`, { awaitResult: false });
    return [];
  }
  let effects: SideEffect[];
  try {
    effects = await pages.navigate(ctx, tab, url);
  } catch (e) {
    if (!/ERR_BLOCKED_BY_CLIENT/.test((e as Error).message)) throw e;
    core.policy.checkUrl(pages.url(tab), 'the page the navigation led to');
    throw new Refusal(
      'not_permitted',
      `the navigation to ${url} was redirected to an address the policy does not allow, and the browser blocked it`,
    );
  }
  core.policy.checkUrl(pages.url(tab), 'the page the navigation led to');
  return effects;
}

/** A tab's description, with the side effects of the navigation that led there when it had any. */
async function arrived(core: ToolContext, tab: TabHandle, effects: SideEffect[]) {
  const described = await describeTab(core, tab);
  return effects.length ? { ...described, side_effects: effects } : described;
}

/**
 * The files set_input_files may hand to the page: each under a root the operator allowed (--upload-root),
 * symlinks resolved first, an existing regular file. Relative paths are taken from the first root.
 */
function uploadPaths(paths: string[], roots: readonly string[] | undefined): string[] {
  if (!roots?.length) {
    throw new Refusal(
      'not_permitted',
      'set_input_files is off: the operator allows uploads from chosen folders with --upload-root DIR (repeatable) or VERITY_UPLOAD_ROOTS',
      { option: '--upload-root' },
    );
  }
  const realRoots = roots.map((r) => {
    try {
      return realpathSync(r);
    } catch {
      return resolvePath(r);
    }
  });
  return paths.map((path, i) => {
    const asked = isAbsolute(path) ? path : resolvePath(realRoots[0], path);
    let real: string;
    try {
      real = realpathSync(asked);
    } catch {
      throw new Refusal('invalid_arguments', `paths[${i}]: ${path} does not exist`);
    }
    if (
      !realRoots.some((root) => {
        const rel = relative(root, real);
        return rel === '' ? false : !rel.startsWith('..') && !isAbsolute(rel);
      })
    ) {
      throw new Refusal(
        'not_permitted',
        `paths[${i}]: ${path} is not under an upload root the operator allowed (${roots.join(', ')}); symlinks are resolved before the check`,
        { option: '--upload-root' },
      );
    }
    if (!statSync(real).isFile()) throw new Refusal('invalid_arguments', `paths[${i}]: ${path} is not a file`);
    return real;
  });
}

async function describeTab(core: ToolContext, tab: TabHandle) {
  return { tab_id: tab.id, url: core.pages.url(tab), title: await core.pages.title(tab).catch(() => '') };
}

const handlers: Record<
  (typeof PAGE_ACTIONS)[number],
  (args: Args, core: ToolContext, ctx: CallContext) => Promise<Reply>
> = {
  async list_tabs(_args, core, ctx) {
    const tabs = await Promise.all((await core.pages.list(ctx)).map((tab) => describeTab(core, tab)));
    return {
      structured: { tabs, current_tab_id: ctx.session?.currentTabId ?? null },
      // An empty list reads as one, in the text as in the structure (an empty text item tells a model nothing).
      text: tabs.length ? tabs.map((t) => `${t.tab_id} ${t.title} ${t.url}`).join('\n') : '[]',
    };
  },
  async new_tab(args, core, ctx) {
    const url = args.url ? checkUrl(args.url) : undefined;
    if (url) core.policy.checkNavigation(url, "the new tab's URL");
    const tab = await core.pages.open(ctx);
    core.pages.setCurrent(ctx, tab.id);
    const effects = url ? await go(core, ctx, tab, url) : [];
    return { structured: { tabs: [await describeTab(core, tab)], ...(await arrived(core, tab, effects)) } };
  },
  async select_tab(args, core, ctx) {
    const tab = await tabOf({ ...args, tab_id: need(args, 'tab_id') }, core, ctx);
    await core.pages.bringToFront(tab);
    return { structured: await describeTab(core, tab) };
  },
  async close_tab(args, core, ctx) {
    const tab = await core.pages.find(ctx, need(args, 'tab_id'));
    await core.pages.close(ctx, tab);
    return { structured: { closed: tab.id } };
  },
  async navigate(args, core, ctx) {
    const url = checkUrl(need(args, 'url'));
    core.policy.checkNavigation(url, 'the URL to navigate to');
    const tab = await tabOf(args, core, ctx, true);
    const effects = await reportWhile(ctx.progress, `navigating to ${url}`, go(core, ctx, tab, url));
    return { structured: await arrived(core, tab, effects) };
  },
  async back(args, core, ctx) {
    return history(core, await tabOf(args, core, ctx), 'back');
  },
  async forward(args, core, ctx) {
    return history(core, await tabOf(args, core, ctx), 'forward');
  },
  async reload(args, core, ctx) {
    return history(core, await tabOf(args, core, ctx), 'reload');
  },
  async get_text(args, core, ctx) {
    const read = await core.pages.text(await tabOf(args, core, ctx), 50_000);
    return { structured: read, text: read.text };
  },
  async query_dom(args, core, ctx) {
    const tab = await tabOf(args, core, ctx);
    const matches = await core.pages.queryDom(tab, need(args, 'css_selector'), args.attributes ?? [], 100);
    if (matches.error) throw new Refusal('invalid_arguments', `css_selector: ${matches.error}`);
    return { structured: matches };
  },
  async wait_for(args, core, ctx) {
    const tab = await tabOf(args, core, ctx);
    if (!args.text && !args.css_selector && !args.url)
      throw new Refusal('invalid_arguments', 'text, css_selector or url: wait_for needs one of them');
    const what = args.text
      ? `text "${args.text}"`
      : args.css_selector
        ? `an element matching ${args.css_selector}`
        : `a URL containing ${args.url}`;
    const deadline = Date.now() + args.timeout_ms;
    for (;;) {
      // The operator stopped the agent (or ended its session): the wait ends here, not at its deadline.
      if (ctx.signal?.aborted) throw ctx.signal.reason;
      ctx.progress?.(`waiting for ${what}`);
      const found = args.url
        ? core.pages.url(tab).includes(args.url)
        : await core.pages.has(tab, args.text ?? null, args.css_selector ?? null);
      if (found) return { structured: { found: true, waited_for: what, url: core.pages.url(tab) } };
      if (Date.now() >= deadline)
        throw new Refusal('timeout', `gave up after ${args.timeout_ms} ms waiting for ${what}`, { retryable: true });
      await new Promise((r) => setTimeout(r, 100));
    }
  },
  async screenshot(args, core, ctx) {
    const tab = await tabOf(args, core, ctx);
    const shot = await core.pages.screenshot(tab);
    return {
      structured: { tab_id: tab.id, width: shot.width, height: shot.height },
      images: [{ data: shot.data, mimeType: 'image/png' }],
    };
  },
  async handle_dialog(args, core, ctx) {
    const tab = await tabOf(args, core, ctx);
    const dialog = core.pages.dialog(tab);
    if (!dialog) throw new Refusal('target_not_found', 'no dialog is open in this tab');
    await core.pages.answerDialog(tab, need(args, 'accept'), args.prompt_text);
    // What answering it changed on the page (the handler's work after confirm() returned), as an action says it.
    const { target, driver } = await core.resolve({ target: { kind: 'tab', tab_id: tab.id } }, ctx);
    const changed = await changesOf(target, driver, core.snapshots);
    return { structured: { handled: dialog.type, message: dialog.message, accepted: args.accept, ...changed } };
  },
  async set_input_files(args, core, ctx) {
    const found = core.snapshots.resolve(need(args, 'element_token'));
    const paths = uploadPaths(need(args, 'paths'), core.options.uploadRoots);
    const { target } = await core.resolve({ element_token: args.element_token }, ctx); // ownership and origin policy
    if (found.kind !== 'tab' || target.kind !== 'tab')
      throw new Refusal('invalid_arguments', 'element_token: set_input_files needs an element of a browser tab');
    // The tab the router found for the token (its ownership checked there): not looked up again.
    const names = await core.pages.setInputFiles(target.tab, target.element!, paths);
    const expected = paths.map((p) => basename(p));
    const same = names.length === expected.length && names.every((n, i) => n === expected[i]);
    return { structured: { files: names, expected, effect: same ? 'confirmed' : 'mismatch' }, isError: !same };
  },
  async console_messages(args, core, ctx) {
    const tab = await tabOf(args, core, ctx);
    const read = core.pages.consoleMessages(tab, { level: args.level, text: args.text, limit: args.limit });
    return {
      structured: { tab_id: tab.id, ...read },
      text: listingText(read, read.messages, (m) => `${m.at} ${m.level}: ${m.text}`),
    };
  },
  async network_requests(args, core, ctx) {
    const tab = await tabOf(args, core, ctx);
    const read = core.pages.networkRequests(tab, {
      status: args.status,
      failed: args.failed,
      url: args.url,
      limit: args.limit,
    });
    const outcome = (r: (typeof read.requests)[number]) =>
      r.failed !== undefined ? `failed (${r.failed})` : (r.status ?? 'no answer yet');
    return {
      structured: { tab_id: tab.id, ...read },
      text: listingText(read, read.requests, (r) => `${r.at} ${r.method} ${r.url} (${r.type}): ${outcome(r)}`),
    };
  },
  async execute_javascript(args, core, ctx) {
    if (!core.options.allowJavascript)
      throw new Refusal(
        'not_permitted',
        'execute_javascript is off; the operator can enable it with --allow-javascript',
      );
    const tab = await tabOf(args, core, ctx);
    const { value, error } = await core.pages.runScript(tab, need(args, 'code'), { awaitResult: true });
    if (error !== undefined) return { structured: { error }, isError: true };
    return { structured: { value } };
  },
};

/** A buffer's listing as text: one line per entry, then how many matched, were kept and were dropped past the bound. */
function listingText<T>(
  read: { matched: number; kept: number; dropped: number; bound: number },
  entries: T[],
  line: (entry: T) => string,
): string {
  const tail = `${entries.length} shown of ${read.matched} matching; ${read.kept} kept (bound ${read.bound}), ${read.dropped} older dropped`;
  return [...entries.map(line), tail].join('\n');
}

async function history(core: ToolContext, tab: TabHandle, move: HistoryMove): Promise<Reply> {
  await core.pages.moveInHistory(tab, move).catch((e) => {
    throw new Refusal('timeout', `the tab did not finish navigating: ${(e as Error).message}`);
  });
  core.policy.checkUrl(core.pages.url(tab), 'the page the history move led to');
  return { structured: await describeTab(core, tab) };
}

export const page = defineTool({
  name: 'page',
  description:
    'Tabs and pages (tab_id: default the current tab). Actions take: new_tab/navigate url, query_dom css_selector, wait_for text|css_selector|url, handle_dialog accept, set_input_files element_token paths, execute_javascript code.',
  input,
  output: z.looseObject({}),
  annotations: DESTRUCTIVE,
  // Within the tool-definition budget; accepted always (console_messages and network_requests filter by url,
  // text, level and failed as advertised).
  advanced: ['status', 'limit'],
  async handler(args, core, ctx) {
    return handlers[args.action](args, core, ctx);
  },
});
