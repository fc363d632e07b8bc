/**
 * whois for an IP literal. The registry's answer is read as `Key: value` lines; comment lines
 * (`%`, `#`) are skipped and a key that repeats keeps every value, one per line.
 */
import type { Target } from '../../platform/net/targets.js';
import { SYSTEM_TOOLS } from '../../platform/process/system-tools.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import { failureText, type ToolRunner } from './tools.runtime.js';

export const WHOIS_BUDGET_MS = 20_000;
const MAX_KEYS = 200;
const MAX_VALUE = 4096;

export function parseWhois(text: string): Record<string, string> {
  const record: Record<string, string> = Object.create(null) as Record<string, string>;
  let keys = 0;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (/^\s*[%#]/.test(line)) continue;
    const match = /^([A-Za-z][A-Za-z0-9 ._/()-]{0,63}?):\s*(.*?)\s*$/.exec(line);
    if (!match) continue;
    const key = (match[1] as string).trim();
    const value = match[2] as string;
    if (value === '' || key === '__proto__') continue;
    const previous = record[key];
    if (previous === undefined) {
      if (keys >= MAX_KEYS) continue;
      keys++;
      record[key] = value.slice(0, MAX_VALUE);
    } else if (!previous.split('\n').includes(value) && previous.length < MAX_VALUE) {
      record[key] = `${previous}\n${value}`.slice(0, MAX_VALUE);
    }
  }
  return { ...record };
}

export function whoisArgs(ip: Target, server: { host: string; port: number } | null): string[] {
  return [...(server ? ['-h', server.host, '-p', String(server.port)] : []), '--', ip.value];
}

/** The whois record of an IP literal; throws a ToolFailure when there is none. */
export async function whois(
  runner: ToolRunner,
  ip: Target,
  signal?: AbortSignal,
): Promise<Record<string, string>> {
  const result = await runner.run(SYSTEM_TOOLS.whois, {
    args: whoisArgs(ip, runner.options.whoisServer),
    timeoutMs: WHOIS_BUDGET_MS,
    maxOutputBytes: 512 * 1024,
    ...(signal ? { signal } : {}),
  });
  if (result.code !== 0 || result.timedOut)
    throw new ToolFailure(
      `Whois lookup failed: ${failureText(SYSTEM_TOOLS.whois, result, WHOIS_BUDGET_MS)}`,
    );
  const record = parseWhois(result.stdout);
  if (Object.keys(record).length === 0)
    throw new ToolFailure(`No whois record found for ${ip.value}`);
  return record;
}
