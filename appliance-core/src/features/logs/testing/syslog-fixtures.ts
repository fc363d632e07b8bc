/**
 * Real syslog lines: bsdutils `logger` 2.38 output captured on loopback (UDP and TCP, RFC 3164
 * and RFC 5424, octet-counted and newline frames), and the examples of RFC 5424 section 6.5 and
 * RFC 3164 section 5.4. Seeds of the parser's property tests.
 */
export const LOGGER_LINES = [
  '<78>Nov 26 10:40:04 vm cron: (root) CMD (run-parts /etc/cron.hourly)',
  '<37>1 2026-11-26T10:40:04.554824+00:00 vm sshd - AUTH [timeQuality tzKnown="1" isSynced="0"] Accepted publickey for admin from 127.0.0.1 port 50022',
  '<159>1 2026-11-26T10:40:04.563344+00:00 - app - - - no time quality, no host',
  '<13>1 2026-11-26T10:40:04.580136+00:00 vm sd - - [timeQuality tzKnown="1" isSynced="0"][origin@32473 ip="127.0.0.1"] structured',
  '<188>Nov 26 10:40:04 vm nginx: newline frame\n',
];

export const LOGGER_TCP_STREAM =
  '105 <10>1 2026-11-26T10:40:04.588583+00:00 vm kernel - - [timeQuality tzKnown="1" isSynced="0"] counted frame' +
  '<188>Nov 26 10:40:04 vm nginx: newline frame\n';

export const RFC_LINES = [
  "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \uFEFF'su root' failed for lonvick on /dev/pts/8",
  "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.",
  '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] \uFEFFAn application event log entry...',
  '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]',
  "<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8",
  '<13>Feb  5 17:32:18 10.0.0.99 Use the BFG!',
  "<165>Aug 24 05:34:00 CST 1987 mymachine myproc[10]: %% It's time to make the do-nuts.  %%  Ingredients: Mix=OK, Jelly=OK # Devices: Mixer=OK, Jelly_Injector=OK, Frier=OK # Transport: Conveyer1=OK, Conveyer2=OK # %%",
  "<0>1990 Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org 10.1.2.3 sched[0]: That's All Folks!",
];
