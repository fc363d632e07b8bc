import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';

import { App } from './app/app.js';
import { startDesktop } from './features/desktop/desktop-start.js';
import { getConsoleBridge } from './lib/bridge.js';
import { stampStyleNonces } from './lib/csp-nonce.js';

stampStyleNonces();

const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root element for the console');
const root = container;

function render() {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}

// In the desktop window the transport, the active appliance and its sign-in come from the main
// process before the first render; in a browser the console keeps its own origin.
const bridge = getConsoleBridge();
if (bridge) {
  startDesktop(bridge).then(render, (error: unknown) => {
    root.textContent = `The desktop app could not start the console: ${error instanceof Error ? error.message : String(error)}`;
  });
} else {
  render();
}
