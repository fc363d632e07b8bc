import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';

import { App } from './app/app.js';
import { stampStyleNonces } from './lib/csp-nonce.js';

stampStyleNonces();

const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root element for the console');

createRoot(container).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
