/**
 * Every react-query key of the console, in one place. Keys start with the feature name so a
 * mutation can invalidate a whole family (`queryClient.invalidateQueries({queryKey: keys.devices.all})`).
 */
export interface DeviceListFilter {
  search?: string;
  tag?: string;
  status?: 'up' | 'down';
}

export type TimeWindowKey = string;

export const keys = {
  me: {
    all: ['me'] as const,
    users: ['me', 'getUsers'] as const,
    profile: ['me', 'profile'] as const,
  },
  devices: {
    all: ['devices'] as const,
    list: (filter: DeviceListFilter) => ['devices', 'list', filter] as const,
    overview: ['devices', 'overview'] as const,
    detail: (id: number, window: TimeWindowKey) => ['devices', 'detail', id, window] as const,
    stats: (id: number) => ['devices', 'stats', id] as const,
    tags: ['devices', 'tags'] as const,
    profiles: ['devices', 'profiles'] as const,
    lastWalk: (id: number) => ['devices', 'walk', id] as const,
    widgets: (id: number) => ['devices', 'widgets', id] as const,
  },
  trackers: {
    all: ['trackers'] as const,
    latencyStats: (id: number) => ['trackers', 'latency-stats', id] as const,
    diskStats: (id: number) => ['trackers', 'disk-stats', id] as const,
    ofDevice: (id: number) => ['trackers', 'device', id] as const,
    services: (deviceId: number) => ['trackers', 'services', deviceId] as const,
  },
  pending: {
    all: ['pending'] as const,
    list: ['pending', 'list'] as const,
    credentials: ['pending', 'credentials'] as const,
    localnets: ['pending', 'localnets'] as const,
  },
  dashboards: {
    all: ['dashboards'] as const,
    widget: (kind: string, id: number, window: TimeWindowKey) =>
      ['dashboards', 'widget', kind, id, window] as const,
  },
  urls: {
    all: ['urls'] as const,
    list: ['urls', 'list'] as const,
    report: ['urls', 'report'] as const,
  },
  tools: {
    all: ['tools'] as const,
    speedHistory: ['tools', 'speedtest-history'] as const,
    iperfServer: ['tools', 'iperf-server'] as const,
    portServices: ['tools', 'port-services'] as const,
  },
  users: {
    all: ['users'] as const,
    permissions: ['users', 'permissions'] as const,
  },
  tokens: {
    all: ['tokens'] as const,
    mine: ['tokens', 'mine'] as const,
    ofUser: (userId: number) => ['tokens', 'user', userId] as const,
  },
  oauth: {
    all: ['oauth'] as const,
    pending: ['oauth', 'pending'] as const,
  },
} as const;
