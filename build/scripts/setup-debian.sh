#!/usr/bin/env bash
# Installs every Debian/Ubuntu package the appliance and its tests use (run as root, or it
# re-runs itself with sudo). Safe to run again: apt skips what is installed.
set -euo pipefail

PACKAGES=(
  # build of native modules (better-sqlite3, cap, node-pty) from source
  build-essential python3
  # user switching for the "unwritable data dir" boot test; unshare -n and ip for the API fuzz
  util-linux iproute2
  # on-box network tools (spec part 2, Network tools) and the ICMP poller
  fping iputils-ping mtr-tiny traceroute iputils-tracepath nmap iperf3 whois netcat-openbsd socat
  # packet capture (cap builds against libpcap) and capture checks
  libpcap-dev tcpdump
  # capture engine dumpcap (wireshark-common, non-setuid) and the file checks capinfos/tshark/editcap
  wireshark-common tshark
  # SNMP agent and clients: real peers of the device, tracker and tool tests
  snmpd snmp
  # flow tests: softflowd replays a recorded pcap as v5/v9/IPFIX, nfdump counts the export
  softflowd nfdump
  # the directory tests' real LDAP server (slapd with StartTLS, LDAPS, memberof); the mail tests'
  # SMTP server is the npm module smtp-server, so no Debian SMTP package is needed
  slapd ldap-utils
  # console end-to-end tests: Playwright drives Debian's Chromium
  chromium fonts-dejavu-core
  # certificate tests make their CA, leaf, DER and PKCS#12 files with openssl
  openssl
  # SQL injection scan of the log feeds (npm run test:sqlmap)
  sqlmap
  # the Debian host package (npm run package:deb) and its checks: dpkg-deb, strip, lintian,
  # systemd-analyze verify
  dpkg binutils lintian systemd
  # the agent's journal test builds its journal file from export format (journalctl --file reads it)
  systemd-journal-remote
  # the capture bench's packet generator (trafgen), outside npm test
  netsniff-ng
)

if [ "$(id -u)" -ne 0 ]; then
  exec sudo --preserve-env=DEBIAN_FRONTEND bash "$0" "$@"
fi

export DEBIAN_FRONTEND=noninteractive

# Suricata (the IDS intake's real peer): Debian 12 carries it only in bookworm-backports. Enable
# backports from this machine's own Debian mirror (the URI of its existing bookworm entry; never
# another host) and install suricata from there. Other releases get it from their main suites.
suricata_release=()
codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
if [ "$codename" = bookworm ]; then
  suricata_release=(-t bookworm-backports)
  if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    mirror="$(awk 'BEGIN { RS = "" } /Suites:[^\n]*bookworm([ \t\n]|$)/ && !/security/ {
        if (match($0, /URIs:[ \t]*[^ \t\n]+/)) { s = substr($0, RSTART, RLENGTH); sub(/URIs:[ \t]*/, "", s); print s; exit } }' \
      /etc/apt/sources.list.d/*.sources 2>/dev/null || true)"
    if [ -z "$mirror" ]; then
      mirror="$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)"
    fi
    if [ -z "$mirror" ]; then
      echo "setup-debian: no bookworm entry in the apt sources to take the backports mirror from" >&2
      exit 1
    fi
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$mirror" >/etc/apt/sources.list.d/bookworm-backports.sources
    echo "setup-debian: enabled bookworm-backports from $mirror"
  fi
fi
if ! dpkg-query -W -f='${Status}' suricata 2>/dev/null | grep -q 'install ok installed'; then
  echo "setup-debian: installing suricata ${suricata_release[*]}"
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${suricata_release[@]}" suricata >/dev/null
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-debian: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi
echo "setup-debian: installing ${missing[*]}"
# wireshark-common asks whether dumpcap may be setuid for a group: no (the appliance runs as root
# or gets CAP_NET_RAW on dumpcap through setcap; see the README's packet capture section).
echo 'wireshark-common wireshark-common/install-setuid boolean false' | debconf-set-selections
apt-get -o DPkg::Lock::Timeout=300 update -qq
apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-debian: done"
