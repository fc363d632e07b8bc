/** The agent's own version, compared with `update.version` (docs/agent-protocol.md §8). */
export const AGENT_VERSION = '1.0.0';
