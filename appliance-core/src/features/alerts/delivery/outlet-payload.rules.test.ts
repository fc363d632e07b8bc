import { describe, expect, it } from 'vitest';
import {
  discordPayload,
  MAX_CUSTOM_HEADERS,
  slackPayload,
  validAuthorization,
  validateHeaders,
} from './outlet-payload.rules.js';
import { buildOutletRequest, recipientsOf } from './outlet-request.rules.js';

const n = {
  occurrenceId: 1,
  alertLabel: 'a',
  severity: 1,
  subject: 's'.repeat(400),
  text: 't'.repeat(5000),
  html: null,
  variables: {},
};

describe('validateHeaders', () => {
  it('accepts an object or a list of {name, value}', () => {
    expect(validateHeaders({ 'X-Team': 'noc', 'X-N': 3 })).toEqual({
      headers: { 'X-Team': 'noc', 'X-N': '3' },
      problems: [],
    });
    expect(
      validateHeaders([
        { name: 'X-A', value: '1' },
        { key: 'X-B', value: '2' },
      ]).headers,
    ).toEqual({
      'X-A': '1',
      'X-B': '2',
    });
    expect(validateHeaders(undefined)).toEqual({ headers: {}, problems: [] });
  });

  it('refuses CR, LF, NUL, bad names, transport headers, Authorization and too many headers', () => {
    const { headers, problems } = validateHeaders({
      'X-A': 'a\r\nX-Injected: 1',
      'X-B': 'b\nc',
      'X-C': 'c\0',
      'Bad Name': 'x',
      Host: 'evil.example',
      'Content-Length': '0',
      'Transfer-Encoding': 'chunked',
      Authorization: 'Bearer x',
      'X-Object': { a: 1 },
    });
    expect(headers).toEqual({});
    expect(problems).toEqual([
      'The header X-A must not contain CR, LF or NUL',
      'The header X-B must not contain CR, LF or NUL',
      'The header X-C must not contain CR, LF or NUL',
      'The header name "Bad Name" is not valid',
      'The header Host is set by the appliance and cannot be overridden',
      'The header Content-Length is set by the appliance and cannot be overridden',
      'The header Transfer-Encoding is set by the appliance and cannot be overridden',
      'Use authorization_header for the Authorization header (it is stored encrypted)',
      'The header X-Object needs a text value',
    ]);
    const many = Object.fromEntries(
      Array.from({ length: MAX_CUSTOM_HEADERS + 1 }, (_, i) => [`X-${i}`, 'v']),
    );
    expect(validateHeaders(many).problems).toContain(
      `At most ${MAX_CUSTOM_HEADERS} custom headers are allowed`,
    );
    expect(validateHeaders('x: y').problems).toEqual([
      'The headers must be an object of names and values',
    ]);
  });

  it('checks the authorization header value', () => {
    expect(validAuthorization('Bearer abc')).toBe('Bearer abc');
    expect(validAuthorization('Bearer abc\r\nX: 1')).toBeNull();
    expect(validAuthorization('')).toBeNull();
    expect(validAuthorization(42)).toBeNull();
  });
});

describe('payload limits', () => {
  it('clips Slack header (150) and section (3000), Discord title (256) and description (4096)', () => {
    const slack = slackPayload(n) as { blocks: { text: { text: string } }[] };
    expect(slack.blocks[0]!.text.text).toHaveLength(150);
    expect(slack.blocks[1]!.text.text).toHaveLength(3000);
    const discord = discordPayload(n, 0) as { embeds: { title: string; description: string }[] };
    expect(discord.embeds[0]!.title).toHaveLength(256);
    expect(discord.embeds[0]!.description).toHaveLength(4096);
  });
});

describe('buildOutletRequest and recipientsOf', () => {
  it('refuses a bad method or authorization header, and reads recipients', () => {
    const outlet = { id: 1, type: 'webhook' as const, name: 'w', rate_limit_per_min: null };
    expect(
      buildOutletRequest(
        { ...outlet, config: { url: 'http://x.example/', method: 'DELETE' } },
        n,
        0,
      ),
    ).toEqual({
      ok: false,
      error: 'The webhook method must be one of POST, PUT, PATCH',
    });
    expect(
      buildOutletRequest(
        { ...outlet, config: { url: 'http://x.example/', authorization_header: 'a\nb' } },
        n,
        0,
      ),
    ).toEqual({ ok: false, error: 'The authorization header must be text without CR, LF or NUL' });
    expect(buildOutletRequest({ ...outlet, config: {} }, n, 0)).toEqual({
      ok: false,
      error: 'The outlet has no URL',
    });
    const ok = buildOutletRequest(
      {
        ...outlet,
        config: { url: 'http://x.example/', method: 'put', authorization_header: 'Basic Zm9v' },
      },
      n,
      0,
    );
    expect(ok).toMatchObject({
      ok: true,
      request: { method: 'PUT', headers: { authorization: 'Basic Zm9v' } },
    });
    expect(
      recipientsOf({
        email: 'a@x.example, b@x.example;bad',
        emails: ['c@x.example', 'a@x.example', 7],
      }),
    ).toEqual(['a@x.example', 'b@x.example', 'c@x.example']);
  });
});
