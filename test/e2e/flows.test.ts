/**
 * The flow pages in Chromium against a started appliance (issue 15, Console):
 * - real IPFIX datagrams sent over UDP to the appliance's bound flow collector port (the
 *   collector tests' packet builder) appear in the flow list: active flows by default, an older
 *   one only in a window;
 * - filters through the form and the URL, the appliance's inverted-window message;
 * - a filter saved as an exclusion hides its flows from the list; turned off, they come back;
 * - the conversations list sorted by bytes and filtered by a source port within `src_ports`;
 * - top talkers as bars (a bar opens the flow list filtered to it) and bits per second over time;
 * - the device page's Flows tab (the appliance's own device, 127.0.0.1) with a link to its flows;
 * - a user without `vne` sees no flow navigation and requests no flow endpoint;
 * - every flow page in both themes: screenshot, no CSP violation, no serious axe violation.
 */
import dgram from 'node:dgram';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  dataRecords,
  ipfixPacket,
  IPV4_FIELDS,
  set,
  templateRecord,
} from '../../appliance-core/src/features/flows/testing/flow-packets.js';
import {
  createUser,
  haveChromium,
  launchBrowser,
  openPage,
  recordedViolations,
  screenshot,
  signInThroughUi,
  startConsoleAppliance,
  type ConsoleAppliance,
  type Watched,
  seriousAxe,
} from './harness.js';

const enabled = haveChromium() && process.platform === 'linux';

async function sendUdp(port: number, packet: Uint8Array): Promise<void> {
  const socket = dgram.createSocket('udp4');
  try {
    await new Promise<void>((resolve, reject) =>
      socket.send(packet, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())),
    );
  } finally {
    socket.close();
  }
}

const filtersQuery = (f: Record<string, unknown>) =>
  `filters=${encodeURIComponent(JSON.stringify(f))}`;

