/**
 * The directory feature's work: the configuration (bind password sealed), the test bind, group
 * search, search-then-bind sign-in with auto-provision, and sync. Permissions and tag
 * restrictions of a directory user are the union of their groups' mappings, written with source
 * 'ldap' on every sign-in and sync (identity-table writes invalidate the auth cache by themselves).
 */
import { recordAudit, SYSTEM_ACTOR, type AuditActor } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import type { TokenService } from '../tokens/index.js';
import {
  findUserById,
  findUsersByLogin,
  identityKey,
  insertUser,
  nameHolder,
  replacePermissions,
  replaceTags,
  updateUser,
  type UserRow,
} from '../users/index.js';
import {
  allValues,
  defaultPort,
  DirectoryFailure,
  firstValue,
  isInvalidCredentials,
  withDirectory,
  type ConnectionSettings,
  type Session,
} from './directory.runtime.js';
import {
  directoryUsers,
  grantsOf,
  readConfig,
  writeConfig,
  type ConfigRow,
  type ConfigWrite,
} from './directory.repository.js';
import {
  DEFAULTS,
  directParentsFilter,
  groupSearchFilter,
  inChainGroupsFilter,
  NESTED_MAX_DEPTH,
  NESTED_MAX_GROUPS,
  normalizeDn,
  userFilter,
  type DirectoryType,
} from './directory.rules.js';

/** The configuration fields of a request (spec: Directory (LDAP) configuration). */
export interface ConfigFields {
  enabled?: boolean | undefined;
  host?: string | undefined;
  port?: number | undefined;
  use_ssl?: boolean | undefined;
  use_tls?: boolean | undefined;
  verify_tls?: boolean | undefined;
  base_dn?: string | undefined;
  bind_dn?: string | undefined;
  bind_password?: string | undefined;
  search_filter?: string | undefined;
  username_attribute?: string | undefined;
  email_attribute?: string | undefined;
  first_name_attribute?: string | undefined;
  last_name_attribute?: string | undefined;
  directory_type?: DirectoryType | undefined;
  timeout?: number | undefined;
  fallback_to_local?: boolean | undefined;
  auto_provision?: boolean | undefined;
  expand_nested_groups?: boolean | undefined;
}

/** The configuration as GET /api/ldap/config shows it: every field but the bind password. */
export type PublicConfig = Omit<ReturnType<typeof toPublic>, never>;

export function toPublic(row: ConfigRow) {
  return {
    enabled: row.enabled === 1,
    host: row.host ?? '',
    port: row.port ?? defaultPort({ use_ssl: row.use_ssl === 1 }),
    use_ssl: row.use_ssl === 1,
    use_tls: row.use_tls === 1,
    verify_tls: row.verify_tls === 1,
    base_dn: row.base_dn ?? '',
    bind_dn: row.bind_dn ?? '',
    search_filter: row.search_filter ?? '',
    username_attribute: row.username_attribute ?? '',
    email_attribute: row.email_attribute ?? '',
    first_name_attribute: row.first_name_attribute ?? '',
    last_name_attribute: row.last_name_attribute ?? '',
    directory_type: row.directory_type,
    timeout: row.timeout,
    fallback_to_local: row.fallback_to_local === 1,
    auto_provision: row.auto_provision === 1,
    expand_nested_groups: row.expand_nested_groups === 1,
  };
}

/** Everything a conversation needs, with defaults filled in. */
export interface Effective extends ConnectionSettings {
  base_dn: string;
  bind_dn: string;
  bind_password: string;
  search_filter: string;
  username_attribute: string;
  email_attribute: string;
  first_name_attribute: string;
  last_name_attribute: string;
  expand_nested_groups: boolean;
}

const blank = (v: string | null | undefined): boolean => v === undefined || v === null || v === '';

export function effective(
  fields: Omit<ConfigFields, 'bind_password'>,
  bindPassword: string,
): Effective {
  const type: DirectoryType = fields.directory_type ?? 'openldap';
  const use_ssl = fields.use_ssl ?? false;
  return {
    host: fields.host ?? '',
    port: fields.port ?? defaultPort({ use_ssl }),
    use_ssl,
    use_tls: fields.use_tls ?? false,
    verify_tls: fields.verify_tls ?? true,
    timeout: fields.timeout ?? DEFAULTS.timeout,
    directory_type: type,
    base_dn: fields.base_dn ?? '',
    bind_dn: fields.bind_dn ?? '',
    bind_password: bindPassword,
    search_filter: blank(fields.search_filter)
      ? DEFAULTS[type].search_filter
      : (fields.search_filter as string),
    username_attribute: blank(fields.username_attribute)
      ? DEFAULTS[type].username_attribute
      : (fields.username_attribute as string),
    email_attribute: blank(fields.email_attribute)
      ? DEFAULTS.email_attribute
      : (fields.email_attribute as string),
    first_name_attribute: blank(fields.first_name_attribute)
      ? DEFAULTS.first_name_attribute
      : (fields.first_name_attribute as string),
    last_name_attribute: blank(fields.last_name_attribute)
      ? DEFAULTS.last_name_attribute
      : (fields.last_name_attribute as string),
    expand_nested_groups: fields.expand_nested_groups ?? false,
  };
}

