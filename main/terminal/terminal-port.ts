/**
 * The main-process end of a terminal session's MessagePort, reduced to what sessions use, so the
 * same session code runs over Electron's MessagePortMain in the app and over a worker_threads
 * MessagePort in tests.
 */
import type { MessagePortMain } from 'electron';

export interface TerminalPort {
  postMessage(message: unknown): void;
  onMessage(listener: (data: unknown) => void): void;
  onClose(listener: () => void): void;
  start(): void;
  close(): void;
}

export function fromMessagePortMain(port: MessagePortMain): TerminalPort {
  return {
    postMessage: (message) => port.postMessage(message),
    onMessage: (listener) => port.on('message', (event) => listener(event.data)),
    onClose: (listener) => port.on('close', listener),
    start: () => port.start(),
    close: () => port.close(),
  };
}
