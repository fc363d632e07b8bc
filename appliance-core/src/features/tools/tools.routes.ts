/**
 * Network tools (spec part 2 > Network tools, permission `tools`), except the SNMP walk pair.
 * Every target is checked (platform/net/targets.ts) before any process starts; a bad one gets
 * the endpoint's failure shape.
 */
import { Type } from '@sinclair/typebox';
import type { CoreContext } from '../../platform/context.js';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import {
  ErrorBody,
  MessageBody,
  responses,
  StatusMessageBody,
} from '../../platform/http/schemas.js';
import { disconnectSignal, openEventStream } from '../../platform/http/sse.js';
import { classifyAddress, parseTarget, type AddressClass } from '../../platform/net/targets.js';
import { ToolMissingError } from '../../platform/process/spawn.js';
import { GeoFailure } from './geoip.engine.js';
import { IperfRunError, IperfServerError } from './iperf.engine.js';
import { PingFailure } from './ping.engine.js';
import { normalizeTiming, parsePortList, wantsServiceDetection } from './portscan.engine.js';
import { SpeedTestProtocolError, SpeedTestRunError } from './speedtest.engine.js';
import {
  eventStream,
  GeoAnswer,
  HistoryIdParams,
  HistoryList,
  HistoryQuery,
  IpParams,
  IperfBody,
  IperfResult,
  IperfServerStatus,
  MtrParams,
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
import { ThroughputBusyError, type ToolsService } from './tools.service.js';
import { TraceFailure } from './traceroute.engine.js';
import { WhoisFailure } from './whois.engine.js';
import { errorText } from './tools.runtime.js';

const TAGS = ['tools'];
const TOOLS = allOf('tools');

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

/** Tool endpoints that answer HTTP 200 `{status: false, message}` for every failure of the tool. */
const TOOL: RouteErrors = {
  validation: 'statusMessage',
  validationStatus: 200,
  failure: 'statusMessage',
};
/** A tool failure: HTTP 200 with `{status: false, message}`. */
const toolFailure = (message: string) => failure(200, message);

export interface ToolsRoutesDeps {
  tools: ToolsService;
}

export async function toolsRoutes(
  app: App,
  _ctx: CoreContext,
  deps: ToolsRoutesDeps,
): Promise<void> {
  const { tools } = deps;

  // spec: part2 > Network tools > SSEgetPingInfo
  app.get(
    '/api/SSEgetPingInfo/:pingTarget',
    {
      config: { access: TOOLS, errors: TOOL },
      schema: {
        tags: TAGS,
        summary: 'Ping a target 10 times, one event per reply as it arrives, then the summary',
        params: PingParams,
        response: responses(TOOL, {
          200: eventStream(
            'data: {icmp_seq, latency (ms), summary: null} per reply as it arrives, then data: {summary: {total_transmitted, total_received, packet_loss}}; on failure event: error with data {message}',
          ),
        }),
      },
    },
    async (request, reply) => {
      const stream = openEventStream(reply);
      const target = parseTarget(request.params.pingTarget);
      if (!target) {
        stream.send({ message: INVALID_TARGET }, 'error');
        stream.close();
      } else void tools.streamPing(target, stream);
      return reply;
    },
  );

  // spec: part2 > Network tools > getPingInfo
  app.post(
    '/api/getPingInfo/:pingTarget',
    {
      config: { access: TOOLS, errors: TOOL },
      schema: {
        tags: TAGS,
        summary: 'Ping a target 4 times (answers within about ten seconds)',
        params: PingParams,
        response: responses(TOOL, { 200: PingAnswer }),
      },
    },
    async (request, reply) => {
      const target = parseTarget(request.params.pingTarget);
      if (!target) throw toolFailure(INVALID_TARGET);
      try {
        const result = await tools.ping(target, disconnectSignal(reply));
        return { status: 201 as const, message: JSON.stringify(result) };
      } catch (err) {
        if (err instanceof PingFailure) throw toolFailure(err.message);
        throw err;
      }
    },
  );

  // spec: part2 > Network tools > SSEgetMTRInfo
  app.get(
    '/api/SSEgetMTRInfo/:mtrTarget',
    {
      config: { access: TOOLS, errors: TOOL },
      schema: {
        tags: TAGS,
        summary:
          'MTR for 10 cycles: sent, host and reply frames, always ending with event: stream-complete',
        params: MtrParams,
        response: responses(TOOL, {
          200: eventStream(
            "data: {type: 'sent', hop}, {type: 'host', hop, host} or {type: 'reply', hop, latency (ms)} as they happen; on failure event: error with data {message}; always event: stream-complete with data {} last",
          ),
        }),
      },
    },
    async (request, reply) => {
      const stream = openEventStream(reply);
      const target = parseTarget(request.params.mtrTarget);
      if (!target) {
        stream.send({ message: INVALID_TARGET }, 'error');
        stream.send({}, 'stream-complete');
        stream.close();
      } else void tools.streamMtr(target, stream);
      return reply;
    },
  );

  // spec: part2 > Network tools > getTracerouteInfo
  app.post(
    '/api/getTracerouteInfo/:traceTarget',
    {
      config: { access: TOOLS, errors: TOOL },
      schema: {
        tags: TAGS,
        summary: 'Traceroute (at most 10 hops) with the path MTU at each hop',
        params: TraceParams,
        response: responses(TOOL, { 200: TraceAnswer }),
      },
    },
    async (request, reply) => {
      const target = parseTarget(request.params.traceTarget);
      if (!target) throw toolFailure(INVALID_TARGET);
      try {
        return {
          status: 201 as const,
          message: await tools.traceroute(target, disconnectSignal(reply)),
        };
      } catch (err) {
        if (err instanceof TraceFailure) throw toolFailure(err.message);
        throw err;
      }
    },
  );

  // spec: part2 > Network tools > getPortscanInfo
  app.post(
    '/api/getPortscanInfo',
    {
      config: { access: TOOLS, errors: TOOL },
      schema: {
        tags: TAGS,
        summary: 'Port scan with nmap (timing 3, 4 or 5; optional version detection)',
        body: PortscanBody,
        response: responses(TOOL, { 200: PortscanAnswer }),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const target = parseTarget(body.ip.trim());
      if (!target) throw toolFailure(INVALID_TARGET);
      const ports = parsePortList(body.portlist);
      if (!ports) throw toolFailure(INVALID_PORTLIST);
      const outcome = await tools.portscan(
        target,
        ports,
        normalizeTiming(body.timing),
        wantsServiceDetection(body.service),
        disconnectSignal(reply),
      );
      if (outcome.kind === 'timeout')
        return { status: 'timeout' as const, message: outcome.message };
      if (outcome.kind === 'failed') throw toolFailure(outcome.message);
      return { status: 201 as const, message: outcome.output };
    },
  );

  // spec: part2 > Network tools > getPortServiceNames
  const NAMES: RouteErrors = { validation: 'statusMessage', failure: 'statusMessage' };
  app.get(
    '/api/getPortServiceNames',
    {
      config: { access: TOOLS, errors: NAMES },
      schema: {
        tags: TAGS,
        summary: 'The operator-maintained map of port numbers to service names',
        response: responses(NAMES, { 200: PortServiceNames }),
      },
    },
    async () => ({ status: 200 as const, services: tools.portServiceNames() }),
  );

  // designed: part2 > Network tools > port service names are operator-maintained
  const NAME_ADMIN: RouteErrors = { validation: 'errors', failure: 'error' };
  app.put(
    '/api/port-service-names/:port',
    {
      config: { access: allOf('system'), errors: NAME_ADMIN },
      schema: {
        tags: TAGS,
        summary: 'Set the service name shown for a port',
        params: PortParams,
        body: PortServiceNameBody,
        response: responses(NAME_ADMIN, { 200: PortServiceNameSaved }),
      },
    },
    async (request) => {
      const { port } = request.params;
      tools.savePortServiceName(port, request.body.name);
      return { status: 200 as const, port, name: request.body.name };
    },
  );

  app.delete(
    '/api/port-service-names/:port',
    {
      config: { access: allOf('system'), errors: NAME_ADMIN },
      schema: {
        tags: TAGS,
        summary: 'Remove the service name of a port',
        params: PortParams,
        response: responses(NAME_ADMIN, { 200: PortServiceNameDeleted, 404: ErrorBody }),
      },
    },
    async (request) => {
      const { port } = request.params;
      if (!tools.deletePortServiceName(port)) throw failure(404, PORT_NAME_NOT_FOUND);
      return { status: 200 as const, port };
    },
  );

  // spec: part2 > Network tools > getSpeedTestInfo
  const SPEED: RouteErrors = {
    validation: 'message',
    failure: 'message',
    internal: 'Speed test failed',
  };
  app.post(
    '/api/getSpeedTestInfo',
    {
      config: { access: TOOLS, errors: SPEED },
      schema: {
        tags: TAGS,
        summary: 'Run a speed test against the configured server and record it',
        response: responses(SPEED, {
          201: Type.Object({ message: SpeedTestResult }),
          409: MessageBody,
          500: Type.Union([StatusMessageBody, MessageBody]),
        }),
      },
    },
    async (_request, reply) => {
      try {
        const result = await tools.speedTest(disconnectSignal(reply));
        reply.code(201);
        return { message: result };
      } catch (err) {
        if (err instanceof ThroughputBusyError) throw failure(409, err.message);
        if (err instanceof SpeedTestProtocolError)
          throw failure(500, err.message, { family: 'statusMessage' });
        if (err instanceof SpeedTestRunError) throw failure(500, err.message);
        throw err;
      }
    },
  );

  // spec: part2 > Network tools > getSpeedTestHistory
  const HISTORY: RouteErrors = { validation: 'message', failure: 'message' };
  app.get(
    '/api/getSpeedTestHistory',
    {
      config: { access: TOOLS, errors: HISTORY },
      schema: {
        tags: TAGS,
        summary: 'Throughput history (speed tests and iperf3 client runs), newest first',
        querystring: HistoryQuery,
        response: responses(HISTORY, { 200: HistoryList }),
      },
    },
    async (request) => ({ data: tools.history(request.query.limit ?? 100) }),
  );

  // spec: part2 > Network tools > speedtest-history/{id}
  const HISTORY_DELETE: RouteErrors = { validation: 'statusMessage', failure: 'statusMessage' };
  app.delete(
    '/api/speedtest-history/:id',
    {
      config: { access: TOOLS, errors: HISTORY_DELETE },
      schema: {
        tags: TAGS,
        summary: 'Delete a throughput history row',
        params: HistoryIdParams,
        response: responses(HISTORY_DELETE, {
          200: Type.Object({ status: Type.Literal(200) }),
          404: StatusMessageBody,
        }),
      },
    },
    async (request) => {
      if (!tools.deleteHistory(request.params.id)) throw failure(404, HISTORY_NOT_FOUND);
      return { status: 200 as const };
    },
  );

  // spec: part2 > Network tools > iperf/client/run
  const IPERF: RouteErrors = {
    validation: 'statusMessage',
    validationStatus: 422,
    failure: 'statusMessage',
    internal: 'iperf3 client run failed',
  };
  app.post(
    '/api/iperf/client/run',
    {
      config: { access: TOOLS, errors: IPERF },
      schema: {
        tags: TAGS,
        summary: 'Run the iperf3 client against a host (blocking) and record it',
        body: IperfBody,
        response: responses(IPERF, {
          201: Type.Object({ message: IperfResult }),
          409: StatusMessageBody,
          502: StatusMessageBody,
        }),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const target = parseTarget(body.host.trim());
      if (!target) throw failure(422, INVALID_HOST);
      try {
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
      } catch (err) {
        if (err instanceof ThroughputBusyError) throw failure(409, err.message);
        if (err instanceof IperfRunError) throw failure(502, err.message);
        if (err instanceof ToolMissingError) throw failure(500, err.message);
        throw err;
      }
    },
  );

  // spec: part2 > Network tools > iperf/server
  const SERVER: RouteErrors = {
    validation: 'statusMessage',
    failure: 'statusMessage',
    internal: 'iperf3 server failed',
  };
  const serverStatus = (hostname: string) => ({
    ...tools.iperfServer.status(),
    connectHost: hostname.replace(/^\[(.*)\]$/, '$1'),
  });
  const serverSchema = (summary: string) => ({
    tags: TAGS,
    summary,
    response: responses(SERVER, { 200: IperfServerStatus, 500: StatusMessageBody }),
  });
  const serverCall = async (work: () => Promise<void>) => {
    try {
      await work();
    } catch (err) {
      if (err instanceof IperfServerError) throw failure(500, err.message);
      throw failure(500, errorText(err));
    }
  };

  app.post(
    '/api/iperf/server/start',
    {
      config: { access: TOOLS, errors: SERVER },
      schema: serverSchema('Start the iperf3 server (port 5201)'),
    },
    async (request) => {
      await serverCall(() => tools.iperfServer.start());
      return serverStatus(request.hostname);
    },
  );

  app.post(
    '/api/iperf/server/stop',
    {
      config: { access: TOOLS, errors: SERVER },
      schema: serverSchema('Stop the iperf3 server (idempotent)'),
    },
    async (request) => {
      await serverCall(() => tools.iperfServer.stop());
      return serverStatus(request.hostname);
    },
  );

  app.get(
    '/api/iperf/server/status',
    {
      config: { access: TOOLS, errors: SERVER },
      schema: serverSchema('State of the iperf3 server'),
    },
    async (request) => serverStatus(request.hostname),
  );

  // spec: part2 > Network tools > tools/whois
  app.get(
    '/api/tools/whois/:ip',
    {
      config: { access: TOOLS, errors: TOOL },
      schema: {
        tags: TAGS,
        summary: 'whois record of an IP address',
        params: IpParams,
        response: responses(TOOL, { 200: WhoisAnswer }),
      },
    },
    async (request, reply) => {
      const ip = parseTarget(request.params.ip);
      if (!ip || ip.kind === 'hostname') throw toolFailure(INVALID_IP);
      try {
        return { status: 201 as const, message: await tools.whois(ip, disconnectSignal(reply)) };
      } catch (err) {
        if (err instanceof WhoisFailure) throw toolFailure(err.message);
        throw err;
      }
    },
  );

  // spec: part2 > Network tools > tools/geoip
  app.get(
    '/api/tools/geoip/:ip',
    {
      config: { access: TOOLS, errors: TOOL },
      schema: {
        tags: TAGS,
        summary: 'Geolocation of a globally routable IP address',
        params: IpParams,
        response: responses(TOOL, { 200: GeoAnswer }),
      },
    },
    async (request, reply) => {
      const ip = parseTarget(request.params.ip);
      if (!ip || ip.kind === 'hostname') throw toolFailure(INVALID_IP);
      const kind = classifyAddress(ip.value);
      if (kind !== 'global')
        throw toolFailure(notRoutableMessage(ip.value, kind as Exclude<AddressClass, 'global'>));
      try {
        return {
          status: 201 as const,
          message: await tools.locate(ip.value, disconnectSignal(reply)),
        };
      } catch (err) {
        if (err instanceof GeoFailure) throw toolFailure(err.message);
        throw err;
      }
    },
  );
}
