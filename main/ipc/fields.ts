/** Field shapes shared by several channels. */
import { CONNECTION_ID_PATTERN } from '../../electron/contract/bridge.js';
import { text } from './validate.js';

export const connectionId = text({
  min: 1,
  max: 20,
  pattern: CONNECTION_ID_PATTERN,
  what: 'a connection id',
});

export const applianceUrl = text({ min: 1, max: 2048 });

export const fingerprint = text({
  min: 95,
  max: 95,
  pattern: /^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$/,
  what: 'a SHA-256 fingerprint (32 hexadecimal pairs joined by colons)',
});

export const flowId = text({
  min: 36,
  max: 36,
  pattern: /^[0-9a-f-]{36}$/,
  what: 'a sign-in id',
});
