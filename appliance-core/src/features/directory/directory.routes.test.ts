/**
 * HTTP-level tests of the directory integration (spec part 1 > Directory (LDAP) configuration,
 * Directory (LDAP) integration) against a real OpenLDAP server (Debian's slapd) that the test
 * starts on loopback: users, groupOfNames with the memberOf overlay, nested groups, a group whose
 * DN holds filter metacharacters, StartTLS and LDAPS on a self-signed certificate.
 *
 * Sign-in is limited to 10 requests per minute per client address; the appliance trusts
 * X-Forwarded-For from loopback, so every sign-in below comes from its own address.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';
import { groupLdif, personLdif, startSlapd, type Slapd } from '../../../../test/harness/slapd.js';
import { insertDeviceTag } from '../../../../test/harness/tags.js';
import { totpCodeAt } from '../../platform/security/totp.js';

const HAVE = havePeer('slapd', 'slapd') && havePeer('ldapadd', 'ldap-utils');
const CANARY = 'Canary-Bind-Pw-7f3e91';
const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const INVALID_LOGIN = { status: false, hasError: true, message: 'Invalid Username/Password' };
const TOTP_REQUIRED = { status: false, hasError: true, message: 'TOTP Required' };
const legacyFailure = (message: string) => ({ status: false, hasError: true, message });

let h: Harness;
let ldap: Slapd;
let admin: string;
let client = 0;
const permissionIds = new Map<string, number>();
const bodies: string[] = [];

const people = (uid: string) => `uid=${uid},ou=people,${ldap.suffix}`;
const group = (cn: string) => `cn=${cn},ou=groups,${ldap.suffix}`;
const META_GROUP_CN = 'ops (eu)*';
const metaGroup = () => `cn=${META_GROUP_CN},ou=groups,${ldap.suffix}`;

async function call(method: string, url: string, body?: unknown, token: string | null = admin) {
  const res = await h.request(method, url, { token, ...(body !== undefined ? { body } : {}) });
  bodies.push(res.text);
  return res;
}

async function signIn(login: string, password: string) {
  client++;
  const res = await h.request('POST', '/api/login', {
    body: { email: login, password },
    headers: { 'x-forwarded-for': `198.51.100.${client % 250}` },
  });
  bodies.push(res.text);
  return res;
}

function baseConfig(overrides: Record<string, unknown> = {}) {
  return {
    enabled: true,
    host: ldap.host,
    port: ldap.port,
    use_ssl: false,
    use_tls: true,
    verify_tls: false,
    base_dn: ldap.suffix,
    bind_dn: ldap.adminDn,
    bind_password: CANARY,
    search_filter: '(objectClass=inetOrgPerson)',
    username_attribute: 'uid',
    email_attribute: 'mail',
    first_name_attribute: 'givenName',
    last_name_attribute: 'sn',
    directory_type: 'openldap',
    timeout: 3,
    fallback_to_local: true,
    auto_provision: true,
    expand_nested_groups: true,
    ...overrides,
  };
}

function userRow(username: string) {
  return h.appliance.db.prepare('SELECT * FROM users WHERE username = ?').get(username) as
    | {
        id: number;
        active: number;
        auth_source: string;
        email: string;
        password_hash: string | null;
      }
    | undefined;
}

/** The caller's own user record (getUsers answers a user without `users` with their own row). */
async function ownRecord(
  token: string,
): Promise<{ permissions: string[]; tags: string[]; auth_source: string }> {
  const res = await call('GET', '/api/getUsers', undefined, token);
  return res.body.users[0];
}

async function permissionsOf(token: string): Promise<string[]> {
  return [...(await ownRecord(token)).permissions].sort();
}

