/**
 * Test doubles for the tool runners: a runner that replays a scripted tool run (outcomes that
 * loopback cannot produce: lost replies, unresolvable names, dead routes), and an event stream
 * that records its frames. Not used by the appliance itself.
 */
import { loadConfig } from '../../../platform/config/config.js';
import type { EventStream } from '../../../platform/http/sse.js';
import type { ToolResult, ToolRunOptions } from '../../../platform/process/spawn.js';
import type { SystemTool } from '../../../platform/process/system-tools.js';
import { ToolRunner } from '../tools.runtime.js';
import { defaultToolsOptions } from '../tools.service.js';

export class ScriptedRunner extends ToolRunner {
  readonly calls: { program: string; args: readonly string[] }[] = [];

  constructor(private readonly outcome: Partial<ToolResult> & { lines?: string[] }) {
    super({ ...defaultToolsOptions(loadConfig({}, [], '/srv')), reverseDns: null });
  }

  override async run(
    tool: SystemTool,
    options: Omit<ToolRunOptions, 'searchPath'>,
  ): Promise<ToolResult> {
    this.calls.push({ program: tool.program, args: options.args });
    for (const line of this.outcome.lines ?? []) options.onStdoutLine?.(line);
    return {
      code: 0,
      signal: null,
      stdout: (this.outcome.lines ?? []).join('\n'),
      stderr: '',
      timedOut: false,
      aborted: false,
      truncated: false,
      durationMs: 1,
      ...this.outcome,
    };
  }
}

export function recordingStream() {
  const frames: { data: unknown; event: string | undefined }[] = [];
  const controller = new AbortController();
  let closed = false;
  const stream: EventStream = {
    signal: controller.signal,
    get closed() {
      return closed;
    },
    send: (data, event) => {
      if (!closed) frames.push({ data, event });
    },
    close: () => {
      closed = true;
    },
  };
  return { stream, frames, isClosed: () => closed };
}