describe.runIf(enabled)('flow pages in Chromium', { timeout: 120_000 }, () => {
  let a: ConsoleAppliance;
  let browser: Browser;
  let w: Watched;
  let adminToken: string;

  beforeAll(async () => {
    a = await startConsoleAppliance({ APPLIANCE_NETFLOW_PORT: 'auto' });
    adminToken = await a.login();
    const port = a.appliance.ctx.collectorPorts.report().netflow?.udp;
    expect(port, 'the flow collector bound a UDP port').toBeGreaterThan(0);
    const now = Date.now();
    // [src, dst, sport, dport, proto, packets, bytes, start, end]
    const rows = [
      // The appliance's own device (127.0.0.1) to a web server: the biggest, active.
      ['127.0.0.1', '192.0.2.10', 40000, 443, 6, 700, 900_000, now - 20_000, now - 4_000],
      // A DNS answer to the appliance, active.
      ['192.0.2.20', '127.0.0.1', 5353, 53, 17, 20, 12_000, now - 8_000, now - 3_000],
      // Noise between two outside hosts, active: the exclusion's target.
      ['198.51.100.7', '192.0.2.30', 1234, 80, 6, 50, 50_000, now - 9_000, now - 2_000],
      // An SSH session that ended two hours ago: only in a window.
      ['127.0.0.1', '192.0.2.40', 50022, 22, 6, 300, 250_000, now - 7_400_000, now - 7_200_000],
    ];
    await sendUdp(
      port!,
      ipfixPacket(
        [set(2, templateRecord(256, IPV4_FIELDS)), set(256, dataRecords(IPV4_FIELDS, rows))],
        { exportSecs: Math.floor(now / 1000) },
      ),
    );
    // Bounded wait until the four records are stored.
    let stored = 0;
    for (let i = 0; i < 50 && stored < 4; i++) {
      const c = await a.api('GET', '/api/intake/counters', undefined, adminToken);
      stored = c.body?.flows?.stored ?? 0;
      if (stored < 4) await new Promise((r) => setTimeout(r, 100));
    }
    expect(stored, 'the four flow records are stored').toBe(4);
    browser = await launchBrowser();
    w = await openPage(browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await a?.close();
  });

  const clean = async (page: Page = w.page, watched: Watched = w) => {
    expect(watched.pageErrors, 'page errors').toEqual([]);
    expect(watched.cspViolations, 'CSP violations (console)').toEqual([]);
    expect(await recordedViolations(page), 'CSP violations (events)').toEqual([]);
    expect(watched.foreignRequests, 'requests outside loopback').toEqual([]);
  };

  const table = (name = 'Flows') => w.page.getByRole('table', { name });
  const open = async (path: string, heading: string) => {
    await w.page.goto(`${a.url}${path}`);
    await w.page.getByRole('heading', { name: heading, exact: true }).waitFor();
  };

  it('lists the active flows by bytes; the older one only in a window', async () => {
    await signInThroughUi(w.page, a.url);
    await w.page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Flows', exact: true })
      .click();
    await w.page.getByRole('heading', { name: 'Flows', exact: true }).waitFor();
    await table().getByText('192.0.2.10').waitFor();
    expect(await w.page.getByTestId('echoed-window').textContent()).toMatch(/Active flows/);
    // Bytes descending: 900 kB, 50 kB, 12 kB; the two-hour-old flow is not active.
    const cells = await table().getByRole('row').allTextContents();
    const order = ['192.0.2.10', '192.0.2.30', '192.0.2.20'].map((ip) =>
      cells.findIndex((c) => c.includes(ip)),
    );
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
    await expect(table().getByText('192.0.2.40').count()).resolves.toBe(0);
    await w.page
      .getByTestId('row-count')
      .getByText(/of 3 flows/)
      .waitFor();
    // A window (the console's default: 8 hours) brings the older flow.
    await w.page.getByTestId('flow-mode').getByText('In a window').click();
    await w.page.waitForURL((u) => u.searchParams.get('window') === '1');
    await table().getByText('192.0.2.40').waitFor();
    expect(await w.page.getByTestId('echoed-window').textContent()).toMatch(/→/);
    await w.page
      .getByTestId('row-count')
      .getByText(/of 4 flows/)
      .waitFor();
    await clean();
  });

  it('filters from the form and the URL; an inverted window shows the appliance’s message', async () => {
    await open('/flows?window=1', 'Flows');
    await table().getByText('192.0.2.10').waitFor();
    await w.page.getByTestId('filter-protocol').fill('udp');
    await w.page.getByTestId('apply-filters').click();
    await w.page.waitForURL((u) => u.searchParams.get('filters') === '{"protocol":"udp"}');
    await table().getByText('192.0.2.10').waitFor({ state: 'detached' });
    await table().getByText('192.0.2.20').waitFor();
    await expect(table().getByRole('row').count()).resolves.toBe(2); // header + 1
    // From the URL, reloaded: a port on either end.
    await open(`/flows?window=1&${filtersQuery({ port: 22 })}`, 'Flows');
    await table().getByText('192.0.2.40').waitFor();
    await expect(table().getByRole('row').count()).resolves.toBe(2);
    expect(await w.page.getByTestId('filter-port').inputValue()).toBe('22');
    // An inverted window in the address: the appliance's 400 message, shown as it is.
    const later = new Date().toISOString();
    const earlier = new Date(Date.now() - 3_600_000).toISOString();
    await w.page.goto(
      `${a.url}/flows?startTime=${encodeURIComponent(later)}&endTime=${encodeURIComponent(earlier)}`,
    );
    await w.page.getByTestId('refusal').getByText('startTime must be before endTime.').waitFor();
    await clean();
  });

  it('saves an exclusion: its flows leave the list; turned off, they come back', async () => {
    await open(`/flows?${filtersQuery({ src_ip: '198.51.100.7' })}`, 'Flows');
    await table().getByText('198.51.100.7').waitFor();
    await w.page.getByTestId('save-exclusion').click();
    await w.page.getByTestId('exclusion-label').fill('Outside noise');
    await w.page.getByRole('button', { name: 'Save exclusion' }).click();
    await w.page.getByTestId('saved-filters').getByText('Outside noise').waitFor();
    await w.page.getByTestId('empty-state').waitFor();
    await w.page.getByRole('button', { name: 'Clear' }).click();
    await table().getByText('192.0.2.10').waitFor();
    await expect(table().getByText('198.51.100.7').count()).resolves.toBe(0);
    const stored = await a.api('GET', '/api/netflow/filters', undefined, adminToken);
    expect(stored.body.filters).toEqual([
      expect.objectContaining({
        label: 'Outside noise',
        enabled: true,
        filter: { src_ip: '198.51.100.7' },
      }),
    ]);
    await screenshot(w.page, 'flows-exclusion-dark');
    // A plain click, with the actionability checks a forced one skips (logs.test.ts says why);
    // the switch's name then says the appliance answered.
    const panel = w.page.getByTestId('saved-filters');
    await panel.getByRole('switch', { name: 'Disable exclusion Outside noise' }).click();
    await panel
      .getByRole('switch', { name: 'Enable exclusion Outside noise' })
      .waitFor({ state: 'attached' });
    await table().getByText('198.51.100.7').waitFor();
    await clean();
  });

  it('conversations: sorted by bytes, a source port matched within src_ports', async () => {
    await open('/flows/aggregated', 'Conversations');
    await table('Conversations').getByText('192.0.2.40').waitFor();
    await w.page.getByTestId('agg-sort').getByText('Most bytes').click();
    await w.page.waitForURL((u) => u.searchParams.get('sort') === 'bytes');
    // The previous order stays on screen until the sorted answer arrives: wait for it.
    await table('Conversations')
      .getByRole('row')
      .nth(1)
      .filter({ hasText: '192.0.2.10' })
      .waitFor();
    const rows = await table('Conversations').getByRole('row').allTextContents();
    // 900 kB first, then the 250 kB SSH session.
    expect(rows[1]).toContain('192.0.2.10');
    expect(rows[2]).toContain('192.0.2.40');
    await w.page.getByTestId('more-filters').click();
    await w.page.getByRole('option', { name: 'Source port' }).click();
    await w.page.getByTestId('filter-src_port').fill('5353');
    await w.page.getByTestId('apply-filters').click();
    await table('Conversations').getByText('192.0.2.10').waitFor({ state: 'detached' });
    await table('Conversations').getByText('192.0.2.20').waitFor();
    await expect(table('Conversations').getByRole('row').count()).resolves.toBe(2);
    await clean();
  });

  it('top talkers: bars by bytes, bits per second over time; a bar opens its flows', async () => {
    await open('/flows/top', 'Top talkers');
    const sources = w.page.getByTestId('top-sources');
    const first = sources.getByRole('listitem').first();
    await first.getByText('127.0.0.1', { exact: false }).waitFor();
    const bytes = await sources
      .getByRole('link')
      .evaluateAll((links) => links.map((l) => Number(l.getAttribute('data-bytes'))));
    expect(bytes[0]).toBe(900_000 + 250_000);
    expect([...bytes].sort((x, y) => y - x)).toEqual(bytes);
    await w.page.getByTestId('top-protocols').getByText('tcp').waitFor();
    await w.page.getByTestId('flow-rate').getByTestId('chart').waitFor();
    await w.page.getByTestId('flow-rate').locator('.recharts-area').first().waitFor();
    await screenshot(w.page, 'flows-top-dark');
    await w.page.getByTestId('top-destinations').getByRole('link').first().click();
    await w.page.waitForURL(
      (u) => u.pathname === '/flows' && u.searchParams.get('filters') === '{"dst_ip":"192.0.2.10"}',
    );
    await table().getByText('192.0.2.10').waitFor();
    await expect(table().getByRole('row').count()).resolves.toBe(2);
    await clean();
  });

  it('device page: the Flows tab sums the device’s flows and links to them', async () => {
    await w.page.goto(`${a.url}/devices/1`);
    await w.page.getByTestId('device-label').waitFor();
    await w.page.getByRole('tab', { name: 'Flows' }).click();
    const panel = w.page.getByTestId('device-flows');
    await panel.waitFor();
    // Three flows of 127.0.0.1 in the device window (8 hours): 900 kB + 12 kB + 250 kB.
    expect(await w.page.getByTestId('device-flow-count').textContent()).toBe('3');
    const partners = w.page.getByTestId('device-flow-partners');
    await partners.getByText('192.0.2.10', { exact: false }).waitFor();
    await partners.getByText('192.0.2.40', { exact: false }).waitFor();
    await screenshot(w.page, 'device-flows-dark');
    await expect(seriousAxe(w.page)).resolves.toEqual([]);
    await w.page.getByTestId('device-flow-link').click();
    await w.page.waitForURL(
      (u) => u.pathname === '/flows' && u.searchParams.get('filters') === '{"ip":"127.0.0.1"}',
    );
    await table().getByText('192.0.2.40').waitFor();
    await expect(table().getByRole('row').count()).resolves.toBe(4); // header + 3
    await clean();
  });

  it('a user without vne sees no flow navigation and requests no flow endpoint', async () => {
    const user = await createUser(a, adminToken, 'noflows', ['devices']);
    const other = await openPage(browser);
    const flowRequests: string[] = [];
    other.context.on('request', (req) => {
      const p = new URL(req.url()).pathname;
      if (/^\/api\/(netflow|aggnetflow)\//.test(p)) flowRequests.push(p);
    });
    try {
      await signInThroughUi(other.page, a.url, user.username, user.password);
      await other.page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Devices', exact: true })
        .waitFor();
      for (const name of ['Flows', 'Flow conversations', 'Top talkers'])
        await expect(
          other.page
            .getByRole('navigation', { name: 'Main' })
            .getByRole('link', { name, exact: true })
            .count(),
        ).resolves.toBe(0);
      await other.page.goto(`${a.url}/devices/1`);
      await other.page.getByTestId('device-label').waitFor();
      await other.page.getByRole('tab', { name: 'Flows' }).click();
      await other.page.getByTestId('device-flows').waitFor();
      await expect(other.page.getByTestId('device-flow-link').count()).resolves.toBe(0);
      for (const path of ['/flows', '/flows/aggregated', '/flows/top']) {
        await other.page.goto(`${a.url}${path}`);
        await other.page.getByText('The flow explorer permission is needed').waitFor();
      }
      await other.page.waitForTimeout(500);
      expect(flowRequests).toEqual([]);
      await clean(other.page, other);
    } finally {
      await other.context.close();
    }
  });

  for (const theme of ['dark', 'light'] as const) {
    it(`every flow page in the ${theme} theme: screenshot, no CSP violation, axe`, async () => {
      const t = await openPage(browser, { colorScheme: theme });
      try {
        await t.context.addInitScript((scheme: string) => {
          (globalThis as any).localStorage.setItem('console.color-scheme', scheme);
        }, theme);
        await signInThroughUi(t.page, a.url);
        const pages = [
          { name: 'flows-list', path: '/flows', ready: 'Flows', testId: 'row-count' },
          { name: 'flows-window', path: '/flows?window=1', ready: 'Flows', testId: 'row-count' },
          {
            name: 'flows-aggregated',
            path: '/flows/aggregated',
            ready: 'Conversations',
            testId: 'row-count',
          },
          { name: 'flows-top', path: '/flows/top', ready: 'Top talkers', testId: 'top-sources' },
        ];
        const failing: string[] = [];
        for (const p of pages) {
          const response = await t.page.goto(`${a.url}${p.path}`);
          expect(response?.headers()['content-security-policy'] ?? '').toContain(
            "script-src 'self'",
          );
          await t.page.getByRole('heading', { name: p.ready, exact: true }).waitFor();
          await t.page.getByTestId(p.testId).waitFor();
          await t.page.waitForLoadState('networkidle');
          await t.page.waitForTimeout(300);
          await screenshot(t.page, `${p.name}-${theme}`);
          failing.push(...(await seriousAxe(t.page)).map((v) => `${p.name}: ${v}`));
        }
        expect(failing, 'serious or critical axe violations').toEqual([]);
        await clean(t.page, t);
      } finally {
        await t.context.close();
      }
    });
  }
});
