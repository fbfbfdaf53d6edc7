// The fleet in a real Control UI page (issue 46 item 2-3): two real gateways (`verity start`, each its own
// config dir) on one real PostgreSQL (test/helpers/postgres.ts), gateway A's Control UI in a real Chromium
// page, one agent (a real MCP SDK client) on each gateway. A's console lists B's session with the gateway
// that holds it, live; approves a call held on B (B's agent gets its result; the decision names A's
// operator and gateway A); its audit log tells two gateways' entries of the same id apart and filters by
// gateway; it pauses and resumes B's session from its row; its fleet brake stops the agents of both
// gateways and resumes them; it opens B's session in a pane whose log shows B's calls live (from the shared
// trail) and whose state follows B's brake; and when B is killed, its session (its row and its pane) is shown
// ended, "gateway gone", within the bound. Every process is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ElementHandle, Page } from 'puppeteer-core';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { openControlUi } from '../helpers/control-ui.js';
import {
  type Connection,
  type Gateway,
  killPid,
  type OperatorSocket,
  operatorSocket,
  refusalOf,
  startGateway,
  waitFor,
} from '../helpers/gateway.js';
import { type Postgres, postgresMissing, startPostgres } from '../helpers/postgres.js';

if (postgresMissing) process.stdout.write(`# console fleet tests skipped: ${postgresMissing}\n`);

