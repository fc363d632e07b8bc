/**
 * The discovery feature: local networks (spec part 3 > Appliance settings) and the sweep engine
 * that fills the pending-device list (spec part 2 > Pending devices).
 */
export {
  DiscoveryEngine,
  DEFAULT_DISCOVERY_OPTIONS,
  DISCOVERY_KIND,
  guessProfile,
  type DiscoveryOptions,
  type SweepResult,
} from './discovery.engine.js';
export { localnetsRoutes } from './localnets.routes.js';
