/**
 * GET /api/intake/counters and /metrics with the IDS follower on (APPLIANCE_EVE_FILE): the
 * follower's counters appear under `ids` (null while the follower is off: logs.routes.test.ts),
 * with its drops by reason flattened, and in /metrics as the `ids` feed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { SURICATA_ALERT, SURICATA_ALERT_VLAN, SURICATA_FLOW } from './testing/eve-lines.js';

describe('intake counters with the IDS follower on', () => {
  let h: Harness;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eve-counters-'));
    const eve = path.join(dir, 'eve.json');
    fs.writeFileSync(
      eve,
      [SURICATA_ALERT, SURICATA_FLOW, '{"event_type":"alert","broken":', SURICATA_ALERT_VLAN]
        .map((line) => `${line}\n`)
        .join(''),
    );
    h = await startAppliance({ APPLIANCE_EVE_FILE: eve });
  });

  afterAll(async () => {
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers the follower counters under ids, and /metrics carries them', async () => {
    const admin = await h.login();
    let ids: Record<string, unknown> | null = null;
    // The follower reads the file on its own timer: wait for the state, bounded.
    for (let i = 0; i < 100 && (ids?.stored ?? 0) !== 2; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      ids = (await h.request('GET', '/api/intake/counters', { token: admin })).body.ids;
    }
    expect(ids).toMatchObject({ received: 4, stored: 2, ignored: 1, dropped: 1 });
    expect(Object.keys(ids ?? {}).some((key) => key.startsWith('dropped_'))).toBe(true);
    expect(Object.values(ids ?? {}).every((value) => typeof value === 'number')).toBe(true);
    const metrics = await h.request('GET', '/metrics', { token: admin });
    expect(metrics.text).toMatch(
      /appliance_intake_messages_total\{feed="ids",outcome="stored"\} 2/,
    );
  });
});
