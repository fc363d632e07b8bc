/**
 * The flows feature (spec part 3 "Flow record", "Flow explorer"; issue 15): NetFlow v5, v9 and
 * IPFIX collection, storage in hourly partitions with an hourly conversation rollup, and the
 * flow explorer's endpoints. What others use:
 *
 * - `createFlows(ctx, {storage, devices, scheduler, counters})`: builds the feature (composition
 *   root only); its `collector` is the engine to start, `register(app)` adds the routes.
 * - `FlowsReader#list / #aggregated / #top(identity, query)`: the flow list, the aggregated list
 *   and the top-talkers aggregate for an identity (scope and saved exclusions applied), for the
 *   console's charts, alerting and MCP.
 * - `FlowDecoder` (flow-packet.rules.mjs): the pure decoder, for tools and benchmarks.
 */
export {
  createFlows,
  type Flows,
  FLOW_RETENTION_DAYS,
  FLOW_ROTATION,
} from './flows-feature.service.js';
export { CONVERSATION_RETENTION_DAYS, registerFlowRetention } from './flows.writes.js';
export { FlowsReader, type FlowListQuery, type FlowPage } from './flows.service.js';
export { FlowCollectorEngine, type FlowCounters } from './flow-collector.engine.js';
export { FlowDecoder, type FlowRecord, type DecodeResult } from './flow-packet.rules.mjs';
