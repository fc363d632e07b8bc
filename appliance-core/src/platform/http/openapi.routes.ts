import type { App } from './http-server.js';
import { publicAccess } from './identity.js';

// spec: part1 > What the service does > /openapi.json
export async function openapiRoutes(app: App): Promise<void> {
  app.get(
    '/openapi.json',
    {
      config: { access: publicAccess, errors: { validation: 'message', failure: 'message' } },
      schema: { hide: true },
    },
    async () => app.swagger(),
  );
}
