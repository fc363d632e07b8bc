/** Request and response schemas of the certificate endpoints (spec part 3, Appliance settings). */
import { Type } from '@sinclair/typebox';
import { documented } from '../../platform/http/schemas.js';

export const MAX_FILE_BYTES = 512 * 1024;
export const MAX_PASSWORD = 1024;
/** A file name as a client may send it: a plain name, used for nothing but this check. */
export const FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_. ()+-]{0,254}$/;

const Iso = (description: string) => Type.String({ format: 'date-time', description });

export const CertificateAnswer = Type.Object(
  {
    subject: Type.String({
      description: 'Subject distinguished name, e.g. `CN=appliance.example, O=Example`',
    }),
    issuer: Type.String({ description: 'Issuer distinguished name' }),
    validFrom: Iso('Start of validity (ISO 8601, UTC)'),
    validTo: Iso('End of validity (ISO 8601, UTC)'),
  },
  { additionalProperties: false },
);

const details = {
  subject: Type.String(),
  issuer: Type.String(),
  validFrom: Iso('Start of validity (ISO 8601, UTC)'),
  validTo: Iso('End of validity (ISO 8601, UTC)'),
  serialNumber: Type.String({ description: 'Serial number (hexadecimal)' }),
  fingerprintSha256: Type.String({ description: 'SHA-256 fingerprint, `AB:CD:…`' }),
  subjectAltNames: Type.Array(Type.String(), {
    description: 'Subject alternative names as `DNS:<name>` and `IP Address:<address>`',
  }),
  keyAlgorithm: Type.String({ description: 'Public key algorithm: `rsa`, `ec`, `ed25519` …' }),
  selfSigned: Type.Boolean(),
};

export const ExtractAnswer = Type.Object(
  {
    status: Type.Literal(200),
    certificate: Type.String({ description: 'The certificate (PEM)' }),
    private_key: Type.Union([Type.String(), Type.Null()], {
      description: 'The private key (unencrypted PKCS#8 PEM), null when the file holds none',
    }),
    chain: Type.Array(Type.String(), {
      description: 'The issuers found in the file, nearest first (PEM)',
    }),
    format: Type.Union([Type.Literal('pem'), Type.Literal('der'), Type.Literal('pkcs12')]),
    keyMatches: Type.Union([Type.Boolean(), Type.Null()], {
      description: 'Whether the private key belongs to the certificate (null without a key)',
    }),
    ...details,
  },
  { additionalProperties: false },
);

export const InstalledAnswer = Type.Object(
  {
    status: Type.Literal(200),
    message: Type.String(),
    live: Type.Boolean({
      description: 'The HTTPS server serves it now (new connections); false only without HTTPS',
    }),
    installed: Type.Boolean({
      description: 'False when what is now served is the appliance’s own self-signed certificate',
    }),
    chainLength: Type.Integer({ minimum: 0 }),
    ...details,
  },
  { additionalProperties: false },
);

const fileProperty = {
  type: 'string',
  format: 'binary',
  maxLength: MAX_FILE_BYTES,
  description: `PEM, DER or PKCS#12; at most ${MAX_FILE_BYTES} bytes; its file name must be a plain name (letters, digits, \`_ . ( ) + -\` and spaces, at most 255 characters)`,
};
const passwordProperty = {
  type: 'string',
  maxLength: MAX_PASSWORD,
  description: 'Password of a PKCS#12 file or an encrypted PEM key',
};

/** Multipart bodies: documented only (the handler reads the parts and enforces every rule). */
export const ExtractBody = documented(Type.Unsafe<unknown>({}), {
  type: 'object',
  required: ['file'],
  properties: { file: fileProperty, password: passwordProperty },
});

export const SaveBody = documented(Type.Unsafe<unknown>({}), {
  type: 'object',
  required: ['file'],
  properties: {
    file: {
      ...fileProperty,
      description: `${fileProperty.description}. The certificate, its chain, and its private key unless \`key\` is sent`,
    },
    key: {
      ...fileProperty,
      description: 'The private key (PEM or DER PKCS#8), when `file` holds none',
    },
    password: passwordProperty,
  },
});
