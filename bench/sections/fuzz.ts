// The trust-boundary fuzz (issue 41 item 5, bench/trust-fuzz.ts) with more sequences than npm test runs:
// random sequences of hostile agent calls against a real `verity start` with a 1 MiB audit cap and a
// 512 MiB memory bound. Its table gives the counts: sequences, calls and answers, logins (passwords typed),
// outcomes, the trail's and the gateway's peaks against their bounds, the other session's entry, echoes.
import { fuzzTrust, outcomesLine, startTrustRig, trustSequences } from '../trust-fuzz.js';
import type { BenchContext, Row, Section } from '../types.js';

const SEQUENCES = Number(process.env.BENCH_FUZZ_SEQUENCES ?? 120);
const CAP_MB = 1;
const RSS_BOUND = 512 * 1024 * 1024;

export const fuzzSection: Section = {
  name: 'fuzz',
  async run(ctx: BenchContext): Promise<Row[]> {
    const rig = await startTrustRig(CAP_MB, RSS_BOUND);
    try {
      const started = Date.now();
      const report = await fuzzTrust(rig.target, trustSequences(SEQUENCES), rig.bounds);
      const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
      ctx.log(`fuzz: ${report.calls} calls in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      ctx.tables.push(
        [
          `### Trust fuzz: ${report.sequences} random sequences of hostile agent calls against \`verity start\``,
          '',
          'Hostile strings (1 MB, at and around the limits, control, bidi and zero-width characters, lone surrogates) as session labels, text, URLs and queries; some sequences type a password into a form sent by GET. Checked after every call.',
          '',
          '| what | count |',
          '| --- | ---: |',
          `| calls | ${report.calls} |`,
          `| calls answered | ${report.answered} |`,
          `| passwords typed into a GET form | ${report.logins} |`,
          `| replies carrying a typed password (raw, URL, form, base64) | ${report.echoes.length} |`,
          `| audit trail at its largest (cap ${mib(rig.bounds.capBytes)}) | ${mib(report.maxTrailBytes)} |`,
          `| gateway memory at its largest (bound ${mib(rig.bounds.rssBytes)}) | ${mib(report.maxRssBytes)} |`,
          `| other session's earlier entry kept | ${report.sentinelKept ? 'yes' : 'no'} |`,
          `| bounds broken or calls unanswered | ${report.failures.length} |`,
          '',
          `Outcomes: ${outcomesLine(report.outcomes)}.`,
          ...report.failures.map((f) => `- ${f}`),
          ...report.echoes.map((e) => `- ${e}`),
        ].join('\n'),
      );
      return [];
    } finally {
      await rig.close();
    }
  },
};
