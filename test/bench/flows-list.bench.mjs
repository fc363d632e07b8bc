/**
 * The active flow list in process (issue 15), `BENCH=flows-list npm run bench` (after `npm run build`):
 * a fresh migrated database holds BENCH_FLOWS_LIST_OLD flows of the last hour with large byte counts
 * (default 3,000,000) and BENCH_FLOWS_LIST_ACTIVE small ones in the last minute (default 1,200,000:
 * a minute at 20,000 records/s), all in the live partition; then the active list's first page
 * (`listFlows`, the route's function, 1,000 rows) is timed BENCH_FLOWS_LIST_RUNS times (default 15)
 * on the slot index and again after dropping it (the top-N sort the list used before). Wall time
 * and CPU time per page (CPU is the figure load disturbs least). Results:
 * test/bench/results/flows-list-latest.json. No network traffic.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../appliance-core/dist/platform/db/database.js';
import { migrate } from '../../appliance-core/dist/platform/db/migrate.js';
import { definePartitionedTable } from '../../appliance-core/dist/platform/db/partitions.js';
import { listFlows } from '../../appliance-core/dist/features/flows/flows.repository.js';
import { FLOW_COLUMNS } from '../../appliance-core/dist/features/flows/flows.writes.js';
import { intEnv, log, machineInfo, RESULTS_DIR, round } from './lib.mjs';

const OLD = intEnv('BENCH_FLOWS_LIST_OLD', 3_000_000, 0, 50_000_000);
const ACTIVE = intEnv('BENCH_FLOWS_LIST_ACTIVE', 1_200_000, 1_000, 10_000_000);
const RUNS = intEnv('BENCH_FLOWS_LIST_RUNS', 15, 1, 1000);

const percentile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))], 1);
};

export async function runFlowsListBench() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-flows-list-'));
  const db = openDatabase(path.join(dir, 'db.sqlite'));
  try {
    const now = Date.now();
    migrate(db, now);
    const table = definePartitionedTable(db, {
      name: 'flows',
      timeColumn: 'end_time',
      maintenance: { listed: false, rotationCron: '0 * * * *', retentionDays: 7 },
    });
    const insert = db.prepare(
      `INSERT INTO flows_latest (${FLOW_COLUMNS}) VALUES (?, ?, '10.0.0.1', ?, '10.0.0.2', 443, 6, ?, 1, '127.0.0.1', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?)`,
    );
    const fill = (n, from, span, large) => {
      for (let done = 0; done < n; done += 50_000)
        db.transaction(() => {
          for (let i = done; i < Math.min(n, done + 50_000); i++) {
            const end = from + Math.floor((i / n) * span);
            const bytes = large ? 1_000_000 + ((i * 7919) % 9_000_000) : (i * 7919) % 100_000;
            insert.run(end - 500, end, i % 65536, bytes, now);
          }
        })();
    };
    const started = Date.now();
    fill(OLD, now - 3_000_000, 2_900_000, true);
    fill(ACTIVE, now - 60_000, 60_000, false);
    log(
      `flows-list bench: ${OLD.toLocaleString('en')} old + ${ACTIVE.toLocaleString('en')} active flows in ${round((Date.now() - started) / 1000, 1)} s`,
    );
    const measure = () => {
      const wall = [];
      const cpu = [];
      for (let k = 0; k < RUNS; k++) {
        const c = process.cpuUsage();
        const s = process.hrtime.bigint();
        const page = listFlows(db, table, {
          endFrom: now - 60_000,
          endTo: now,
          startFrom: null,
          where: { sql: '1', params: [] },
          offset: 0,
          limit: 1000,
        });
        wall.push(Number(process.hrtime.bigint() - s) / 1e6);
        const used = process.cpuUsage(c);
        cpu.push((used.user + used.system) / 1000);
        if (page.rows.length !== 1000)
          throw new Error(`expected 1,000 rows, got ${page.rows.length}`);
      }
      return {
        wallP50Ms: percentile(wall, 0.5),
        wallP99Ms: percentile(wall, 0.99),
        cpuP50Ms: percentile(cpu, 0.5),
        cpuP99Ms: percentile(cpu, 0.99),
      };
    };
    const slots = measure();
    log(`slot index: ${JSON.stringify(slots)}`);
    const index = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%by_slot'")
      .pluck()
      .get();
    db.exec(`DROP INDEX "${index}"`);
    const sort = measure();
    log(`top-N sort (without the slot index): ${JSON.stringify(sort)}`);
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.writeFileSync(
      path.join(RESULTS_DIR, 'flows-list-latest.json'),
      JSON.stringify(
        {
          machine: machineInfo(),
          old: OLD,
          active: ACTIVE,
          runs: RUNS,
          slots,
          sort,
          loadAverage: os.loadavg(),
        },
        null,
        2,
      ),
    );
    return 0;
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
