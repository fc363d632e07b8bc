/**
 * The user's side of the OAuth device flow, as a person does it in the system browser: open the
 * verification URL, sign in on the appliance's own page, approve (or deny) the code. Real HTML
 * forms with their CSRF fields and a cookie jar; the appliance's self-signed certificate is
 * accepted (this is the test's browser, not the desktop app).
 */
import { Agent, request } from 'undici';

const agent = new Agent({ connect: { rejectUnauthorized: false } });
const FORM = 'application/x-www-form-urlencoded';

function hiddenFields(page: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1] as string] = (match[2] as string).replace(/&amp;/g, '&');
  }
  return fields;
}

class Browser {
  private readonly jar = new Map<string, string>();

  constructor(private readonly origin: string) {}

  async send(method: 'GET' | 'POST', path: string, form?: Record<string, string>) {
    const headers: Record<string, string> = { accept: 'text/html' };
    if (this.jar.size > 0) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) headers['content-type'] = FORM;
    const res = await request(new URL(path, this.origin), {
      method,
      headers,
      body: form ? new URLSearchParams(form).toString() : undefined,
      dispatcher: agent,
    });
    const setCookie = res.headers['set-cookie'];
    for (const line of [setCookie ?? []].flat()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1).trim();
      if (value === '') this.jar.delete(pair.slice(0, eq));
      else this.jar.set(pair.slice(0, eq), value);
    }
    return {
      status: res.statusCode,
      location: String(res.headers.location ?? ''),
      body: await res.body.text(),
    };
  }
}

/** Opens `verificationUriComplete`, signs in, and approves (or denies) the pre-filled code. */
export async function answerDeviceCode(
  verificationUriComplete: string,
  account: { username: string; password: string },
  decision: 'approve' | 'deny' = 'approve',
): Promise<string> {
  const url = new URL(verificationUriComplete);
  const browser = new Browser(url.origin);
  let page = await browser.send('GET', url.pathname + url.search);
  if (page.status === 303 && page.location.startsWith('/auth/signin')) {
    const signin = await browser.send('GET', page.location);
    const posted = await browser.send('POST', '/auth/signin', {
      ...hiddenFields(signin.body),
      username: account.username,
      password: account.password,
    });
    if (posted.status !== 303) throw new Error(`sign-in page answered ${posted.status}`);
    page = await browser.send('GET', posted.location);
  }
  if (page.status !== 200) throw new Error(`device page answered ${page.status}`);
  const userCode = url.searchParams.get('user_code') ?? '';
  const answered = await browser.send('POST', '/auth/device', {
    csrf: hiddenFields(page.body).csrf ?? '',
    user_code: userCode,
    [decision]: '1',
  });
  return answered.body;
}
