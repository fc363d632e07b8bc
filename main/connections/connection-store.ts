/**
 * Saved connections: the embedded appliance and the remote ones the user added by URL, each with
 * the certificate fingerprint pinned for it. Kept in `<userData>/connections.json` (no secrets:
 * tokens live in the token store). Writes are atomic (temporary file, then rename).
 *
 * Each connection also carries the uuid of its `browser_id` (`spa:<uuid>:<fp>`), fixed for this
 * installation and connection: the appliance keeps one live login token per browser_id, so a
 * new sign-in replaces this installation's previous token and never another console's.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { CONNECTION_ID_PATTERN, EMBEDDED_CONNECTION_ID } from '../../electron/contract/bridge.js';
import { UserFacingError } from '../errors.js';

export interface SavedConnection {
  id: string;
  kind: 'embedded' | 'remote';
  name: string;
  /** `https://host[:port]`, as URL.origin spells it. */
  origin: string;
  /** `AB:CD:…`; null only before the first acceptance. */
  pinnedSha256: string | null;
  browserUuid: string;
}

interface StoreFile {
  version: 1;
  installationId: string;
  connections: SavedConnection[];
}

export class ConnectionStoreError extends UserFacingError {
  override name = 'ConnectionStoreError';
}

export const SHA256_FINGERPRINT = /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/;

/** Normalises what the user typed to an https origin, or explains why it cannot be one. */
export function normalizeApplianceUrl(input: string): string {
  const text = input.trim();
  if (text === '' || text.length > 2048) throw new ConnectionStoreError('enter the appliance URL');
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    throw new ConnectionStoreError(`"${text}" is not a URL`);
  }
  if (url.protocol !== 'https:') {
    throw new ConnectionStoreError('appliances are reached over https:// only');
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConnectionStoreError('the URL must not carry a user name or password');
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    throw new ConnectionStoreError(
      'give the appliance address only (https://host:port), without a path',
    );
  }
  if (url.hostname === '') throw new ConnectionStoreError('the URL has no host');
  return url.origin;
}

export function normalizeFingerprint(input: string): string {
  const value = input.trim().toUpperCase();
  if (!SHA256_FINGERPRINT.test(value)) {
    throw new ConnectionStoreError(
      'a SHA-256 fingerprint is 32 hexadecimal pairs joined by colons',
    );
  }
  return value;
}

