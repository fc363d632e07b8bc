import { describe, expect, it } from 'vitest';
import { operationIdOf } from './operation-id.js';

describe('operationIdOf', () => {
  it.each([
    ['POST', '/api/saveUser', 'saveUser'],
    ['POST', '/api/hidePendingDevice', 'hidePendingDevice'],
    ['POST', '/api/getPingInfo/:pingTarget', 'getPingInfo'],
    ['GET', '/api/SSEgetPingInfo/{pingTarget}', 'SSEgetPingInfo'],
    ['GET', '/api/tokens', 'getTokens'],
    ['DELETE', '/api/tokens/:id', 'deleteTokensById'],
    ['POST', '/api/users/:userId/tokens/revoke-all', 'postUsersByUserIdTokensRevokeAll'],
    ['POST', '/api/oauth/clients/:clientId/approve', 'postOauthClientsByClientIdApprove'],
    ['POST', '/api/osUpgrade/install', 'postOsUpgradeInstall'],
    ['GET', '/api/service/getAll/:deviceId', 'getServiceGetAllByDeviceId'],
    ['GET', '/auth/device-code.js', 'getAuthDeviceCodeJs'],
    ['GET', '/.well-known/oauth-protected-resource', 'getWellKnownOauthProtectedResource'],
    ['GET', '/openapi.json', 'getOpenapiJson'],
  ])('%s %s is %s', (method, url, id) => {
    expect(operationIdOf(method, url)).toBe(id);
  });

  it('names the same operation alike in Fastify and OpenAPI path forms', () => {
    expect(operationIdOf('GET', '/api/device/:device/stats')).toBe(
      operationIdOf('GET', '/api/device/{device}/stats'),
    );
  });
});
