/**
 * The browser pages of the authorization server: sign-in, device approval, consent, and their
 * two assets. Pages run on the browser session (`appliance_session`); without one they send the
 * browser to the sign-in page with a `redirect` back (a validated same-origin /auth/ path).
 *
 * Every failure on a page is answered as a page (route-level error handler), including the
 * permission gate of the auth hook: on POST /auth/device it is the same page, status and message
 * as a wrong code; on the consent page it is the spec's 403 page. The OAuth 400 answers of
 * GET /auth/authorize stay JSON `{error, error_description}`, as the spec lists them.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { CoreContext } from '../../platform/context.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { ApiFailure, oauthFailure } from '../../platform/http/envelopes.js';
import { renderFailure } from '../../platform/http/error-handler.js';
import type { App } from '../../platform/http/http-server.js';
import { permits, publicAccess, type Access, type Identity } from '../../platform/http/identity.js';
import { PER_MINUTE } from '../../platform/http/rate-limit.js';
import { MediaBodies, MediaBody, OAuthErrorBody } from '../../platform/http/schemas.js';
import { fieldErrorsFrom } from '../../platform/http/validation.js';
import { HTML_CSP } from '../../platform/http/security-headers.js';
import { login, setSessionCookie } from '../auth/index.js';
import { sessionCsrfSecret, type TokenService } from '../tokens/index.js';
import { DEVICE_CODE_JS, AUTH_CSS } from './oauth.assets.js';
import type { FormAction, FormGuard } from './oauth.csrf.js';
import {
  consentPage,
  DEVICE_CODE_ERROR,
  deviceDecidedPage,
  devicePage,
  messagePage,
  signInPage,
  totpPage,
} from './oauth.pages.js';
import { originOf } from './oauth.routes.js';
import { safeReturnTarget } from './oauth.rules.js';
import {
  AuthorizeForm,
  AuthorizeQuery,
  DeviceForm,
  DeviceQuery,
  HtmlPage,
  Redirect,
  SignInForm,
  SignInQuery,
} from './oauth.schema.js';
import type { OAuthService } from './oauth.service.js';

const TAGS = ['oauth pages'];
const FORM = ['application/x-www-form-urlencoded'] as const;
const SIGNIN_LIMIT = { max: 10, timeWindow: PER_MINUTE };
const ASSET_CACHE = 'public, max-age=86400';

const API_OR_SA: Access = { kind: 'browser-session', anyOf: ['api', 'sa'] };
const ANY_SESSION: Access = { kind: 'browser-session', anyOf: [] };

export interface PageDeps {
  service: OAuthService;
  guard: FormGuard;
  tokens: TokenService;
}

const ORIGIN = /^https?:\/\/[A-Za-z0-9.:[\]-]+$/;

/**
 * The page's CSP: the platform's, where the consent page's form may also lead to the client's
 * redirect URI. Browsers apply form-action to the redirects that follow a form post, so without
 * the client's origin the 302 back to the client would be blocked.
 */
function pageCsp(formTargets: readonly string[]): string {
  const origins = formTargets
    .map((uri) => new URL(uri).origin)
    .filter((origin) => ORIGIN.test(origin));
  return origins.length === 0
    ? HTML_CSP
    : HTML_CSP.replace(
        "form-action 'self'",
        `form-action 'self' ${[...new Set(origins)].join(' ')}`,
      );
}

/**
 * Every page carries its own CSP and framing ban, also when it is rendered from an error raised
 * before the platform's header hook ran (the permission gate of the auth hook).
 */
function sendPage(
  reply: FastifyReply,
  status: number,
  page: string,
  formTargets: readonly string[] = [],
): FastifyReply {
  return reply
    .code(status)
    .header('content-security-policy', pageCsp(formTargets))
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(page);
}

function toSignIn(reply: FastifyReply, returnTo: string): FastifyReply {
  return reply.redirect(`/auth/signin?redirect=${encodeURIComponent(returnTo)}`, 303);
}

