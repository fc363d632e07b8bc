import { defineRoute } from './define-route.js';
import type { App } from './http-server.js';
import { publicAccess } from './identity.js';

// spec: part1 > What the service does > /openapi.json
export async function openapiRoutes(app: App): Promise<void> {
  defineRoute(app, {
    method: 'GET',
    url: '/openapi.json',
    access: publicAccess,
    errors: 'message',
    tags: ['meta'],
    summary: 'This OpenAPI document',
    hide: true,
    // The document itself is not described by a schema (it is sent as built).
    response: {},
    handler: async () => app.swagger(),
  });
}
