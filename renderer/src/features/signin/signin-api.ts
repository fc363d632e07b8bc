/** POST /api/login with this tab's browser_id, and its TOTP second step. */
import { api, ApiError } from '../../lib/api-client.js';
import { browserId, type SessionUser } from '../../lib/session.js';

export type SignInResult =
  { kind: 'signed-in'; token: string; user: SessionUser } | { kind: 'totp-required' };

interface LoginAnswer {
  status: number | false;
  access_token?: string;
  user?: SessionUser;
  message?: string;
}

export const TOTP_REQUIRED = 'TOTP Required';

export async function signIn(
  login: string,
  password: string,
  totp?: string,
): Promise<SignInResult> {
  try {
    const answer = await api.post<LoginAnswer>(
      '/api/login',
      { email: login, password, browser_id: browserId(), ...(totp ? { totp } : {}) },
      { anonymous: true },
    );
    if (!answer.access_token || !answer.user)
      throw new ApiError('envelope', 200, 'The appliance gave no token.');
    return { kind: 'signed-in', token: answer.access_token, user: answer.user };
  } catch (err) {
    if (err instanceof ApiError && err.message === TOTP_REQUIRED && !totp)
      return { kind: 'totp-required' };
    throw err;
  }
}
