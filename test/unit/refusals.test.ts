// Refusal mapping, in process: how errors thrown under a call become the contract's refusals (asRefusal),
// how a refusal reads as structuredContent and as text (what a model sees on isError), how a bad argument
// is named (parseArgs), and the bounded wait's timeout refusal.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { errorTag, RelayCommandError } from '../../server/errors.js';
import { asRefusal } from '../../server/mcp/refusals.js';
import { bounded } from '../../server/contract/bounded.js';
import { Refusal } from '../../server/contract/refusal.js';
import { defineTool, parseArgs } from '../../server/tools/define.js';
import { refusalReply, refusalText, textOfStructured, toCallToolResult } from '../../server/tools/reply.js';

describe('asRefusal', () => {
  test('a Refusal passes through as it is', () => {
    const r = new Refusal('element_covered', 'covered', { covering_element: 'div#x' });
    assert.equal(asRefusal(r), r);
  });

  // Errors as puppeteer, Chrome and the extension relay raise them (the relay's carry a code, typed in the
  // process and as a tag through puppeteer's protocol errors).
  const table: Array<[string, string | Error, string, RegExp, Record<string, unknown>?]> = [
    [
      'the relay dropped mid-command',
      new RelayCommandError(
        'delivery_unknown',
        'link closed before answering relay command 7; its result is unknown and it is not resent: check the page and retry if needed',
      ),
      'unavailable',
      /whether it reached the page is unknown/,
      { retryable: false, delivery: 'unknown' },
    ],
    [
      "the shared tab's debugger detached",
      new Error(
        `Protocol error (Input.insertText): the debugger was detached from tab 12, so Input.insertText was not delivered; it is being re-attached (x) ${errorTag('not_delivered')}`,
      ),
      'unavailable',
      /nothing was sent to the page/,
      { retryable: true, delivery: 'none' },
    ],
    [
      'a tab closed',
      'Protocol error (Runtime.callFunctionOn): Target closed',
      'target_not_found',
      /the tab or frame closed during the call/,
    ],
    [
      'a session closed',
      'Protocol error (DOM.describeNode): Session closed. Most likely the page has been closed.',
      'target_not_found',
      /closed during the call/,
    ],
    [
      'a frame detached',
      'Attempted to use detached Frame: frame was detached',
      'target_not_found',
      /closed during the call/,
    ],
    [
      'an unknown target id',
      'Protocol error (Target.attachToTarget): No target with given id found',
      'target_not_found',
      /closed during the call/,
    ],
    [
      'the browser went away',
      'Protocol error: Connection closed.',
      'unavailable',
      /the browser went away during the call/,
      { retryable: true },
    ],
    ['a socket hang-up', 'socket hang up', 'unavailable', /the browser went away/],
    [
      'a CDP timeout',
      "Runtime.callFunctionOn timed out. Increase the 'protocolTimeout' setting in launch/connect calls for a higher timeout if needed.",
      'timeout',
      /waiting for the tab to answer Runtime\.callFunctionOn; the page is not responding/,
      { retryable: true, waited_for: 'Runtime.callFunctionOn' },
    ],
    [
      'another timeout',
      'Navigation timed out after 3000 ms',
      'timeout',
      /^Navigation timed out after 3000 ms$/,
      { retryable: true },
    ],
    [
      'anything else is an internal error, not a crash',
      "Cannot read properties of undefined (reading 'x')",
      'unavailable',
      /^internal error: Cannot read properties/,
    ],
  ];
  for (const [name, message, code, text, details] of table) {
    test(name, () => {
      const r = asRefusal(typeof message === 'string' ? new Error(message) : message);
      assert.equal(r.code, code, r.message);
      assert.match(r.message, text);
      for (const [k, v] of Object.entries(details ?? {})) assert.deepEqual(r.details[k], v, k);
    });
  }

  test("the engine's own errors are Verity's defects: internal_error, not the environment's unavailable", () => {
    for (const e of [
      new TypeError("Cannot read properties of undefined (reading 'x')"),
      new RangeError('Maximum call stack size exceeded'),
      new ReferenceError('x is not defined'),
    ]) {
      const r = asRefusal(e);
      assert.equal(r.code, 'internal_error', e.name);
      assert.match(r.message, /^internal error: /);
    }
  });

  test('not an Error at all: its text, bounded', () => {
    assert.equal(asRefusal('boom').message, 'internal error: boom');
    assert.equal(asRefusal(undefined).code, 'unavailable');
    const long = asRefusal(new Error('x'.repeat(10_000)));
    assert.ok(long.message.length < 400, `${long.message.length} chars`);
    const closed = asRefusal(new Error(`Target closed ${'y'.repeat(10_000)}`));
    assert.ok(closed.message.length < 300, `${closed.message.length} chars`);
  });
});