export class ConnectionStore {
  private state: StoreFile;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly file: string) {
    this.state = this.load();
  }

  /** The `<fp>` part of every browser_id this installation sends. */
  get installationFingerprint(): string {
    const digest = crypto.createHash('sha256').update(this.state.installationId).digest('hex');
    return `desktop-${digest.slice(0, 16)}`;
  }

  browserIdOf(connection: SavedConnection): string {
    return `spa:${connection.browserUuid}:${this.installationFingerprint}`;
  }

  list(): SavedConnection[] {
    return this.state.connections.map((connection) => ({ ...connection }));
  }

  get(id: string): SavedConnection | undefined {
    const found = this.state.connections.find((connection) => connection.id === id);
    return found ? { ...found } : undefined;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  addRemote(input: { url: string; name?: string; pinnedSha256: string }): SavedConnection {
    const origin = normalizeApplianceUrl(input.url);
    this.refuseDuplicate(origin);
    const connection: SavedConnection = {
      id: `c-${crypto.randomBytes(6).toString('hex')}`,
      kind: 'remote',
      name: normalizeName(input.name, origin),
      origin,
      pinnedSha256: normalizeFingerprint(input.pinnedSha256),
      browserUuid: crypto.randomUUID(),
    };
    this.state.connections.push(connection);
    this.save();
    return { ...connection };
  }

  /** Renames, moves (new origin and pin) or re-pins a connection. */
  update(
    id: string,
    changes: { name?: string; origin?: string; pinnedSha256?: string },
  ): SavedConnection {
    const connection = this.state.connections.find((candidate) => candidate.id === id);
    if (!connection) throw new ConnectionStoreError('no such connection');
    if (changes.origin !== undefined && changes.origin !== connection.origin) {
      if (connection.kind === 'embedded') {
        throw new ConnectionStoreError('the embedded appliance has no URL to edit');
      }
      const origin = normalizeApplianceUrl(changes.origin);
      this.refuseDuplicate(origin, id);
      connection.origin = origin;
    }
    if (changes.name !== undefined)
      connection.name = normalizeName(changes.name, connection.origin);
    if (changes.pinnedSha256 !== undefined) {
      connection.pinnedSha256 = normalizeFingerprint(changes.pinnedSha256);
    }
    this.save();
    return { ...connection };
  }

  remove(id: string): void {
    const connection = this.state.connections.find((candidate) => candidate.id === id);
    if (!connection) throw new ConnectionStoreError('no such connection');
    if (connection.kind === 'embedded') {
      throw new ConnectionStoreError('the embedded appliance cannot be removed');
    }
    this.state.connections = this.state.connections.filter((candidate) => candidate.id !== id);
    this.save();
  }

  /** Records where the embedded appliance listens now and the certificate it reported. */
  upsertEmbedded(origin: string, pinnedSha256: string | null): SavedConnection {
    let connection = this.state.connections.find(
      (candidate) => candidate.id === EMBEDDED_CONNECTION_ID,
    );
    if (!connection) {
      connection = {
        id: EMBEDDED_CONNECTION_ID,
        kind: 'embedded',
        name: 'This computer',
        origin,
        pinnedSha256: null,
        browserUuid: crypto.randomUUID(),
      };
      this.state.connections.unshift(connection);
    }
    connection.origin = new URL(origin).origin;
    connection.pinnedSha256 = pinnedSha256 === null ? null : normalizeFingerprint(pinnedSha256);
    this.save();
    return { ...connection };
  }

  private refuseDuplicate(origin: string, exceptId?: string): void {
    const existing = this.state.connections.find(
      (connection) =>
        connection.origin === origin && connection.kind === 'remote' && connection.id !== exceptId,
    );
    if (existing) {
      throw new ConnectionStoreError(`${origin} is already saved as "${existing.name}"`);
    }
  }

  private load(): StoreFile {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      const fresh: StoreFile = {
        version: 1,
        installationId: crypto.randomUUID(),
        connections: [],
      };
      this.writeFile(fresh);
      return fresh;
    }
    return parseStoreFile(text, this.file);
  }

  private save(): void {
    this.writeFile(this.state);
    for (const listener of this.listeners) listener();
  }

  private writeFile(state: StoreFile): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const temporary = `${this.file}.${crypto.randomBytes(6).toString('hex')}.tmp`;
    fs.writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(temporary, this.file);
  }
}

function normalizeName(name: string | undefined, origin: string): string {
  const text = (name ?? '').trim();
  if (text === '') return new URL(origin).host;
  if (text.length > 100) throw new ConnectionStoreError('a name has at most 100 characters');
  return text;
}

function parseStoreFile(text: string, file: string): StoreFile {
  const fail = (): never => {
    throw new ConnectionStoreError(`${file} is not a connections file this version can read`);
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail();
  }
  const record = value as Partial<StoreFile> | null;
  if (
    !record ||
    record.version !== 1 ||
    typeof record.installationId !== 'string' ||
    !Array.isArray(record.connections)
  ) {
    return fail();
  }
  const connections = record.connections.filter(
    (connection): connection is SavedConnection =>
      typeof connection === 'object' &&
      connection !== null &&
      typeof connection.id === 'string' &&
      CONNECTION_ID_PATTERN.test(connection.id) &&
      (connection.kind === 'embedded' || connection.kind === 'remote') &&
      typeof connection.name === 'string' &&
      typeof connection.origin === 'string' &&
      (connection.pinnedSha256 === null || typeof connection.pinnedSha256 === 'string') &&
      typeof connection.browserUuid === 'string',
  );
  return { version: 1, installationId: record.installationId, connections };
}
