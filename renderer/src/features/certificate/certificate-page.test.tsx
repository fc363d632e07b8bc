// @vitest-environment happy-dom
import { MantineProvider } from '@mantine/core';
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { CertificateTable } from './certificate-page.js';

afterEach(cleanup);

const installed = {
  subject: 'CN=appliance.example, O=Example',
  issuer: 'CN=Example CA',
  validFrom: '2026-11-01T00:00:00.000Z',
  validTo: '2027-11-01T00:00:00.000Z',
};

describe('certificate page', () => {
  it('shows subject, issuer and validity, and flags an expired certificate', () => {
    const { rerender } = render(
      <MantineProvider>
        <CertificateTable certificate={installed} now={Date.parse('2026-12-01T00:00:00Z')} />
      </MantineProvider>,
    );
    expect(screen.getByText('CN=appliance.example, O=Example')).toBeTruthy();
    expect(screen.getByText('CN=Example CA')).toBeTruthy();
    expect(screen.queryByText('expired')).toBeNull();
    rerender(
      <MantineProvider>
        <CertificateTable certificate={installed} now={Date.parse('2028-01-01T00:00:00Z')} />
      </MantineProvider>,
    );
    expect(screen.getByText('expired')).toBeTruthy();
  });

  it('describes a checked file and never shows its private key', () => {
    render(
      <MantineProvider>
        <CertificateTable
          certificate={{
            ...installed,
            status: 200,
            format: 'pkcs12',
            chain: ['-----BEGIN CERTIFICATE-----'],
            keyMatches: false,
            private_key: '-----BEGIN PRIVATE KEY-----\nCANARY\n-----END PRIVATE KEY-----\n',
            serialNumber: '01',
            fingerprintSha256: 'AB:CD',
            subjectAltNames: ['DNS:appliance.example'],
            keyAlgorithm: 'ec',
            selfSigned: false,
          }}
        />
      </MantineProvider>,
    );
    expect(screen.getByText('PKCS12')).toBeTruthy();
    expect(screen.getByText('1 certificate(s)')).toBeTruthy();
    expect(screen.getByText('in the file, does NOT belong to the certificate')).toBeTruthy();
    expect(screen.getByText('DNS:appliance.example')).toBeTruthy();
    expect(document.body.textContent).not.toContain('CANARY');
  });
});
