/**
 * The agents feature (issue 20; docs/features/agents.md, docs/agent-protocol.md): enrollment
 * tokens, enroll and check-in, adoption by key, the signed download, the probes, and the
 * service and event-log trackers fed through the agent channel.
 *
 * - `createAgents(ctx, {devices, storage, eventLogIntake})`: builds the feature (composition root).
 */
import type { CoreContext } from '../../platform/context.js';
import type { StorageWriter } from '../../platform/db/storage-writer.js';
import type { App } from '../../platform/http/http-server.js';
import type { Identity } from '../../platform/http/identity.js';
import type { DevicesService } from '../devices/index.js';
import type { EventLogIntake } from '../logs/index.js';
import { TrackerWrites } from '../trackers/index.js';
import { AgentChannel } from './agent-channel.engine.js';
import { AgentKeys } from './agent-keys.service.js';
import { AgentTrackersEngine } from './agent-trackers.engine.js';
import { agentsRoutes } from './agents.routes.js';
import { AgentsService } from './agents.service.js';

export interface Agents {
  service: AgentsService;
  channel: AgentChannel;
  trackers: AgentTrackersEngine;
  register(app: App): Promise<void>;
}

/** The feature's own view of every device (the pollers act for no user). */
const SYSTEM: Identity = {
  user: {
    id: 0,
    username: 'system',
    email: '',
    first_name: '',
    last_name: '',
    auth_source: 'local',
    created_at: 0,
    updated_at: 0,
  },
  tokenId: null,
  sessionId: null,
  scopes: [],
  permissions: new Set(),
  tagIds: null,
  tagSlugs: [],
};

export function createAgents(
  ctx: CoreContext,
  deps: { devices: DevicesService; storage: StorageWriter; eventLogIntake: EventLogIntake },
): Agents {
  const keys = new AgentKeys(ctx.db, ctx.secrets, ctx.clock.now());
  const channel = new AgentChannel({
    keys,
    clock: ctx.clock,
    port: ctx.config.agentUdpPort ?? 489,
    bind: ctx.config.bind,
    log: ctx.log,
  });
  const service = new AgentsService(ctx, deps.devices, keys, channel);
  const trackers = new AgentTrackersEngine({
    db: ctx.db,
    clock: ctx.clock,
    log: ctx.log,
    writes: new TrackerWrites(
      deps.storage.producer('agents', { flushMs: 1000, maxQueued: 50_000 }),
    ),
    intake: deps.eventLogIntake,
    agentOf: (deviceId) => {
      try {
        return service.target(SYSTEM, deviceId, 'missing').agent;
      } catch {
        return null;
      }
    },
    request: (target, op, args, waitMs) => channel.request(target, op, args, waitMs),
  });
  ctx.metrics.register('agents', () => [
    {
      name: 'appliance_agent_datagrams_total',
      help: 'Datagrams of the agent channel: sent, and received but matching no exchange (dropped).',
      type: 'counter',
      samples: [
        { labels: { outcome: 'sent' }, value: channel.counters.sent },
        { labels: { outcome: 'dropped' }, value: channel.counters.dropped },
      ],
    },
    {
      name: 'appliance_agent_requests_total',
      help: 'Signed requests to agents by outcome: answered through /api/agent/results, or unanswered when the waiter gave up.',
      type: 'counter',
      samples: [
        { labels: { outcome: 'answered' }, value: channel.counters.results },
        { labels: { outcome: 'unanswered' }, value: channel.counters.unanswered },
      ],
    },
    {
      name: 'appliance_agent_requests_outstanding',
      help: 'Signed requests to agents still within their validity.',
      type: 'gauge',
      samples: [{ value: channel.outstandingCount() }],
    },
    {
      name: 'appliance_agent_tracker_polls_total',
      help: 'Service readings and event-log polls through agents, and failed polls.',
      type: 'counter',
      samples: [
        { labels: { kind: 'service' }, value: trackers.counters.serviceReadings },
        { labels: { kind: 'eventlog' }, value: trackers.counters.eventPolls },
        { labels: { kind: 'failure' }, value: trackers.counters.failures },
      ],
    },
  ]);
  return {
    service,
    channel,
    trackers,
    register: (app) => agentsRoutes(app, ctx, { agents: service }),
  };
}
