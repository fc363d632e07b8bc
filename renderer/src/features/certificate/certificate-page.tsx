/**
 * The HTTPS certificate (permission `sa`; spec part 3, Appliance settings): what is installed (or
 * that the appliance serves its own self-signed certificate), checking a file (PEM, DER or
 * PKCS#12) without storing it, installing it (served at once, no restart) and rolling back to
 * the previous certificate. The private key extractCertificate answers is never shown.
 */
import {
  Alert,
  Badge,
  Button,
  FileInput,
  Group,
  Modal,
  Paper,
  PasswordInput,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { useCaller } from '../../lib/caller.js';
import { formatTime } from '../../lib/format.js';
import {
  certificateKeys,
  certificateQuery,
  extractCertificate,
  rollbackCertificate,
  saveCertificate,
  type CertificateDetails,
  type Extracted,
  type InstalledCertificate,
} from './certificate-api.js';

const MAX_FILE_BYTES = 512 * 1024;

/** Subject, issuer and validity (and more when the answer has them); exported for its test. */
export function CertificateTable({
  certificate,
  now = Date.now(),
}: {
  certificate: InstalledCertificate & Partial<CertificateDetails> & Partial<Extracted>;
  now?: number;
}) {
  const expired = Date.parse(certificate.validTo) <= now;
  const rows: [string, React.ReactNode][] = [
    ['Subject', certificate.subject],
    ['Issuer', certificate.issuer],
    ['Valid from', formatTime(certificate.validFrom)],
    [
      'Valid to',
      <Group gap={6} key="to">
        {formatTime(certificate.validTo)}
        {expired ? (
          <Badge color="red" size="sm">
            expired
          </Badge>
        ) : null}
      </Group>,
    ],
  ];
  if (certificate.subjectAltNames)
    rows.push(['Names', certificate.subjectAltNames.join(', ') || '–']);
  if (certificate.fingerprintSha256) rows.push(['SHA-256', certificate.fingerprintSha256]);
  if (certificate.format) rows.push(['Format', certificate.format.toUpperCase()]);
  if (certificate.chain) rows.push(['Chain', `${certificate.chain.length} certificate(s)`]);
  if (certificate.keyMatches !== undefined)
    rows.push([
      'Private key',
      certificate.keyMatches === null
        ? 'not in the file'
        : certificate.keyMatches
          ? 'in the file, belongs to the certificate'
          : 'in the file, does NOT belong to the certificate',
    ]);
  return (
    <Table data-testid="certificate" withRowBorders={false}>
      <Table.Tbody>
        {rows.map(([label, value]) => (
          <Table.Tr key={label}>
            <Table.Th w={140}>{label}</Table.Th>
            <Table.Td className="console-mono" style={{ wordBreak: 'break-all' }}>
              {value}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function Installer() {
  const queryClient = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const [key, setKey] = useState<File | null>(null);
  const [password, setPassword] = useState('');
  const [checked, setChecked] = useState<Extracted | null>(null);
  const tooBig = [file, key].some((f) => f !== null && f.size > MAX_FILE_BYTES);
  const parts = () => ({ file: file!, key, password });
  const check = useMutation({
    mutationFn: () => extractCertificate(parts()),
    onSuccess: (answer) => setChecked(answer),
    onError: (err) => {
      setChecked(null);
      notifications.show({ color: 'red', message: errorText(err) });
    },
  });
  const install = useMutation({
    mutationFn: () => saveCertificate(parts()),
    onSuccess: (answer) => {
      notifications.show({ color: 'teal', message: `${answer.message}: ${answer.subject}` });
      setChecked(null);
      setFile(null);
      setKey(null);
      setPassword('');
      void queryClient.invalidateQueries({ queryKey: certificateKeys.all });
    },
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  return (
    <Paper withBorder p="sm">
      <Title order={2} mb={6}>
        Install a certificate
      </Title>
      <Stack gap="xs" maw={560}>
        <FileInput
          label="Certificate file"
          description="PEM (certificate, chain and key), DER or PKCS#12; at most 512 KB"
          value={file}
          onChange={(f) => {
            setFile(f);
            setChecked(null);
          }}
          clearable
        />
        <FileInput
          label="Private key file (when the certificate file holds none)"
          value={key}
          onChange={setKey}
          clearable
        />
        <PasswordInput
          label="Password (PKCS#12 or encrypted key)"
          value={password}
          maxLength={1024}
          onChange={(e) => setPassword(e.currentTarget.value)}
          autoComplete="off"
        />
        {tooBig ? <Text c="red">A file is larger than 512 KB.</Text> : null}
        <Group gap="xs">
          <Button
            variant="default"
            disabled={!file || tooBig}
            loading={check.isPending}
            onClick={() => check.mutate()}
          >
            Check file
          </Button>
          <Button
            disabled={!file || tooBig}
            loading={install.isPending}
            onClick={() => install.mutate()}
          >
            Install
          </Button>
        </Group>
        {checked ? <CertificateTable certificate={checked} /> : null}
        <Text size="sm" c="dimmed">
          Installing serves the certificate to new connections at once; the previous one is kept for
          roll-back. The private key is stored encrypted and never shown.
        </Text>
      </Stack>
    </Paper>
  );
}

export function Page() {
  const caller = useCaller();
  const allowed = caller.can('sa');
  const queryClient = useQueryClient();
  const current = useQuery({ ...certificateQuery, enabled: allowed });
  const [confirm, setConfirm] = useState(false);
  const rollBack = useMutation({
    mutationFn: rollbackCertificate,
    onSuccess: (answer) => {
      notifications.show({ color: 'teal', message: `${answer.message}: ${answer.subject}` });
      setConfirm(false);
      void queryClient.invalidateQueries({ queryKey: certificateKeys.all });
    },
    onError: (err) => {
      setConfirm(false);
      notifications.show({ color: 'red', message: errorText(err) });
    },
  });
  if (caller.loading) return <RowsSkeleton />;
  if (!allowed)
    return (
      <>
        <PageHeader title="Certificate" />
        <EmptyState title="The sa permission is needed" />
      </>
    );
  return (
    <Stack gap="sm">
      <PageHeader title="Certificate" subtitle="The appliance's HTTPS certificate">
        <Button variant="default" onClick={() => setConfirm(true)}>
          Roll back
        </Button>
      </PageHeader>
      <Paper withBorder p="sm">
        <Title order={2} mb={6}>
          Installed certificate
        </Title>
        {current.isError ? (
          <ErrorNotice error={current.error} onRetry={() => void current.refetch()} />
        ) : current.isPending ? (
          <RowsSkeleton rows={4} />
        ) : current.data === null ? (
          <Alert color="yellow" title="No certificate installed">
            The appliance serves its own self-signed certificate: browsers warn until one is
            installed.
          </Alert>
        ) : (
          <CertificateTable certificate={current.data} />
        )}
      </Paper>
      <Installer />
      <Modal opened={confirm} onClose={() => setConfirm(false)} title="Roll back the certificate">
        <Stack gap="sm">
          <Text>
            Serve the previous certificate again (rolling back twice returns to this one). New
            connections get it at once.
          </Text>
          <Group justify="flex-end" gap="xs">
            <Button variant="default" onClick={() => setConfirm(false)}>
              Cancel
            </Button>
            <Button loading={rollBack.isPending} onClick={() => rollBack.mutate()}>
              Roll back
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}
