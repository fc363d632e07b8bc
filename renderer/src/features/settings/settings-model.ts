/**
 * The settings pages' pure rules, kept apart from the components so each is tested directly:
 * what a form sends (the network element, the daemon's complete replacement, the changed
 * retention rows) and the client-side hints (license key, ISO 8601 time, NTP servers). The
 * appliance validates everything again; these only spare a round trip and explain the format.
 */
import {
  SECRET_SENTINEL,
  type Daemon,
  type NetworkInterface,
  type RetentionRow,
  type Sentinel,
  type SetNetworkBody,
  type CatalogVar,
  type ServiceAction,
} from './settings-api.js';

// ---- license ----

/** Six dash-separated groups of six hex digits (the spec's registration key format). */
export const LICENSE_KEY_PATTERN = /^[0-9A-Fa-f]{6}(?:-[0-9A-Fa-f]{6}){5}$/;
export const LICENSE_KEY_HINT = 'Six groups of six hex digits separated by dashes';

/** The key as typed, trimmed and upper-cased; null while it does not have the format. */
export function normaliseLicenseKey(typed: string): string | null {
  const key = typed.trim().toUpperCase();
  return LICENSE_KEY_PATTERN.test(key) ? key : null;
}

// ---- time ----

/**
 * ISO 8601 date and time as the appliance parses it (`platform/time/datetime.ts`): `T` or a blank,
 * seconds and a fraction optional, `Z` or an offset (`±HH:MM`, `±HHMM`, `±HH`); none means UTC.
 */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2})(?::?(\d{2}))?)?$/i;

export function isIso8601(value: string): boolean {
  const m = ISO_8601.exec(value.trim());
  if (!m) return false;
  const n = (group: number) => Number(m[group] ?? 0);
  const [year, month, day] = [n(1), n(2), n(3)];
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= days &&
    n(4) <= 23 &&
    n(5) <= 59 &&
    n(6) <= 59 &&
    n(7) <= 23 &&
    n(8) <= 59
  );
}

/** NTP servers as the API takes them: one space between names, none at the ends. */
export function ntpServers(typed: string): string {
  return typed
    .trim()
    .split(/[\s,]+/)
    .filter(Boolean)
    .join(' ');
}

// ---- network ----

export interface InterfaceForm {
  type: 'static' | 'dhcp' | 'manual' | 'unconfigured';
  address: string;
  netmask: string;
  gateway: string;
  dns: string;
  auto: boolean;
  allowHotplug: boolean;
  useSniffer: boolean;
  useSuricata: boolean;
}

export function interfaceForm(iface: NetworkInterface): InterfaceForm {
  const c = iface.config;
  return {
    type: c.type,
    address: c.address ?? '',
    netmask: c.netmask ?? '',
    gateway: c.gateway ?? '',
    dns: c['dns-nameservers'].join(' '),
    auto: c.auto,
    allowHotplug: c['allow-hotplug'],
    useSniffer: c.use_sniffer,
    useSuricata: c.use_suricata,
  };
}

/**
 * One setNetworkInfo element. Address, netmask and gateway go only with `static`: for the other
 * types the keys are left out (the appliance refuses them there, even as null).
 */
export function interfaceElement(
  name: string,
  form: InterfaceForm,
): SetNetworkBody['interfaces'][number] {
  const dns = form.dns
    .trim()
    .split(/[\s,]+/)
    .filter(Boolean);
  const netmask = form.netmask.trim();
  const gateway = form.gateway.trim();
  return {
    name,
    config: {
      type: form.type,
      ...(form.type === 'static'
        ? {
            address: form.address.trim(),
            ...(netmask ? { netmask } : {}),
            ...(gateway ? { gateway } : {}),
          }
        : {}),
      'dns-nameservers': dns,
      auto: form.auto,
      'allow-hotplug': form.allowHotplug,
      use_sniffer: form.useSniffer,
      use_suricata: form.useSuricata,
    },
  };
}