const MESSAGES: Record<number, [string, string]> = {
  400: ['Bad request', 'The request was incomplete or malformed.'],
  403: ['Forbidden', 'This request was refused.'],
  415: [
    'Unsupported request',
    'This page accepts form posts (application/x-www-form-urlencoded) only.',
  ],
  429: ['Too many requests', 'Too many requests from your address. Wait a minute and try again.'],
  500: ['Something went wrong', 'The appliance could not complete this request. Try again later.'],
};

/**
 * Route-level error handler of a page. `onDenied` renders the page for a signed-in user who
 * lacks the route's permission (the auth hook refuses before the handler runs).
 */
function pageErrors(
  onDenied?: (request: FastifyRequest, reply: FastifyReply, identity: Identity) => FastifyReply,
) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const access = request.routeOptions.config?.access;
    if (
      onDenied &&
      err instanceof ApiFailure &&
      request.identity &&
      access &&
      !permits(request.identity, access)
    ) {
      void onDenied(request, reply, request.identity);
      return;
    }
    // The consent page's malformed requests are answered as the spec lists them: OAuth JSON.
    const oauthValidation =
      err.validation && request.routeOptions.config?.errors?.validation === 'oauth';
    if (
      oauthValidation ||
      (err instanceof ApiFailure && err.family === 'oauth' && err.status === 400)
    ) {
      const failure =
        err instanceof ApiFailure
          ? err
          : oauthFailure(400, 'invalid_request', fieldErrorsFrom(err.validation ?? []).first);
      const rendered = renderFailure(request, failure);
      void reply.code(rendered.status).type('application/json; charset=utf-8').send(rendered.body);
      return;
    }
    let status = 500;
    if (err instanceof ApiFailure) status = err.status;
    else if (err.validation) status = 400;
    else if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500)
      status = err.statusCode;
    if (status >= 500)
      request.log.error(
        { err, method: request.method, url: request.routeOptions.url },
        'unexpected failure',
      );
    const [title, message] = MESSAGES[status] ?? (status >= 500 ? MESSAGES[500]! : MESSAGES[400]!);
    void sendPage(reply, status, messagePage({ title, message }));
  };
}

/** What every page and asset declares: its failures are answered as pages too (pageErrors). */
const PAGE = { errors: 'message', tags: TAGS, errorHandler: pageErrors() } as const;
/** A page that takes a form post. */
const FORM_PAGE = { ...PAGE, accepts: FORM, consumes: FORM } as const;

/** A 400 of the consent page: OAuth JSON for the request's own errors, a page for the rest. */
const PageOrOAuthError = (description: string) =>
  MediaBodies(description, {
    'application/json': OAuthErrorBody,
    'text/html': Type.String({ description: 'an HTML page' }),
  });

const PAGE_RESPONSES = {
  200: HtmlPage('The page'),
  303: Redirect('To the sign-in page (no browser session), or back to the page that asked for it'),
  400: HtmlPage('Malformed request'),
  403: HtmlPage('Form expired (CSRF check failed)'),
  415: HtmlPage('Not a form post'),
  429: HtmlPage('Too many attempts'),
  500: HtmlPage('Unexpected failure'),
};

