// Types of csp.mjs (plain ESM so that vite.config.mjs and the desktop's main process both import it).
export declare const CSP_NONCE_PLACEHOLDER: string;
export declare const CONSOLE_CSP_TEMPLATE: string;
export declare function consoleCsp(nonce: string): string;
