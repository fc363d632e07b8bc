// @vitest-environment happy-dom
import type { QueryClient } from '@tanstack/react-query';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { DeviceAgentPanel, ProcessesTable, ServicesView } from './device-agent-panel.js';
import {
  installFakeAppliance,
  renderInConsole,
  type Answer,
  type Call,
} from '../../testing/console-harness.js';

let calls: Call[] = [];
let answer: (c: Call) => Answer = () => ({ status: 200, body: {} });
let permissions: string[] = ['devices'];

beforeEach(() => {
  permissions = ['devices'];
  calls = installFakeAppliance({ permissions: () => permissions, answer: (c) => answer(c) });
});
afterEach(cleanup);

const wrap = (node: ReactNode, client?: QueryClient) => renderInConsole(node, { client });

const probes = () => calls.filter((c) => c.method === 'POST');

const PROCESSES = [
  {
    pid: 1,
    name: 'init',
    user: 'root',
    state: 'S',
    cpu_percent: 0.1,
    memory_bytes: 10_240,
    command: '/sbin/init',
  },
  {
    pid: 200,
    name: 'postgres',
    user: 'postgres',
    state: 'S',
    cpu_percent: 12.5,
    memory_bytes: 900 * 1024 * 1024,
    command: 'postgres -D /data',
  },
  {
    pid: 300,
    name: 'node',
    user: 'app',
    state: 'R',
    cpu_percent: 55,
    memory_bytes: 400 * 1024 * 1024,
    command: 'node server.js',
  },
];

const pids = () =>
  screen.getAllByTestId('process-row').map((r) => r.querySelector('td')!.textContent);

describe('processes', () => {
  it('sorts by memory (default, largest first), by CPU, reverses, and filters', () => {
    wrap(<ProcessesTable rows={PROCESSES} />);
    expect(pids()).toEqual(['200', '300', '1']);
    expect(screen.getByText('900 MB')).toBeTruthy();
    fireEvent.click(screen.getByTestId('sort-cpu'));
    expect(pids()).toEqual(['300', '200', '1']);
    fireEvent.click(screen.getByTestId('sort-cpu'));
    expect(pids()).toEqual(['1', '200', '300']);
    fireEvent.change(screen.getByLabelText('Filter processes'), { target: { value: 'post' } });
    expect(pids()).toEqual(['200']);
    expect(screen.getByTestId('process-count').textContent).toBe('1 of 3 processes');
  });

  it('asks with device_id, shows the wait as progress, then the rows', async () => {
    let release!: (a: { status: number; body: unknown }) => void;
    answer = () => new Promise((r) => (release = r));
    wrap(<DeviceAgentPanel deviceId={5} />);
    await screen.findByTestId('probe-progress');
    expect(screen.getByText(/the appliance waits at most 15 s/)).toBeTruthy();
    expect(probes()).toEqual([
      { method: 'POST', url: '/api/getDeviceProcesses', body: { device_id: 5 } },
    ]);
    release({ status: 200, body: { status: 201, message: PROCESSES } });
    await screen.findByTestId('processes');
    expect(screen.queryByTestId('probe-progress')).toBeNull();
    expect(pids()).toEqual(['200', '300', '1']);
  });

  it('shows a 400 {message} plainly (the agent did not answer) with a Retry', async () => {
    answer = () => ({ status: 400, body: { message: 'Agent did not answer' } });
    wrap(<DeviceAgentPanel deviceId={5} />);
    const notice = await screen.findByTestId('error-notice');
    expect(notice.textContent).toMatch(/Agent did not answer/);
    answer = () => ({ status: 200, body: { status: 201, message: PROCESSES } });
    fireEvent.click(within(notice).getByRole('button', { name: 'Retry' }));
    await screen.findByTestId('processes');
  });
});

describe('services', () => {
  it('lists Name, State and DisplayName', () => {
    wrap(
      <ServicesView
        rows={[
          { Name: 'sshd', State: 'Running', DisplayName: 'OpenSSH server' },
          { Name: 'cups', State: 'Stopped', DisplayName: 'Printing' },
        ]}
      />,
    );
    const table = screen.getByTestId('services');
    expect(within(table).getByText('sshd')).toBeTruthy();
    expect(within(table).getByText('Running')).toBeTruthy();
    expect(within(table).getByText('OpenSSH server')).toBeTruthy();
  });

  it('says "unavailable" when the agent says so, through the panel with device_id', async () => {
    answer = (c) =>
      c.url === '/api/getDeviceServices'
        ? { status: 400, body: { message: 'services unavailable: no systemd' } }
        : { status: 200, body: { status: 201, message: [] } };
    wrap(<DeviceAgentPanel deviceId={9} />);
    fireEvent.click(await screen.findByRole('tab', { name: 'Services' }));
    const note = await screen.findByTestId('services-unavailable');
    expect(note.textContent).toMatch(/services unavailable: no systemd/);
    expect(probes().find((c) => c.url === '/api/getDeviceServices')!.body).toEqual({
      device_id: 9,
    });
  });
});

