/**
 * The certificate page in Chromium against a started appliance: a PKCS#12 file made by openssl
 * for the run is checked (its description, never its private key, on screen), installed through
 * the browser's multipart upload (a new TLS connection then sees it, without a restart) and rolled
 * back to the self-signed certificate; no page error, CSP violation or serious axe violation.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  makeMaterial,
  type Material,
} from '../../appliance-core/src/features/certificate/testing/certificate-material.js';
import { havePeer } from '../harness/peers.js';
import {
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

const enabled = haveChromium() && havePeer('openssl', 'openssl') && process.platform === 'linux';

describe.runIf(enabled)('certificate page in Chromium', { timeout: 120_000 }, () => {
  let a: ConsoleAppliance;
  let browser: Browser;
  let w: Watched;
  let m: Material;

  /** The fingerprint a new TLS connection to the appliance is served. */
  const served = () =>
    new Promise<string>((resolve, reject) => {
      const socket = tls.connect(
        { host: '127.0.0.1', port: Number(new URL(a.url).port), rejectUnauthorized: false },
        () => {
          const cert = socket.getPeerX509Certificate();
          socket.end();
          if (cert) resolve(cert.fingerprint256);
          else reject(new Error('no peer certificate'));
        },
      );
      socket.setTimeout(5_000, () => socket.destroy(new Error('TLS handshake timed out')));
      socket.on('error', reject);
    });

  beforeAll(async () => {
    m = await makeMaterial('console.test');
    fs.writeFileSync(path.join(m.dir, 'upload.p12'), m.p12);
    a = await startConsoleAppliance();
    browser = await launchBrowser();
    w = await openPage(browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await a?.close();
    if (m) fs.rmSync(m.dir, { recursive: true, force: true });
  });

  const clean = async () => {
    expect(w.pageErrors, 'page errors').toEqual([]);
    expect(w.cspViolations, 'CSP violations (console)').toEqual([]);
    expect(await recordedViolations(w.page), 'CSP violations (events)').toEqual([]);
    expect(w.foreignRequests, 'requests outside loopback').toEqual([]);
  };

  it('checks, installs (served at once) and rolls back a PKCS#12 certificate', async () => {
    const selfSigned = await served();
    await signInThroughUi(w.page, a.url);
    await w.page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Certificate', exact: true })
      .click();
    await w.page.getByRole('heading', { name: 'Certificate', exact: true }).waitFor();
    await w.page.getByText('No certificate installed').waitFor();
    expect(await seriousAxe(w.page), 'axe').toEqual([]);

    await w.page.locator('input[type=file]').first().setInputFiles(path.join(m.dir, 'upload.p12'));
    await w.page.getByLabel('Password (PKCS#12 or encrypted key)').fill(m.p12Password);
    await w.page.getByRole('button', { name: 'Check file' }).click();
    const table = w.page.getByTestId('certificate').last();
    await table.getByText('PKCS12').waitFor();
    await table.getByText('CN=console.test, O=Test').waitFor();
    await table.getByText('in the file, belongs to the certificate').waitFor();
    const text = (await w.page.locator('body').textContent()) ?? '';
    expect(text.replace(/\s/g, '')).not.toContain(m.keyCanary);
    expect(await served(), 'checking installs nothing').toBe(selfSigned);

    await w.page.getByRole('button', { name: 'Install' }).click();
    await w.page.getByText('Certificate installed: CN=console.test, O=Test').waitFor();
    expect(await served()).toBe(new X509Certificate(m.cert).fingerprint256);
    await w.page.getByText('No certificate installed').waitFor({ state: 'detached' });
    await w.page.getByTestId('certificate').first().getByText('CN=console.test CA').waitFor();
    await screenshot(w.page, 'certificate-installed');

    await w.page.getByRole('button', { name: 'Roll back' }).click();
    await w.page.getByRole('dialog').getByRole('button', { name: 'Roll back' }).click();
    await w.page.getByText('No certificate installed').waitFor();
    expect(await served()).toBe(selfSigned);
    await clean();
  });
});
