import { registrationCheckGroup } from '../settings.rules.js';

/** The injection strings of issue 18 ("Proof > Injection"). */
export const INJECTIONS = [
  ';id',
  '$(id)',
  '`id`',
  '%0aid',
  'a\nid',
  '-rf',
  '--help',
  'eth0\u0000',
  'x'.repeat(10 * 1024),
];

/** A registration key with its check group, from its first five groups. */
export const validKey = (body: string) => `${body}-${registrationCheckGroup(body)}`;
