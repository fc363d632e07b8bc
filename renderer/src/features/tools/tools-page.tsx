/** On-box network tools (permission `tools`), one tab each; /tools/ping?target=x&run=1 runs at once. */
import { Tabs } from '@mantine/core';
import { useNavigate, useParams, useSearchParams } from 'react-router';

import { PageHeader } from '../../components/ui/page-header.js';
import { useCaller } from '../../lib/caller.js';
import { MtrTool, PingTool } from './live-tools.js';
import {
  IperfTool,
  LookupTool,
  PortScanTool,
  SpeedTestTool,
  TracerouteTool,
} from './other-tools.js';

const TOOLS = [
  ['ping', 'Ping'],
  ['mtr', 'MTR'],
  ['traceroute', 'Traceroute'],
  ['portscan', 'Port scan'],
  ['iperf', 'iperf3'],
  ['speedtest', 'Speed test'],
  ['whois', 'Whois'],
  ['geoip', 'GeoIP'],
] as const;

export function Page() {
  const { tool = 'ping' } = useParams();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const caller = useCaller();
  const target = params.get('target') ?? '';
  const autoRun = params.get('run') === '1';
  const props = { initialTarget: target, autoRun };
  return (
    <>
      <PageHeader
        title="Tools"
        subtitle={
          !caller.loading && !caller.can('tools')
            ? 'you lack the tools permission: the appliance will refuse these'
            : 'run on the appliance, towards the target'
        }
      />
      <Tabs
        value={tool}
        onChange={(v) => void navigate(`/tools/${v ?? 'ping'}`)}
        keepMounted={false}
      >
        <Tabs.List mb="sm">
          {TOOLS.map(([id, label]) => (
            <Tabs.Tab key={id} value={id}>
              {label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        <Tabs.Panel value="ping">
          <PingTool key={`${target}${String(autoRun)}`} {...props} />
        </Tabs.Panel>
        <Tabs.Panel value="mtr">
          <MtrTool key={`${target}${String(autoRun)}`} {...props} />
        </Tabs.Panel>
        <Tabs.Panel value="traceroute">
          <TracerouteTool {...props} />
        </Tabs.Panel>
        <Tabs.Panel value="portscan">
          <PortScanTool {...props} />
        </Tabs.Panel>
        <Tabs.Panel value="iperf">
          <IperfTool {...props} />
        </Tabs.Panel>
        <Tabs.Panel value="speedtest">
          <SpeedTestTool />
        </Tabs.Panel>
        <Tabs.Panel value="whois">
          <LookupTool kind="whois" {...props} />
        </Tabs.Panel>
        <Tabs.Panel value="geoip">
          <LookupTool kind="geoip" {...props} />
        </Tabs.Panel>
      </Tabs>
    </>
  );
}
