/**
 * The captures feature: packet capture through dumpcap or libpcap (`cap`), pcapng files, chunk
 * polling and downloads (spec part 3 > Packet capture; docs/features/captures.md). What others use:
 *
 * - `createCaptures(ctx, {devices, sniffInterfaces})`: builds the feature (composition root only);
 *   `sniffInterfaces` is the provider of the `use_sniffer` interfaces the settings feature fills.
 * - `listCapturesFor(service, identity)` / `readCaptureFor(service, identity, id)`: the capture
 *   records a caller may see (own; all for `sa`), for MCP.
 */
import { isSuperAdmin, type Identity } from '../../platform/http/identity.js';
import { captureRecord } from './capture-record.rules.js';
import type { CaptureRecord } from './captures.schema.js';
import type { CapturesService } from './captures.service.js';

export {
  CAPTURE_RETENTION_DAYS,
  createCaptures,
  registerCaptureRetention,
  type Captures,
} from './captures-feature.service.js';
export { noSniffInterfaces, type SniffInterfacesProvider } from './capture-interfaces.service.js';
export type { CaptureRecord } from './captures.schema.js';
export type { CapturesService } from './captures.service.js';

/** The captures the identity may see, newest first, at most 200. */
export function listCapturesFor(service: CapturesService, identity: Identity): CaptureRecord[] {
  return service.list(isSuperAdmin(identity) ? null : identity.user.id).map(captureRecord);
}

/** One capture the identity may see, or null (missing and invisible alike). */
export function readCaptureFor(
  service: CapturesService,
  identity: Identity,
  id: number,
): CaptureRecord | null {
  const row = service.find(id);
  if (!row || (!isSuperAdmin(identity) && row.user_id !== identity.user.id)) return null;
  return captureRecord(row);
}
