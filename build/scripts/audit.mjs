// `npm audit --omit=dev --audit-level=high`, told apart from an unavailable audit endpoint:
// findings at high or critical fail (exit 1); a registry that does not serve the audit API
// (some mirrors answer 405) is reported and does not fail the run.
import { spawnSync } from 'node:child_process';

const run = spawnSync('npm', ['audit', '--omit=dev', '--json'], { encoding: 'utf8' });
let report;
try {
  report = JSON.parse(run.stdout);
} catch {
  console.log(
    `audit: no report (npm exited ${run.status}); output: ${(run.stdout + run.stderr).slice(0, 400)}`,
  );
  process.exit(1);
}
// npm 11 reports a failed bulk request as the bare HTTP error object.
if (report.statusCode)
  report = { error: { code: `E${report.statusCode}`, summary: report.message } };
if (report.error) {
  const code = report.error.code ?? '';
  if (/E40[45]|ENOAUDIT|E5\d\d/.test(code) || /audit endpoint/.test(report.error.summary ?? '')) {
    console.log(
      `audit: the registry's audit endpoint is unavailable (${code}); not checked in this run`,
    );
    process.exit(0);
  }
  console.log(`audit: ${code} ${report.error.summary ?? ''}`);
  process.exit(1);
}
const counts = report.metadata?.vulnerabilities ?? {};
console.log(`audit: ${JSON.stringify(counts)}`);
const serious = (counts.high ?? 0) + (counts.critical ?? 0);
if (serious > 0) {
  for (const [name, v] of Object.entries(report.vulnerabilities ?? {})) {
    if (v.severity === 'high' || v.severity === 'critical')
      console.log(
        `  ${v.severity} ${name}: ${(v.via ?? []).map((x) => (typeof x === 'string' ? x : x.title)).join('; ')}`,
      );
  }
  process.exit(1);
}
