/**
 * Staged updates (docs/agent-protocol.md §8). The agent applies an offered update only when its
 * version differs from the running one, the downloaded bytes hash to `sha256`, the release key's
 * Ed25519 signature of `NETMON-AGENT-UPDATE-1\n<version>\n<arch>\n<sha256>` verifies, and the
 * tarball's `manifest.json` names the same version and arch. It unpacks into
 * `<state dir>/versions/<version>/` and switches the `<state dir>/current` symlink atomically (a
 * new link renamed over the old one); the service manager restarts it. The appliance's key never
 * signs code: only the release key the agent was built or configured with is trusted.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

import { ed25519Verify, fromB64u, publicKeyFromB64u, sha256hex } from './keys.js';
import type { UpdateOffer } from './state.js';

export const MAX_BUNDLE_BYTES = 256 * 1024 * 1024;
const VERSION_PATTERN = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/;

export function updateSigningString(version: string, arch: string, sha256: string): string {
  return `NETMON-AGENT-UPDATE-1\n${version}\n${arch}\n${sha256}`;
}

export type UpdateCheck = { ok: true } | { ok: false; reason: string };

/** The checks on the offer and the downloaded bytes, before anything is written. */
export function verifyUpdate(
  offer: UpdateOffer,
  bytes: Buffer,
  context: { releaseKey: string | undefined; runningVersion: string; arch: string },
): UpdateCheck {
  if (!VERSION_PATTERN.test(offer.version)) return { ok: false, reason: 'malformed version' };
  if (offer.version === context.runningVersion) return { ok: false, reason: 'already running' };
  if (!context.releaseKey) return { ok: false, reason: 'no release key configured' };
  const releaseKey = publicKeyFromB64u(context.releaseKey);
  if (!releaseKey) return { ok: false, reason: 'release key is not an Ed25519 public key' };
  if (!/^[0-9a-f]{64}$/.test(offer.sha256)) return { ok: false, reason: 'malformed sha256' };
  if (sha256hex(bytes) !== offer.sha256) return { ok: false, reason: 'sha256 mismatch' };
  const signature = fromB64u(offer.signature);
  if (
    !signature ||
    !ed25519Verify(
      releaseKey,
      updateSigningString(offer.version, context.arch, offer.sha256),
      signature,
    )
  )
    return { ok: false, reason: 'bad signature' };
  return { ok: true };
}

export interface TarEntry {
  name: string;
  type: 'file' | 'dir';
  mode: number;
  data: Buffer;
}

function field(block: Buffer, offset: number, length: number): string {
  const raw = block.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? length : end).toString('utf8');
}

/**
 * Reads a ustar archive: regular files and folders only (links, devices and anything else are
 * refused), names relative and without `..`, so nothing lands outside the target folder.
 */
export function readTar(tar: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let offset = 0;
  let longName: string | null = null;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const size = parseInt(field(header, 124, 12).trim() || '0', 8);
    const typeflag = String.fromCharCode(header[156] ?? 0);
    const prefix = field(header, 345, 155);
    let name = longName ?? (prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
    longName = null;
    const data = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (typeflag === 'L') {
      longName = data.toString('utf8').replace(/\0+$/, '');
      continue;
    }
    if (typeflag === 'x' || typeflag === 'g') continue; // pax headers: names here are plain
    name = name.replace(/^\.\//, '');
    if (!name || name === '.' || name === './') continue;
    if (name.startsWith('/') || name.split('/').includes('..') || name.includes('\0'))
      throw new Error(`unsafe path in bundle: ${name}`);
    const mode = parseInt(field(header, 100, 8).trim() || '644', 8) & 0o755;
    if (typeflag === '0' || typeflag === '\0') entries.push({ name, type: 'file', mode, data });
    else if (typeflag === '5')
      entries.push({ name: name.replace(/\/$/, ''), type: 'dir', mode, data });
    else throw new Error(`unsupported entry type ${JSON.stringify(typeflag)} in bundle: ${name}`);
  }
  return entries;
}

/** Unpacks a verified bundle and switches `current`; returns the version folder. */
export function installBundle(
  bytes: Buffer,
  offer: UpdateOffer,
  context: { stateDir: string; arch: string },
): string {
  const entries = readTar(gunzipSync(bytes, { maxOutputLength: 4 * MAX_BUNDLE_BYTES }));
  const manifestEntry = entries.find((e) => e.name === 'manifest.json' && e.type === 'file');
  if (!manifestEntry) throw new Error('bundle has no manifest.json');
  const manifest = JSON.parse(manifestEntry.data.toString('utf8')) as Record<string, unknown>;
  if (
    manifest.name !== 'netmon-agent' ||
    manifest.version !== offer.version ||
    manifest.arch !== context.arch
  )
    throw new Error('manifest.json does not name this version and arch');
  const versions = path.join(context.stateDir, 'versions');
  const target = path.join(versions, offer.version);
  const staging = `${target}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  for (const entry of entries) {
    const out = path.join(staging, entry.name);
    if (entry.type === 'dir') mkdirSync(out, { recursive: true });
    else {
      mkdirSync(path.dirname(out), { recursive: true });
      writeFileSync(out, entry.data, { mode: entry.mode });
    }
  }
  rmSync(target, { recursive: true, force: true });
  renameSync(staging, target);
  const link = path.join(context.stateDir, 'current');
  const tmpLink = `${link}.new-${process.pid}`;
  rmSync(tmpLink, { force: true });
  symlinkSync(path.join('versions', offer.version), tmpLink);
  renameSync(tmpLink, link);
  return target;
}