// ---- retention ----

/** A typed retention: a whole number of days >= 1, else the message the field shows. */
export function retentionError(value: string | number): string | null {
  const text = String(value).trim();
  if (!/^\d+$/.test(text)) return 'A whole number of days';
  const days = Number(text);
  if (days < 1) return 'At least 1 day';
  if (days > 36_500) return 'At most 36,500 days';
  return null;
}

/**
 * The rows whose days were changed, for setRetentionPolicy (all or nothing); `null` when any edit
 * is invalid, so nothing is sent.
 */
export function retentionChanges(
  rows: readonly RetentionRow[],
  edits: Readonly<Record<number, string>>,
): { id: number; retention: number }[] | null {
  const changes: { id: number; retention: number }[] = [];
  for (const row of rows) {
    const edit = edits[row.id];
    if (edit === undefined) continue;
    if (retentionError(edit) !== null) return null;
    const days = Number(edit.trim());
    if (days !== row.retention) changes.push({ id: row.id, retention: days });
  }
  return changes;
}

// ---- daemons ----

export function isSentinel(value: unknown): value is Sentinel {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<string, unknown>).__encrypted__ === true
  );
}

/** A variable as the form edits it: a stored secret starts untouched (kept unless replaced). */
export interface DaemonVarForm {
  var: string;
  /** Typed text; for a stored secret left untouched it is ''. */
  value: string;
  /** The stored value is a secret the appliance masks. */
  storedSecret: boolean;
  /** A stored secret whose value is being replaced. */
  replace: boolean;
}

export function daemonForm(daemon: Daemon): DaemonVarForm[] {
  return daemon.config.map((v) =>
    isSentinel(v.value)
      ? { var: v.var, value: '', storedSecret: true, replace: false }
      : { var: v.var, value: v.value, storedSecret: false, replace: false },
  );
}

/**
 * The complete replacement `config` sends: every row kept in the form (a removed row is removed
 * on the appliance), a stored secret left untouched as the sentinel (which keeps it).
 */
export function daemonConfigBody(
  rows: readonly DaemonVarForm[],
): { var: string; value: string | Sentinel }[] {
  return rows
    .filter((r) => r.var.trim() !== '')
    .map((r) =>
      r.storedSecret && !r.replace
        ? { var: r.var.trim(), value: SECRET_SENTINEL }
        : { var: r.var.trim(), value: r.value },
    );
}

/** Whether a variable is secret: masked by the appliance, or named secret by the daemon's catalogue. */
export function isSecretVar(catalog: readonly CatalogVar[], row: DaemonVarForm): boolean {
  return row.storedSecret || catalog.some((c) => c.var === row.var && c.secret);
}

// ---- host map ----

/** The documented values (docs/features/settings.md, "Hostname and host map"). */
export const HOST_NAME_TYPES = ['hostname', 'fqdn', 'alias'] as const;
export const NODE_TYPES = [
  'host',
  'server',
  'workstation',
  'router',
  'switch',
  'firewall',
  'access_point',
  'printer',
  'other',
] as const;

/** The last page that exists for `total` entries (at least 1). */
export function lastPage(total: number, limit: number): number {
  return Math.max(1, Math.ceil(total / limit));
}

// ---- services ----

/** What a service's status says, across engine states and systemd's ActiveState. */
export function runState(status: string): 'running' | 'stopped' | 'failed' | 'changing' {
  if (status === 'running' || status === 'active') return 'running';
  if (status === 'stopped' || status === 'inactive') return 'stopped';
  if (status === 'failed') return 'failed';
  return 'changing';
}

/**
 * An action that would change nothing, offered disabled: start on a running service, stop on a
 * stopped one. Restart and reload are always offered (a failed service restarts).
 */
export function idleAction(status: string, action: ServiceAction): boolean {
  if (action === 'start') return runState(status) === 'running';
  if (action === 'stop') return runState(status) === 'stopped';
  return false;
}
