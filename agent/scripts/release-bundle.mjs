#!/usr/bin/env node
// Makes an agent update bundle (docs/agent-protocol.md §8) from a built agent (npm run build:agent):
//
//   node agent/scripts/release-bundle.mjs --generate-key release-key.pem
//       writes a new release key (Ed25519, PKCS#8 PEM, mode 0600) and prints its public key (b64u),
//       which agents are given with --release-key
//   node agent/scripts/release-bundle.mjs --key release-key.pem --arch amd64 --out DIR [--version V]
//       [--dist DIR (default agent/dist)]
//       writes DIR/agent.tar.gz (manifest.json, package.json, dist/, bin/) and DIR/agent.json
//       ({version, arch, sha256, signature}); stage DIR as APPLIANCE_AGENT_INSTALLERS/<arch>/.
//
// The release key never goes to an appliance: the appliance copies agent.json into key bundles and
// never signs code. Runs on the release machine; tar is GNU tar, run with an argument array.
import { execFileSync } from 'node:child_process';
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
} from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const agentDir = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    'generate-key': { type: 'string' },
    key: { type: 'string' },
    arch: { type: 'string', default: 'amd64' },
    out: { type: 'string' },
    version: { type: 'string' },
    dist: { type: 'string' },
  },
});

function fail(message) {
  process.stderr.write(`release-bundle: ${message}\n`);
  process.exit(2);
}

const publicB64u = (key) => createPublicKey(key).export({ format: 'jwk' }).x;

if (values['generate-key']) {
  const file = values['generate-key'];
  if (existsSync(file)) fail(`${file} exists: refusing to overwrite a release key`);
  const { privateKey } = generateKeyPairSync('ed25519');
  writeFileSync(file, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  chmodSync(file, 0o600);
  process.stdout.write(`${publicB64u(privateKey)}\n`);
  process.exit(0);
}

if (!values.key || !values.out) fail('--key FILE and --out DIR are required');
if (values.arch !== 'amd64' && values.arch !== 'arm64') fail('--arch: amd64 or arm64');
const pkg = JSON.parse(readFileSync(path.join(agentDir, 'package.json'), 'utf8'));
const version = values.version ?? pkg.version;
if (!/^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/.test(version)) fail(`bad version ${version}`);
const dist = path.resolve(values.dist ?? path.join(agentDir, 'dist'));
if (!existsSync(path.join(dist, 'cli.js'))) fail(`${dist} has no cli.js: run npm run build:agent`);
const key = createPrivateKey(readFileSync(values.key));

const staging = mkdtempSync(path.join(tmpdir(), 'agent-release-'));
try {
  writeFileSync(
    path.join(staging, 'manifest.json'),
    JSON.stringify({ name: 'netmon-agent', version, arch: values.arch }, null, 2) + '\n',
  );
  writeFileSync(
    path.join(staging, 'package.json'),
    JSON.stringify({ ...pkg, version }, null, 2) + '\n',
  );
  cpSync(dist, path.join(staging, 'dist'), {
    recursive: true,
    filter: (source) => !/\.(tsbuildinfo|d\.ts|map)$/.test(source) && !/\.test\.js$/.test(source),
  });
  mkdirSync(path.join(staging, 'bin'));
  writeFileSync(
    path.join(staging, 'bin', 'netmon-agent'),
    '#!/bin/sh\nexec node "$(dirname "$0")/../dist/cli.js" "$@"\n',
    { mode: 0o755 },
  );
  mkdirSync(values.out, { recursive: true });
  const tarball = path.join(values.out, 'agent.tar.gz');
  execFileSync('tar', [
    '--create',
    '--gzip',
    '--file',
    tarball,
    '--directory',
    staging,
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--sort=name',
    '--mtime=@0',
    '--format=gnu',
    'manifest.json',
    'package.json',
    'dist',
    'bin',
  ]);
  const sha256 = createHash('sha256').update(readFileSync(tarball)).digest('hex');
  const signature = sign(
    null,
    Buffer.from(`NETMON-AGENT-UPDATE-1\n${version}\n${values.arch}\n${sha256}`),
    key,
  ).toString('base64url');
  writeFileSync(
    path.join(values.out, 'agent.json'),
    JSON.stringify({ version, arch: values.arch, sha256, signature }, null, 2) + '\n',
  );
  process.stdout.write(`${tarball} ${sha256}\n`);
} finally {
  rmSync(staging, { recursive: true, force: true });
}
