/**
 * Network tools (spec part 2 > Network tools, permission `tools`), except the SNMP walk pair.
 * Every target is checked (platform/net/targets.ts) before any process starts; a bad one gets
 * the endpoint's failure shape. Every route that runs a tool takes a run slot first
 * (tool-runs.service.ts): past the per-user or appliance limit it answers 429 with Retry-After.
 */
import { Type } from '@sinclair/typebox';
import type { CoreContext } from '../../platform/context.js';
import { defineEventStream, defineRoute, ERROR_PRESETS } from '../../platform/http/define-route.js';
import { failure } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { ErrorBody, MessageBody, StatusMessageBody } from '../../platform/http/schemas.js';
import { disconnectSignal } from '../../platform/http/sse.js';
import {
  classifyAddress,
  parseTarget,
  type AddressClass,
  type Target,
} from '../../platform/net/targets.js';
import { MTR_STREAM_END } from './mtr.tool.js';
import { normalizeTiming, parsePortList, wantsServiceDetection } from './portscan.tool.js';
import {
  GeoAnswer,
  HistoryIdParams,
  HistoryList,
  HistoryQuery,
  IpParams,
  IperfBody,
  IperfResult,
  IperfServerStatus,
  MtrFrame,
  MtrParams,
  PING_EVENTS,
  PingAnswer,
  PingParams,
  PortParams,
  PortscanAnswer,
  PortscanBody,
  PortServiceNameBody,
  PortServiceNameDeleted,
  PortServiceNames,
  PortServiceNameSaved,
  SpeedTestResult,
  TraceAnswer,
  TraceParams,
  WhoisAnswer,
} from './tools.schema.js';
import type { ToolsService } from './tools.service.js';

const TAGS = ['tools'];

export const INVALID_TARGET = 'Invalid target: give a host name or an IP address';
export const INVALID_HOST = 'Invalid host';
export const INVALID_IP = 'Invalid IP address format';
export const INVALID_PORTLIST = 'Invalid port list: give ports and ranges such as 22,80,8000-8100';
export const HISTORY_NOT_FOUND = 'History entry not found';
export const PORT_NAME_NOT_FOUND = 'No service name is stored for this port';

const CLASS_LABEL: Record<Exclude<AddressClass, 'global'>, string> = {
  private: 'a private address',
  loopback: 'a loopback address',
  'link-local': 'a link-local address',
  'carrier-grade-nat': 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  documentation: 'a documentation address',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
};

export function notRoutableMessage(ip: string, kind: Exclude<AddressClass, 'global'>): string {
  return `Only globally routable IP addresses can be located (${ip} is ${CLASS_LABEL[kind]})`;
}

/** A request a tool cannot run: HTTP 200 `{status: false, message}`, as the tool's own failures. */
const refusal = (message: string) => failure(200, message);

/** The checked target of a tool request (a host name or an IP literal). */
function targetOf(text: string): Target {
  const target = parseTarget(text);
  if (!target) throw refusal(INVALID_TARGET);
  return target;
}

/** The checked IP literal of a tool request. */
function ipOf(text: string): Target {
  const ip = parseTarget(text);
  if (!ip || ip.kind === 'hostname') throw refusal(INVALID_IP);
  return ip;
}

/** What the tool routes declare alike: permission `tools`, the tools' OpenAPI group. */
const TOOL_ROUTE = { access: allOf('tools'), tags: TAGS } as const;
/** Tool endpoints that answer HTTP 200 `{status: false, message}` for every failure of the tool. */
const TOOL = { ...TOOL_ROUTE, errors: 'tool' } as const;

export interface ToolsRoutesDeps {
  tools: ToolsService;
}

