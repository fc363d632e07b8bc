/**
 * Pure rules of the directory feature: RFC 4515 filter escaping, RFC 4514 DN value escaping, DN
 * comparison, the filters sign-in and sync send, and the configuration's conditional rules.
 */

/** RFC 4515 section 3: `*`, `(`, `)`, backslash and NUL as `\XX` (otherwise UTF-8 as is). */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * RFC 4514 section 2.4: an attribute value put into a DN. `"`, `+`, `,`, `;`, `<`, `>`, `\` are
 * backslash-escaped anywhere, `#` and space at the start and space at the end too, NUL as `\00`.
 */
export function escapeDnValue(value: string): string {
  let out = value.replace(/[\\"+,;<>]/g, (c) => `\\${c}`).replace(/\0/g, '\\00');
  if (out.startsWith('#') || out.startsWith(' ')) out = `\\${out}`;
  if (out.endsWith(' ') && !out.endsWith('\\ ')) out = `${out.slice(0, -1)}\\ `;
  return out;
}

/**
 * A DN in the form used to compare two DNs: lower case, no spaces around `,`, `=` and `+`
 * (servers return `cn=Ops,ou=Groups` where an operator typed `CN=ops, OU=groups`).
 */
export function normalizeDn(dn: string): string {
  return dn
    .trim()
    .replace(/\s*([,=+])\s*/g, '$1')
    .toLowerCase();
}

/** The first RDN's value (`cn=Net Ops,ou=groups` gives `Net Ops`): a group's display name. */
export function firstRdnValue(dn: string): string {
  const match = /^[^=]+=((?:\\.|[^,+\\])*)/.exec(dn.trim());
  return match ? (match[1] ?? '').replace(/\\(.)/g, '$1').trim() : dn;
}

export type DirectoryType = 'active_directory' | 'openldap';

/** Active Directory's LDAP_MATCHING_RULE_IN_CHAIN (nested group membership in one search). */
export const AD_IN_CHAIN_RULE = '1.2.840.113556.1.4.1941';
/** userAccountControl bit ACCOUNTDISABLE, tested with LDAP_MATCHING_RULE_BIT_AND. */
export const AD_BIT_AND_RULE = '1.2.840.113556.1.4.803';
export const AD_ACCOUNT_DISABLED = 2;

export const DEFAULTS = {
  openldap: {
    search_filter: '(objectClass=inetOrgPerson)',
    username_attribute: 'uid',
  },
  active_directory: {
    search_filter: '(&(objectCategory=person)(objectClass=user))',
    username_attribute: 'sAMAccountName',
  },
  email_attribute: 'mail',
  first_name_attribute: 'givenName',
  last_name_attribute: 'sn',
  timeout: 5,
} as const;

/** A configured search filter, wrapped in parentheses when an operator typed `objectClass=x`. */
export function wrapFilter(filter: string): string {
  const f = filter.trim();
  return f.startsWith('(') ? f : `(${f})`;
}

/**
 * The filter that finds one account by login name: the configured filter AND the username
 * attribute equal to the escaped name. Active Directory accounts that are disabled are left out.
 */
export function userFilter(
  type: DirectoryType,
  searchFilter: string,
  usernameAttribute: string,
  login: string,
): string {
  const parts = [wrapFilter(searchFilter), `(${usernameAttribute}=${escapeFilterValue(login)})`];
  if (type === 'active_directory')
    parts.push(`(!(userAccountControl:${AD_BIT_AND_RULE}:=${AD_ACCOUNT_DISABLED}))`);
  return `(&${parts.join('')})`;
}

/** The object classes a group entry has, in either kind of directory. */
export const GROUP_CLASSES_FILTER =
  '(|(objectClass=groupOfNames)(objectClass=groupOfUniqueNames)(objectClass=group)(objectClass=posixGroup))';

/** Groups whose name (cn) contains the substring; every group when it is empty. */
export function groupSearchFilter(search: string): string {
  const s = search.trim();
  return s === ''
    ? GROUP_CLASSES_FILTER
    : `(&${GROUP_CLASSES_FILTER}(cn=*${escapeFilterValue(s)}*))`;
}

/** Groups that list this DN as a direct member (OpenLDAP's walk, one level at a time). */
export function directParentsFilter(memberDn: string): string {
  const v = escapeFilterValue(memberDn);
  return `(&${GROUP_CLASSES_FILTER}(|(member=${v})(uniqueMember=${v})))`;
}

/** Active Directory: every group the DN belongs to, directly or through nested groups. */
export function inChainGroupsFilter(userDn: string): string {
  return `(&(objectClass=group)(member:${AD_IN_CHAIN_RULE}:=${escapeFilterValue(userDn)}))`;
}

/** Is an Active Directory account disabled (userAccountControl bit 2)? */
export function adAccountDisabled(userAccountControl: string | undefined): boolean {
  if (userAccountControl === undefined) return false;
  const n = Number(userAccountControl);
  return Number.isInteger(n) && (n & AD_ACCOUNT_DISABLED) !== 0;
}

/** Bounds of the OpenLDAP nested-group walk. */
export const NESTED_MAX_DEPTH = 10;
export const NESTED_MAX_GROUPS = 500;

export interface ConfigInput {
  enabled: boolean;
  host?: string | undefined;
  base_dn?: string | undefined;
  bind_dn?: string | undefined;
  use_ssl?: boolean | undefined;
  use_tls?: boolean | undefined;
}

export const MISSING_TRANSPORT =
  'The directory requires an encrypted connection: enable use_ssl (LDAPS) or use_tls (STARTTLS).';
export const BOTH_TRANSPORTS = 'Choose either use_ssl (LDAPS) or use_tls (STARTTLS), not both.';

/** The rules the schema cannot express; the first one broken, or null. */
export function configProblem(input: ConfigInput, forTest = false): string | null {
  const needed = forTest || input.enabled;
  if (needed) {
    for (const field of ['host', 'base_dn', 'bind_dn'] as const) {
      const v = input[field];
      if (v === undefined || v.trim() === '')
        return forTest
          ? `The ${field.replace('_', ' ')} field is required.`
          : `The ${field.replace('_', ' ')} field is required when enabled is true.`;
    }
    if (!input.use_ssl && !input.use_tls) return MISSING_TRANSPORT;
  }
  if (input.use_ssl && input.use_tls) return BOTH_TRANSPORTS;
  return null;
}
