/**
 * Console benchmark (not a timed test): Playwright timings against a started appliance.
 *
 *   node test/bench/console.mjs        (prerequisite: npm run build)
 *
 * 1. JavaScript transferred for `/` (a signed-in overview, cold cache): the sum of the script
 *    responses' encoded body sizes (Vite's precompressed files). Target <= 300 KB.
 * 2. The devices page with 20,000 devices: from navigation (the click on "Devices", or the start
 *    of a full page load) to the first table row painted, and from a jump to the bottom to the
 *    last row painted (virtualized scrolling), on the page's own clock. Target: first rows <= 1 s.
 * 3. A device page with a 30-day window (720 hourly rollups): from the arrival of the
 *    GET /api/device/1 answer to a drawn latency curve. Target <= 500 ms.
 *
 * Network safety: the appliance's engines are not started (no pollers), the 20,000 devices are
 * on 127.1.0.0/16, and Chromium resolves nothing outside loopback. Prints one line per figure;
 * writes test/bench/results/console.json. Diagnostics: BENCH_PROFILE=1 prints the page's CPU
 * profile (self time) of the devices load; BENCH_TRACE=1 its resource timings and long tasks.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { buildApp } = await import(
  pathToFileURL(path.join(root, 'appliance-core/dist/app.js')).href
);
const { loadConfig } = await import(
  pathToFileURL(path.join(root, 'appliance-core/dist/platform/config/config.js')).href
);

const PASSWORD = 'Bench-Passw0rd';
const DEVICES = Number(process.env.BENCH_DEVICES ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-bench-'));
const appliance = await buildApp(
  loadConfig({
    APPLIANCE_DATA_DIR: dataDir,
    APPLIANCE_ADMIN_PASSWORD: PASSWORD,
    APPLIANCE_LOG_LEVEL: 'silent',
    APPLIANCE_SYSLOG_PORT: '0',
    APPLIANCE_NETFLOW_PORT: '0',
    APPLIANCE_GEOIP_URL: 'off',
  }),
);
await appliance.app.listen({ host: '127.0.0.1', port: 0 });
const base = `https://127.0.0.1:${appliance.app.server.address().port}`;

// 20,000 devices on loopback addresses, each with a latency tracker and a current reading.
const now = Date.now();
const db = appliance.db;
const insertDevice = db.prepare(
  'INSERT INTO devices (label, ip_address, profile, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
);
const insertTracker = db.prepare(
  'INSERT INTO latency_trackers (device_id, label, latency, loss, last_polled_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
);
db.transaction(() => {
  for (let i = 0; i < DEVICES - 1; i++) {
    const ip = `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;
    const id = Number(
      insertDevice.run(`switch-${String(i).padStart(5, '0')}`, ip, 'dash_appliance', now, now)
        .lastInsertRowid,
    );
    const latency = i % 97 === 0 ? -1 : 0.2 + (i % 50) / 10;
    insertTracker.run(id, `switch-${i}`, latency, latency < 0 ? 100 : 0, now, now, now);
  }
  // Device 1's tracker: 720 hourly rollups (30 days).
  const tracker = db.prepare('SELECT id FROM latency_trackers WHERE device_id = 1').get().id;
  const rollup = db.prepare(
    "INSERT OR REPLACE INTO sample_rollups (kind, tracker_id, resolution, ts, n, sum_a, n_a, sum_b) VALUES ('latency', ?, 3600000, ?, 60, ?, 60, ?)",
  );
  const hour = 3_600_000;
  const start = Math.floor(now / hour) * hour - 720 * hour;
  for (let h = 0; h < 720; h++)
    rollup.run(tracker, start + h * hour, 60 * (1 + Math.sin(h / 12) * 0.5), h % 50 === 0 ? 60 : 0);
})();

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ARGS });
const results = {
  devices: DEVICES,
  rounds: ROUNDS,
  js: [],
  firstRows: [],
  firstRowsInApp: [],
  listAnswer: [],
  lastRow: [],
  chart30d: [],
};
try {
  for (let round = 0; round < ROUNDS; round++) {
    const context = await browser.newContext({
      ignoreHTTPSErrors: true,
      viewport: { width: 1280, height: 800 },
    });
    const page = await context.newPage();
    // The page's own clock. The appliance runs in this Node process, so while it serves the
    // status query (~1.5 s of synchronous work for 20,000 devices) Playwright's replies wait too:
    // wall-clock times taken here would include that wait. The page records instead when a row
    // is painted (the first timer after the frame that shows it), when a click happened, and its
    // long tasks.
    await page.addInitScript(() => {
      const w = globalThis;
      w.__longTasks = [];
      w.__rowAt = {};
      new PerformanceObserver((list) => {
        for (const e of list.getEntries())
          w.__longTasks.push([Math.round(e.startTime), Math.round(e.duration)]);
      }).observe({ type: 'longtask', buffered: true });
      w.__watchRow = (index) => {
        delete w.__rowAt[index];
        const seen = () => {
          if (!w.document.querySelector(`[data-row-index="${index}"]`)) return false;
          w.requestAnimationFrame(() =>
            setTimeout(() => (w.__rowAt[index] = Math.round(performance.now()))),
          );
          return true;
        };
        new w.MutationObserver((_m, obs) => seen() && obs.disconnect()).observe(w.document, {
          childList: true,
          subtree: true,
        });
      };
      w.document.addEventListener('click', (e) => (w.__clickAt = Math.round(e.timeStamp)), true);
      w.__watchRow(0);
    });
    await page.goto(`${base}/signin`);
    await page.getByLabel('Username or email').fill('admin');
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => !u.pathname.startsWith('/signin'));
    await page.getByRole('heading', { name: 'Overview' }).waitFor();

    // 1. JavaScript for `/`, cold: a new page in a context whose HTTP cache is cleared.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.clearBrowserCache');
    let jsBytes = 0;
    const types = new Map();
    cdp.on('Network.responseReceived', (e) => types.set(e.requestId, e.type));
    cdp.on('Network.loadingFinished', (e) => {
      if (types.get(e.requestId) === 'Script') jsBytes += e.encodedDataLength;
    });
    await page.goto(`${base}/`);
    await page.getByTestId('tile-Devices').waitFor();
    await page.waitForLoadState('networkidle');
    results.js.push(jsBytes);

    // 2. Devices page, 20,000 rows.
    if (process.env.BENCH_PROFILE) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      await cdp.send('Profiler.start');
    }
    // 2a. In-app navigation from the overview (the usual way in): click Devices.
    await page.goto(`${base}/`);
    await page.getByTestId('tile-Devices').waitFor();
    await page.waitForLoadState('networkidle');
    const navAt = await page.evaluate(() => {
      globalThis.__longTasks = [];
      globalThis.__watchRow(0);
      return Math.round(performance.now());
    });
    await page.getByRole('link', { name: 'Devices', exact: true }).click();
    await page.waitForFunction(() => globalThis.__rowAt[0] !== undefined, undefined, {
      timeout: 30_000,
    });
    const inApp = await page.evaluate((from) => {
      const rel = (t) => Math.round(t - from);
      const clickAt = globalThis.__clickAt;
      return {
        firstRow: globalThis.__rowAt[0] - clickAt,
        clickAt: rel(clickAt),
        rowAt: rel(globalThis.__rowAt[0]),
        longTasks: globalThis.__longTasks.map(([t, d]) => [rel(t), d]),
        res: performance
          .getEntriesByType('resource')
          .filter((e) => e.startTime >= from && /api|assets/.test(e.name))
          .map((e) => [
            e.name.replace(/^https:\/\/[^/]+/, '').slice(0, 60),
            rel(e.startTime),
            rel(e.responseEnd),
          ]),
      };
    }, navAt);
    results.firstRowsInApp.push(inApp.firstRow);
    if (process.env.BENCH_TRACE) console.log('in-app navigation', JSON.stringify(inApp));

    // 2b. A full page load of /devices (times from the navigation's start).
    await page.goto(`${base}/`);
    await page.getByTestId('tile-Devices').waitFor();
    await page.waitForLoadState('networkidle');
    await page.goto(`${base}/devices`);
    await page.waitForFunction(() => globalThis.__rowAt[0] !== undefined, undefined, {
      timeout: 30_000,
    });
    const load = await page.evaluate(() => ({
      firstRow: globalThis.__rowAt[0],
      list: Math.round(
        performance
          .getEntriesByType('resource')
          .find((e) => new URL(e.name).pathname === '/api/devices' && !e.name.includes('ping'))
          ?.responseEnd ?? -1,
      ),
      longTasks: globalThis.__longTasks,
      res: performance
        .getEntriesByType('resource')
        .filter((e) => /api|assets/.test(e.name))
        .map((e) => [
          e.name.replace(/^https:\/\/[^/]+/, '').slice(0, 60),
          Math.round(e.startTime),
          Math.round(e.responseEnd),
        ]),
    }));
    results.firstRows.push(load.firstRow);
    results.listAnswer.push(load.list);
    if (process.env.BENCH_TRACE) console.log('full load', JSON.stringify(load));
    if (process.env.BENCH_PROFILE) {
      const { profile } = await cdp.send('Profiler.stop');
      const self = new Map();
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      const dt = profile.timeDeltas;
      profile.samples.forEach((id, i) => {
        const n = byId.get(id);
        const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
        self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0) / 1000);
      });
      console.log(
        [...self]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 25)
          .map(([k, v]) => `${v.toFixed(0).padStart(6)} ms ${k}`)
          .join('\n'),
      );
    }
    // 2c. Jump to the bottom: the last of the 20,000 rows (virtualized scrolling).
    const scrolledAt = await page.locator('[data-testid="virtual-table"]').evaluate((el, last) => {
      globalThis.__watchRow(last);
      el.scrollTop = el.scrollHeight;
      return performance.now();
    }, DEVICES - 1);
    await page.waitForFunction((last) => globalThis.__rowAt[last] !== undefined, DEVICES - 1, {
      timeout: 30_000,
    });
    results.lastRow.push(
      Math.round(
        (await page.evaluate((last) => globalThis.__rowAt[last], DEVICES - 1)) - scrolledAt,
      ),
    );

    // 3. 30-day chart of device 1: from the data's arrival to a drawn curve.
    await page.goto(`${base}/devices/1`);
    await page.getByTestId('device-label').waitFor();
    const answer = page.waitForResponse((r) => r.url().includes('/api/device/1?hours=720'));
    await page.getByText('30 days', { exact: true }).click();
    await answer;
    const tData = Date.now();
    await page.waitForFunction(
      () => {
        const d =
          globalThis.document
            .querySelector('[data-testid="latency-panel"] .recharts-line-curve')
            ?.getAttribute('d') ?? '';
        return d.split('L').length > 500;
      },
      undefined,
      { timeout: 30_000, polling: 'raf' },
    );
    results.chart30d.push(Date.now() - tData);
    await context.close();
  }
} finally {
  await browser.close();
  await appliance.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

const summary = {
  jsKB: Math.round(median(results.js) / 1024),
  firstRowsMs: median(results.firstRows),
  listAnswerMs: median(results.listAnswer),
  firstRowsInAppMs: median(results.firstRowsInApp),
  lastRowMs: median(results.lastRow),
  chart30dMs: median(results.chart30d),
};
const verdict = (ok) => (ok ? 'PASS' : 'MISS');
console.log(
  `JS transferred for /          ${summary.jsKB} KB (target <= 300 KB) ${verdict(summary.jsKB <= 300)}`,
);
console.log(
  `devices page, ${DEVICES} rows, in-app navigation: first rows ${summary.firstRowsInAppMs} ms (target <= 1000 ms) ${verdict(summary.firstRowsInAppMs <= 1000)}`,
);
console.log(`devices page, ${DEVICES} rows, full page load: first rows ${summary.firstRowsMs} ms`);
console.log(`  of which GET /api/devices    ${summary.listAnswerMs} ms (answer complete)`);
console.log(`  jump to the last row        ${summary.lastRowMs} ms`);
console.log(
  `30-day chart after its data   ${summary.chart30dMs} ms (target <= 500 ms) ${verdict(summary.chart30dMs <= 500)}`,
);
console.log(`rounds: ${JSON.stringify(results)}`);
fs.mkdirSync(path.join(root, 'test/bench/results'), { recursive: true });
fs.writeFileSync(
  path.join(root, 'test/bench/results/console.json'),
  `${JSON.stringify({ summary, results }, null, 2)}\n`,
);
