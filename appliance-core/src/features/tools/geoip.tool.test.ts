import { Reader } from 'maxmind';
import { describe, expect, it } from 'vitest';
import { locationFromRecord, locationFromService } from './geoip.tool.js';
import { buildMmdb, encodeValue } from './testing/mmdb-writer.js';

const CITY = {
  city: { geoname_id: 5375480, names: { en: 'Mountain View', de: 'Mountain View' } },
  country: {
    geoname_id: 6252001,
    iso_code: 'US',
    names: { en: 'United States', fr: 'États-Unis' },
  },
  location: {
    latitude: 37.386,
    longitude: -122.0838,
    time_zone: 'America/Los_Angeles',
    accuracy_radius: 1000,
  },
  subdivisions: [{ iso_code: 'CA', names: { en: 'California' } }],
};

describe('the test mmdb writer', () => {
  it('encodes the data-section types', () => {
    expect([...encodeValue('ab')]).toEqual([0x42, 0x61, 0x62]);
    expect([...encodeValue(300)]).toEqual([0xc2, 0x01, 0x2c]);
    expect([...encodeValue(true)]).toEqual([0x01, 0x07]);
    expect([...encodeValue(['x'])]).toEqual([0x01, 0x04, 0x41, 0x78]);
    expect(encodeValue('x'.repeat(40))[0]).toBe(0x40 | 29);
  });

  it('writes a database maxmind reads back, IPv4 and IPv6', () => {
    const reader = new Reader<Record<string, unknown>>(
      buildMmdb({
        '8.8.8.0/24': CITY,
        '2001:4860::/32': { country_code: 'US' },
        '1.0.0.0/8': { country: { iso_code: 'AU' } },
      }),
    );
    expect(reader.get('8.8.8.8')).toEqual(CITY);
    expect(reader.get('8.8.9.1')).toBeNull();
    expect(reader.get('1.2.3.4')).toEqual({ country: { iso_code: 'AU' } });
    expect(reader.get('2001:4860:4860::8888')).toEqual({ country_code: 'US' });
    expect(reader.get('2606:4700::1')).toBeNull();
    expect(reader.metadata.databaseType).toBe('Appliance-Test-City');
  });
});

describe('locationFromRecord', () => {
  it('reads the GeoIP2 City schema', () => {
    expect(locationFromRecord('8.8.8.8', CITY)).toEqual({
      ip: '8.8.8.8',
      countryName: 'United States',
      countryCode: 'US',
      regionName: 'California',
      cityName: 'Mountain View',
      latitude: 37.386,
      longitude: -122.0838,
      timeZone: 'America/Los_Angeles',
    });
  });

  it('reads country-only databases and names the country from its code', () => {
    expect(locationFromRecord('1.1.1.1', { country_code: 'AU' })).toEqual({
      ip: '1.1.1.1',
      countryName: 'Australia',
      countryCode: 'AU',
      regionName: null,
      cityName: null,
      latitude: null,
      longitude: null,
      timeZone: null,
    });
    expect(
      locationFromRecord('1.1.1.1', {
        registered_country: { iso_code: 'JP', names: { en: 'Japan' } },
      }),
    ).toMatchObject({ countryName: 'Japan', countryCode: 'JP' });
  });

  it('reads the flat ip-location-db city schema', () => {
    expect(
      locationFromRecord('9.9.9.9', {
        country_code: 'CH',
        state1: 'Zurich',
        city: 'Zurich',
        latitude: 47.37,
        longitude: 8.54,
        timezone: 'Europe/Zurich',
      }),
    ).toMatchObject({
      countryName: 'Switzerland',
      regionName: 'Zurich',
      cityName: 'Zurich',
      latitude: 47.37,
      timeZone: 'Europe/Zurich',
    });
  });

  it('is null for a record without location data', () => {
    expect(locationFromRecord('8.8.8.8', { autonomous_system_number: 15169 })).toBeNull();
  });
});

describe('locationFromService', () => {
  it('reads freeipapi.com answers', () => {
    expect(
      locationFromService('8.8.8.8', {
        ipVersion: 4,
        ipAddress: '8.8.8.8',
        latitude: 37.386,
        longitude: -122.0838,
        countryName: 'United States',
        countryCode: 'US',
        timeZone: '-07:00',
        cityName: 'Mountain View',
        regionName: 'California',
      }),
    ).toEqual({
      ip: '8.8.8.8',
      countryName: 'United States',
      countryCode: 'US',
      regionName: 'California',
      cityName: 'Mountain View',
      latitude: 37.386,
      longitude: -122.0838,
      timeZone: '-07:00',
    });
  });

  it('reads ip-api.com, ipwho.is and ipapi.co answers', () => {
    expect(
      locationFromService('1.1.1.1', {
        status: 'success',
        country: 'Australia',
        countryCode: 'AU',
        regionName: 'Queensland',
        city: 'South Brisbane',
        lat: -27.4766,
        lon: 153.0166,
        timezone: 'Australia/Brisbane',
      }),
    ).toMatchObject({
      countryName: 'Australia',
      cityName: 'South Brisbane',
      latitude: -27.4766,
      timeZone: 'Australia/Brisbane',
    });
    expect(
      locationFromService('1.1.1.1', {
        success: true,
        country: 'Australia',
        country_code: 'AU',
        region: 'Queensland',
        city: 'Brisbane',
        latitude: -27.47,
        longitude: 153.02,
        timezone: { id: 'Australia/Brisbane' },
      }),
    ).toMatchObject({
      regionName: 'Queensland',
      timeZone: 'Australia/Brisbane',
    });
    expect(
      locationFromService('1.1.1.1', {
        country_name: 'Australia',
        country_code: 'AU',
        region: 'Queensland',
        latitude: '-27.47',
        longitude: '153.02',
      }),
    ).toMatchObject({ countryName: 'Australia', latitude: -27.47 });
  });

  it('is null for answers without location data', () => {
    expect(locationFromService('1.1.1.1', { hello: 'world' })).toBeNull();
    expect(locationFromService('1.1.1.1', 'text')).toBeNull();
    expect(locationFromService('1.1.1.1', null)).toBeNull();
  });
});
