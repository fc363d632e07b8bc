/**
 * The one typed contract between the Electron main process and the console renderer.
 *
 * Pure TypeScript: imported by main/ (which implements the channels), by the preload (which
 * exposes them as `window.consoleBridge`) and by the renderer (which calls them). IPC carries
 * operating-system features only (saved connections, sign-in, the embedded appliance, terminals,
 * the system browser); appliance data always goes over HTTP, through the per-connection base
 * below, so the console behaves the same against the embedded appliance, a remote one and (in a
 * browser) its own origin.
 *
 * Secrets never cross this boundary: the main process keeps every access and refresh token and
 * the embedded appliance's password; the renderer receives sign-in outcomes, never tokens.
 */

// ---------------------------------------------------------------------------------------------
// The console's origin and the per-connection HTTP base

/** The privileged scheme the console is served from (registered standard and secure). */
export const CONSOLE_SCHEME = 'app';
export const CONSOLE_HOST = 'console';
/** Fixed origin of the console window; never `file:` (whose origin is opaque). */
export const CONSOLE_ORIGIN = `${CONSOLE_SCHEME}://${CONSOLE_HOST}`;

/** Every saved connection's API lives under `app://console/appliances/<connectionId>`. */
export const APPLIANCE_PATH_PREFIX = '/appliances/';

/** The id of the embedded appliance's connection (always present in the desktop app). */
export const EMBEDDED_CONNECTION_ID = 'embedded';

/** Connection ids are short, URL-safe and lower case: `embedded` or `c-<12 hex>`. */
export const CONNECTION_ID_PATTERN = /^(embedded|c-[0-9a-f]{12})$/;

/**
 * The renderer's API base for a connection: `${connectionBaseUrl(id)}/api/me` reaches
 * `https://<appliance>/api/me` through the main process, which adds the bearer and enforces the
 * pinned certificate. Event streams (`text/event-stream`) arrive frame by frame.
 */
export function connectionBaseUrl(connectionId: string): string {
  return `${CONSOLE_ORIGIN}${APPLIANCE_PATH_PREFIX}${connectionId}`;
}

/**
 * When the main process itself refuses or cannot forward a request, its answer carries this
 * header (the value is a ProxyErrorCode) and a ProxyErrorBody; any other answer is the
 * appliance's own, passed through unchanged apart from cookies.
 */
export const PROXY_ERROR_HEADER = 'x-console-proxy-error';

export type ProxyErrorCode =
  /** 404: no saved connection has this id. */
  | 'unknown-connection'
  /** 403: sign-in, sign-out and OAuth token endpoints go through IPC; `/auth/*` pages open in the system browser. */
  | 'path-refused'
  /** 401: the main process holds no token for this connection (sign in through IPC). */
  | 'not-signed-in'
  /** 502: the appliance presented a certificate other than the pinned one (see the fingerprints). */
  | 'certificate-changed'
  /** 502: the appliance could not be reached (refused, reset, timed out, TLS failure). */
  | 'appliance-unreachable'
  /** 503: the embedded appliance is (re)starting or has stopped. */
  | 'appliance-not-ready'
  /** 413: request bodies are buffered (to retry once after a refresh) up to a limit. */
  | 'request-too-large';

export interface ProxyErrorBody {
  /** Human-readable text, in the `{error}` family the console already renders. */
  error: string;
  proxy: {
    code: ProxyErrorCode;
    connectionId?: string;
    pinnedSha256?: string;
    presentedSha256?: string;
  };
}

// ---------------------------------------------------------------------------------------------
// Channels

/** Every channel is named `console:<namespace>:<action>`; the preload rejects anything else. */
export type ConsoleChannel = `console:${string}:${string}`;

export const CONSOLE_CHANNEL_PREFIX = 'console:';

/** Renderer-to-main calls (ipcRenderer.invoke / ipcMain.handle); one argument object at most. */
export const CONSOLE_CHANNELS = {
  appGetBootstrap: 'console:app:get-bootstrap',
  connectionsList: 'console:connections:list',
  connectionsProbe: 'console:connections:probe',
  connectionsAdd: 'console:connections:add',
  connectionsEdit: 'console:connections:edit',
  connectionsRemove: 'console:connections:remove',
  connectionsRepin: 'console:connections:repin',
  authStatus: 'console:auth:status',
  authSignIn: 'console:auth:sign-in',
  authDeviceStart: 'console:auth:device-start',
  authDeviceWait: 'console:auth:device-wait',
  authDeviceCancel: 'console:auth:device-cancel',
  authSignOut: 'console:auth:sign-out',
  coreStatus: 'console:core:status',
  coreRestart: 'console:core:restart',
  coreSetCollectors: 'console:core:set-collectors',
  terminalOpenLocal: 'console:terminal:open-local',
  terminalOpenAppliance: 'console:terminal:open-appliance',
  shellOpenExternal: 'console:shell:open-external',
} as const satisfies Record<string, ConsoleChannel>;

