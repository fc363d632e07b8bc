/**
 * Geolocation of globally routable IP addresses.
 *
 * 1. A stored database: every `*.mmdb` file in `<dataDir>/geoip/` (MaxMind DB format: GeoLite2 or
 *    GeoIP2 City/Country, DB-IP Lite, ip-location-db), asked in file-name order; the first with a
 *    record answers. A file replaced (geoipupdate, or cp + mv: a new inode, size or time) is reopened at
 *    the next lookup, so updates need no restart.
 * 2. Otherwise the answer cached from an earlier external lookup (younger than the TTL).
 * 3. Otherwise the external lookup (APPLIANCE_GEOIP_URL, `{ip}` replaced), whose answer is cached.
 * The answer has the same shape whichever source served it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Reader } from 'maxmind';
import type { Logger } from 'pino';
import type { DB } from '../../platform/db/database.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import { findGeoCache, saveGeoCache } from './tools.repository.js';
import type { GeoLocation } from './tools.schema.js';
import type { ToolsOptions } from './tools.runtime.js';

type MmdbRecord = Record<string, unknown>;

interface OpenDatabase {
  file: string;
  mtimeMs: number;
  size: number;
  inode: number;
  reader: Reader<MmdbRecord> | null;
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

function countryNameOf(code: string | null): string | null {
  if (!code || !/^[A-Z]{2}$/.test(code)) return null;
  try {
    return regionNames.of(code) ?? null;
  } catch {
    return null;
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
const num = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v)
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : null;

function localized(value: unknown): string | null {
  const names = (value as { names?: Record<string, unknown> } | undefined)?.names;
  if (!names || typeof names !== 'object') return null;
  return (
    str(names.en) ??
    Object.values(names)
      .map(str)
      .find((n) => n !== null) ??
    null
  );
}

/** A record in the GeoIP2 schema (`country.names.en`, `location.latitude`) or the flat one of ip-location-db. */
export function locationFromRecord(ip: string, record: MmdbRecord): GeoLocation | null {
  const country = record.country as { iso_code?: unknown } | undefined;
  const location = record.location as
    { latitude?: unknown; longitude?: unknown; time_zone?: unknown } | undefined;
  const subdivisions = record.subdivisions as unknown[] | undefined;
  const countryCode =
    str(country?.iso_code) ??
    str((record.registered_country as { iso_code?: unknown } | undefined)?.iso_code) ??
    str(record.country_code);
  const result: GeoLocation = {
    ip,
    countryName:
      localized(record.country) ??
      localized(record.registered_country) ??
      countryNameOf(countryCode),
    countryCode,
    regionName: localized(subdivisions?.[0]) ?? str(record.state1),
    cityName: localized(record.city) ?? str(record.city),
    latitude: num(location?.latitude) ?? num(record.latitude),
    longitude: num(location?.longitude) ?? num(record.longitude),
    timeZone: str(location?.time_zone) ?? str(record.timezone),
  };
  return result.countryCode || result.countryName || result.latitude !== null ? result : null;
}

/** The answer of an external lookup service (freeipapi.com, ip-api.com, ipwho.is, ipapi.co shapes). */
export function locationFromService(ip: string, body: unknown): GeoLocation | null {
  if (!body || typeof body !== 'object') return null;
  const b = body as Record<string, unknown>;
  const pick = (...keys: string[]) =>
    keys.map((k) => b[k]).find((v) => v !== undefined && v !== null && v !== '');
  const timezone = pick('timeZone', 'timezone', 'time_zone');
  const zones = b.timeZones;
  const countryCode = str(pick('countryCode', 'country_code'));
  const result: GeoLocation = {
    ip,
    countryName: str(pick('countryName', 'country_name', 'country')) ?? countryNameOf(countryCode),
    countryCode,
    regionName: str(pick('regionName', 'region_name', 'region')),
    cityName: str(pick('cityName', 'city_name', 'city')),
    latitude: num(pick('latitude', 'lat')),
    longitude: num(pick('longitude', 'lon', 'lng')),
    timeZone:
      str(
        typeof timezone === 'object' && timezone !== null
          ? (timezone as { id?: unknown }).id
          : timezone,
      ) ?? (Array.isArray(zones) ? str(zones[0]) : null),
  };
  return result.countryCode || result.countryName || result.latitude !== null ? result : null;
}

