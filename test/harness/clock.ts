import type { Clock } from '../../appliance-core/src/platform/time/time.js';

/** A clock that follows real time plus an offset the test can advance (token expiry and the like). */
export class ManualClock implements Clock {
  private offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  advance(ms: number): void {
    this.offset += ms;
  }
}