/** Main-to-renderer notifications (webContents.send / ipcRenderer.on). */
export const CONSOLE_EVENTS = {
  coreChanged: 'console:core:changed',
  connectionsChanged: 'console:connections:changed',
  authChanged: 'console:auth:changed',
  deepLink: 'console:app:deep-link',
  /** Carries a MessagePort (see TerminalPortMessage); the preload hands it to the page. */
  terminalPort: 'console:terminal:port',
} as const satisfies Record<string, ConsoleChannel>;

export function isConsoleChannel(channel: string): channel is ConsoleChannel {
  return /^console:[a-z][a-z0-9-]*:[a-z][a-z0-9-]*$/.test(channel);
}

/** What crosses the boundary when a handler fails: a message for the user, never a stack. */
export interface SerializedError {
  message: string;
}

export type IpcResult<T> = { ok: true; value: T } | { ok: false; error: SerializedError };

// ---------------------------------------------------------------------------------------------
// Bootstrap

/** Read once by the renderer at start. */
export interface ConsoleBootstrap {
  version: string;
  consoleOrigin: typeof CONSOLE_ORIGIN;
  embeddedConnectionId: typeof EMBEDDED_CONNECTION_ID;
  platform: 'linux' | 'darwin' | 'win32' | 'other';
  /**
   * Where remote tokens are kept: `os-keychain` (safeStorage) or `memory-only` (Linux without a
   * keyring, safeStorage's `basic_text` backend): then remote connections need a new sign-in
   * after each start, and `storageWarning` says so for the window to show.
   */
  tokenStorage: TokenStorage;
  storageWarning: string | null;
}

export type TokenStorage = 'os-keychain' | 'memory-only';

// ---------------------------------------------------------------------------------------------
// Connections and certificates

export interface ConnectionSummary {
  id: string;
  kind: 'embedded' | 'remote';
  name: string;
  /** `https://host:port` of the appliance (what `/auth/*` pages open on in the system browser). */
  origin: string;
  /** connectionBaseUrl(id): where the renderer sends this connection's API calls. */
  baseUrl: string;
  pinnedSha256: string | null;
  signedIn: boolean;
  signInMethod: 'password' | 'device' | null;
}

export interface CertificateSummary {
  /** SHA-256 of the DER certificate, `AB:CD:…` (32 pairs), as Node and the appliance print it. */
  sha256: string;
  subject: string;
  issuer: string;
  validFrom: string;
  validTo: string;
  /** Chains to a CA in the operating system's store and matches the host name. */
  trustedByOs: boolean;
}

/**
 * What the appliance at a URL presents, against what is pinned for it:
 * `new` (nothing pinned: show the fingerprint, pin on the user's acceptance), `unchanged`,
 * `changed` (refused until the user re-pins; show both fingerprints side by side) and
 * `changed-trusted` (a CA-valid replacement that the main process re-pins by itself).
 */
export interface ProbeResult {
  origin: string;
  certificate: CertificateSummary;
  pinnedSha256: string | null;
  status: 'new' | 'unchanged' | 'changed' | 'changed-trusted';
}

export interface ProbeInput {
  url: string;
}

export interface AddConnectionInput {
  url: string;
  name?: string;
  /** The fingerprint the user accepted after a probe; refused if the appliance now shows another. */
  acceptSha256: string;
}

export interface EditConnectionInput {
  id: string;
  name?: string;
  /** A new URL needs a new probe and acceptance; its tokens are dropped (other appliance). */
  url?: string;
  acceptSha256?: string;
}

export interface ConnectionIdInput {
  id: string;
}

export interface RepinInput {
  id: string;
  acceptSha256: string;
}

// ---------------------------------------------------------------------------------------------
// Sign-in

export interface AuthStatus {
  connectionId: string;
  signedIn: boolean;
  method: 'password' | 'device' | null;
}

/** Password sign-in; `browser_id` (`spa:<uuid>:<fp>`, fixed per installation and connection) is added by main. */
export interface SignInInput {
  connectionId: string;
  username: string;
  password: string;
  /** The second call after `totp-required`. */
  totp?: string;
}

export type SignInResult =
  | { status: 'signed-in'; user: { id: number; email: string; name: string } }
  | { status: 'totp-required' }
  | { status: 'invalid-credentials'; message: string }
  | { status: 'rate-limited'; retryAfterSeconds: number | null };

export interface DeviceFlowStartInput {
  connectionId: string;
}