export interface DirectoryEntry {
  dn: string;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  groups: string[];
}

export type SignInResult =
  { kind: 'ok'; userId: number } | { kind: 'invalid'; reason: string; userId?: number };

export const PASSWORD_NEEDED =
  'Enter the bind password: the host, port or bind DN differ from the saved configuration.';

export class DirectoryService {
  constructor(
    private readonly ctx: CoreContext,
    private readonly tokens: TokenService,
  ) {}

  config(): ConfigRow | undefined {
    return readConfig(this.ctx.db);
  }

  /** Single-row upsert; the bind password changes only when one is sent. */
  save(fields: ConfigFields & { enabled: boolean }): void {
    const stored = this.config();
    const sealed =
      fields.bind_password !== undefined && fields.bind_password !== ''
        ? this.ctx.secrets.seal(fields.bind_password)
        : (stored?.bind_password ?? null);
    const type = fields.directory_type ?? stored?.directory_type ?? 'openldap';
    const row: ConfigWrite = {
      enabled: fields.enabled ? 1 : 0,
      host: fields.host ?? null,
      port: fields.port ?? null,
      use_ssl: fields.use_ssl ? 1 : 0,
      use_tls: fields.use_tls ? 1 : 0,
      verify_tls: fields.verify_tls === false ? 0 : 1,
      base_dn: fields.base_dn ?? null,
      bind_dn: fields.bind_dn ?? null,
      bind_password: sealed,
      search_filter: fields.search_filter ?? null,
      username_attribute: fields.username_attribute ?? null,
      email_attribute: fields.email_attribute ?? null,
      first_name_attribute: fields.first_name_attribute ?? null,
      last_name_attribute: fields.last_name_attribute ?? null,
      directory_type: type,
      timeout: fields.timeout ?? DEFAULTS.timeout,
      fallback_to_local: fields.fallback_to_local === false ? 0 : 1,
      auto_provision: fields.auto_provision ? 1 : 0,
      expand_nested_groups: fields.expand_nested_groups ? 1 : 0,
    };
    writeConfig(this.ctx.db, row, this.ctx.clock.now());
  }

  /**
   * The bind password for a test: the one sent, else the stored one when host, port and bind DN
   * equal the saved ones; null when the caller must send it.
   */
  passwordForTest(fields: ConfigFields): string | null {
    if (fields.bind_password !== undefined && fields.bind_password !== '')
      return fields.bind_password;
    const stored = this.config();
    if (!stored?.bind_password) return null;
    const port = fields.port ?? defaultPort({ use_ssl: fields.use_ssl ?? false });
    const storedPort = stored.port ?? defaultPort({ use_ssl: stored.use_ssl === 1 });
    const same =
      (fields.host ?? '') === (stored.host ?? '') &&
      port === storedPort &&
      normalizeDn(fields.bind_dn ?? '') === normalizeDn(stored.bind_dn ?? '');
    return same ? this.ctx.secrets.open(stored.bind_password) : null;
  }

  /** Binds with the service account and lists the groups under the base DN. */
  async test(settings: Effective): Promise<string[]> {
    return withDirectory(settings, async (session) => {
      await session.bind(settings.bind_dn, settings.bind_password);
      return this.searchGroups(session, settings, '');
    });
  }

  /** The saved configuration as a conversation needs it, or null when none is usable. */
  saved(): (Effective & { row: ConfigRow }) | null {
    const row = this.config();
    if (!row || blank(row.host) || blank(row.base_dn) || blank(row.bind_dn)) return null;
    const password = row.bind_password ? this.ctx.secrets.open(row.bind_password) : '';
    return { ...effective(toPublic(row), password), row };
  }

  async groups(search: string): Promise<string[]> {
    const settings = this.saved();
    if (!settings) throw new DirectoryFailure('protocol', 'The directory is not configured.');
    return withDirectory(settings, async (session) => {
      await session.bind(settings.bind_dn, settings.bind_password);
      return this.searchGroups(session, settings, search);
    });
  }

  private async searchGroups(session: Session, s: Effective, search: string): Promise<string[]> {
    let entries: { dn: string }[];
    try {
      entries = await session.search(s.base_dn, groupSearchFilter(search), ['cn'], {
        sizeLimit: 1000,
      });
    } catch (err) {
      if ((err as { name?: string }).name === 'SizeLimitExceededError') entries = [];
      else throw err;
    }
    return entries.map((e) => e.dn).sort((a, b) => a.localeCompare(b));
  }

