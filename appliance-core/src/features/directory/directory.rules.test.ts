/**
 * Unit tests of the directory's pure rules: RFC 4515 filter escaping, RFC 4514 DN value escaping,
 * DN comparison, and the filters sent to Active Directory (the in-chain matching rule and the
 * disabled-account bit), which cannot run against slapd: untested against a real AD.
 */
import { describe, expect, it } from 'vitest';
import {
  adAccountDisabled,
  configProblem,
  directParentsFilter,
  escapeDnValue,
  escapeFilterValue,
  firstRdnValue,
  groupSearchFilter,
  inChainGroupsFilter,
  MISSING_TRANSPORT,
  normalizeDn,
  userFilter,
  wrapFilter,
} from './directory.rules.js';

describe('escapeFilterValue (RFC 4515)', () => {
  it.each([
    ['alice', 'alice'],
    ['*', '\\2a'],
    ['(', '\\28'],
    [')', '\\29'],
    ['\\', '\\5c'],
    ['\0', '\\00'],
    ['*)(uid=*))(|(uid=*', '\\2a\\29\\28uid=\\2a\\29\\29\\28|\\28uid=\\2a'],
    ['Zoë', 'Zoë'],
    ['cn=ops (eu)*,ou=groups', 'cn=ops \\28eu\\29\\2a,ou=groups'],
  ])('%j -> %j', (input, output) => {
    expect(escapeFilterValue(input)).toBe(output);
  });
});

describe('escapeDnValue (RFC 4514)', () => {
  it.each([
    ['Smith, John', 'Smith\\, John'],
    ['a+b', 'a\\+b'],
    ['"q"', '\\"q\\"'],
    ['x;y<z>', 'x\\;y\\<z\\>'],
    ['back\\slash', 'back\\\\slash'],
    ['#hash', '\\#hash'],
    [' lead', '\\ lead'],
    ['trail ', 'trail\\ '],
    ['nul\0', 'nul\\00'],
  ])('%j -> %j', (input, output) => {
    expect(escapeDnValue(input)).toBe(output);
  });
});

describe('DNs', () => {
  it('compares DNs case-insensitively and without spaces around separators', () => {
    expect(normalizeDn(' CN=Net Ops, OU=Groups ,dc=Example,dc=org ')).toBe(
      'cn=net ops,ou=groups,dc=example,dc=org',
    );
  });
  it('takes the first RDN value as a display name', () => {
    expect(firstRdnValue('cn=Net Ops,ou=groups,dc=x')).toBe('Net Ops');
    expect(firstRdnValue('cn=Smith\\, John,ou=people')).toBe('Smith, John');
  });
});

describe('filters', () => {
  it('finds one OpenLDAP account with the escaped login', () => {
    expect(userFilter('openldap', '(objectClass=inetOrgPerson)', 'uid', '*)(uid=*')).toBe(
      '(&(objectClass=inetOrgPerson)(uid=\\2a\\29\\28uid=\\2a))',
    );
  });

  it('leaves disabled Active Directory accounts out (userAccountControl bit 2)', () => {
    expect(
      userFilter(
        'active_directory',
        '(&(objectCategory=person)(objectClass=user))',
        'sAMAccountName',
        'jdoe',
      ),
    ).toBe(
      '(&(&(objectCategory=person)(objectClass=user))(sAMAccountName=jdoe)(!(userAccountControl:1.2.840.113556.1.4.803:=2)))',
    );
  });

  it('wraps a filter typed without parentheses', () => {
    expect(wrapFilter('objectClass=person')).toBe('(objectClass=person)');
    expect(wrapFilter(' (objectClass=person) ')).toBe('(objectClass=person)');
  });

  it("uses Active Directory's in-chain rule with the escaped user DN", () => {
    expect(inChainGroupsFilter('CN=Doe\\, John (ext),OU=Users,DC=corp,DC=example')).toBe(
      '(&(objectClass=group)(member:1.2.840.113556.1.4.1941:=CN=Doe\\5c, John \\28ext\\29,OU=Users,DC=corp,DC=example))',
    );
  });

  it('escapes a group DN with metacharacters in the OpenLDAP parent lookup', () => {
    expect(directParentsFilter('cn=ops (eu)*,ou=groups')).toContain(
      '(|(member=cn=ops \\28eu\\29\\2a,ou=groups)(uniqueMember=cn=ops \\28eu\\29\\2a,ou=groups))',
    );
  });

  it('searches groups by an escaped substring of cn', () => {
    expect(groupSearchFilter('a*b')).toMatch(/\(cn=\*a\\2ab\*\)\)$/);
    expect(groupSearchFilter('  ')).not.toContain('(cn=');
  });

  it('reads the AD disabled bit', () => {
    expect(adAccountDisabled('514')).toBe(true);
    expect(adAccountDisabled('512')).toBe(false);
    expect(adAccountDisabled(undefined)).toBe(false);
    expect(adAccountDisabled('junk')).toBe(false);
  });
});

describe('configProblem', () => {
  const full = { enabled: true, host: 'h', base_dn: 'b', bind_dn: 'd', use_tls: true };
  it('accepts a full enabled config and a disabled empty one', () => {
    expect(configProblem(full)).toBeNull();
    expect(configProblem({ enabled: false })).toBeNull();
  });
  it('needs host, base_dn, bind_dn and a transport when enabled', () => {
    expect(configProblem({ ...full, host: ' ' })).toBe(
      'The host field is required when enabled is true.',
    );
    expect(configProblem({ ...full, use_tls: false })).toBe(MISSING_TRANSPORT);
  });
  it('refuses LDAPS and StartTLS together', () => {
    expect(configProblem({ ...full, use_ssl: true })).toMatch(/not both/);
  });
});
