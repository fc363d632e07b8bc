/**
 * What the API fuzz accepts beyond "a documented status whose body matches its schema, never a
 * 5xx, no error in the log". Plain data, keyed by operation (`METHOD /path` as in /openapi.json),
 * so that an entry is one line to add or remove.
 */

export interface Allowance {
  statuses: number[];
  why: string;
  /** Only when a path parameter of the request is longer than this many characters. */
  paramLongerThan?: number;
}

/**
 * 5xx answers the spec lists as an ordinary outcome for input the fuzzer sends, or for a tool run
 * that cannot reach anything from a namespace with only loopback. Any other 5xx is a defect, even
 * where the document lists a generic 500.
 */
export const EXPECTED_5XX: Record<string, Allowance> = {
  'DELETE /api/device/{device}': {
    statuses: [500],
    why: 'spec part 2: an unknown or out-of-scope device gives 500 with a not-found message',
  },
  'POST /api/getSpeedTestInfo': {
    statuses: [500],
    why: 'spec part 2: 500 on process failure; the speed-test server is unreachable here',
  },
  'POST /api/iperf/client/run': {
    statuses: [502],
    why: 'spec part 2: 502 on run failure (no iperf3 server at the address the fuzzer names)',
  },
  'POST /api/service/delete': {
    statuses: [500],
    why: "spec part 2 lists 200 and 500 {error: 'Error deleting service'}: an unknown id is the 500",
  },
};

/**
 * KNOWN MISMATCHES between /openapi.json and the answers, reported by the fuzz but not failing it:
 * mostly the document is wrong; the first two are server answers that issue 11's input handling
 * fixes. TEMPORARY: issue 11's fixes empty this list; the fuzz prints the entries a run did not meet.
 */
export const KNOWN_MISMATCHES: Record<string, Allowance> = {
  // Issue 11, input handling (being fixed beside this fuzz): answers of the server, not the document.
  '*': {
    statuses: [404, 414, 415],
    paramLongerThan: 100,
    why: "Fastify's 100-character parameter limit answers before the route (414 FST_ERR_MAX_PARAM_LENGTH, or a bare 404 on GET, or a 415 in the generic shape when a body came too)",
  },
  'POST /api/information': {
    statuses: [500],
    why: 'a body that does not parse answers 500 "data" is required!; the route takes no body',
  },
  // Issue 11, the OpenAPI document tells the truth (being fixed beside this fuzz).
  'GET /metrics': {
    statuses: [401, 415],
    why: '401 and 415 answer JSON, documented as text/plain',
  },
  'POST /api/hidePendingDevice': {
    statuses: [200],
    why: 'HTTP 200 legacy failures (validation) are not documented',
  },
  'GET /auth/device-code.js': {
    statuses: [415],
    why: 'a GET with a body answers 415 (HTML), undocumented',
  },
  'GET /auth/assets/auth.css': {
    statuses: [415],
    why: 'a GET with a body answers 415 (HTML), undocumented',
  },
  'GET /api/terminal/socket': {
    statuses: [415],
    why: 'a GET with a body answers 415, undocumented',
  },
  'POST /auth/authorize': { statuses: [400], why: '400 answers HTML, documented as JSON' },
  'POST /api/removePendingDevice': {
    statuses: [200],
    why: 'HTTP 200 legacy failures (validation) are not documented',
  },
};