  /** Finds one account by login name; null when none or more than one matches. */
  private async findEntry(session: Session, s: Effective, login: string) {
    const entries = await session.search(
      s.base_dn,
      userFilter(s.directory_type, s.search_filter, s.username_attribute, login),
      [
        s.username_attribute,
        s.email_attribute,
        s.first_name_attribute,
        s.last_name_attribute,
        'memberOf',
      ],
      { sizeLimit: 2 },
    );
    return entries.length === 1 ? (entries[0] ?? null) : null;
  }

  /** Every group of an account: memberOf and member lookups, nested ones when configured. */
  private async groupsOf(
    session: Session,
    s: Effective,
    dn: string,
    memberOf: string[],
  ): Promise<string[]> {
    if (s.directory_type === 'active_directory') {
      if (!s.expand_nested_groups) return memberOf;
      const entries = await session.search(s.base_dn, inChainGroupsFilter(dn), ['cn']);
      return entries.map((e) => e.dn);
    }
    const found = new Map<string, string>();
    const add = (group: string) => {
      const key = normalizeDn(group);
      if (found.has(key) || found.size >= NESTED_MAX_GROUPS) return false;
      found.set(key, group);
      return true;
    };
    const parentsOf = async (member: string) =>
      (await session.search(s.base_dn, directParentsFilter(member), ['cn'])).map((e) => e.dn);
    let frontier: string[] = [];
    for (const g of [...memberOf, ...(await parentsOf(dn))]) if (add(g)) frontier.push(g);
    if (s.expand_nested_groups) {
      for (let depth = 1; depth < NESTED_MAX_DEPTH && frontier.length > 0; depth++) {
        const next: string[] = [];
        for (const g of frontier) {
          if (found.size >= NESTED_MAX_GROUPS) break;
          for (const parent of await parentsOf(g)) if (add(parent)) next.push(parent);
        }
        frontier = next;
      }
    }
    return [...found.values()];
  }

  /** Search-then-bind: the account's entry and groups when the password binds, else null. */
  async authenticate(
    s: Effective,
    login: string,
    password: string,
  ): Promise<DirectoryEntry | null> {
    // An empty password is an unauthenticated bind (RFC 4513 5.1.2): it would "succeed".
    if (password === '') return null;
    return withDirectory(s, async (session) => {
      await session.bind(s.bind_dn, s.bind_password);
      const entry = await this.findEntry(session, s, login);
      if (!entry) {
        // Spend the same round trip as a wrong password, so that unknown names answer alike.
        await session
          .bind(`${s.username_attribute}=unknown,${s.base_dn}`, password)
          .catch(() => {});
        return null;
      }
      try {
        await session.bind(entry.dn, password);
      } catch (err) {
        if (isInvalidCredentials(err)) return null;
        throw err;
      }
      await session.bind(s.bind_dn, s.bind_password);
      return this.describeEntry(session, s, entry);
    });
  }

  private async describeEntry(
    session: Session,
    s: Effective,
    entry: Awaited<ReturnType<DirectoryService['findEntry']>> & object,
  ): Promise<DirectoryEntry> {
    return {
      dn: entry.dn,
      username: firstValue(entry, s.username_attribute),
      email: firstValue(entry, s.email_attribute),
      first_name: firstValue(entry, s.first_name_attribute),
      last_name: firstValue(entry, s.last_name_attribute),
      groups: await this.groupsOf(session, s, entry.dn, allValues(entry, 'memberOf')),
    };
  }

  /** Writes the permissions and tags that the account's groups grant (source 'ldap'). */
  applyGroups(userId: number, groups: readonly string[]): void {
    const { permissionIds, tagIds } = grantsOf(this.ctx.db, groups);
    this.ctx.db.transaction(() => {
      replacePermissions(this.ctx.db, userId, permissionIds, 'ldap');
      replaceTags(this.ctx.db, userId, tagIds, 'ldap');
    })();
  }

  /** Is the directory on (sign-in consults it)? */
  enabled(): { fallbackToLocal: boolean } | null {
    const row = this.config();
    return row && row.enabled === 1 ? { fallbackToLocal: row.fallback_to_local === 1 } : null;
  }

