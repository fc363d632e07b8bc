-- On-box network tools (issue 6): throughput history, port service names, geoip cache.
-- Times are UTC integer milliseconds.

-- Throughput history (spec part 2, Other records): one row per speed test or iperf3 client run,
-- `result` is the decoded result as JSON. Rows older than twelve weeks are pruned by the tools
-- engine's retention job. Listed newest first; pruned by age: both served by the index.
CREATE TABLE throughput_history (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('speedtest', 'iperf_client')),
  target TEXT,
  result TEXT NOT NULL CHECK (json_valid(result))
) STRICT;
CREATE INDEX throughput_history_by_time ON throughput_history (created_at);

-- Port service names for the port-scan view (`GET /api/getPortServiceNames`): a sparse map the
-- operator maintains (PUT/DELETE /api/port-service-names/{port}), seeded with common names from
-- the IANA registry, spelled as /etc/services or nmap print them. `updated_at` 0 marks a seeded row.
CREATE TABLE port_service_names (
  port INTEGER PRIMARY KEY CHECK (port BETWEEN 1 AND 65535),
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
  updated_at INTEGER NOT NULL
) STRICT;
INSERT INTO port_service_names (port, name, updated_at) VALUES
  (20, 'ftp-data', 0), (21, 'ftp', 0), (22, 'ssh', 0), (23, 'telnet', 0), (25, 'smtp', 0),
  (49, 'tacacs', 0), (53, 'domain', 0), (67, 'bootps', 0), (68, 'bootpc', 0), (69, 'tftp', 0),
  (80, 'http', 0), (88, 'kerberos', 0), (110, 'pop3', 0), (111, 'sunrpc', 0), (119, 'nntp', 0),
  (123, 'ntp', 0), (135, 'epmap', 0), (137, 'netbios-ns', 0), (138, 'netbios-dgm', 0),
  (139, 'netbios-ssn', 0), (143, 'imap2', 0), (161, 'snmp', 0), (162, 'snmp-trap', 0),
  (179, 'bgp', 0), (389, 'ldap', 0), (443, 'https', 0), (445, 'microsoft-ds', 0),
  (464, 'kpasswd', 0), (465, 'submissions', 0), (500, 'isakmp', 0), (514, 'syslog', 0),
  (515, 'printer', 0), (520, 'route', 0), (546, 'dhcpv6-client', 0), (547, 'dhcpv6-server', 0),
  (587, 'submission', 0), (623, 'asf-rmcp', 0), (636, 'ldaps', 0), (853, 'domain-s', 0),
  (873, 'rsync', 0), (989, 'ftps-data', 0), (990, 'ftps', 0), (993, 'imaps', 0), (995, 'pop3s', 0),
  (1194, 'openvpn', 0), (1433, 'ms-sql-s', 0), (1434, 'ms-sql-m', 0), (1521, 'oracle', 0),
  (1701, 'l2tp', 0), (1723, 'pptp', 0), (1812, 'radius', 0),
  (1813, 'radius-acct', 0), (1883, 'mqtt', 0), (2049, 'nfs', 0), (2055, 'netflow', 0),
  (3268, 'msft-gc', 0), (3269, 'msft-gc-ssl', 0), (3306, 'mysql', 0), (3389, 'ms-wbt-server', 0),
  (3478, 'stun', 0), (4500, 'ipsec-nat-t', 0), (4739, 'ipfix', 0), (5060, 'sip', 0),
  (5061, 'sip-tls', 0), (5201, 'iperf3', 0), (5353, 'mdns', 0), (5432, 'postgresql', 0),
  (5671, 'amqps', 0), (5672, 'amqp', 0), (5900, 'rfb', 0),
  (5985, 'wsman', 0), (5986, 'wsmans', 0), (6379, 'redis', 0), (6514, 'syslog-tls', 0),
  (8080, 'http-alt', 0), (8443, 'https-alt', 0), (8883, 'secure-mqtt', 0), (9100, 'jetdirect', 0),
  (10050, 'zabbix-agent', 0), (10051, 'zabbix-trapper', 0);

-- Results of the external geolocation lookup, kept so an address is looked up once per TTL
-- (the tools engine prunes entries past it). `result` is the answer as served, in JSON.
CREATE TABLE geoip_cache (
  ip TEXT PRIMARY KEY,
  result TEXT NOT NULL CHECK (json_valid(result)),
  fetched_at INTEGER NOT NULL
) STRICT;
CREATE INDEX geoip_cache_by_time ON geoip_cache (fetched_at);
