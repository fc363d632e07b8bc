/**
 * An xterm.js terminal bound to a socket (the console's only xterm importer). It does not know
 * where the socket comes from: the terminal page opens the appliance's ticketed WebSocket through
 * the transport, and the desktop app can hand it a local shell's socket the same way.
 *
 * Frames out: JSON `{"type":"input","data"}` and `{"type":"resize","cols","rows"}`; frames in: text.
 * Copy and paste: Ctrl+Shift+C / Ctrl+Shift+V (Ctrl+C and Ctrl+V go to the shell), and the
 * selection is copied on right-click. xterm's own <style> elements get the page's CSP nonce
 * (lib/csp-nonce.ts).
 */
import '@xterm/xterm/css/xterm.css';

import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { useEffect, useRef } from 'react';

import type { TerminalSocket } from '../../lib/transport.js';

export type TerminalStatus = 'connecting' | 'open' | 'closed' | 'failed';

export interface TerminalViewProps {
  /** Opens the socket (called once per mount). */
  connect: () => Promise<TerminalSocket>;
  onStatus?: (status: TerminalStatus, detail?: string) => void;
  dark: boolean;
}

const DARK = {
  background: '#101214',
  foreground: '#d0d4d9',
  cursor: '#74c0fc',
  selectionBackground: '#364fc7',
};
const LIGHT = {
  background: '#fbfbfc',
  foreground: '#1a1b1e',
  cursor: '#1c7ed6',
  selectionBackground: '#a5d8ff',
};

export function TerminalView({ connect, onStatus, dark }: TerminalViewProps) {
  const host = useRef<HTMLDivElement>(null);
  const term = useRef<Terminal | null>(null);
  const status = useRef(onStatus);
  status.current = onStatus;

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const terminal = new Terminal({
      fontFamily: '"DejaVu Sans Mono", ui-monospace, monospace',
      fontSize: 13,
      cursorBlink: true,
      scrollback: 5000,
      theme: DARK,
      allowProposedApi: false,
    });
    const fit = new FitAddon();
    terminal.loadAddon(fit);
    terminal.open(element);
    term.current = terminal;
    let socket: TerminalSocket | null = null;
    let disposed = false;
    const send = (frame: unknown) => {
      if (socket && socket.readyState === 1) socket.send(JSON.stringify(frame));
    };
    const resize = () => {
      try {
        fit.fit();
      } catch {
        return;
      }
      send({ type: 'resize', cols: terminal.cols, rows: terminal.rows });
    };
    terminal.attachCustomKeyEventHandler((event) => {
      if (event.type !== 'keydown' || !event.ctrlKey || !event.shiftKey) return true;
      const key = event.key.toLowerCase();
      if (key === 'c') {
        const text = terminal.getSelection();
        if (text) void navigator.clipboard?.writeText(text);
        return false;
      }
      if (key === 'v') {
        void navigator.clipboard?.readText().then((text) => send({ type: 'input', data: text }));
        return false;
      }
      return true;
    });
    const onContext = (event: MouseEvent) => {
      const text = terminal.getSelection();
      if (text) {
        event.preventDefault();
        void navigator.clipboard?.writeText(text);
      }
    };
    element.addEventListener('contextmenu', onContext);
    const input = terminal.onData((data) => send({ type: 'input', data }));
    const observer = new ResizeObserver(() => resize());
    observer.observe(element);
    status.current?.('connecting');
    connect()
      .then((s) => {
        if (disposed) {
          s.close();
          return;
        }
        socket = s;
        s.onopen = () => {
          status.current?.('open');
          resize();
          terminal.focus();
        };
        s.onmessage = (event: MessageEvent) => {
          if (typeof event.data === 'string') terminal.write(event.data);
        };
        s.onclose = (event: CloseEvent) => {
          status.current?.('closed', event.reason || `closed (${event.code})`);
          terminal.write('\r\n\x1b[2m[session ended]\x1b[0m\r\n');
        };
        s.onerror = () => status.current?.('failed', 'The terminal socket failed.');
      })
      .catch((err: unknown) =>
        status.current?.('failed', err instanceof Error ? err.message : String(err)),
      );
    return () => {
      disposed = true;
      observer.disconnect();
      input.dispose();
      element.removeEventListener('contextmenu', onContext);
      socket?.close();
      terminal.dispose();
      term.current = null;
    };
  }, [connect]);

  useEffect(() => {
    if (term.current) term.current.options.theme = dark ? DARK : LIGHT;
  }, [dark]);

  return (
    <div
      ref={host}
      className="console-terminal"
      data-testid="terminal"
      data-theme={dark ? 'dark' : 'light'}
      aria-label="Terminal"
    />
  );
}