export async function toolsRoutes(
  app: App,
  _ctx: CoreContext,
  deps: ToolsRoutesDeps,
): Promise<void> {
  const { tools } = deps;
  /** Takes a tool-run slot for the caller (429 with Retry-After past the limits). */
  const admission = tools.runs.hook;

  // spec: part2 > Network tools > SSEgetPingInfo
  defineEventStream(app, {
    ...TOOL,
    method: 'GET',
    url: '/api/SSEgetPingInfo/:pingTarget',
    admission,
    summary: 'Ping a target 10 times, one event per reply as it arrives, then the summary',
    params: PingParams,
    frames:
      'data: {icmp_seq, latency (ms), summary: null} per reply as it arrives, then data: {summary: {total_transmitted, total_received, packet_loss}}; on failure event: error with data {message}',
    events: PING_EVENTS,
    stream: async (request, stream) =>
      tools.streamPing(targetOf(request.params.pingTarget), stream),
  });

  // spec: part2 > Network tools > getPingInfo
  defineRoute(app, {
    ...TOOL,
    method: 'POST',
    url: '/api/getPingInfo/:pingTarget',
    admission,
    summary: 'Ping a target 4 times (answers within about ten seconds)',
    params: PingParams,
    response: { 200: PingAnswer },
    handler: async (request, reply) => {
      const target = targetOf(request.params.pingTarget);
      const result = await tools.ping(target, disconnectSignal(reply));
      return { status: 201 as const, message: JSON.stringify(result) };
    },
  });

  // spec: part2 > Network tools > SSEgetMTRInfo
  defineEventStream(app, {
    ...TOOL,
    method: 'GET',
    url: '/api/SSEgetMTRInfo/:mtrTarget',
    admission,
    summary:
      'MTR for 10 cycles: sent, host and reply frames, always ending with event: stream-complete',
    params: MtrParams,
    frames:
      "data: {type: 'sent', hop}, {type: 'host', hop, host} or {type: 'reply', hop, latency (ms)} as they happen; on failure event: error with data {message}; always event: stream-complete with data {} last",
    events: [
      { description: 'A probe sent, a hop host, or a reply, as they happen', data: MtrFrame },
    ],
    last: MTR_STREAM_END,
    stream: async (request, stream) => tools.streamMtr(targetOf(request.params.mtrTarget), stream),
  });

  // spec: part2 > Network tools > getTracerouteInfo
  defineRoute(app, {
    ...TOOL,
    method: 'POST',
    url: '/api/getTracerouteInfo/:traceTarget',
    admission,
    summary: 'Traceroute (at most 10 hops) with the path MTU at each hop',
    params: TraceParams,
    response: { 200: TraceAnswer },
    handler: async (request, reply) => {
      const target = targetOf(request.params.traceTarget);
      return {
        status: 201 as const,
        message: await tools.traceroute(target, disconnectSignal(reply)),
      };
    },
  });

  // spec: part2 > Network tools > getPortscanInfo
  defineRoute(app, {
    ...TOOL,
    method: 'POST',
    url: '/api/getPortscanInfo',
    admission,
    summary: 'Port scan with nmap (timing 3, 4 or 5; optional version detection)',
    body: PortscanBody,
    response: { 200: PortscanAnswer },
    handler: async (request, reply) => {
      const body = request.body;
      const target = targetOf(body.ip.trim());
      const ports = parsePortList(body.portlist);
      if (!ports) throw refusal(INVALID_PORTLIST);
      const outcome = await tools.portscan(
        target,
        ports,
        normalizeTiming(body.timing),
        wantsServiceDetection(body.service),
        disconnectSignal(reply),
      );
      if (outcome.kind === 'timeout')
        return { status: 'timeout' as const, message: outcome.message };
      return { status: 201 as const, message: outcome.output };
    },
  });

  // spec: part2 > Network tools > getPortServiceNames
  defineRoute(app, {
    ...TOOL_ROUTE,
    method: 'GET',
    url: '/api/getPortServiceNames',
    errors: 'statusMessage',
    summary: 'The operator-maintained map of port numbers to service names',
    response: { 200: PortServiceNames },
    handler: async () => ({ status: 200 as const, services: tools.portServiceNames() }),
  });

  // designed: part2 > Network tools > port service names are operator-maintained
  const NAME_ADMIN = { access: allOf('system'), errors: 'errors', tags: TAGS } as const;
  defineRoute(app, {
    ...NAME_ADMIN,
    method: 'PUT',
    url: '/api/port-service-names/:port',
    summary: 'Set the service name shown for a port',
    params: PortParams,
    body: PortServiceNameBody,
    response: { 200: PortServiceNameSaved },
    handler: async (request) => {
      const { port } = request.params;
      tools.savePortServiceName(port, request.body.name);
      return { status: 200 as const, port, name: request.body.name };
    },
  });

  defineRoute(app, {
    ...NAME_ADMIN,
    method: 'DELETE',
    url: '/api/port-service-names/:port',
    summary: 'Remove the service name of a port',
    params: PortParams,
    response: { 200: PortServiceNameDeleted, 404: ErrorBody },
    handler: async (request) => {
      const { port } = request.params;
      if (!tools.deletePortServiceName(port)) throw failure(404, PORT_NAME_NOT_FOUND);
      return { status: 200 as const, port };
    },
  });

  // spec: part2 > Network tools > getSpeedTestInfo
  defineRoute(app, {
    ...TOOL_ROUTE,
    method: 'POST',
    url: '/api/getSpeedTestInfo',
    admission,
    errors: { ...ERROR_PRESETS.message, internal: 'Speed test failed' },
    summary: 'Run a speed test against the configured server and record it',
    response: {
      201: Type.Object({ message: SpeedTestResult }),
      409: MessageBody,
      500: Type.Union([StatusMessageBody, MessageBody]),
    },
    handler: async (_request, reply) => {
      const result = await tools.speedTest(disconnectSignal(reply));
      reply.code(201);
      return { message: result };
    },
  });

  // spec: part2 > Network tools > getSpeedTestHistory
  defineRoute(app, {
    ...TOOL_ROUTE,
    method: 'GET',
    url: '/api/getSpeedTestHistory',
    errors: 'message',
    summary: 'Throughput history (speed tests and iperf3 client runs), newest first',
    querystring: HistoryQuery,
    response: { 200: HistoryList },
    handler: async (request) => ({ data: tools.history(request.query.limit ?? 100) }),
  });

  // spec: part2 > Network tools > speedtest-history/{id}
  defineRoute(app, {
    ...TOOL_ROUTE,
    method: 'DELETE',
    url: '/api/speedtest-history/:id',
    errors: 'statusMessage',
    summary: 'Delete a throughput history row',
    params: HistoryIdParams,
    response: { 200: Type.Object({ status: Type.Literal(200) }), 404: StatusMessageBody },
    handler: async (request) => {
      if (!tools.deleteHistory(request.params.id)) throw failure(404, HISTORY_NOT_FOUND);
      return { status: 200 as const };
    },
  });

  // spec: part2 > Network tools > iperf/client/run
  defineRoute(app, {
    ...TOOL_ROUTE,
    method: 'POST',
    url: '/api/iperf/client/run',
    admission,
    errors: {
      ...ERROR_PRESETS.statusMessage,
      validationStatus: 422,
      internal: 'iperf3 client run failed',
    },
    summary: 'Run the iperf3 client against a host (blocking) and record it',
    body: IperfBody,
    response: {
      201: Type.Object({ message: IperfResult }),
      409: StatusMessageBody,
      502: StatusMessageBody,
    },
    handler: async (request, reply) => {
      const body = request.body;
      const target = parseTarget(body.host.trim());
      if (!target) throw failure(422, INVALID_HOST);
      const result = await tools.iperfClient(
        {
          target,
          port: body.port ?? 5201,
          duration: body.duration ?? 10,
          protocol: body.protocol ?? 'tcp',
          direction: body.direction ?? 'download',
        },
        disconnectSignal(reply),
      );
      reply.code(201);
      return { message: result };
    },
  });

  // spec: part2 > Network tools > iperf/server
  const SERVER = {
    ...TOOL_ROUTE,
    errors: { ...ERROR_PRESETS.statusMessage, internal: 'iperf3 server failed' },
    response: { 200: IperfServerStatus, 500: StatusMessageBody },
  } as const;
  const serverStatus = (hostname: string) => ({
    ...tools.iperfServer.status(),
    connectHost: hostname.replace(/^\[(.*)\]$/, '$1'),
  });

  defineRoute(app, {
    ...SERVER,
    method: 'POST',
    url: '/api/iperf/server/start',
    summary: 'Start the iperf3 server (port 5201)',
    handler: async (request) => {
      await tools.iperfServer.start();
      return serverStatus(request.hostname);
    },
  });

  defineRoute(app, {
    ...SERVER,
    method: 'POST',
    url: '/api/iperf/server/stop',
    summary: 'Stop the iperf3 server (idempotent)',
    handler: async (request) => {
      await tools.iperfServer.stop();
      return serverStatus(request.hostname);
    },
  });

  defineRoute(app, {
    ...SERVER,
    method: 'GET',
    url: '/api/iperf/server/status',
    summary: 'State of the iperf3 server',
    handler: async (request) => serverStatus(request.hostname),
  });

  // spec: part2 > Network tools > tools/whois
  defineRoute(app, {
    ...TOOL,
    method: 'GET',
    url: '/api/tools/whois/:ip',
    admission,
    summary: 'whois record of an IP address',
    params: IpParams,
    response: { 200: WhoisAnswer },
    handler: async (request, reply) => {
      const ip = ipOf(request.params.ip);
      return { status: 201 as const, message: await tools.whois(ip, disconnectSignal(reply)) };
    },
  });

  // spec: part2 > Network tools > tools/geoip
  defineRoute(app, {
    ...TOOL,
    method: 'GET',
    url: '/api/tools/geoip/:ip',
    admission,
    summary: 'Geolocation of a globally routable IP address',
    params: IpParams,
    response: { 200: GeoAnswer },
    handler: async (request, reply) => {
      const ip = ipOf(request.params.ip);
      const kind = classifyAddress(ip.value);
      if (kind !== 'global')
        throw refusal(notRoutableMessage(ip.value, kind as Exclude<AddressClass, 'global'>));
      return {
        status: 201 as const,
        message: await tools.locate(ip.value, disconnectSignal(reply)),
      };
    },
  });
}
