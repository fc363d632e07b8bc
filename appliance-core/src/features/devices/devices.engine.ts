/**
 * The devices engine: schedules the crawl of every SNMP-enabled device. walks_log is rotated and
 * pruned by the maintenance feature's scheduled rotation and retention (walks.repository.ts
 * registers it with its weekly schedule and 84 days), like every partitioned table.
 */
import type { DevicesService } from './devices.service.js';

export class DevicesEngine {
  readonly name = 'devices';

  constructor(private readonly devices: DevicesService) {}

  async start(): Promise<void> {
    await this.devices.crawl.start();
  }

  async stop(): Promise<void> {
    await this.devices.crawl.stop();
  }
}
