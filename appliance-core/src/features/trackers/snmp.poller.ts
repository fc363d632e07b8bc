/**
 * SNMP polling of disks, interfaces and custom OIDs: every due tracker of one device is read with
 * one session and as few GETs as the agent allows (many OIDs per request), with the device's
 * credentials. Octet counters become bit rates (wrap handled); interface oper status is returned
 * so the engine can fire link-state alerts.
 */
import {
  SnmpSession,
  type DecodedVarbind,
  type SnmpTarget,
  type SnmpTiming,
} from '../../platform/snmp/snmp.client.js';

export const IF_OIDS = {
  operStatus: '1.3.6.1.2.1.2.2.1.8',
  inOctets: '1.3.6.1.2.1.2.2.1.10',
  outOctets: '1.3.6.1.2.1.2.2.1.16',
  hcInOctets: '1.3.6.1.2.1.31.1.1.1.6',
  hcOutOctets: '1.3.6.1.2.1.31.1.1.1.10',
} as const;
export const HR_STORAGE = {
  units: '1.3.6.1.2.1.25.2.3.1.4',
  size: '1.3.6.1.2.1.25.2.3.1.5',
  used: '1.3.6.1.2.1.25.2.3.1.6',
} as const;

export interface SnmpRequest {
  disks: { id: number; index: number }[];
  interfaces: { id: number; index: number }[];
  oids: { id: number; oid: string }[];
}

export interface InterfaceCounters {
  inOctets: bigint;
  outOctets: bigint;
  bits: 32 | 64;
  operStatus: number | null;
}

export interface SnmpReadings {
  disks: Map<number, { available: number; total: number }>;
  interfaces: Map<number, InterfaceCounters>;
  oids: Map<number, string>;
}

const toBig = (v: DecodedVarbind | undefined): bigint | null => {
  if (!v || v.value === null || v.value === '') return null;
  if (typeof v.value === 'number' || (typeof v.value === 'string' && /^[0-9]+$/.test(v.value)))
    return BigInt(v.value);
  return null;
};

const toNum = (v: DecodedVarbind | undefined): number | null => {
  const big = toBig(v);
  return big === null ? null : Number(big);
};

/** Reads every tracker of `request` from one agent. */
export async function pollDevice(
  target: SnmpTarget,
  timing: SnmpTiming,
  request: SnmpRequest,
  signal?: AbortSignal,
): Promise<SnmpReadings> {
  const oids: string[] = [];
  for (const d of request.disks)
    oids.push(
      `${HR_STORAGE.used}.${d.index}`,
      `${HR_STORAGE.size}.${d.index}`,
      `${HR_STORAGE.units}.${d.index}`,
    );
  const hc = target.version !== 1; // SNMPv1 has no Counter64
  for (const i of request.interfaces) {
    oids.push(
      `${IF_OIDS.operStatus}.${i.index}`,
      `${IF_OIDS.inOctets}.${i.index}`,
      `${IF_OIDS.outOctets}.${i.index}`,
    );
    if (hc) oids.push(`${IF_OIDS.hcInOctets}.${i.index}`, `${IF_OIDS.hcOutOctets}.${i.index}`);
  }
  for (const o of request.oids) oids.push(o.oid.replace(/^\./, ''));
  const readings: SnmpReadings = { disks: new Map(), interfaces: new Map(), oids: new Map() };
  if (oids.length === 0) return readings;
  const session = SnmpSession.open(target, timing);
  let answers: DecodedVarbind[];
  try {
    answers = await session.get(oids, signal);
  } finally {
    session.close();
  }
  const byOid = new Map(answers.map((a) => [a.oid, a]));
  for (const d of request.disks) {
    const used = toNum(byOid.get(`${HR_STORAGE.used}.${d.index}`));
    const size = toNum(byOid.get(`${HR_STORAGE.size}.${d.index}`));
    const units = toNum(byOid.get(`${HR_STORAGE.units}.${d.index}`));
    if (used !== null && size !== null && units !== null)
      readings.disks.set(d.id, {
        available: Math.max(0, size - used) * units,
        total: size * units,
      });
  }
  for (const i of request.interfaces) {
    const operStatus = toNum(byOid.get(`${IF_OIDS.operStatus}.${i.index}`));
    const hcIn = hc ? toBig(byOid.get(`${IF_OIDS.hcInOctets}.${i.index}`)) : null;
    const hcOut = hc ? toBig(byOid.get(`${IF_OIDS.hcOutOctets}.${i.index}`)) : null;
    if (hcIn !== null && hcOut !== null) {
      readings.interfaces.set(i.id, { inOctets: hcIn, outOctets: hcOut, bits: 64, operStatus });
      continue;
    }
    const inOctets = toBig(byOid.get(`${IF_OIDS.inOctets}.${i.index}`));
    const outOctets = toBig(byOid.get(`${IF_OIDS.outOctets}.${i.index}`));
    if (inOctets !== null && outOctets !== null)
      readings.interfaces.set(i.id, { inOctets, outOctets, bits: 32, operStatus });
  }
  for (const o of request.oids) {
    const answer = byOid.get(o.oid.replace(/^\./, ''));
    if (answer && answer.value !== null) readings.oids.set(o.id, String(answer.value));
  }
  return readings;
}

/** Bits per second between two counter readings; a counter that went back wrapped once at 2^bits. */
export function rateOf(
  previous: bigint,
  current: bigint,
  bits: 32 | 64,
  seconds: number,
): number | null {
  if (seconds <= 0) return null;
  let delta = current - previous;
  if (delta < 0n) delta += 1n << BigInt(bits);
  if (delta < 0n) return null;
  return (Number(delta) * 8) / seconds;
}
