/**
 * Daemon configuration (spec part 3, "Data maintenance": GET /api/daemon/{identifier}, POST
 * /api/daemon/{id}/config, POST /api/daemon/{id}/start) over the engine registry: the daemons
 * are the registered engines that are not shared (daemons.catalog.ts), each with a stored row
 * (made on first start), its `start_auto` flag and its variables.
 *
 * Invariants:
 * - A secret variable is stored sealed by the secret box and read back only as the sentinel;
 *   its plaintext never leaves this module (not in answers, errors, the audit log or logs).
 * - `config` is a complete replacement validated whole before anything is stored: an omitted
 *   variable is removed; a secret sent as the sentinel or empty keeps its stored value (and is
 *   dropped if none is stored); one bad element rejects the request and changes nothing.
 * - A saved configuration is applied by restarting that daemon's engine through the registry
 *   (the shared scheduler and storage writer are never restarted); a daemon that is not running
 *   is not started by a configuration change.
 */
import type { DB } from '../../platform/db/database.js';
import type { EngineStatus } from '../../platform/engines/engine-registry.js';
import {
  ENCRYPTED_SENTINEL,
  isSentinel,
  type EncryptedSentinel,
} from '../../platform/http/encrypted-field.js';
import type { SecretBox } from '../../platform/security/secret-box.js';
import type { Clock } from '../../platform/time/time.js';
import { CONTROL_CHARACTERS, MAX_VALUE_LENGTH, varsOf } from './daemons.catalog.js';
import {
  daemonVars,
  ensureDaemons,
  listDaemons,
  replaceDaemonVars,
  setStartAuto,
  type DaemonRow,
  type DaemonVarRow,
} from './daemons.repository.js';

/** What the daemon endpoints need of the engine registry. */
export interface EngineControl {
  list(): EngineStatus[];
  start(name: string): Promise<void>;
  restart(name: string): Promise<EngineStatus>;
  status(name: string): EngineStatus;
}

export interface DaemonView {
  id: number;
  name: string;
  start_auto: boolean;
  config: { var: string; value: string | EncryptedSentinel }[];
}

export type ConfigResult =
  | { ok: true; reloaded: boolean; running: boolean; error?: string }
  | { ok: false; message: string };

export class DaemonsService {
  constructor(
    private readonly db: DB,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    private readonly engines: EngineControl,
  ) {
    ensureDaemons(
      db,
      engines
        .list()
        .filter((e) => !e.shared)
        .map((e) => e.name),
      clock.now(),
    );
  }

  /** The daemons whose engine is registered, by id (listDaemons' order). */
  rows(): DaemonRow[] {
    const registered = new Set(
      this.engines
        .list()
        .filter((e) => !e.shared)
        .map((e) => e.name),
    );
    return listDaemons(this.db).filter((row) => registered.has(row.name));
  }

  /** A daemon by numeric id or by name; only daemons whose engine is registered. */
  find(identifier: string): DaemonRow | undefined {
    const rows = this.rows();
    if (/^[1-9][0-9]{0,15}$/.test(identifier))
      return rows.find((row) => row.id === Number(identifier));
    return rows.find((row) => row.name === identifier);
  }

  view(row: DaemonRow): DaemonView {
    return {
      id: row.id,
      name: row.name,
      start_auto: row.start_auto === 1,
      config: daemonVars(this.db, row.id).map((v) => ({
        var: v.var,
        value: v.sealed ? ENCRYPTED_SENTINEL : v.value,
      })),
    };
  }

  /** Every daemon's view with the variables it accepts (the designed GET /api/daemons). */
  catalogue(): (DaemonView & { vars: { var: string; secret: boolean; description: string }[] })[] {
    return this.rows().map((row) => ({
      ...this.view(row),
      vars: varsOf(row.name).map((v) => ({
        var: v.var,
        secret: v.secret === true,
        description: v.description,
      })),
    }));
  }

  /** Validates and stores a complete replacement, then restarts the daemon if it is running. */
  async configure(row: DaemonRow, config: readonly { var: unknown; value: unknown }[]) {
    const checked = this.check(row, config);
    if (!checked.ok) return checked;
    replaceDaemonVars(this.db, row.id, checked.vars, this.clock.now());
    const running = this.engines.status(row.name).state === 'running';
    if (!running) return { ok: true as const, reloaded: false, running };
    try {
      const status = await this.engines.restart(row.name);
      if (status.state === 'running') return { ok: true as const, reloaded: true, running };
      return { ok: true as const, reloaded: false, running, error: status.error ?? status.state };
    } catch (err) {
      return {
        ok: true as const,
        reloaded: false,
        running,
        error: (err as Error)?.message ?? String(err),
      };
    }
  }

  /** Stores start_auto and starts the daemon now when it is not running; its status after. */
  async start(row: DaemonRow, startAuto: boolean): Promise<EngineStatus> {
    setStartAuto(this.db, row.id, startAuto, this.clock.now());
    await this.engines.start(row.name);
    return this.engines.status(row.name);
  }

  private check(
    row: DaemonRow,
    config: readonly { var: unknown; value: unknown }[],
  ): { ok: true; vars: DaemonVarRow[] } | { ok: false; message: string } {
    const specs = varsOf(row.name);
    const stored = new Map(daemonVars(this.db, row.id).map((v) => [v.var, v]));
    const seen = new Set<string>();
    const vars: DaemonVarRow[] = [];
    for (const [i, item] of config.entries()) {
      const at = `config.${i}`;
      const spec = specs.find((s) => s.var === item.var);
      if (!spec) {
        const known = specs.length ? specs.map((s) => s.var).join(', ') : 'none';
        return {
          ok: false,
          message: `${at}: ${row.name} has no variable of that name (its variables: ${known}).`,
        };
      }
      if (seen.has(spec.var))
        return { ok: false, message: `${at}: ${spec.var} is given more than once.` };
      seen.add(spec.var);
      const value = item.value;
      if (spec.secret && (isSentinel(value) || value === '' || value === null)) {
        const kept = stored.get(spec.var);
        if (kept?.sealed) vars.push(kept);
        continue;
      }
      if (isSentinel(value))
        return { ok: false, message: `${at}: ${spec.var} is not a secret variable.` };
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
        return { ok: false, message: `${at}: the value of ${spec.var} must be text.` };
      const text = String(value);
      if (text.length > MAX_VALUE_LENGTH)
        return {
          ok: false,
          message: `${at}: the value of ${spec.var} may not be longer than ${MAX_VALUE_LENGTH} characters.`,
        };
      if (CONTROL_CHARACTERS.test(text))
        return {
          ok: false,
          message: `${at}: the value of ${spec.var} may not contain control characters (newline, NUL ...).`,
        };
      if (spec.rule && text !== '' && !spec.rule.pattern.test(text))
        return { ok: false, message: `${at}: ${spec.var} ${spec.rule.message}.` };
      if (spec.var.endsWith('port') && text !== '' && Number(text) > 65535)
        return {
          ok: false,
          message: `${at}: ${spec.var} ${'must be a port number from 0 to 65535'}.`,
        };
      vars.push(
        spec.secret
          ? { var: spec.var, value: this.secrets.seal(text), sealed: 1 }
          : { var: spec.var, value: text, sealed: 0 },
      );
    }
    return { ok: true, vars };
  }
}