/** Show `userCode` and open `verificationUriComplete` (built on the connection's origin). */
export interface DeviceFlowStart {
  flowId: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  expiresInSeconds: number;
  intervalSeconds: number;
}

export interface DeviceFlowIdInput {
  flowId: string;
}

/**
 * The appliance's device page shows one message for every failure, so when a flow ends without
 * tokens the window lists every cause it can be.
 */
export const DEVICE_FLOW_FAILURE_CAUSES = [
  'the account that approved lacks the api (or sa) permission',
  'the code was typed wrong',
  'the code expired (codes live 600 seconds)',
  'the code was already used',
] as const;

export type DeviceFlowResult =
  | { status: 'signed-in' }
  | { status: 'denied' }
  | { status: 'expired'; causes: readonly string[] }
  | { status: 'cancelled' };

// ---------------------------------------------------------------------------------------------
// The embedded appliance

export interface CollectorSettings {
  /** Off until the user turns them on. */
  enabled: boolean;
  /** The address they bind: loopback by default, a LAN interface to receive from a switch. */
  bindAddress: string;
}

export type CollectorPorts = Record<string, { udp?: number; tcp?: number }>;

export interface CoreStatus {
  connectionId: typeof EMBEDDED_CONNECTION_ID;
  state: 'idle' | 'starting' | 'ready' | 'restarting' | 'failed' | 'stopping' | 'stopped';
  /** Ports are what the running appliance bound (`{}` while the collectors are off). */
  collectors: CollectorSettings & { ports: CollectorPorts };
  /** Addresses the collectors may bind on this machine (loopback, each interface, all). */
  collectorAddresses: string[];
  /** Why it stopped, with the tail of its output; `restart` starts it again. */
  failure: { message: string; logTail: string[] } | null;
  /** On-box tools the appliance spawns that this machine lacks (shown instead of failing silently). */
  missingTools: string[];
  /** Where its admin password is kept: the OS keychain, or a 0600 file in its data dir (no keyring). */
  passwordStorage: 'os-keychain' | 'file-in-data-dir';
}

// ---------------------------------------------------------------------------------------------
// Terminals: a MessagePort per session

export interface OpenLocalTerminalInput {
  cols: number;
  rows: number;
}

/**
 * The appliance's terminal socket: `path` is the WebSocket path under `/api/` on the
 * connection's appliance, with its single-use ticket in the query (obtained by the renderer
 * through the proxy). Main opens it with the pinned certificate and no `Origin` header.
 */
export interface OpenApplianceTerminalInput {
  connectionId: string;
  path: string;
}

export interface TerminalOpened {
  sessionId: string;
  kind: 'pty' | 'socket';
}

/**
 * After `terminal.openLocal` / `terminal.openAppliance` answer `{sessionId}`, the page receives
 * `window` `message` events whose `data` is this object and whose `ports[0]` is the session's
 * MessagePort (posted by the preload to the page's own origin).
 */
export interface TerminalPortMessage {
  type: typeof CONSOLE_EVENTS.terminalPort;
  sessionId: string;
}

/** `pty` sessions (the local shell): renderer to main. */
export type PtyClientMessage =
  | { type: 'input'; data: string }
  | { type: 'resize'; cols: number; rows: number }
  | { type: 'close' };

/** `pty` sessions: main to renderer. */
export type PtyServerMessage =
  | { type: 'output'; data: string }
  | { type: 'exit'; exitCode: number | null; signal: number | null };

/** `socket` sessions (the appliance's WebSocket, frames passed through verbatim): renderer to main. */
export type SocketClientMessage =
  { type: 'send'; data: string | ArrayBuffer } | { type: 'close'; code?: number; reason?: string };

/** `socket` sessions: main to renderer. `open` precedes any `message`. */
export type SocketServerMessage =
  | { type: 'open' }
  | { type: 'message'; data: string | ArrayBuffer }
  | { type: 'closed'; code: number; reason: string };

export const TERMINAL_LIMITS = {
  minCols: 2,
  maxCols: 1000,
  minRows: 1,
  maxRows: 500,
  /** Largest single input or frame accepted from the renderer (bytes of UTF-8 or binary). */
  maxFrameBytes: 1024 * 1024,
} as const;

// ---------------------------------------------------------------------------------------------
// Deep links

/** `appliance-console://device/<connectionId>/<deviceId>` opens that device's page. */
export const DEEP_LINK_SCHEME = 'appliance-console';

export interface DeepLink {
  connectionId: string;
  /** A console route, for example `/devices/12`. */
  route: string;
}

// ---------------------------------------------------------------------------------------------
// The bridge

export type Unsubscribe = () => void;