  /**
   * Sign-in of a directory account (`existing` is the appliance's row when one answers to the
   * name): search-then-bind, then auto-provision or refresh, then the groups' permissions.
   */
  async signIn(
    login: string,
    password: string,
    existing: UserRow | undefined,
    actor: AuditActor,
  ): Promise<SignInResult> {
    const s = this.saved();
    if (!s) return { kind: 'invalid', reason: 'directory not configured' };
    let entry: DirectoryEntry | null;
    try {
      entry = await this.authenticate(s, login, password);
    } catch (err) {
      const reason = err instanceof DirectoryFailure ? err.kind : 'error';
      this.ctx.log.warn({ reason }, 'directory sign-in: directory unavailable');
      return { kind: 'invalid', reason: `directory ${reason}` };
    }
    if (!entry) return { kind: 'invalid', reason: 'directory refused' };
    const { db, clock } = this.ctx;
    // The directory account this entry was provisioned as, when the login name differs from the
    // entry's username (or a concurrent first sign-in provisioned it meanwhile).
    const account =
      existing ??
      findUsersByLogin(db, entry.username || login).find(
        (u) =>
          u.auth_source === 'ldap' &&
          identityKey(u.username) === identityKey(entry.username || login),
      );
    if (account) {
      if (account.auth_source !== 'ldap')
        return { kind: 'invalid', reason: 'not a directory account' };
      if (account.active !== 1) return { kind: 'invalid', reason: 'account inactive' };
      const changes: { first_name?: string; last_name?: string } = {};
      if (entry.first_name && entry.first_name !== account.first_name)
        changes.first_name = entry.first_name.slice(0, 255);
      if (entry.last_name && entry.last_name !== account.last_name)
        changes.last_name = entry.last_name.slice(0, 255);
      if (Object.keys(changes).length > 0) updateUser(db, account.id, changes, clock.now());
      this.applyGroups(account.id, entry.groups);
      return { kind: 'ok', userId: account.id };
    }
    const row = s.row;
    if (row.auto_provision !== 1) return { kind: 'invalid', reason: 'not provisioned' };
    const username = (entry.username || login).slice(0, 255);
    const email = (entry.email || `${username}@directory.invalid`).slice(0, 255);
    // Never link a directory account to a local one: a name or email that any account already
    // answers to refuses the provisioning (and is audited).
    const collision = nameHolder(db, username) ?? nameHolder(db, email);
    if (collision) {
      recordAudit(db, clock.now(), actor, {
        action: 'directory.provision',
        outcome: 'failure',
        target: { type: 'user', label: username },
        detail: { reason: 'collides with an existing account', field: collision },
      });
      return { kind: 'invalid', reason: 'provisioning collides with an existing account' };
    }
    const id = db.transaction(() => {
      const newId = insertUser(
        db,
        {
          first_name: (entry.first_name || username).slice(0, 255),
          last_name: entry.last_name.slice(0, 255),
          email,
          username,
          password_hash: null,
          auth_source: 'ldap',
        },
        clock.now(),
      );
      recordAudit(db, clock.now(), actor, {
        action: 'directory.provision',
        outcome: 'success',
        target: { type: 'user', id: newId, label: username },
      });
      return newId;
    })();
    this.applyGroups(id, entry.groups);
    return { kind: 'ok', userId: id };
  }

  /**
   * Re-evaluates every directory user: permissions and tags from their groups now; a user the
   * directory no longer has (or has disabled) is deactivated and their tokens revoked at once.
   */
  async sync(actor: AuditActor = SYSTEM_ACTOR): Promise<{ synced: number; errors: number }> {
    const s = this.saved();
    if (!s) throw new DirectoryFailure('protocol', 'The directory is not configured.');
    const users = directoryUsers(this.ctx.db);
    let synced = 0;
    let errors = 0;
    // One conversation; the deadline grows with the number of users (each lookup within `timeout`).
    await withDirectory(
      s,
      async (session) => {
        await session.bind(s.bind_dn, s.bind_password);
        for (const user of users) {
          try {
            const entry = await this.findEntry(session, s, user.username);
            if (!entry) {
              if (user.active === 1) this.deactivate(user.id, user.username, actor);
            } else {
              const described = await this.describeEntry(session, s, entry);
              this.applyGroups(user.id, described.groups);
            }
            synced++;
          } catch (err) {
            if (err instanceof DirectoryFailure && err.kind === 'timeout') throw err;
            errors++;
          }
        }
      },
      s.timeout * 1000 * (users.length + 1),
    );
    return { synced, errors };
  }

  private deactivate(userId: number, username: string, actor: AuditActor): void {
    const { db, clock } = this.ctx;
    db.transaction(() => {
      updateUser(db, userId, { active: 0 }, clock.now());
      recordAudit(db, clock.now(), actor, {
        action: 'directory.deactivate',
        outcome: 'success',
        target: { type: 'user', id: userId, label: username },
        detail: { reason: 'not found or disabled in the directory' },
      });
    })();
    this.tokens.revokeEverything(userId, actor.userId ?? undefined);
  }

  userById(id: number): UserRow | undefined {
    return findUserById(this.ctx.db, id);
  }
}
