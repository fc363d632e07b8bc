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
  'POST /api/osUpgrade/start': {
    statuses: [500],
    why: 'spec part 1: 500 when the upgrader cannot start; the fuzz host has no root helper',
  },
  'POST /api/osUpgrade/stop': {
    statuses: [500],
    why: 'spec part 1: 500 on failure; the fuzz host has no root helper to ask',
  },
};

/**
 * KNOWN MISMATCHES between /openapi.json and the answers, reported by the fuzz but not failing it:
 * mostly the document is wrong; the first two are server answers that issue 11's input handling
 * fixes. TEMPORARY: issue 11's fixes empty this list; the fuzz prints the entries a run did not meet.
 */
export const KNOWN_MISMATCHES: Record<string, Allowance> = {};
