import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';

interface Opened {
  socket: WebSocket;
  output: () => string;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens the terminal socket; resolves with the HTTP status when the upgrade is refused. */
function connect(
  h: Harness,
  ticket: string | null,
  headers: Record<string, string> = {},
): Promise<Opened | { refused: number; body: string }> {
  const url = `${h.url.replace('https', 'wss')}/api/terminal/socket${ticket === null ? '' : `?ticket=${encodeURIComponent(ticket)}`}`;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { rejectUnauthorized: false, headers });
    let text = '';
    socket.on('message', (data: Buffer) => (text += data.toString('utf8')));
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      socket.on('close', (code, reason) => done({ code, reason: String(reason) })),
    );
    socket.on('open', () => resolve({ socket, output: () => text, closed }));
    socket.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += String(chunk)));
      res.on('end', () => resolve({ refused: res.statusCode ?? 0, body }));
    });
    socket.on('error', (err) => {
      if (!String(err.message).includes('Unexpected server response')) reject(err);
    });
  });
}

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function ticketFor(h: Harness, token: string): Promise<string> {
  const res = await h.request('POST', '/api/terminal/tickets', { token });
  expect(res.status, res.text).toBe(201);
  return res.body.ticket as string;
}

describe('terminal', () => {
  let h: Harness;
  let admin: string;
  beforeAll(async () => {
    h = await startAppliance();
    admin = await h.login();
  });
  afterAll(() => h.close());

  it('runs a shell for an sa user: echo hello comes back, and the shell ends with the socket', async () => {
    const opened = await connect(h, await ticketFor(h, admin), { origin: h.url });
    if (!('socket' in opened)) throw new Error(`refused ${opened.refused} ${opened.body}`);
    opened.socket.send(JSON.stringify({ type: 'resize', cols: 100, rows: 30 }));
    opened.socket.send(JSON.stringify({ type: 'input', data: 'echo hel""lo-$((6*7))\n' }));
    await waitFor(() => opened.output().includes('hello-42'));
    opened.socket.close();
    await opened.closed;
    // Audited: who opened and closed it, from where; never what was typed.
    await waitFor(
      () =>
        (
          h.appliance.db
            .prepare("SELECT count(*) AS n FROM audit_log WHERE action = 'terminal.close'")
            .get() as { n: number }
        ).n > 0,
    );
    const rows = h.appliance.db
      .prepare(
        "SELECT actor, actor_user_id, source_ip, action, target_type, detail FROM audit_log WHERE action LIKE 'terminal.%' ORDER BY id",
      )
      .all() as {
      actor: string;
      actor_user_id: number;
      source_ip: string;
      action: string;
      target_type: string;
      detail: string;
    }[];
    expect(rows.map((r) => r.action)).toEqual(['terminal.open', 'terminal.close']);
    expect(rows[0]).toMatchObject({
      actor: 'admin',
      actor_user_id: 1,
      source_ip: '127.0.0.1',
      target_type: 'terminal_session',
    });
    expect(JSON.parse(rows[1]!.detail)).toMatchObject({ duration_ms: expect.any(Number) });
    expect(JSON.stringify(rows)).not.toContain('hello');
    // The session is gone: two more can open at once (at most 2 per user).
    const a = await connect(h, await ticketFor(h, admin));
    const b = await connect(h, await ticketFor(h, admin));
    expect('socket' in a && 'socket' in b).toBe(true);
    const third = await h.request('POST', '/api/terminal/tickets', { token: admin });
    expect(third.status).toBe(409);
    expect(third.body.error).toMatch(/At most 2/);
    for (const s of [a, b])
      if ('socket' in s) {
        s.socket.close();
        await s.closed;
      }
    await waitFor(() => true);
  });

  it('closes the socket when the shell exits', async () => {
    const opened = await connect(h, await ticketFor(h, admin));
    if (!('socket' in opened)) throw new Error('refused');
    opened.socket.send(JSON.stringify({ type: 'input', data: 'exit 3\n' }));
    const closed = await opened.closed;
    expect(closed.code).toBe(1000);
    expect(closed.reason).toContain('shell exited');
  });

  it('refuses the socket without a ticket', async () => {
    const res = await connect(h, null);
    expect(res).toMatchObject({ refused: 401 });
  });

  it('refuses a reused ticket', async () => {
    const ticket = await ticketFor(h, admin);
    const first = await connect(h, ticket);
    expect('socket' in first).toBe(true);
    if ('socket' in first) {
      first.socket.close();
      await first.closed;
    }
    expect(await connect(h, ticket)).toMatchObject({ refused: 401 });
  });

  it('refuses an expired ticket', async () => {
    const ticket = await ticketFor(h, admin);
    h.clock.advance(31_000);
    expect(await connect(h, ticket)).toMatchObject({ refused: 401 });
  });

  it('refuses a foreign Origin and accepts a missing one', async () => {
    const foreign = await connect(h, await ticketFor(h, admin), { origin: 'https://evil.example' });
    expect(foreign).toMatchObject({ refused: 403 });
    const none = await connect(h, await ticketFor(h, admin));
    expect('socket' in none).toBe(true);
    if ('socket' in none) {
      none.socket.close();
      await none.closed;
    }
  });

  it('refuses a non-sa user: no ticket, and a ticket whose user lost sa is refused at the socket', async () => {
    const user = await h.userWith(['devices', 'tools']);
    const denied = await h.request('POST', '/api/terminal/tickets', { token: user.token });
    expect(denied.status).toBe(401);
    expect(denied.body).toMatchObject({ status: false, hasError: true });

    const demoted = await h.userWith(['sa']);
    const ticket = await ticketFor(h, demoted.token);
    await h.request('POST', '/api/saveUser', {
      token: admin,
      body: { user: demoted.id, permissions: ['devices'] },
    });
    expect(await connect(h, ticket)).toMatchObject({ refused: 403 });
  });

  it('answers a plain GET (no upgrade) with 426 and keeps the ticket', async () => {
    const ticket = await ticketFor(h, admin);
    const plain = await h.request('GET', `/api/terminal/socket?ticket=${ticket}`);
    expect(plain.status).toBe(426);
    const opened = await connect(h, ticket);
    expect('socket' in opened).toBe(true);
    if ('socket' in opened) {
      opened.socket.close();
      await opened.closed;
    }
  });
});

describe('terminal disabled (APPLIANCE_TERMINAL=off)', () => {
  it('refuses tickets and the socket with 404', async () => {
    const h = await startAppliance({ APPLIANCE_TERMINAL: 'off' });
    try {
      const admin = await h.login();
      const res = await h.request('POST', '/api/terminal/tickets', { token: admin });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatch(/disabled/);
      expect(await connect(h, 'x')).toMatchObject({ refused: 404 });
    } finally {
      await h.close();
    }
  });
});
