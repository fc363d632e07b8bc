// Types for the parts of net-snmp (pure JavaScript, no bundled types) that snmp.client.ts uses.
declare module 'net-snmp' {
  export interface Varbind {
    oid: string;
    type: number;
    value: unknown;
  }

  export interface SessionOptions {
    port?: number;
    retries?: number;
    timeout?: number;
    backoff?: number;
    transport?: 'udp4' | 'udp6';
    version?: number;
    idBitsSize?: 16 | 32;
    backwardsGetNexts?: boolean;
  }

  export interface V3User {
    name: string;
    level: number;
    authProtocol?: number;
    authKey?: string;
    privProtocol?: number;
    privKey?: string;
  }

  export interface Session {
    get(oids: string[], callback: (error: Error | null, varbinds?: Varbind[]) => void): void;
    subtree(
      oid: string,
      maxRepetitions: number,
      feed: (varbinds: Varbind[]) => boolean | void,
      done: (error: Error | null) => void,
    ): void;
    walk(
      oid: string,
      maxRepetitions: number,
      feed: (varbinds: Varbind[]) => boolean | void,
      done: (error: Error | null) => void,
    ): void;
    close(): void;
    on(event: 'error', listener: (error: Error) => void): this;
    on(event: 'close', listener: () => void): this;
  }

  export function createSession(
    target: string,
    community: string,
    options?: SessionOptions,
  ): Session;
  export function createV3Session(target: string, user: V3User, options?: SessionOptions): Session;
  export function isVarbindError(varbind: Varbind): boolean;
  export function varbindError(varbind: Varbind): string;

  export const Version1: number;
  export const Version2c: number;
  export const Version3: number;
  export const SecurityLevel: { noAuthNoPriv: number; authNoPriv: number; authPriv: number };
  export const AuthProtocols: {
    md5: number;
    sha: number;
    sha224: number;
    sha256: number;
    sha384: number;
    sha512: number;
  };
  export const PrivProtocols: { des: number; aes: number; aes256b: number; aes256r: number };
  export const ObjectType: Record<string, number | string>;

  export class RequestTimedOutError extends Error {}
  export class RequestFailedError extends Error {
    status: number;
  }
  export class ResponseInvalidError extends Error {
    code: number;
  }
  export class RequestInvalidError extends Error {}

  const snmp: {
    createSession: typeof createSession;
    createV3Session: typeof createV3Session;
    isVarbindError: typeof isVarbindError;
    varbindError: typeof varbindError;
    Version1: number;
    Version2c: number;
    Version3: number;
    SecurityLevel: typeof SecurityLevel;
    AuthProtocols: typeof AuthProtocols;
    PrivProtocols: typeof PrivProtocols;
    ObjectType: typeof ObjectType;
    RequestTimedOutError: typeof RequestTimedOutError;
    RequestFailedError: typeof RequestFailedError;
    ResponseInvalidError: typeof ResponseInvalidError;
    RequestInvalidError: typeof RequestInvalidError;
  };
  export default snmp;
}
