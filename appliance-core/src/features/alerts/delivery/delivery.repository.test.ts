/**
 * The queue's hot queries keep their indexes (EXPLAIN QUERY PLAN on the migrated schema): a lost
 * index turns every delivery into a sort of the whole backlog.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../platform/db/database.js';
import { migrate } from '../../../platform/db/migrate.js';
import { DUE_OUTLETS_SQL, NEXT_DUE_OF_OUTLET_SQL } from './delivery.repository.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'delivery-plan-'));
const db = openDatabase(path.join(dir, 'appliance.db'));
migrate(db, Date.now());
afterAll(() => db.close());

const plan = (sql: string, ...params: unknown[]) =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
    .map((r) => r.detail)
    .join(' | ');

describe('delivery queue query plans', () => {
  it("an outlet's next due delivery is read from its index, with no sort", () => {
    const detail = plan(NEXT_DUE_OF_OUTLET_SQL, 1, 2);
    expect(detail).toMatch(
      /USING INDEX alert_deliveries_outlet_due \(outlet_id=\? AND next_attempt_at<\?\)/,
    );
    expect(detail).not.toMatch(/TEMP B-TREE/);
  });

  it('the outlets with something due, the next due time and the rate-limit count use indexes', () => {
    expect(plan(DUE_OUTLETS_SQL, 1)).toMatch(/COVERING INDEX alert_deliveries_due/);
    expect(
      plan(`SELECT min(next_attempt_at) AS at FROM alert_deliveries WHERE status = 'pending'`),
    ).toMatch(/COVERING INDEX alert_deliveries_due/);
    expect(
      plan(
        'SELECT count(*) AS n FROM alert_delivery_attempts WHERE outlet_id = ? AND started_at >= ?',
        1,
        2,
      ),
    ).toMatch(/COVERING INDEX alert_delivery_attempts_outlet/);
    expect(
      plan(
        `SELECT count(*) AS n FROM (SELECT 1 FROM alert_deliveries
         WHERE outlet_id = ? AND status IN ('pending', 'sending') AND kind = 'notification' LIMIT ?)`,
        1,
        100,
      ),
    ).toMatch(/COVERING INDEX alert_deliveries_outlet/);
  });
});
