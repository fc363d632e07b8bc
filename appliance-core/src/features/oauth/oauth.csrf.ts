/**
 * CSRF defence for the /auth pages' forms.
 *
 * - Forms shown to a signed-in user carry HMAC(session csrf_secret, form action): a page of
 *   another site can neither read nor compute it, and it dies with the session.
 * - The sign-in form (no session yet) uses a signed double-submit cookie: a random value in an
 *   HttpOnly, Secure, SameSite=Strict cookie and, in the form, an HMAC of that value under a key
 *   that never leaves the process. A cookie planted by another site (or a sibling host) is
 *   useless without the matching field, which only this process can compute.
 * - The TOTP step of the sign-in carries the first step's credentials sealed (AES-256-GCM) with
 *   the appliance key and bound to the CSRF cookie, for five minutes.
 */
import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SecretBox } from '../../platform/security/secret-box.js';
import { randomSecret } from './oauth.rules.js';

export const SIGNIN_COOKIE = 'appliance_auth_csrf';
const SIGNIN_COOKIE_MAX_AGE_S = 3600;
const TICKET_TTL_MS = 5 * 60_000;

function hmac(key: string | Buffer, text: string): string {
  return crypto.createHmac('sha256', key).update(text).digest('base64url');
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

export type FormAction = 'device' | 'authorize';

export class FormGuard {
  private readonly signinKey = crypto.randomBytes(32);

  constructor(private readonly secrets: SecretBox) {}

  /** The form field for a signed-in user's form. */
  sessionToken(csrfSecret: string, action: FormAction): string {
    return hmac(csrfSecret, `oauth-form:${action}`);
  }

  verifySession(csrfSecret: string, action: FormAction, presented: string | undefined): boolean {
    return presented !== undefined && sameText(this.sessionToken(csrfSecret, action), presented);
  }

  /** The sign-in CSRF cookie of this browser, set when absent; returns the form field for it. */
  signinToken(request: FastifyRequest, reply: FastifyReply): string {
    let cookie = request.cookies[SIGNIN_COOKIE];
    if (!cookie || !/^[A-Za-z0-9_-]{43}$/.test(cookie)) {
      cookie = randomSecret();
      reply.setCookie(SIGNIN_COOKIE, cookie, {
        path: '/auth/',
        httpOnly: true,
        secure: true,
        sameSite: 'strict',
        maxAge: SIGNIN_COOKIE_MAX_AGE_S,
      });
    }
    return hmac(this.signinKey, `signin:${cookie}`);
  }

  verifySignin(request: FastifyRequest, presented: string | undefined): boolean {
    const cookie = request.cookies[SIGNIN_COOKIE];
    return (
      cookie !== undefined &&
      presented !== undefined &&
      sameText(hmac(this.signinKey, `signin:${cookie}`), presented)
    );
  }

  /** Seals the first sign-in step for the TOTP step, bound to this browser's CSRF cookie. */
  sealTicket(request: FastifyRequest, login: string, password: string, now: number): string {
    const binding = hmac(this.signinKey, `ticket:${request.cookies[SIGNIN_COOKIE] ?? ''}`);
    return this.secrets.seal(
      JSON.stringify({ l: login, p: password, e: now + TICKET_TTL_MS, b: binding }),
    );
  }

  openTicket(
    request: FastifyRequest,
    ticket: string,
    now: number,
  ): { login: string; password: string } | null {
    try {
      const data = JSON.parse(this.secrets.open(ticket)) as {
        l: string;
        p: string;
        e: number;
        b: string;
      };
      const binding = hmac(this.signinKey, `ticket:${request.cookies[SIGNIN_COOKIE] ?? ''}`);
      if (
        typeof data.l !== 'string' ||
        typeof data.p !== 'string' ||
        !(data.e > now) ||
        !sameText(binding, String(data.b))
      )
        return null;
      return { login: data.l, password: data.p };
    } catch {
      return null;
    }
  }
}
