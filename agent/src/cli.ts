#!/usr/bin/env node
/**
 * Entry point: node agent/dist/cli.js --server https://… --state-dir DIR [options] (config.ts).
 * Exit codes: 0 stopped by a signal, 1 failure, 2 bad command line or enrollment refused,
 * 75 an update was installed (the service manager starts the new version).
 */
import { Agent, EnrollmentRefused, EXIT_UPDATED, stderrLogger } from './agent.js';
import { ConfigError, parseConfig } from './config.js';

async function main(): Promise<void> {
  let config;
  try {
    config = parseConfig(process.argv.slice(2));
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`netmon-agent: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const agent = new Agent(config, stderrLogger, () => {
    void agent.stop().then(() => process.exit(EXIT_UPDATED));
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void agent.stop().then(() => process.exit(0)));
  stderrLogger('agent.start', {
    agent_uuid: agent.state.agentUuid,
    public_key: agent.key.publicB64u,
  });
  try {
    await agent.run();
  } catch (error) {
    if (error instanceof EnrollmentRefused) {
      stderrLogger('enroll.refused', { error: error.message });
      await agent.stop();
      process.exit(2);
    }
    throw error;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`netmon-agent: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