describe("gateway A's Control UI shows and acts on the fleet of two gateways", {
  skip: postgresMissing ?? false,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'verity-console-fleet-'));
  let db: Postgres;
  let chrome: TestBrowser;
  let page: Page;
  /** B's own operator console: a call is held on B only while B has a console with the approvals scope. */
  let opB: OperatorSocket;
  const gateways: Gateway[] = [];
  const names: string[] = [];
  /** One agent on each gateway: agents[0] on A, agents[1] on B. */
  const agents: Connection[] = [];
  const labels = ['agent-on-a', 'agent-on-b'];

  before(async () => {
    // B holds list_sessions for an operator; A's console decides it.
    const policy = join(dir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ require_approval: ['list_sessions'] }));
    db = await startPostgres();
    for (const [g, args] of [
      ['gwA', []],
      ['gwB', ['--policy', policy, '--approval-timeout-s', '60']],
    ] as const)
      gateways.push(
        await startGateway(['--audit-store', db.url, ...args], {
          SHELL: '/bin/sh',
          VERITY_CONFIG_DIR: join(dir, g),
          VERITY_TOKEN: `fleet-console-${g}`,
          VERITY_POLICY: undefined,
        }),
      );
    for (const g of ['gwA', 'gwB']) names.push(readFileSync(join(dir, g, 'gateway-name'), 'utf8').trim());
    for (const [i, gw] of gateways.entries()) {
      const conn = await gw.connect();
      const started = await conn.call('start_session', { session: labels[i] });
      assert.equal(started.isError, false, started.text);
      agents.push(conn);
    }
    opB = await operatorSocket(gateways[1], ['operator.read', 'operator.approvals']);
    chrome = await sharedChromium();
    page = await openControlUi(chrome, gateways[0]);
  });

  after(async () => {
    opB?.ws.close();
    for (const a of agents) await a.disconnect().catch(() => {});
    await chrome?.close();
    for (const gw of gateways) await gw.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** B's session's row in A's fleet list, as the page shows it now (null while there is none). */
  const rowOfB = () =>
    page.evaluate((label) => {
      const li = [...document.querySelectorAll<HTMLElement>('[data-fleet-session]')].find((el) =>
        el.querySelector('.fleet-name')?.textContent?.includes(label),
      );
      return li
        ? {
            gateway: li.dataset.gateway,
            shownGateway: li.querySelector('[data-session-gateway]')?.textContent,
            live: li.dataset.live,
            brake: li.dataset.brakeState,
            state: li.querySelector('[data-session-state]')?.textContent,
          }
        : null;
    }, labels[1]);

  /** Waits for B's row to be `want` (its fields), saying what it was at the bound. */
  const rowBecomes = async (want: Record<string, string>, what: string, timeoutMs = 15_000) => {
    let last: unknown;
    await waitFor(
      async () => {
        last = await rowOfB();
        return last && Object.entries(want).every(([k, v]) => (last as Record<string, unknown>)[k] === v);
      },
      what,
      timeoutMs / 100,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; B's row is ${JSON.stringify(last)}`);
    });
  };

  test("A's console lists B's session with the gateway that holds it, live, and its own with A", async () => {
    await rowBecomes(
      { gateway: names[1], shownGateway: names[1], live: 'true', state: 'active' },
      "A's sidebar to list B's session on B",
    );
    const own = await page.waitForFunction(
      (label) =>
        [...document.querySelectorAll('ul.sessions:not(.fleet-sessions) li[data-session-key]')]
          .find((li) => li.textContent!.includes(label))
          ?.querySelector('[data-session-gateway]')?.textContent,
      { timeout: 15_000 },
      labels[0],
    );
    assert.equal(await own.jsonValue(), names[0], "A's own session is named on A");
    const gatewaysShown = await page.$$eval('[data-fleet-gateway-row]', (els) =>
      els.map((e) => `${(e as HTMLElement).dataset.fleetGatewayRow} ${(e as HTMLElement).dataset.live}`),
    );
    assert.deepEqual(gatewaysShown.sort(), [`${names[0]} true`, `${names[1]} true`].sort());
  });

  test("a call held on B is approved from A's console: B's agent gets its result; the decision names A's operator and gateway A", async () => {
    const held = agents[1].call('list_sessions', {});
    const card = `li.fleet-approval[data-approval-gateway="${names[1]}"]`;
    await page.waitForSelector(`${card} button.approve`, { timeout: 15_000 }).catch((e: Error) => {
      throw new Error(`${e.message}: no card for the call held on B in A's approvals`);
    });
    // Named by its agent (list_sessions names no session: its connection's default one) and its gateway.
    assert.match(
      await page.$eval(card, (e) => e.textContent!),
      new RegExp(`sessions-test-0 1 \\(default session\\) on ${names[1]}`),
    );
    await page.click(`${card} button.approve`);
    const result = await held;
    assert.equal(result.isError, false, `the held call ran once approved from A's console: ${result.text}`);
    const resolved = await waitFor(
      () => opB.events.find((e) => e.event === 'approval.resolved' && e.payload.approved === true),
      "B's approval.resolved",
    );
    assert.match(resolved.payload.by, new RegExp(` on ${names[0]}$`), 'decided by the operator on gateway A');
    // A's console says who decided, and the card leaves its queue.
    await page.waitForFunction(
      (by) => document.querySelector('[data-live]')?.textContent?.includes(`by ${by}`),
      { timeout: 10_000 },
      resolved.payload.by,
    );
    await page.waitForFunction((sel) => !document.querySelector(sel), { timeout: 15_000 }, card);
    // B's trail, read through A: the approval names who decided and from where.
    const entry = await waitFor(async () => {
      const r = await opB.request('audit.query', { gateway: names[1], kind: 'approval', verdict: 'approved' });
      return r.payload.entries[0];
    }, "the approval's entry in the shared trail");
    assert.equal(entry.by, resolved.payload.by);
  });

  test("A's audit log tells two gateways' entries of one id apart, and filters by gateway", async () => {
    // Both gateways number their entries from 1: a few calls each, so some ids are on both.
    for (const [i, a] of agents.entries())
      for (let n = 0; n < 3; n++) {
        const r = await a.call('get_session', { session: labels[i] });
        assert.equal(r.isError, false, r.text);
      }
    await page.click('[data-toggle="log"]');
    const clash = await page
      .waitForFunction(
        (a, b) => {
          const keys = [...document.querySelectorAll<HTMLElement>('[data-audit-key]')].map((e) => e.dataset.auditKey!);
          const id = keys.filter((k) => k.startsWith(`${b}/`)).find((k) => keys.includes(`${a}/${k.split('/')[1]}`));
          return id?.split('/')[1];
        },
        { timeout: 15_000 },
        names[0],
        names[1],
      )
      .then((h) => h.jsonValue() as Promise<string>);
    const line = (g: string) => `[data-audit-key="${g}/${clash}"] .audit-line`;
    await page.click(line(names[1]));
    await page.waitForSelector(`${line(names[1])}[aria-expanded="true"]`, { timeout: 5000 });
    assert.equal(
      await page.$eval(line(names[0]), (e) => e.getAttribute('aria-expanded')),
      'false',
      `A's entry ${clash} stays closed when B's entry ${clash} is opened`,
    );
    assert.equal(await page.$$eval('[data-audit-detail]', (els) => els.length), 1, 'one entry open');
    // The Gateway filter: only B's entries.
    await page.select('[data-audit-filter="gateway"]', names[1]);
    await page.waitForFunction(
      (b) => {
        const keys = [...document.querySelectorAll<HTMLElement>('[data-audit-key]')].map((e) => e.dataset.auditKey!);
        return keys.length > 0 && keys.every((k) => k.startsWith(`${b}/`));
      },
      { timeout: 10_000 },
      names[1],
    );
    await page.select('[data-audit-filter="gateway"]', '');
    await page.click('[data-toggle="log"]');
  });

  test("A's console pauses B's session from its row in the fleet list, and resumes it", async () => {
    const click = async (verb: string) => {
      const handle = await page.evaluateHandle(
        (label, v) =>
          [...document.querySelectorAll('[data-fleet-session]')]
            .find((li) => li.querySelector('.fleet-name')?.textContent?.includes(label))
            ?.querySelector(`[data-fleet-session-brake="${v}"]`),
        labels[1],
        verb,
      );
      const button = handle.asElement() as ElementHandle<Element> | null;
      assert.ok(button, `B's row in the fleet list has a ${verb} button`);
      await button.click();
    };
    await click('pause');
    await rowBecomes({ brake: 'paused', state: 'paused' }, "B's row to show it paused by A's operator");
    const paused = await waitFor(async () => {
      const r = await opB.request('audit.query', { gateway: names[1], kind: 'brake', verdict: 'paused' });
      return r.payload.entries[0];
    }, "B's trail to note the pause");
    assert.match(paused.by, new RegExp(` on ${names[0]}$`), 'paused by the operator on gateway A');
    await click('resume');
    await rowBecomes({ brake: 'running', state: 'active' }, "B's row to show it running again");
  });

  test("A's fleet brake stops the agents of both gateways, and resumes them", async () => {
    await page.click('[data-fleet-brake="stop"]');
    await page.waitForFunction(
      () =>
        /stop every agent of the fleet: sent to 2 gateways by /.test(
          document.querySelector('[data-fleet-status]')?.textContent ?? '',
        ),
      { timeout: 10_000 },
    );
    for (const [i, a] of agents.entries()) {
      let last = '';
      await waitFor(async () => {
        const r = await a.call('get_session', { session: labels[i] });
        last = r.isError ? refusalOf(r).code : 'ran';
        return last === 'session_stopped';
      }, `the agent on ${names[i]} to be refused session_stopped`).catch((e: Error) => {
        throw new Error(`${e.message}; its last call: ${last}`);
      });
    }
    // A's console shows both stopped: its own row's brake and B's row in the fleet list.
    await page.waitForFunction(
      (label) =>
        [...document.querySelectorAll('ul.sessions:not(.fleet-sessions) li[data-session-key]')]
          .find((li) => li.textContent!.includes(label))
          ?.querySelector('[data-brake-state="stopped"]'),
      { timeout: 15_000 },
      labels[0],
    );
    await rowBecomes({ brake: 'stopped', state: 'stopped' }, "B's row in A's fleet list to show it stopped");
    await page.click('[data-fleet-brake="resume"]');
    for (const [i, a] of agents.entries()) {
      let last = '';
      await waitFor(async () => {
        const r = await a.call('get_session', { session: labels[i] });
        last = r.isError ? refusalOf(r).code : 'ran';
        return last === 'ran';
      }, `the agent on ${names[i]} to run again`).catch((e: Error) => {
        throw new Error(`${e.message}; its last call: ${last}`);
      });
    }
    await rowBecomes({ brake: 'running', state: 'active' }, "B's row to show it running again");
  });

  /** B's session's pane on A (another gateway's session), as the page shows it now (null while there is none). */
  const paneOfB = () =>
    page.evaluate((gateway) => {
      const pane = document.querySelector<HTMLElement>(`[data-pane-fleet="true"][data-pane-gateway="${gateway}"]`);
      if (!pane) return null;
      const ids = [...pane.querySelectorAll<HTMLElement>('[data-action-log] [data-audit-id]')].map((li) =>
        Number(li.dataset.auditId),
      );
      return {
        title: pane.querySelector('header strong')?.textContent ?? '',
        state: pane.querySelector('[data-pane-state]')?.textContent ?? '',
        note: pane.querySelector('[data-pane-elsewhere]')?.textContent ?? '',
        tools: [...pane.querySelectorAll<HTMLElement>('[data-action-log] [data-tool]')].map((li) => li.dataset.tool),
        lastId: ids.length ? Math.max(...ids) : 0,
      };
    }, names[1]);

  /** Waits for B's pane on A to pass `ok`, saying what it was at the bound. */
  const paneBecomes = async (
    ok: (p: NonNullable<Awaited<ReturnType<typeof paneOfB>>>) => boolean,
    what: string,
    timeoutMs = 15_000,
  ) => {
    let last: Awaited<ReturnType<typeof paneOfB>> = null;
    await waitFor(
      async () => {
        last = await paneOfB();
        return last !== null && ok(last);
      },
      what,
      timeoutMs / 100,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; B's pane is ${JSON.stringify(last)}`);
    });
    return last!;
  };

  test("A's console opens B's session in a pane: headed by its label, gateway and state, its calls live from the shared trail", async () => {
    const open = await page.evaluateHandle(
      (label) =>
        [...document.querySelectorAll('[data-fleet-session]')]
          .find((li) => li.querySelector('.fleet-name')?.textContent?.includes(label))
          ?.querySelector('[data-fleet-open]'),
      labels[1],
    );
    const button = open.asElement() as ElementHandle<Element> | null;
    assert.ok(button, "B's row in the fleet list opens it in a pane");
    await button.click();
    // Its history first: the calls B's agent made in the tests above, read from the shared trail.
    const shown = await paneBecomes(
      (p) => p.state === 'active' && p.tools.includes('get_session'),
      "B's pane on A to show B's session active and its earlier get_session calls",
    );
    assert.ok(shown.title.includes(labels[1]) && shown.title.includes(`on ${names[1]}`), shown.title);
    assert.match(shown.note, new RegExp(`${names[1]}.*browser and terminal panels.*no screencast across gateways`));
    // A call on B: a line of A's pane within the bound (B's insert, its NOTIFY, A's read, the event to the page).
    const started = Date.now();
    const r = await agents[1].call('get_session', { session: labels[1] });
    assert.equal(r.isError, false, r.text);
    const answered = Date.now();
    await paneBecomes((p) => p.lastId > shown.lastId, "B's new call in A's pane for B's session", 10_000);
    process.stdout.write(
      `# B's call shown in A's pane ${Date.now() - answered} ms after its result (${answered - started} ms the call)\n`,
    );
    const before = (await paneOfB())!.lastId;
    const brake = async (verb: string) => {
      const h = await page.evaluateHandle(
        (label, v) =>
          [...document.querySelectorAll('[data-fleet-session]')]
            .find((li) => li.querySelector('.fleet-name')?.textContent?.includes(label))
            ?.querySelector(`[data-fleet-session-brake="${v}"]`),
        labels[1],
        verb,
      );
      const b = h.asElement() as ElementHandle<Element> | null;
      assert.ok(b, `B's row has a ${verb} button`);
      await b.click();
    };
    // Its state follows B's brake (a paused session's calls wait; a stopped one's are refused, and are lines too).
    await brake('pause');
    await paneBecomes((p) => p.state === 'paused', "B's pane on A to say paused");
    await brake('resume');
    await paneBecomes((p) => p.state === 'active', "B's pane on A to say active after the pause");
    await brake('stop');
    await paneBecomes((p) => p.state === 'stopped', "B's pane on A to say stopped");
    const refused = await agents[1].call('get_session', { session: labels[1] });
    assert.equal(refusalOf(refused).code, 'session_stopped');
    const after = await paneBecomes((p) => p.lastId > before, "B's refused call in A's pane");
    assert.equal(
      await page.$eval(
        `[data-pane-fleet="true"][data-pane-gateway="${names[1]}"] [data-audit-id="${after.lastId}"]`,
        (li) => (li as HTMLElement).dataset.effect,
      ),
      'refused',
    );
    await brake('resume');
    await paneBecomes((p) => p.state === 'active', "B's pane on A to say active again");
  });

  test('B killed: A\'s console shows B\'s session ended, "gateway gone", within the bound', async () => {
    const gone = await page.evaluate(() => document.querySelector('[data-fleet]') !== null);
    assert.ok(gone, 'the fleet section is shown');
    opB.ws.close();
    killPid(gateways[1].pid, 'SIGKILL');
    // The bound: gone_after_ms (10 s) after B's last heartbeat, told on A's next beat (2 s); 30 s allows a loaded machine.
    await rowBecomes(
      { live: 'false', state: 'ended (gateway gone)' },
      "A's console to show B's session ended, gateway gone",
      30_000,
    );
    await page.waitForSelector(`[data-fleet-gateway-row="${names[1]}"][data-live="false"]`, { timeout: 5000 });
    // B's pane on A says so too.
    await paneBecomes((p) => p.state === 'ended (gateway gone)', "B's pane on A to say ended (gateway gone)", 5000);
    // A's own agent goes on.
    const r = await agents[0].call('get_session', { session: labels[0] });
    assert.equal(r.isError, false, r.text);
  });
});
