/**
 * How the upgrader feature reaches the host: the root helper's Unix socket through the platform's
 * client (platform/host/root-helper.client.ts, shared with the settings feature). Injected into
 * the service, so tests put a fake helper on a temp socket.
 */
import {
  RootHelperClient,
  RootHelperTimeoutError,
  RootHelperUnavailableError,
} from '../../platform/host/root-helper.client.js';
import type {
  RootHelperRequest,
  RootHelperResponse,
} from '../../platform/host/root-helper.protocol.js';

/** The helper is not there (no socket, nobody listening, no permission): this host lacks the mechanism. */
export class HelperUnreachable extends Error {}

export interface UpgraderHost {
  ask(request: RootHelperRequest, timeoutMs: number): Promise<RootHelperResponse>;
}

/**
 * The root helper on `socketPath`, through the platform's one client: an answer outside the
 * protocol comes back as a `failed` answer; a helper that cannot be reached is HelperUnreachable
 * (no package here); one that was reached and did not answer in time is a plain error (a failure).
 */
export function socketUpgraderHost(socketPath: string): UpgraderHost {
  return {
    ask: async (request, timeoutMs) => {
      try {
        return await new RootHelperClient({ socketPath, timeoutMs }).call(request);
      } catch (err) {
        if (err instanceof RootHelperTimeoutError) throw new Error(err.message);
        if (err instanceof RootHelperUnavailableError) throw new HelperUnreachable(err.message);
        throw err;
      }
    },
  };
}