describe('disk usage', () => {
  const REPORT = [
    {
      path: '/',
      size: 10 * 1024 ** 3,
      children: [
        {
          path: '/var',
          size: 6 * 1024 ** 3,
          children: [{ path: '/var/log', size: 2 * 1024 ** 3, children: [] }],
        },
        { path: '/home', size: 3 * 1024 ** 3, children: [] },
      ],
    },
  ];

  it('generates, reads the report as a tree with sizes, expands and drills into a folder', async () => {
    answer = (c) => {
      if (c.url === '/api/getDetailedDiskUsage')
        return { status: 200, body: { status: 201, message: REPORT } };
      if (c.url === '/api/generateDiskUsage')
        return { status: 200, body: { status: 201, message: 'Disk usage scan started' } };
      if (c.url === '/api/getFolderUsageFromPath')
        return {
          status: 200,
          body: {
            status: 201,
            message: {
              path: '/var/log',
              size: 2 * 1024 ** 3,
              children: [{ path: '/var/log/journal', size: 1536 * 1024 ** 2, children: [] }],
            },
          },
        };
      return { status: 200, body: { status: 201, message: [] } };
    };
    wrap(<DeviceAgentPanel deviceId={3} />);
    fireEvent.click(await screen.findByRole('tab', { name: 'Disk usage' }));
    await screen.findByTestId('usage-tree');
    expect(screen.getByText('10 GB')).toBeTruthy();
    fireEvent.click(screen.getByLabelText('Expand /'));
    expect(screen.getByText('var')).toBeTruthy();
    expect(screen.getByText('6.0 GB')).toBeTruthy();
    fireEvent.click(screen.getByTestId('generate-disk-usage'));
    await screen.findByText('Disk usage scan started');
    fireEvent.click(screen.getByLabelText('Expand /var'));
    fireEvent.click(screen.getByLabelText('Open /var/log'));
    await screen.findByText('/var/log', { selector: 'p' });
    fireEvent.click(screen.getByLabelText('Expand /var/log'));
    expect(screen.getByText('journal')).toBeTruthy();
    expect(screen.getByText('1.5 GB')).toBeTruthy();
    expect(probes().map((c) => [c.url, c.body])).toEqual([
      ['/api/getDeviceProcesses', { device_id: 3 }],
      ['/api/getDetailedDiskUsage', { deviceid: 3 }],
      ['/api/generateDiskUsage', { deviceid: 3 }],
      ['/api/getFolderUsageFromPath', { deviceid: 3, path: '/var/log' }],
    ]);
  });

  it('shows the HTTP 200 {status: false, message} failure plainly', async () => {
    answer = (c) =>
      c.url === '/api/getDetailedDiskUsage'
        ? {
            status: 200,
            body: { status: false, message: 'no disk usage report; generate one first' },
          }
        : { status: 200, body: { status: 201, message: [] } };
    wrap(<DeviceAgentPanel deviceId={3} />);
    fireEvent.click(await screen.findByRole('tab', { name: 'Disk usage' }));
    await screen.findByText('no disk usage report; generate one first');
  });
});

describe('file and folder deletion', () => {
  it('is not offered without agentadmin', async () => {
    answer = () => ({ status: 200, body: { status: 201, message: [] } });
    wrap(<DeviceAgentPanel deviceId={3} />);
    await screen.findByRole('tab', { name: 'Disk usage' });
    await waitFor(() => expect(calls.some((c) => c.url.startsWith('/api/getUsers'))).toBe(true));
    expect(screen.queryByRole('tab', { name: 'Delete files' })).toBeNull();
  });

  it('refuses a relative path, confirms with the path and "permanent", then sends deviceid and path', async () => {
    permissions = ['devices', 'agentadmin'];
    answer = (c) =>
      c.url === '/api/tryDeleteFolder'
        ? { status: 200, body: { status: false, message: 'Permission denied' } }
        : c.url === '/api/tryDeleteFile'
          ? { status: 200, body: { status: 201, message: 'Deleted /tmp/old;id.log' } }
          : { status: 200, body: { status: 201, message: [] } };
    wrap(<DeviceAgentPanel deviceId={4} />);
    fireEvent.click(await screen.findByRole('tab', { name: 'Delete files' }));
    const input = await screen.findByLabelText('Absolute path to delete');
    fireEvent.change(input, { target: { value: 'tmp/old.log' } });
    expect(screen.getByText(/An absolute path/)).toBeTruthy();
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Delete…' }).disabled).toBe(true);

    fireEvent.change(input, { target: { value: '/tmp/old;id.log' } });
    fireEvent.click(screen.getByRole('button', { name: 'Delete…' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByTestId('delete-path').textContent).toBe('/tmp/old;id.log');
    expect(dialog.textContent).toMatch(/permanent/);
    expect(probes().filter((c) => c.url.startsWith('/api/tryDelete'))).toEqual([]);
    fireEvent.click(within(dialog).getByTestId('confirm-delete'));
    await screen.findByTestId('delete-done');
    expect(probes().filter((c) => c.url.startsWith('/api/tryDelete'))).toEqual([
      { method: 'POST', url: '/api/tryDeleteFile', body: { deviceid: 4, path: '/tmp/old;id.log' } },
    ]);

    fireEvent.click(screen.getByText('Folder'));
    fireEvent.change(input, { target: { value: '/srv/data' } });
    fireEvent.click(screen.getByRole('button', { name: 'Delete…' }));
    const second = await screen.findByRole('dialog');
    expect(second.textContent).toMatch(/everything in it/);
    fireEvent.click(within(second).getByTestId('confirm-delete'));
    await screen.findByText('Permission denied');
    expect(probes().at(-1)).toEqual({
      method: 'POST',
      url: '/api/tryDeleteFolder',
      body: { deviceid: 4, path: '/srv/data' },
    });
  });
});