describe('a refusal as the client sees it', () => {
  const r = new Refusal('stale_element_token', 'element_token is stale; call get_window_state again to refresh', {
    current_snapshot_ids: ['s00000002'],
    retryable: false,
    skipped: undefined,
  });

  test('structuredContent: status refused, the code, the message and every detail', () => {
    const reply = refusalReply(r);
    assert.equal(reply.isError, true);
    assert.deepEqual(reply.structured, {
      status: 'refused',
      refusal: {
        code: 'stale_element_token',
        message: r.message,
        current_snapshot_ids: ['s00000002'],
        retryable: false,
        skipped: undefined,
      },
    });
  });

  test('text: the code and message, then each detail on its own line (undefined ones left out)', () => {
    assert.equal(
      refusalText(r),
      'refused: stale_element_token: element_token is stale; call get_window_state again to refresh\ncurrent_snapshot_ids: ["s00000002"]\nretryable: false',
    );
    assert.equal(
      refusalText(new Refusal('timeout', 'gave up', { waited_for: 'Page.navigate' })),
      'refused: timeout: gave up\nwaited_for: Page.navigate',
    );
  });

  test("a batch step's structuredContent reads as the same text", () => {
    assert.equal(textOfStructured(refusalReply(r).structured), refusalText(r));
  });

  test('the MCP result: isError, the text content, the structured refusal', () => {
    const result = toCallToolResult(refusalReply(r));
    assert.equal(result.isError, true);
    assert.deepEqual(result.content, [{ type: 'text', text: refusalText(r) }]);
    assert.equal((result.structuredContent as { status: string }).status, 'refused');
  });

  test('a long detail is cut and says how long it was', () => {
    const text = refusalText(
      new Refusal('no_such_option', 'none', { options: Array.from({ length: 1000 }, (_, i) => `option ${i}`) }),
    );
    assert.match(text, /… \(\d+ chars in all\)$/);
    assert.ok(text.length < 2200, `${text.length} chars`);
  });
});

describe('parseArgs names the field', () => {
  const tool = defineTool({
    name: 't',
    description: '',
    output: z.object({}),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
    input: z.strictObject({
      text: z.string().max(5),
      n: z.number().int().min(0).optional(),
      target: z.strictObject({ tab_id: z.string() }).optional(),
    }),
    async handler() {
      return { structured: {} };
    },
  });
  const table: Array<[string, unknown, string]> = [
    ['missing', {}, 'text'],
    ['wrong type', { text: 1 }, 'text'],
    ['too long', { text: 'abcdef' }, 'text'],
    ['not an integer', { text: 'a', n: 1.5 }, 'n'],
    ['below the minimum', { text: 'a', n: -1 }, 'n'],
    ['nested', { text: 'a', target: { tab_id: 3 } }, 'target.tab_id'],
    ['an unknown argument', { text: 'a', txet: 'b' }, 'txet'],
    ['two unknown arguments', { text: 'a', b: 1, c: 2 }, 'b, c'],
    ['not an object', 'text', 'arguments'],
  ];
  for (const [name, args, field] of table) {
    test(name, () => {
      try {
        parseArgs(tool, args);
      } catch (e) {
        assert.ok(e instanceof Refusal);
        assert.equal(e.code, 'invalid_arguments');
        assert.equal(e.details.field, field);
        assert.ok(e.message.startsWith(`${field}: `), e.message);
        return;
      }
      assert.fail(`${JSON.stringify(args)} was accepted`);
    });
  }
  test('no arguments at all are an empty object', () => {
    assert.throws(
      () => parseArgs(tool, undefined),
      (e: Refusal) => e.details.field === 'text',
    );
    assert.deepEqual(parseArgs(tool, { text: 'a' }), { text: 'a' });
  });
});

describe('bounded', () => {
  test('an answer in time is the answer', async () => {
    assert.equal(await bounded(Promise.resolve(7), 1000, 'seven'), 7);
  });
  test('no answer in time: a retryable timeout naming what was awaited', async () => {
    const never = new Promise<never>(() => undefined);
    await assert.rejects(
      bounded(never, 5, 'the page to settle'),
      (e: Refusal) =>
        e instanceof Refusal &&
        e.code === 'timeout' &&
        /gave up after 5 ms waiting for the page to settle/.test(e.message) &&
        e.details.retryable === true,
    );
  });
  test('a failure inside is passed on, not turned into a timeout', async () => {
    await assert.rejects(bounded(Promise.reject(new Error('inner')), 1000, 'x'), /inner/);
  });
});