/** Why a lookup service refused, when it says so in its body (`status: 'fail'`, `success: false`, `error: true`). */
function refusalOf(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const b = body as Record<string, unknown>;
  if (b.status === 'fail' || b.success === false || b.error === true)
    return str(b.message) ?? str(b.reason) ?? 'refused';
  return null;
}

export class GeoIp {
  private readonly databases = new Map<string, OpenDatabase>();

  constructor(
    private readonly db: DB,
    private readonly options: () => ToolsOptions,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {}

  /** The databases present now, opened (or reopened when the file changed). */
  private currentDatabases(): OpenDatabase[] {
    const dir = this.options().geoipDir;
    let names: string[];
    try {
      names = fs
        .readdirSync(dir)
        .filter((n) => n.endsWith('.mmdb') && !n.startsWith('.'))
        .sort();
    } catch {
      names = [];
    }
    const present = new Set(names.map((n) => path.join(dir, n)));
    for (const file of this.databases.keys()) if (!present.has(file)) this.databases.delete(file);
    const open: OpenDatabase[] = [];
    for (const file of present) {
      let stat: fs.Stats;
      try {
        stat = fs.statSync(file);
      } catch {
        continue;
      }
      let entry = this.databases.get(file);
      if (
        !entry ||
        entry.mtimeMs !== stat.mtimeMs ||
        entry.size !== stat.size ||
        entry.inode !== stat.ino
      ) {
        let reader: Reader<MmdbRecord> | null = null;
        try {
          reader = new Reader<MmdbRecord>(fs.readFileSync(file));
        } catch (err) {
          this.log.warn({ err, file }, 'geolocation database cannot be read; skipped');
        }
        entry = { file, mtimeMs: stat.mtimeMs, size: stat.size, inode: stat.ino, reader };
        this.databases.set(file, entry);
      }
      if (entry.reader) open.push(entry);
    }
    return open;
  }

  fromDatabase(ip: string): GeoLocation | null {
    for (const database of this.currentDatabases()) {
      let record: MmdbRecord | null = null;
      try {
        record = database.reader?.get(ip) ?? null;
      } catch {
        record = null;
      }
      const location = record ? locationFromRecord(ip, record) : null;
      if (location) return location;
    }
    return null;
  }

  /** Locates a globally routable IP; throws a ToolFailure when no source knows it. */
  async locate(ip: string, signal?: AbortSignal): Promise<GeoLocation> {
    const stored = this.fromDatabase(ip);
    if (stored) return stored;
    const options = this.options();
    const cached = findGeoCache(this.db, ip, this.now() - options.geoipCacheTtlMs);
    if (cached) return JSON.parse(cached) as GeoLocation;
    if (!options.geoipUrl)
      throw new ToolFailure(
        `No geolocation data for ${ip}: no database in ${options.geoipDir} knows it and external lookups are off`,
      );
    const location = await this.lookup(ip, options, signal);
    saveGeoCache(this.db, ip, location, this.now());
    return location;
  }

  private async lookup(
    ip: string,
    options: ToolsOptions,
    signal?: AbortSignal,
  ): Promise<GeoLocation> {
    const url = (options.geoipUrl as string).replace('{ip}', encodeURIComponent(ip));
    const timeout = AbortSignal.timeout(options.geoipTimeoutMs);
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      throw new ToolFailure(
        `Geolocation lookup failed: ${timeout.aborted ? 'no answer in time' : (cause ?? (err as Error).message)}`,
      );
    }
    const text = await response.text().catch(() => '');
    if (!response.ok) throw new ToolFailure(`Geolocation lookup failed: HTTP ${response.status}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ToolFailure('Geolocation lookup failed: the service did not answer JSON');
    }
    const refusal = refusalOf(body);
    if (refusal) throw new ToolFailure(`Geolocation lookup failed: ${refusal}`);
    const location = locationFromService(ip, body);
    if (!location) throw new ToolFailure(`No geolocation data for ${ip}`);
    return location;
  }
}
