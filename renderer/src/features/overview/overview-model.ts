/** What is wrong right now, computed from the device list (with latency and disks) and URL checks. */
export interface OverviewDevice {
  id: number;
  label: string;
  ip_address: string;
  ping?: unknown;
  disks?: unknown[];
}

export interface UrlCheck {
  id: number;
  url: string;
  status: number | null;
  latency: number | null;
  message: string | null;
  ssldate: string | null;
}

export interface DiskUse {
  deviceId: number;
  device: string;
  diskId: number;
  name: string;
  usedPct: number;
  available: number;
}

export interface Overview {
  total: number;
  up: number;
  down: number;
  unprobed: number;
  downDevices: OverviewDevice[];
  worstLatency: { device: OverviewDevice; latency: number }[];
  worstLoss: { device: OverviewDevice; loss: number }[];
  fullestDisks: DiskUse[];
}

const latencyOf = (d: OverviewDevice) => {
  const p = d.ping as { latency?: number | null; loss?: number | null } | null | undefined;
  return { latency: p?.latency ?? null, loss: p?.loss ?? null };
};

export function summarize(devices: OverviewDevice[], top = 6): Overview {
  let up = 0;
  let down = 0;
  let unprobed = 0;
  const downDevices: OverviewDevice[] = [];
  const latencies: { device: OverviewDevice; latency: number }[] = [];
  const losses: { device: OverviewDevice; loss: number }[] = [];
  const disks: DiskUse[] = [];
  for (const d of devices) {
    const { latency, loss } = latencyOf(d);
    if (latency === null) unprobed++;
    else if (latency < 0) {
      down++;
      downDevices.push(d);
    } else {
      up++;
      latencies.push({ device: d, latency });
      if (loss !== null && loss > 0) losses.push({ device: d, loss });
    }
    for (const raw of d.disks ?? []) {
      const disk = raw as {
        id: number;
        name: string;
        available: number | null;
        total: number | null;
      };
      if (!disk.total || disk.available === null) continue;
      disks.push({
        deviceId: d.id,
        device: d.label,
        diskId: disk.id,
        name: disk.name,
        usedPct: ((disk.total - disk.available) / disk.total) * 100,
        available: disk.available,
      });
    }
  }
  return {
    total: devices.length,
    up,
    down,
    unprobed,
    downDevices: downDevices.slice(0, 50),
    worstLatency: latencies.sort((a, b) => b.latency - a.latency).slice(0, top),
    worstLoss: losses.sort((a, b) => b.loss - a.loss).slice(0, top),
    fullestDisks: disks.sort((a, b) => b.usedPct - a.usedPct).slice(0, top),
  };
}

/** A URL check fails when its last HTTP status is missing or not 2xx/3xx. */
export function failingUrls(urls: UrlCheck[]): UrlCheck[] {
  return urls.filter((u) => u.status === null || u.status === 0 || u.status >= 400);
}

/** Certificates that expire within `days`. */
export function expiringCertificates(urls: UrlCheck[], days = 21, now = Date.now()): UrlCheck[] {
  return urls.filter((u) => {
    if (!u.ssldate) return false;
    const at = Date.parse(u.ssldate);
    return Number.isFinite(at) && at - now < days * 86_400_000;
  });
}