describe.skipIf(!HAVE)('directory integration against slapd', () => {
  beforeAll(async () => {
    ldap = await startSlapd({ adminPassword: CANARY });
    const s = ldap.suffix;
    ldap.add(
      [
        personLdif(s, {
          uid: 'alice',
          password: 'alice-Pw1',
          mail: 'alice@example.org',
          givenName: 'Alice',
          sn: 'Liddell',
        }),
        personLdif(s, { uid: 'bob', password: 'bob-Pw1', mail: 'bob@example.org' }),
        personLdif(s, { uid: 'carol', password: 'carol-Pw1', mail: 'carol@example.org' }),
        personLdif(s, { uid: 'dave', password: 'dave-Pw1', mail: 'taken@example.test' }),
        personLdif(s, { uid: 'erin', password: 'erin-Pw1', mail: 'erin@example.org' }),
        personLdif(s, { uid: 'frank', password: 'frank-Pw1', mail: 'frank@example.org' }),
        personLdif(s, { uid: 'gina', password: 'gina-Pw1', mail: 'gina@example.org' }),
        groupLdif(group('netops'), 'netops', [people('alice'), people('bob'), people('frank')]),
        groupLdif(group('admins'), 'admins', [people('alice')]),
        groupLdif(group('child'), 'child', [people('carol')]),
        groupLdif(group('parent'), 'parent', [group('child')]),
        groupLdif(`cn=ops \\28eu\\29*,ou=groups,${s}`, META_GROUP_CN, [people('erin')]),
        groupLdif(group('ops-parent'), 'ops-parent', [`cn=ops \\28eu\\29*,ou=groups,${s}`]),
      ].join('\n'),
    );
    h = await startAppliance({ APPLIANCE_TRUSTED_PROXIES: '127.0.0.1' });
    admin = await h.login();
    const perms = await call('GET', '/api/getPermissions');
    for (const p of perms.body.permissions as { id: number; slug: string }[])
      permissionIds.set(p.slug, p.id);
    insertDeviceTag(h.appliance.db, 'branch-a', 'Branch A');
    insertDeviceTag(h.appliance.db, 'branch-b', 'Branch B');
  }, 30_000);

  afterAll(async () => {
    await h?.close();
    await ldap?.stop();
  });

  describe('configuration', () => {
    it('GET gives config null before anything is saved', async () => {
      const res = await call('GET', '/api/ldap/config');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 201, hasError: false, config: null });
    });

    it('enabled is required', async () => {
      const { enabled: _e, ...rest } = baseConfig();
      const res = await call('POST', '/api/ldap/config', rest);
      expect(res.body).toEqual(legacyFailure('The enabled field is required.'));
    });

    it.each(['host', 'base_dn', 'bind_dn'])('%s is required when enabled', async (field) => {
      const res = await call('POST', '/api/ldap/config', baseConfig({ [field]: '' }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        legacyFailure(`The ${field.replace('_', ' ')} field is required when enabled is true.`),
      );
    });

    it('needs use_ssl or use_tls when enabled', async () => {
      const res = await call('POST', '/api/ldap/config', baseConfig({ use_tls: false }));
      expect(res.body).toEqual(
        legacyFailure(
          'The directory requires an encrypted connection: enable use_ssl (LDAPS) or use_tls (STARTTLS).',
        ),
      );
    });

    it.each([
      ['host', 'h'.repeat(256), 'The host field must not be greater than 255 characters.'],
      ['port', 0, 'The port field must be at least 1.'],
      ['port', 65536, 'The port field must not be greater than 65535.'],
      ['base_dn', 'x'.repeat(513), 'The base dn field must not be greater than 512 characters.'],
      ['bind_dn', 'x'.repeat(513), 'The bind dn field must not be greater than 512 characters.'],
      [
        'search_filter',
        'x'.repeat(513),
        'The search filter field must not be greater than 512 characters.',
      ],
      [
        'username_attribute',
        'x'.repeat(65),
        'The username attribute field must not be greater than 64 characters.',
      ],
      [
        'email_attribute',
        'x'.repeat(65),
        'The email attribute field must not be greater than 64 characters.',
      ],
      [
        'first_name_attribute',
        'x'.repeat(65),
        'The first name attribute field must not be greater than 64 characters.',
      ],
      [
        'last_name_attribute',
        'x'.repeat(65),
        'The last name attribute field must not be greater than 64 characters.',
      ],
      ['timeout', 0, 'The timeout field must be at least 1.'],
      ['timeout', 61, 'The timeout field must not be greater than 60.'],
    ])('%s = %j is refused', async (field, value, message) => {
      const res = await call('POST', '/api/ldap/config', baseConfig({ [field]: value }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(legacyFailure(message));
    });

    it('directory_type must be active_directory or openldap', async () => {
      const res = await call('POST', '/api/ldap/config', baseConfig({ directory_type: 'novell' }));
      expect(res.body.status).toBe(false);
      expect(res.body.hasError).toBe(true);
    });

    it('a refused config changes nothing', async () => {
      const res = await call('GET', '/api/ldap/config');
      expect(res.body.config).toBeNull();
      expect(h.appliance.db.prepare('SELECT count(*) AS n FROM ldap_config').get()).toEqual({
        n: 0,
      });
    });

    it('saves, reads back without the bind password, and seals the password at rest', async () => {
      const saved = await call('POST', '/api/ldap/config', baseConfig());
      expect(saved.body).toEqual({ status: 201, hasError: false, message: expect.any(String) });
      const read = await call('GET', '/api/ldap/config');
      const { bind_password: _p, ...expected } = baseConfig();
      expect(read.body).toEqual({ status: 201, hasError: false, config: expected });
      expect(read.body.config).not.toHaveProperty('bind_password');
      const row = h.appliance.db.prepare('SELECT bind_password FROM ldap_config').get() as {
        bind_password: string;
      };
      expect(row.bind_password).not.toContain(CANARY);
      expect(h.appliance.ctx.secrets.open(row.bind_password)).toBe(CANARY);
    });

    it('a save without bind_password keeps the stored one (single row)', async () => {
      const { bind_password: _p, ...rest } = baseConfig({ timeout: 4 });
      await call('POST', '/api/ldap/config', rest);
      const rows = h.appliance.db
        .prepare('SELECT bind_password, timeout FROM ldap_config')
        .all() as {
        bind_password: string;
        timeout: number;
      }[];
      expect(rows).toHaveLength(1);
      expect(rows[0]?.timeout).toBe(4);
      expect(h.appliance.ctx.secrets.open(rows[0]?.bind_password as string)).toBe(CANARY);
    });
  });

  describe('test bind and groups', () => {
    it('binds over StartTLS and lists the groups found', async () => {
      const res = await call('POST', '/api/ldap/test', baseConfig());
      expect(res.body).toMatchObject({ status: 201, hasError: false, groups_found: 6 });
      expect(res.body.groups).toContain(group('netops'));
      expect(res.body.groups).toHaveLength(6);
    });

    it('binds over LDAPS', async () => {
      const res = await call(
        'POST',
        '/api/ldap/test',
        baseConfig({ use_ssl: true, use_tls: false, port: ldap.ldapsPort }),
      );
      expect(res.body).toMatchObject({ status: 201, groups_found: 6 });
    });

    it('verify_tls refuses the self-signed certificate', async () => {
      const res = await call('POST', '/api/ldap/test', baseConfig({ verify_tls: true }));
      expect(res.body.status).toBe(false);
      expect(res.body.message).toMatch(/certificate/i);
      const ldaps = await call(
        'POST',
        '/api/ldap/test',
        baseConfig({ use_ssl: true, use_tls: false, port: ldap.ldapsPort, verify_tls: true }),
      );
      expect(ldaps.body.message).toMatch(/certificate/i);
    });

    it('a wrong bind password fails with the legacy body', async () => {
      const res = await call('POST', '/api/ldap/test', baseConfig({ bind_password: 'nope' }));
      expect(res.body).toEqual(legacyFailure('The directory refused the credentials.'));
    });

    it('a host that is no host name is refused without a connection attempt', async () => {
      for (const host of ['a b', 'x/y', 'user@127.0.0.1']) {
        const res = await call('POST', '/api/ldap/test', baseConfig({ host }));
        expect(res.body, host).toEqual(
          legacyFailure('The host is not a valid host name or address.'),
        );
      }
    });

    it('reuses the stored password when host, port and bind DN are unchanged', async () => {
      const { bind_password: _p, ...rest } = baseConfig();
      const res = await call('POST', '/api/ldap/test', rest);
      expect(res.body).toMatchObject({ status: 201, groups_found: 6 });
    });

    it.each([
      ['host', 'localhost'],
      ['port', 1],
      ['bind_dn', 'cn=other,dc=example,dc=org'],
    ])('asks for the password when %s changed', async (field, value) => {
      const { bind_password: _p, ...rest } = baseConfig({ [field]: value });
      const res = await call('POST', '/api/ldap/test', rest);
      expect(res.body).toEqual(
        legacyFailure(
          'Enter the bind password: the host, port or bind DN differ from the saved configuration.',
        ),
      );
    });

    it('searches groups by substring with the saved configuration', async () => {
      const res = await call('GET', '/api/ldap/groups?search=par');
      expect(res.body).toEqual({
        status: 201,
        hasError: false,
        groups: [group('ops-parent'), group('parent')],
      });
      const meta = await call('GET', `/api/ldap/groups?search=${encodeURIComponent('(eu)*')}`);
      expect(meta.body.groups).toHaveLength(1);
      // `*` is escaped (\2a): only the group whose name holds a star, not every group.
      const star = await call('GET', '/api/ldap/groups?search=*');
      expect(star.body.groups).toEqual([metaGroup()]);
    });
  });

  describe('mappings and group tags', () => {
    it('creates a mapping; re-saving the pair updates the name', async () => {
      const first = await call('POST', '/api/ldap/mappings', {
        ldap_group_dn: group('netops'),
        ldap_group_name: 'Net ops',
        permission_id: permissionIds.get('devices'),
      });
      expect(first.body).toEqual({
        status: 201,
        hasError: false,
        mapping: {
          id: expect.any(Number),
          ldap_group_dn: group('netops'),
          ldap_group_name: 'Net ops',
          permission_id: permissionIds.get('devices'),
        },
      });
      const again = await call('POST', '/api/ldap/mappings', {
        ldap_group_dn: group('netops'),
        ldap_group_name: 'Network operations',
        permission_id: permissionIds.get('devices'),
      });
      expect(again.body.mapping.id).toBe(first.body.mapping.id);
      const list = await call('GET', '/api/ldap/mappings');
      expect(list.body.mappings).toEqual([
        {
          id: first.body.mapping.id,
          ldap_group_dn: group('netops'),
          ldap_group_name: 'Network operations',
          permission_id: permissionIds.get('devices'),
          permission_name: expect.any(String),
          permission_slug: 'devices',
        },
      ]);
    });

    it.each([
      [{ permission_id: 1 }, 'The ldap group dn field is required.'],
      [{ ldap_group_dn: 'cn=x', permission_id: 9999 }, 'The selected permission id is invalid.'],
      [
        { ldap_group_dn: 'x'.repeat(513), permission_id: 1 },
        'The ldap group dn field must not be greater than 512 characters.',
      ],
      [
        { ldap_group_dn: 'cn=x', ldap_group_name: 'x'.repeat(256), permission_id: 1 },
        'The ldap group name field must not be greater than 255 characters.',
      ],
      [{ ldap_group_dn: 'cn=x' }, 'The permission id field is required.'],
    ])('refuses mapping %j', async (body, message) => {
      const before = await call('GET', '/api/ldap/mappings');
      const res = await call('POST', '/api/ldap/mappings', body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(legacyFailure(message));
      expect((await call('GET', '/api/ldap/mappings')).body).toEqual(before.body);
    });

    it("bulk replaces a group's set, accepts an empty array, refuses unknown ids", async () => {
      const ids = ['alerts', 'api'].map((s) => permissionIds.get(s));
      const ok = await call('POST', '/api/ldap/mappings/bulk', {
        ldap_group_dn: group('admins'),
        permission_ids: ids,
      });
      expect(ok.body).toEqual({ status: 201, hasError: false, message: expect.any(String) });
      const slugsOf = async (dn: string) =>
        (
          (await call('GET', '/api/ldap/mappings')).body.mappings as {
            ldap_group_dn: string;
            permission_slug: string;
            ldap_group_name: string;
          }[]
        )
          .filter((m) => m.ldap_group_dn === dn)
          .map((m) => m.permission_slug)
          .sort();
      expect(await slugsOf(group('admins'))).toEqual(['alerts', 'api']);
      const refused = await call('POST', '/api/ldap/mappings/bulk', {
        ldap_group_dn: group('admins'),
        permission_ids: [permissionIds.get('logs'), 9999],
      });
      expect(refused.body).toEqual(legacyFailure('The selected permission ids are invalid: 9999.'));
      expect(await slugsOf(group('admins'))).toEqual(['alerts', 'api']);
      await call('POST', '/api/ldap/mappings/bulk', {
        ldap_group_dn: group('admins'),
        permission_ids: [permissionIds.get('alerts')],
      });
      expect(await slugsOf(group('admins'))).toEqual(['alerts']);
      const empty = await call('POST', '/api/ldap/mappings/bulk', {
        ldap_group_dn: group('child'),
        permission_ids: [],
      });
      expect(empty.body.status).toBe(201);
      expect(await slugsOf(group('child'))).toEqual([]);
      const missing = await call('POST', '/api/ldap/mappings/bulk', { ldap_group_dn: 'cn=x' });
      expect(missing.body).toEqual(legacyFailure('The permission ids field is required.'));
    });

    it('deletes a mapping; an unknown id is refused', async () => {
      const made = await call('POST', '/api/ldap/mappings', {
        ldap_group_dn: group('bogus'),
        permission_id: permissionIds.get('vne'),
      });
      expect(made.body.mapping.ldap_group_name).toBe('bogus');
      const del = await call('DELETE', `/api/ldap/mappings/${made.body.mapping.id}`);
      expect(del.body).toEqual({ status: 201, hasError: false, message: 'Mapping deleted.' });
      const again = await call('DELETE', `/api/ldap/mappings/${made.body.mapping.id}`);
      expect(again.body).toEqual(legacyFailure('Mapping not found.'));
    });

    it("group-tags replaces a group's tags, accepts an empty array, refuses unknown slugs", async () => {
      const ok = await call('POST', '/api/ldap/group-tags', {
        ldap_group_dn: group('netops'),
        tag_slugs: ['branch-a', 'branch-b'],
      });
      expect(ok.body).toEqual({ status: 201, hasError: false, message: expect.any(String) });
      const refused = await call('POST', '/api/ldap/group-tags', {
        ldap_group_dn: group('netops'),
        tag_slugs: ['branch-a', 'nope'],
      });
      expect(refused.body).toEqual(legacyFailure('The selected tag slugs are invalid: nope.'));
      await call('POST', '/api/ldap/group-tags', {
        ldap_group_dn: group('netops'),
        tag_slugs: ['branch-a'],
      });
      await call('POST', '/api/ldap/group-tags', { ldap_group_dn: group('admins'), tag_slugs: [] });
      const list = await call('GET', '/api/ldap/group-tags');
      expect(list.body).toEqual({
        status: 201,
        hasError: false,
        tags: [
          {
            ldap_group_dn: group('netops'),
            tag_id: expect.any(Number),
            slug: 'branch-a',
            name: 'Branch A',
          },
        ],
      });
      const missing = await call('POST', '/api/ldap/group-tags', { ldap_group_dn: 'cn=x' });
      expect(missing.body).toEqual(legacyFailure('The tag slugs field is required.'));
    });
  });

  describe('sign-in', () => {
    beforeAll(async () => {
      await call('POST', '/api/ldap/mappings', {
        ldap_group_dn: group('parent'),
        permission_id: permissionIds.get('logs'),
      });
      await call('POST', '/api/ldap/mappings', {
        ldap_group_dn: group('ops-parent'),
        permission_id: permissionIds.get('tools'),
      });
      await call('POST', '/api/ldap/group-tags', {
        ldap_group_dn: group('admins'),
        tag_slugs: ['branch-b'],
      });
    });

    it('auto-provisions a directory user with permissions and tags of their groups', async () => {
      const res = await signIn('alice', 'alice-Pw1');
      expect(res.body).toMatchObject({
        status: 201,
        hasError: false,
        user: { email: 'alice@example.org' },
      });
      const row = userRow('alice');
      expect(row).toMatchObject({ auth_source: 'ldap', active: 1, password_hash: null });
      const me = await ownRecord(res.body.access_token);
      expect([...me.permissions].sort()).toEqual(['alerts', 'devices']);
      expect([...me.tags].sort()).toEqual(['branch-a', 'branch-b']);
      expect(me.auth_source).toBe('ldap');
    });

    it('a wrong directory password is refused', async () => {
      expect((await signIn('alice', 'wrong')).body).toEqual(INVALID_LOGIN);
      expect((await signIn('alice', '')).status).toBe(422);
    });

    it('nested groups give their permissions (groupOfNames walk)', async () => {
      const res = await signIn('carol', 'carol-Pw1');
      expect(res.body.status).toBe(201);
      expect(await permissionsOf(res.body.access_token)).toEqual(['logs']);
    });

    it('a group DN with filter metacharacters is escaped in the nested lookup', async () => {
      const res = await signIn('erin', 'erin-Pw1');
      expect(res.body.status).toBe(201);
      expect(await permissionsOf(res.body.access_token)).toEqual(['tools']);
    });

    it('LDAP injection in the username does not sign in', async () => {
      for (const name of ['*)(uid=*))(|(uid=*', '*', '*)(uid=bob', 'bo*'])
        expect((await signIn(name, 'bob-Pw1')).body, name).toEqual(INVALID_LOGIN);
      expect(userRow('bob')).toBeUndefined();
    });

    it('auto-provision colliding with a local email is refused, audited, never linked', async () => {
      await h.userWith([], { username: 'taken' });
      const local = h.appliance.db
        .prepare("SELECT id, auth_source FROM users WHERE email = 'taken@example.test'")
        .get() as { id: number; auth_source: string } | undefined;
      expect(local?.auth_source).toBe('local');
      const res = await signIn('dave', 'dave-Pw1');
      expect(res.body).toEqual(INVALID_LOGIN);
      expect(userRow('dave')).toBeUndefined();
      const audit = h.appliance.db
        .prepare(
          "SELECT outcome, target_label FROM audit_log WHERE action = 'directory.provision' AND outcome = 'failure'",
        )
        .all();
      expect(audit).toEqual([{ outcome: 'failure', target_label: 'dave' }]);
    });

    it('local accounts sign in with fallback_to_local; not without it; user 1 always', async () => {
      const local = await h.userWith(['devices'], { username: 'localuser' });
      expect((await signIn('localuser', local.password)).body.status).toBe(201);
      await call('POST', '/api/ldap/config', baseConfig({ fallback_to_local: false }));
      expect((await signIn('localuser', local.password)).body).toEqual(INVALID_LOGIN);
      expect((await signIn('admin', 'Admin-Passw0rd')).body.status).toBe(201);
      expect((await signIn('bob', 'bob-Pw1')).body.status).toBe(201);
      await call('POST', '/api/ldap/config', baseConfig());
    });

    it('TOTP applies to a directory user who enrolled MFA', async () => {
      const alice = userRow('alice') as { id: number };
      const generated = await call('POST', '/api/generateMfa', { userId: alice.id });
      const secret = generated.body.mfaKey as string;
      const confirmed = await call('POST', '/api/confirmMfa', {
        userId: alice.id,
        code: totpCodeAt(secret, h.clock.now()),
      });
      expect(confirmed.body.status).toBe(true);
      h.clock.advance(30_000);
      expect((await signIn('alice', 'alice-Pw1')).body).toEqual(TOTP_REQUIRED);
      client++;
      const res = await h.request('POST', '/api/login', {
        body: { email: 'alice', password: 'alice-Pw1', totp: totpCodeAt(secret, h.clock.now()) },
        headers: { 'x-forwarded-for': `198.51.100.${client % 250}` },
      });
      expect(res.body.status).toBe(201);
      // The directory still decides: the right code with a wrong password does not sign in.
      h.clock.advance(30_000);
      client++;
      const wrong = await h.request('POST', '/api/login', {
        body: { email: 'alice', password: 'nope', totp: totpCodeAt(secret, h.clock.now()) },
        headers: { 'x-forwarded-for': `198.51.100.${client % 250}` },
      });
      expect(wrong.body).toEqual(INVALID_LOGIN);
      await call('POST', '/api/disableMfa', { userId: alice.id });
    });

    it('two concurrent first sign-ins provision one account and both succeed', async () => {
      const [first, second] = await Promise.all([
        signIn('gina', 'gina-Pw1'),
        signIn('gina', 'gina-Pw1'),
      ]);
      expect([first.body.status, second.body.status]).toEqual([201, 201]);
      expect(first.body.user.id).toBe(second.body.user.id);
      const rows = h.appliance.db
        .prepare("SELECT count(*) AS n FROM users WHERE username = 'gina'")
        .get() as { n: number };
      expect(rows.n).toBe(1);
    });

    it('without auto_provision an unknown directory user is refused', async () => {
      await call('POST', '/api/ldap/config', baseConfig({ auto_provision: false }));
      expect((await signIn('frank', 'frank-Pw1')).body).toEqual(INVALID_LOGIN);
      expect(userRow('frank')).toBeUndefined();
      await call('POST', '/api/ldap/config', baseConfig());
    });
  });

  describe('sync', () => {
    it('a permission removed in the directory is refused on the very next request', async () => {
      const login = await signIn('bob', 'bob-Pw1');
      const token = login.body.access_token as string;
      expect((await call('GET', '/api/devices', undefined, token)).status).not.toBe(401);
      ldap.modify(
        `dn: ${group('netops')}\nchangetype: modify\ndelete: member\nmember: ${people('bob')}\n`,
      );
      const sync = await call('POST', '/api/ldap/sync');
      expect(sync.body).toEqual({
        status: 201,
        hasError: false,
        message: expect.any(String),
        synced: expect.any(Number),
        errors: 0,
      });
      expect(await permissionsOf(token)).toEqual([]);
      const refused = await call('GET', '/api/devices', undefined, token);
      expect([refused.status, refused.body]).toEqual([401, DENIED]);
    });

    it('a user deleted from the directory is deactivated and their tokens revoked', async () => {
      const login = await signIn('frank', 'frank-Pw1');
      const token = login.body.access_token as string;
      expect((await call('GET', '/api/me', undefined, token)).status).toBe(200);
      ldap.remove(people('frank'));
      const sync = await call('POST', '/api/ldap/sync');
      expect(sync.body.errors).toBe(0);
      expect(userRow('frank')?.active).toBe(0);
      // Revoked at once, as saveUser with active=false does (not merely refused while inactive).
      const live = h.appliance.db
        .prepare('SELECT count(*) AS n FROM access_tokens WHERE user_id = ? AND revoked_at IS NULL')
        .get(userRow('frank')?.id) as { n: number };
      expect(live.n).toBe(0);
      expect((await call('GET', '/api/me', undefined, token)).status).toBe(401);
      expect((await signIn('frank', 'frank-Pw1')).body).toEqual(INVALID_LOGIN);
    });
  });

  describe('a directory that does not answer', () => {
    let silent: net.Server;
    const held: net.Socket[] = [];
    beforeAll(async () => {
      silent = net.createServer((socket) => held.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    });
    afterAll(async () => {
      for (const s of held) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      await call('POST', '/api/ldap/config', baseConfig());
    });

    it('test and sign-in fail within the timeout; local sign-in still works', async () => {
      const port = (silent.address() as net.AddressInfo).port;
      const started = Date.now();
      const test = await call('POST', '/api/ldap/test', baseConfig({ port, timeout: 1 }));
      expect(test.body).toEqual(legacyFailure('The directory did not answer within 1 seconds.'));
      expect(Date.now() - started).toBeLessThan(4000);
      // LDAPS: the TLS handshake never ends; the deadline still holds.
      const t = Date.now();
      const ldaps = await call(
        'POST',
        '/api/ldap/test',
        baseConfig({ port, timeout: 1, use_ssl: true, use_tls: false }),
      );
      expect(ldaps.body).toEqual(legacyFailure('The directory did not answer within 1 seconds.'));
      expect(Date.now() - t).toBeLessThan(4000);
      await call('POST', '/api/ldap/config', baseConfig({ port, timeout: 1 }));
      const t0 = Date.now();
      expect((await signIn('alice', 'alice-Pw1')).body).toEqual(INVALID_LOGIN);
      expect(Date.now() - t0).toBeLessThan(4000);
      const t1 = Date.now();
      expect((await signIn('admin', 'Admin-Passw0rd')).body.status).toBe(201);
      expect(Date.now() - t1).toBeLessThan(3000);
    });

    it('a closed port is refused at once', async () => {
      const closed = net.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
      const port = (closed.address() as net.AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const started = Date.now();
      const res = await call('POST', '/api/ldap/test', baseConfig({ port, timeout: 10 }));
      expect(res.body.message).toMatch(/ECONNREFUSED/);
      expect(Date.now() - started).toBeLessThan(2000);
    });
  });

  describe('secrets and gates', () => {
    it('every route denies a non-sa user', async () => {
      const user = await h.userWith(['users', 'system', 'devices', 'api']);
      const routes: [string, string, unknown?][] = [
        ['GET', '/api/ldap/config'],
        ['POST', '/api/ldap/config', baseConfig()],
        ['POST', '/api/ldap/test', baseConfig()],
        ['GET', '/api/ldap/groups'],
        ['GET', '/api/ldap/mappings'],
        ['POST', '/api/ldap/mappings', { ldap_group_dn: 'cn=x', permission_id: 1 }],
        ['POST', '/api/ldap/mappings/bulk', { ldap_group_dn: 'cn=x', permission_ids: [] }],
        ['DELETE', '/api/ldap/mappings/1'],
        ['GET', '/api/ldap/group-tags'],
        ['POST', '/api/ldap/group-tags', { ldap_group_dn: 'cn=x', tag_slugs: [] }],
        ['POST', '/api/ldap/sync'],
      ];
      for (const [method, url, body] of routes) {
        const res = await call(method, url, body, user.token);
        expect([res.status, res.body], `${method} ${url}`).toEqual([401, DENIED]);
      }
    });

    it('the canary bind password is in no response nor /openapi.json', async () => {
      const openapi = await call('GET', '/openapi.json', undefined, null);
      expect(openapi.status).toBe(200);
      expect(openapi.text).toContain('/api/ldap/config');
      for (const text of bodies) expect(text).not.toContain(CANARY);
      const audit = h.appliance.db.prepare('SELECT detail FROM audit_log').all();
      expect(JSON.stringify(audit)).not.toContain(CANARY);
    });
  });
});