export interface ConsoleBridge {
  getBootstrap(): Promise<IpcResult<ConsoleBootstrap>>;
  connections: {
    list(): Promise<IpcResult<ConnectionSummary[]>>;
    probe(input: ProbeInput): Promise<IpcResult<ProbeResult>>;
    add(input: AddConnectionInput): Promise<IpcResult<ConnectionSummary>>;
    edit(input: EditConnectionInput): Promise<IpcResult<ConnectionSummary>>;
    remove(input: ConnectionIdInput): Promise<IpcResult<null>>;
    repin(input: RepinInput): Promise<IpcResult<ConnectionSummary>>;
  };
  auth: {
    status(input: ConnectionIdInput): Promise<IpcResult<AuthStatus>>;
    signIn(input: SignInInput): Promise<IpcResult<SignInResult>>;
    startDeviceFlow(input: DeviceFlowStartInput): Promise<IpcResult<DeviceFlowStart>>;
    waitDeviceFlow(input: DeviceFlowIdInput): Promise<IpcResult<DeviceFlowResult>>;
    cancelDeviceFlow(input: DeviceFlowIdInput): Promise<IpcResult<null>>;
    signOut(input: ConnectionIdInput): Promise<IpcResult<null>>;
  };
  core: {
    status(): Promise<IpcResult<CoreStatus>>;
    restart(): Promise<IpcResult<CoreStatus>>;
    setCollectors(input: CollectorSettings): Promise<IpcResult<CoreStatus>>;
  };
  terminal: {
    openLocal(input: OpenLocalTerminalInput): Promise<IpcResult<TerminalOpened>>;
    openAppliance(input: OpenApplianceTerminalInput): Promise<IpcResult<TerminalOpened>>;
  };
  shell: {
    /** https URLs on the origin of a saved connection only (its `/auth/*` pages, for example). */
    openExternal(input: { url: string }): Promise<IpcResult<null>>;
  };
  events: {
    onCoreChanged(listener: (status: CoreStatus) => void): Unsubscribe;
    onConnectionsChanged(listener: (connections: ConnectionSummary[]) => void): Unsubscribe;
    onAuthChanged(listener: (status: AuthStatus) => void): Unsubscribe;
    onDeepLink(listener: (link: DeepLink) => void): Unsubscribe;
  };
}

/** Invokes one channel of the contract (the preload: ipcRenderer.invoke; tests: their double). */
export type BridgeInvoke = <T>(channel: ConsoleChannel, input?: unknown) => Promise<IpcResult<T>>;
/** Subscribes to one event of the contract, passing on its payload only. */
export type BridgeSubscribe = <T>(
  channel: ConsoleChannel,
  listener: (payload: T) => void,
) => Unsubscribe;

/**
 * The bridge's methods over a transport: each method invokes its one fixed channel, each listener
 * its one fixed event. The preload builds `window.consoleBridge` with it, and the console's
 * Chromium tests build their double with it, so both expose the same mapping.
 */
export function consoleBridgeOver(invoke: BridgeInvoke, subscribe: BridgeSubscribe): ConsoleBridge {
  const C = CONSOLE_CHANNELS;
  return {
    getBootstrap: () => invoke(C.appGetBootstrap),
    connections: {
      list: () => invoke(C.connectionsList),
      probe: (input) => invoke(C.connectionsProbe, input),
      add: (input) => invoke(C.connectionsAdd, input),
      edit: (input) => invoke(C.connectionsEdit, input),
      remove: (input) => invoke(C.connectionsRemove, input),
      repin: (input) => invoke(C.connectionsRepin, input),
    },
    auth: {
      status: (input) => invoke(C.authStatus, input),
      signIn: (input) => invoke(C.authSignIn, input),
      startDeviceFlow: (input) => invoke(C.authDeviceStart, input),
      waitDeviceFlow: (input) => invoke(C.authDeviceWait, input),
      cancelDeviceFlow: (input) => invoke(C.authDeviceCancel, input),
      signOut: (input) => invoke(C.authSignOut, input),
    },
    core: {
      status: () => invoke(C.coreStatus),
      restart: () => invoke(C.coreRestart),
      setCollectors: (input) => invoke(C.coreSetCollectors, input),
    },
    terminal: {
      openLocal: (input) => invoke(C.terminalOpenLocal, input),
      openAppliance: (input) => invoke(C.terminalOpenAppliance, input),
    },
    shell: {
      openExternal: (input) => invoke(C.shellOpenExternal, input),
    },
    events: {
      onCoreChanged: (listener) => subscribe(CONSOLE_EVENTS.coreChanged, listener),
      onConnectionsChanged: (listener) => subscribe(CONSOLE_EVENTS.connectionsChanged, listener),
      onAuthChanged: (listener) => subscribe(CONSOLE_EVENTS.authChanged, listener),
      onDeepLink: (listener) => subscribe(CONSOLE_EVENTS.deepLink, listener),
    },
  };
}