export async function oauthPageRoutes(app: App, ctx: CoreContext, deps: PageDeps): Promise<void> {
  const { service, guard } = deps;
  const { db, clock } = ctx;

  /** The CSRF field of a signed-in user's form; null when the session ended meanwhile. */
  const csrfFor = (identity: Identity, action: FormAction): string | null => {
    const secret =
      identity.sessionId === null ? undefined : sessionCsrfSecret(db, identity.sessionId);
    return secret === undefined ? null : guard.sessionToken(secret, action);
  };
  const csrfValid = (
    identity: Identity,
    action: FormAction,
    presented: string | undefined,
  ): boolean => {
    const secret =
      identity.sessionId === null ? undefined : sessionCsrfSecret(db, identity.sessionId);
    return secret !== undefined && guard.verifySession(secret, action, presented);
  };

  // --- assets ------------------------------------------------------------------------------

  // spec: part1 > OAuth device-code flow (RFC 8628) > GET /auth/device-code.js
  defineRoute(app, {
    ...PAGE,
    method: 'GET',
    url: '/auth/device-code.js',
    access: publicAccess,
    summary:
      'Script of the device page: uppercases the code and strips non-alphanumerics (cached one day)',
    response: {
      200: MediaBody('application/javascript', 'JavaScript'),
      415: HtmlPage('A request body that is not JSON'),
      500: HtmlPage('Unexpected failure'),
    },
    handler: async (_request, reply) =>
      reply
        .type('application/javascript; charset=utf-8')
        .header('cache-control', ASSET_CACHE)
        .send(DEVICE_CODE_JS),
  });

  // designed: the stylesheet of the /auth pages (their CSP allows no inline style)
  defineRoute(app, {
    ...PAGE,
    method: 'GET',
    url: '/auth/assets/auth.css',
    access: publicAccess,
    summary: 'Stylesheet of the /auth pages (cached one day)',
    response: {
      200: MediaBody('text/css', 'CSS'),
      415: HtmlPage('A request body that is not JSON'),
      500: HtmlPage('Unexpected failure'),
    },
    handler: async (_request, reply) =>
      reply.type('text/css; charset=utf-8').header('cache-control', ASSET_CACHE).send(AUTH_CSS),
  });

  // --- sign-in -----------------------------------------------------------------------------

  // designed: the sign-in page of /auth/* (username and password, then the TOTP step)
  defineRoute(app, {
    ...PAGE,
    method: 'GET',
    url: '/auth/signin',
    access: publicAccess,
    summary: 'Sign-in page for the /auth pages',
    querystring: SignInQuery,
    response: PAGE_RESPONSES,
    handler: async (request, reply) => {
      const redirect = safeReturnTarget(request.query.redirect);
      return sendPage(
        reply,
        200,
        signInPage({ csrf: guard.signinToken(request, reply), redirect }),
      );
    },
  });

  defineRoute(app, {
    ...FORM_PAGE,
    method: 'POST',
    url: '/auth/signin',
    access: publicAccess,
    rateLimit: SIGNIN_LIMIT,
    summary:
      'Sign in (form post); with MFA a second post carries the TOTP code; 303 back to the page that asked',
    body: SignInForm,
    response: {
      ...PAGE_RESPONSES,
      401: HtmlPage('Wrong credentials or code: the form again, with the error'),
    },
    handler: async (request, reply) => {
      const form = request.body;
      const redirect = safeReturnTarget(form.redirect);
      if (!guard.verifySignin(request, form.csrf)) {
        return sendPage(
          reply,
          403,
          signInPage({
            csrf: guard.signinToken(request, reply),
            redirect,
            error: 'Your sign-in form expired. Please try again.',
          }),
        );
      }
      const csrf = guard.signinToken(request, reply);
      const finish = (session: { cookie: string; expiresAt: number }) => {
        setSessionCookie(reply, session.cookie, session.expiresAt);
        return reply.redirect(redirect, 303);
      };
      if (form.ticket !== undefined) {
        const credentials = guard.openTicket(request, form.ticket, clock.now());
        if (!credentials)
          return sendPage(
            reply,
            401,
            signInPage({ csrf, redirect, error: 'Your sign-in expired. Please sign in again.' }),
          );
        const outcome = await login(ctx, deps.tokens, {
          login: credentials.login,
          password: credentials.password,
          totp: form.totp ?? '',
          source: { ip: request.ip, via: 'signin-page' },
        });
        if (outcome.kind === 'ok') return finish(outcome.session);
        const error =
          outcome.kind === 'totp-required'
            ? 'Enter the code from your authenticator app.'
            : 'That code is not valid. Try again.';
        return sendPage(reply, 401, totpPage({ csrf, redirect, ticket: form.ticket, error }));
      }
      const username = form.username?.trim() ?? '';
      const password = form.password ?? '';
      if (username === '' || password === '')
        return sendPage(
          reply,
          400,
          signInPage({ csrf, redirect, username, error: 'Enter your username and password.' }),
        );
      const outcome = await login(ctx, deps.tokens, {
        login: username,
        password,
        source: { ip: request.ip, via: 'signin-page' },
      });
      if (outcome.kind === 'ok') return finish(outcome.session);
      if (outcome.kind === 'totp-required') {
        return sendPage(
          reply,
          200,
          totpPage({
            csrf,
            redirect,
            ticket: guard.sealTicket(request, username, password, clock.now()),
          }),
        );
      }
      return sendPage(
        reply,
        401,
        signInPage({ csrf, redirect, username, error: 'Invalid username or password.' }),
      );
    },
  });

  // --- device approval ---------------------------------------------------------------------

  const deviceReturn = (userCode: string | undefined) =>
    userCode !== undefined && userCode !== ''
      ? `/auth/device?user_code=${encodeURIComponent(userCode.slice(0, 16))}`
      : '/auth/device';

  // spec: part1 > OAuth device-code flow (RFC 8628) > GET /auth/device
  defineRoute(app, {
    ...PAGE,
    method: 'GET',
    url: '/auth/device',
    access: ANY_SESSION,
    summary: 'Device approval page (browser session); user_code pre-fills the field',
    querystring: DeviceQuery,
    response: PAGE_RESPONSES,
    handler: async (request, reply) => {
      const identity = request.identity;
      const csrf = identity ? csrfFor(identity, 'device') : null;
      if (!identity || csrf === null) return toSignIn(reply, deviceReturn(request.query.user_code));
      const prefill = request.query.user_code
        ?.toUpperCase()
        .replace(/[^A-Z0-9]/g, '')
        .slice(0, 8);
      return sendPage(
        reply,
        200,
        devicePage({ csrf, username: identity.user.username, userCode: prefill }),
      );
    },
  });

  /** The one answer for a wrong, expired or used code and for a user without `api`. */
  const wrongCode = (reply: FastifyReply, identity: Identity) =>
    sendPage(
      reply,
      400,
      devicePage({
        csrf: csrfFor(identity, 'device') ?? '',
        username: identity.user.username,
        error: DEVICE_CODE_ERROR,
      }),
    );

  // spec: part1 > OAuth device-code flow (RFC 8628) > POST /auth/device
  defineRoute(app, {
    ...FORM_PAGE,
    method: 'POST',
    url: '/auth/device',
    access: API_OR_SA,
    summary:
      'Approve (or deny) a user code (browser session; api or sa); a wrong, expired or used code and a missing permission give the same page',
    body: DeviceForm,
    response: PAGE_RESPONSES,
    errorHandler: pageErrors((_request, reply, identity) => wrongCode(reply, identity)),
    handler: async (request, reply) => {
      const identity = request.identity;
      const form = request.body;
      if (!identity || identity.sessionId === null)
        return toSignIn(reply, deviceReturn(form.user_code));
      if (!csrfValid(identity, 'device', form.csrf)) {
        const csrf = csrfFor(identity, 'device');
        if (csrf === null) return toSignIn(reply, deviceReturn(form.user_code));
        return sendPage(
          reply,
          403,
          devicePage({
            csrf,
            username: identity.user.username,
            error: 'This form expired. Enter the code again.',
          }),
        );
      }
      const outcome = service.enterUserCode({
        userId: identity.user.id,
        address: request.ip,
        input: form.user_code ?? '',
        deny: form.deny !== undefined,
      });
      if (outcome.kind === 'invalid') return wrongCode(reply, identity);
      if (outcome.kind === 'locked') {
        const minutes = Math.ceil(outcome.retryAfterSeconds / 60);
        reply.header('retry-after', String(outcome.retryAfterSeconds));
        const error = `Too many wrong codes were entered from your address. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
        return sendPage(
          reply,
          429,
          devicePage({
            csrf: csrfFor(identity, 'device') ?? '',
            username: identity.user.username,
            error,
          }),
        );
      }
      return sendPage(
        reply,
        200,
        deviceDecidedPage({
          approved: outcome.kind === 'approved',
          clientName: outcome.clientName,
          scopes: outcome.scopes,
          username: identity.user.username,
        }),
      );
    },
  });

  // --- consent -----------------------------------------------------------------------------

  const lacksApi = (status: 401 | 403) => (request: FastifyRequest, reply: FastifyReply) =>
    sendPage(
      reply,
      status,
      messagePage({
        title: 'Permission required',
        message:
          'Your account does not hold the api permission, which authorizing an application requires.',
        detail: 'Ask an administrator to grant it, or sign in with another account.',
        link: {
          href: `/auth/signin?redirect=${encodeURIComponent(request.method === 'GET' ? request.url : '/auth/device')}`,
          text: 'Sign in with another account',
        },
      }),
    );

  // spec: part1 > OAuth authorization-code flow with PKCE > GET /auth/authorize
  defineRoute(app, {
    method: 'GET',
    url: '/auth/authorize',
    access: API_OR_SA,
    errors: { validation: 'oauth', failure: 'message', denial: { status: 403 } },
    tags: TAGS,
    summary: 'Consent page (browser session; api or sa)',
    querystring: AuthorizeQuery,
    response: {
      ...PAGE_RESPONSES,
      400: PageOrOAuthError(
        'A malformed authorization request: the OAuth error as JSON (the spec lists them); other malformed requests: a page',
      ),
      403: HtmlPage('The user lacks api, or the client is not yet approved'),
    },
    errorHandler: pageErrors(lacksApi(403)),
    handler: async (request, reply) => {
      const authorization = service.checkAuthorizationRequest(request.query);
      const identity = request.identity;
      const csrf = identity ? csrfFor(identity, 'authorize') : null;
      if (!identity || identity.sessionId === null || csrf === null)
        return toSignIn(reply, request.url);
      const { client } = authorization;
      if (client.approved_at === null) {
        return sendPage(
          reply,
          403,
          messagePage({
            title: 'Application not approved',
            message: `${client.client_name} is registered but an operator has not approved it yet.`,
            detail:
              'Ask an administrator (permission system) to approve it, then start again from the application.',
          }),
        );
      }
      service.rememberConsentRequest(identity.sessionId, authorization);
      return sendPage(
        reply,
        200,
        consentPage({
          csrf,
          username: identity.user.username,
          clientId: client.client_id,
          clientName: client.client_name,
          redirectUri: authorization.redirectUri,
          codeChallenge: authorization.codeChallenge,
          scopes: authorization.scopes,
          state: authorization.state,
          returnTo: request.url,
        }),
        [authorization.redirectUri],
      );
    },
  });

  // spec: part1 > OAuth authorization-code flow with PKCE > POST /auth/authorize
  defineRoute(app, {
    ...FORM_PAGE,
    method: 'POST',
    url: '/auth/authorize',
    access: API_OR_SA,
    summary:
      'Approve or deny a consent (browser session; api or sa): 302 to redirect_uri with code or error, state and iss',
    body: AuthorizeForm,
    response: {
      ...PAGE_RESPONSES,
      302: Redirect(
        'To the client: redirect_uri?code=…&state=…&iss=… or redirect_uri?error=…&state=…&iss=…',
      ),
      400: PageOrOAuthError(
        'A refused authorization request: the OAuth error as JSON; a malformed form: a page',
      ),
      401: HtmlPage('The user lacks api'),
    },
    errorHandler: pageErrors(lacksApi(401)),
    handler: async (request, reply) => {
      const identity = request.identity;
      const form = request.body;
      if (!identity || identity.sessionId === null) {
        const query = new URLSearchParams({ response_type: 'code' });
        for (const key of [
          'client_id',
          'redirect_uri',
          'code_challenge',
          'code_challenge_method',
          'scope',
          'state',
        ] as const) {
          const value = form[key];
          if (value !== undefined) query.set(key, value);
        }
        return toSignIn(reply, `/auth/authorize?${query.toString()}`);
      }
      if (!csrfValid(identity, 'authorize', form.csrf)) {
        return sendPage(
          reply,
          403,
          messagePage({
            title: 'Form expired',
            message: 'This consent form expired or did not come from this appliance.',
            detail: 'Go back to the application and start again.',
          }),
        );
      }
      const location = service.decideConsent({
        sessionId: identity.sessionId,
        userId: identity.user.id,
        form,
        issuer: originOf(request, ctx.config.publicOrigin),
      });
      return reply.redirect(location, 302);
    },
  });
}
