/**
 * Flap control for legacy alerts (designed; issue 17 "Beyond the peers"): a link or a device that
 * changes state again and again notifies once, not at every change.
 *
 * - A legacy alert is flapping once it has changed state `transitions` times within
 *   `window_minutes`. The change that crosses the threshold and every later one open or close
 *   their occurrences as usual, but an occurrence opened while flapping is recorded suppressed
 *   (`flapping: ...` in the history) and consults no route.
 * - Flapping ends when the alert has not changed for `stable_minutes`. If it settled down, the
 *   occurrence left open is routed then: the operator hears once about the state it settled in;
 *   if it settled up, nothing is sent (there are no recovery notifications).
 * - These settings are the appliance's own (`GET/PUT /api/alert-flap-control`); the spec's
 *   `throttle_*` fields stay stored and inert. Flap memory is in process: a restart starts
 *   every alert as not flapping.
 *
 * Pure: the engine feeds it changes and the clock.
 */

export interface FlapSettings {
  enabled: boolean;
  /** State changes within the window that make an alert flapping (2 to 100). */
  transitions: number;
  window_minutes: number;
  /** Minutes without a change after which flapping ends. */
  stable_minutes: number;
}

export const DEFAULT_FLAP_SETTINGS: FlapSettings = {
  enabled: true,
  transitions: 5,
  window_minutes: 10,
  stable_minutes: 10,
};

export const FLAP_LIMITS = {
  transitions: { min: 2, max: 100 },
  window_minutes: { min: 1, max: 1440 },
  stable_minutes: { min: 1, max: 1440 },
} as const;

/** Field errors of a settings body (empty when valid); `enabled` must be a boolean. */
export function flapSettingsErrors(body: Record<string, unknown>): Record<string, string> {
  const errors: Record<string, string> = {};
  if (typeof body.enabled !== 'boolean') errors.enabled = 'enabled must be true or false.';
  for (const [field, { min, max }] of Object.entries(FLAP_LIMITS)) {
    const v = body[field];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      errors[field] = `${field} must be an integer from ${min} to ${max}.`;
  }
  return errors;
}

interface AlertFlapState {
  /** Change times within the window, oldest first. */
  changes: number[];
  flapping: boolean;
  lastChange: number;
}

export interface FlapVerdict {
  /** The alert is flapping after this change (notifications of new occurrences are held). */
  flapping: boolean;
  /** This change made it flapping. */
  started: boolean;
  /** Changes counted within the window. */
  changes: number;
}

export class FlapDetector {
  private readonly alerts = new Map<number, AlertFlapState>();

  /** Records one state change of a legacy alert at `at`. */
  change(alertId: number, at: number, settings: FlapSettings): FlapVerdict {
    if (!settings.enabled) {
      this.alerts.delete(alertId);
      return { flapping: false, started: false, changes: 0 };
    }
    let state = this.alerts.get(alertId);
    if (!state) {
      state = { changes: [], flapping: false, lastChange: at };
      this.alerts.set(alertId, state);
    }
    state.changes.push(at);
    state.lastChange = Math.max(state.lastChange, at);
    const since = at - settings.window_minutes * 60_000;
    while (state.changes.length > 0 && state.changes[0]! < since) state.changes.shift();
    const started = !state.flapping && state.changes.length >= settings.transitions;
    if (started) state.flapping = true;
    return { flapping: state.flapping, started, changes: state.changes.length };
  }

  isFlapping(alertId: number): boolean {
    return this.alerts.get(alertId)?.flapping ?? false;
  }

  /**
   * Ends flapping for the alerts quiet for `stable_minutes` (all of them when flap control is
   * off) and forgets alerts with nothing left to remember; answers the ids whose flapping ended.
   */
  settle(now: number, settings: FlapSettings): number[] {
    const ended: number[] = [];
    const quietSince = now - settings.stable_minutes * 60_000;
    const windowSince = now - settings.window_minutes * 60_000;
    for (const [id, state] of this.alerts) {
      if (state.flapping && (!settings.enabled || state.lastChange <= quietSince)) {
        state.flapping = false;
        state.changes = [];
        ended.push(id);
      }
      if (!state.flapping && state.lastChange < windowSince) this.alerts.delete(id);
    }
    return ended;
  }

  /** Alerts currently flapping (for the catalogue and the metrics). */
  flappingIds(): number[] {
    return [...this.alerts].filter(([, s]) => s.flapping).map(([id]) => id);
  }
}
