/**
 * Add or edit a device (POST /api/device/set). SNMP secrets are never shown: a stored secret reads
 * "set" and an empty field keeps it; typing replaces it. "Test SNMP" probes without saving.
 */
import {
  Alert,
  Button,
  Group,
  Modal,
  NumberInput,
  PasswordInput,
  Select,
  SimpleGrid,
  Switch,
  TagsInput,
  TextInput,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';

import { errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { api } from '../../lib/api-client.js';
import { ApiError } from '../../lib/api-error.js';
import { keys } from '../../lib/query-keys.js';
import {
  profilesQuery,
  saveDevice,
  tagsQuery,
  testSnmp,
  type DeviceSetBody,
} from '../../lib/devices-api.js';
import { deviceQuery } from '../../lib/device-api.js';

interface FormState {
  label: string;
  ip_address: string;
  profile: string;
  enable_snmp: boolean;
  snmp_version: '1' | '2' | '3';
  snmp_port: number;
  community: string;
  communitySet: boolean;
  v3security: 'noAuthNoPriv' | 'authNoPriv' | 'authPriv';
  authuser: string;
  authpass: string;
  authpassSet: boolean;
  authprot: string;
  privpass: string;
  privpassSet: boolean;
  privprot: string;
  tags: string[];
  /** New devices only: start a latency tracker pinging every this many seconds (0 = none). */
  pingEvery: number;
}

const EMPTY: FormState = {
  label: '',
  ip_address: '',
  profile: '',
  enable_snmp: false,
  snmp_version: '2',
  snmp_port: 161,
  community: '',
  communitySet: false,
  v3security: 'authPriv',
  authuser: '',
  authpass: '',
  authpassSet: false,
  authprot: 'SHA',
  privpass: '',
  privpassSet: false,
  privprot: 'AES',
  tags: [],
  pingEvery: 60,
};

const slugOf = (name: string) =>
  name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

function snmpconfigOf(f: FormState): NonNullable<DeviceSetBody['snmpconfig']> {
  // An empty secret keeps the stored one (spec part 1, General conventions 7).
  if (f.snmp_version !== '3')
    return {
      snmp_version: Number(f.snmp_version) as 1 | 2,
      snmp_port: f.snmp_port,
      snmp_community: f.community === '' ? null : f.community,
    };
  return {
    snmp_version: 3,
    snmp_port: f.snmp_port,
    snmp_v3_security: f.v3security,
    authuser: f.authuser,
    authprot: f.v3security === 'noAuthNoPriv' ? null : f.authprot,
    authpass: f.authpass === '' ? null : f.authpass,
    privprot: f.v3security === 'authPriv' ? f.privprot : null,
    privpass: f.privpass === '' ? null : f.privpass,
  };
}

export function DeviceForm({
  deviceId,
  onClose,
}: {
  deviceId: number | null;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const existing = useQuery({
    ...deviceQuery(deviceId ?? 0, { kind: 'relative', hours: 1 }),
    enabled: deviceId !== null,
    refetchInterval: false,
  });
  const profiles = useQuery(profilesQuery);
  const tags = useQuery(tagsQuery);
  const [form, setForm] = useState<FormState>(EMPTY);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string[]>>({});
  const [probe, setProbe] = useState<{ ok: boolean; message: string } | null>(null);
  const set = <K extends keyof FormState>(key: K, value: FormState[K]) =>
    setForm((f) => ({ ...f, [key]: value }));

  useEffect(() => {
    const d = existing.data;
    if (!d) return;
    const s = d.snmpconfig;
    setForm({
      ...EMPTY,
      label: d.label,
      ip_address: d.ip_address,
      profile: d.profile,
      enable_snmp: d.enable_snmp,
      snmp_version: String(s.snmp_version === 1 ? 1 : s.snmp_version === 3 ? 3 : 2) as
        '1' | '2' | '3',
      snmp_port: s.snmp_port,
      communitySet: s.snmp_community !== null,
      v3security: (s.snmp_v3_security as FormState['v3security'] | null) ?? 'authPriv',
      authuser: s.authuser ?? '',
      authpassSet: s.authpass !== null,
      authprot: s.authprot ?? 'SHA',
      privpassSet: s.privpass !== null,
      privprot: s.privprot ?? 'AES',
      tags: d.tags.map((t) => t.name),
    });
  }, [existing.data]);

  useEffect(() => {
    if (deviceId === null && !form.profile && profiles.data?.length)
      set('profile', profiles.data[0]!.profile);
  }, [deviceId, form.profile, profiles.data]);

  const save = useMutation({
    mutationFn: async () => {
      const answer = await saveDevice({
        ...(deviceId !== null ? { id: deviceId } : {}),
        label: form.label,
        ip_address: form.ip_address,
        // One of the appliance's profiles: the select offers only what /api/device/profiles lists.
        profile: form.profile as Parameters<typeof saveDevice>[0]['profile'],
        enable_snmp: form.enable_snmp,
        snmpconfig: form.enable_snmp ? snmpconfigOf(form) : null,
        tags: form.tags.map((name) => ({ slug: slugOf(name), name, type: 'device' })),
      });
      // A device is added to be watched: its latency tracker starts with it.
      if (deviceId === null && form.pingEvery > 0)
        await api.post('/api/latency/set', {
          deviceId: answer.device.id,
          label: form.label,
          interval: form.pingEvery,
        });
      return answer;
    },
    onSuccess: () => {
      notifications.show({
        color: 'teal',
        message: deviceId === null ? `Added ${form.label}` : `Saved ${form.label}`,
      });
      void queryClient.invalidateQueries({ queryKey: keys.devices.all });
      onClose();
    },
    onError: (err) => {
      if (err instanceof ApiError && err.fields) setFieldErrors(err.fields);
    },
  });
  const test = useMutation({
    mutationFn: () =>
      testSnmp({
        ip: form.ip_address,
        snmpconfig: snmpconfigOf(form),
        ...(deviceId !== null ? { device_id: deviceId } : {}),
      }),
    onSuccess: (a) => setProbe({ ok: a.status === 200, message: a.message }),
    onError: (err) => setProbe({ ok: false, message: errorText(err) }),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setFieldErrors({});
    save.mutate();
  };
  const fieldError = (name: string) => fieldErrors[name]?.[0];
  const secretPlaceholder = (isSet: boolean) => (isSet ? 'set (leave empty to keep)' : 'not set');

  return (
    <Modal
      opened
      onClose={onClose}
      title={deviceId === null ? 'Add device' : `Edit ${existing.data?.label ?? 'device'}`}
      size="lg"
    >
      {deviceId !== null && existing.isPending ? (
        <RowsSkeleton rows={6} height={30} />
      ) : (
        <form onSubmit={submit} aria-label="Device">
          <SimpleGrid cols={2} spacing="sm" verticalSpacing="xs">
            <TextInput
              label="Name"
              required
              maxLength={255}
              value={form.label}
              onChange={(e) => set('label', e.currentTarget.value)}
              error={fieldError('label')}
              data-autofocus
            />
            <TextInput
              label="IP address"
              required
              className="console-mono"
              value={form.ip_address}
              onChange={(e) => set('ip_address', e.currentTarget.value.trim())}
              error={fieldError('ip_address')}
            />
            <Select
              label="Profile"
              required
              searchable
              value={form.profile || null}
              onChange={(v) => set('profile', v ?? '')}
              data={(profiles.data ?? []).map((p) => p.profile)}
              error={fieldError('profile')}
            />
            <TagsInput
              label="Tags"
              value={form.tags}
              onChange={(v) => set('tags', v)}
              data={(tags.data ?? []).map((t) => t.name)}
              placeholder="Type and press Enter"
            />
          </SimpleGrid>
          {deviceId === null ? (
            <NumberInput
              mt="sm"
              w={260}
              label="Ping every (seconds, 0 = no latency tracker)"
              min={0}
              max={86400}
              value={form.pingEvery}
              onChange={(v) => set('pingEvery', Number(v) || 0)}
              data-testid="ping-every"
            />
          ) : null}
          <Switch
            mt="md"
            label="Poll over SNMP"
            checked={form.enable_snmp}
            onChange={(e) => set('enable_snmp', e.currentTarget.checked)}
          />
          {form.enable_snmp ? (
            <SimpleGrid cols={3} spacing="sm" verticalSpacing="xs" mt="xs">
              <Select
                label="Version"
                value={form.snmp_version}
                onChange={(v) => set('snmp_version', (v ?? '2') as FormState['snmp_version'])}
                data={[
                  { value: '1', label: 'v1' },
                  { value: '2', label: 'v2c' },
                  { value: '3', label: 'v3' },
                ]}
                allowDeselect={false}
              />
              <NumberInput
                label="Port"
                min={1}
                max={65535}
                value={form.snmp_port}
                onChange={(v) => set('snmp_port', Number(v) || 161)}
              />
              {form.snmp_version !== '3' ? (
                <PasswordInput
                  label="Community"
                  placeholder={secretPlaceholder(form.communitySet)}
                  value={form.community}
                  onChange={(e) => set('community', e.currentTarget.value)}
                  autoComplete="off"
                />
              ) : (
                <Select
                  label="Security level"
                  value={form.v3security}
                  onChange={(v) => set('v3security', (v ?? 'authPriv') as FormState['v3security'])}
                  data={['noAuthNoPriv', 'authNoPriv', 'authPriv']}
                  allowDeselect={false}
                />
              )}
              {form.snmp_version === '3' ? (
                <>
                  <TextInput
                    label="User"
                    value={form.authuser}
                    onChange={(e) => set('authuser', e.currentTarget.value)}
                  />
                  {form.v3security !== 'noAuthNoPriv' ? (
                    <>
                      <Select
                        label="Auth protocol"
                        value={form.authprot}
                        onChange={(v) => set('authprot', v ?? 'SHA')}
                        data={['MD5', 'SHA', 'SHA224', 'SHA256', 'SHA384', 'SHA512']}
                        allowDeselect={false}
                      />
                      <PasswordInput
                        label="Auth password"
                        placeholder={secretPlaceholder(form.authpassSet)}
                        value={form.authpass}
                        onChange={(e) => set('authpass', e.currentTarget.value)}
                        autoComplete="off"
                      />
                    </>
                  ) : null}
                  {form.v3security === 'authPriv' ? (
                    <>
                      <Select
                        label="Privacy protocol"
                        value={form.privprot}
                        onChange={(v) => set('privprot', v ?? 'AES')}
                        data={['DES', 'AES', 'AES256B', 'AES256R']}
                        allowDeselect={false}
                      />
                      <PasswordInput
                        label="Privacy password"
                        placeholder={secretPlaceholder(form.privpassSet)}
                        value={form.privpass}
                        onChange={(e) => set('privpass', e.currentTarget.value)}
                        autoComplete="off"
                      />
                    </>
                  ) : null}
                </>
              ) : null}
            </SimpleGrid>
          ) : null}
          {probe ? (
            <Alert
              mt="sm"
              color={probe.ok ? 'teal' : 'orange'}
              variant="light"
              data-testid="snmp-probe"
            >
              {probe.message}
            </Alert>
          ) : null}
          {save.isError ? (
            <Alert mt="sm" color="red" variant="light" role="alert">
              {errorText(save.error)}
            </Alert>
          ) : null}
          <Group justify="space-between" mt="md">
            <Button
              variant="default"
              disabled={!form.enable_snmp || form.ip_address === ''}
              loading={test.isPending}
              onClick={() => test.mutate()}
            >
              Test SNMP
            </Button>
            <Group gap="xs">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={save.isPending} data-testid="save-device">
                {deviceId === null ? 'Add device' : 'Save'}
              </Button>
            </Group>
          </Group>
        </form>
      )}
    </Modal>
  );
}
