// The trust-boundary fuzzer's npm-test tier (bench/trust-fuzz.ts): random sequences of agent calls with
// hostile strings against a real `verity start` with a 1 MiB audit cap, some of them typing a password
// into a form sent by GET. Nothing may break a bound: the trail within its cap after every call, the
// gateway's memory within 512 MiB, every call answered, the other session's earlier entry kept, and no reply
// carrying a typed password in any encoding. Fixed seed; `npm run bench` runs more sequences.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fuzzTrust, outcomesLine, startTrustRig, trustSequences, type TrustRig } from '../../bench/trust-fuzz.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 16);
let rig: TrustRig;
before(async () => {
  rig = await startTrustRig(1, 512 * 1024 * 1024);
});
after(async () => {
  await rig?.close();
});

test(`${RUNS} random sequences of hostile agent calls: every bound holds, nothing lost, no secret echoed`, async () => {
  const sequences = trustSequences(RUNS);
  assert.ok(
    sequences.some((s) => s.some((step) => step.tool === 'login')),
    'some sequence logs in (else the secret check proves nothing)',
  );
  const report = await fuzzTrust(rig.target, sequences, rig.bounds);
  process.stdout.write(
    `# trust fuzz: ${report.sequences} sequences, ${report.calls} calls, ${report.answered} answered, ${report.logins} logins; trail at most ${report.maxTrailBytes} B, gateway RSS at most ${(report.maxRssBytes / 1048576).toFixed(0)} MiB\n# outcomes: ${outcomesLine(report.outcomes)}\n`,
  );
  assert.deepEqual(report.failures, [], 'every bound held and every call was answered');
  assert.deepEqual(report.echoes, [], 'no reply carried a typed password');
  assert.equal(report.sentinelKept, true);
  assert.equal(report.answered, report.calls);
  assert.ok(report.logins > 0, 'a password was typed');
  assert.ok((report.outcomes.get('refused:invalid_arguments') ?? 0) > 0, 'hostile names were refused');
  assert.ok(report.maxTrailBytes > 0, 'the trail was written');
});
