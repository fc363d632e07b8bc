/**
 * The command line (config.ts): values that start with `-` (base64url tokens and keys do, one
 * time in 64) are values, not options; a missing required option is named.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './config.js';

const base = ['--server', 'https://127.0.0.1:8443', '--state-dir', '/tmp/agent-state'];

describe('agent command line', () => {
  it('reads a token and a release key that start with a dash as values', () => {
    const token = `-${'A'.repeat(42)}`;
    const key = '-QZ4mQkq7TnC0y3e2m2mU1ZnJm8uXy0KqQ4uJ7X9a4';
    const config = parseConfig([...base, '--enroll', token, '--release-key', key]);
    expect(config.enrollToken).toBe(token);
    expect(config.releaseKey).toBe(key);
    expect(parseConfig([...base, `--release-key=${key}`]).releaseKey).toBe(key);
  });

  it('names what is missing or unknown', () => {
    expect(() => parseConfig(['--state-dir', '/tmp/x'])).toThrow(ConfigError);
    expect(() => parseConfig([...base, '--no-such-option', 'x'])).toThrow(ConfigError);
  });
});
