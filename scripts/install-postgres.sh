#!/usr/bin/env bash
# Makes sure Debian's PostgreSQL server is installed, for the outbox's
# tests (outbox/, e2e/outbox), which start their own server from its
# binaries (/usr/lib/postgresql/<version>/bin: initdb, postgres) in a
# temporary directory; no cluster of the package is used. It installs
# Debian's postgresql with apt-get, as root or through sudo, and does
# nothing when initdb is there. Safe to run again.
set -euo pipefail

if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	echo "install-postgres: $(ls -d /usr/lib/postgresql/*/bin | tail -1) has PostgreSQL's server; nothing to do"
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-postgres: no PostgreSQL server in /usr/lib/postgresql and no apt-get to install one: install PostgreSQL's server, or set JOBBIE_PG_BIN to the directory of its initdb and postgres" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-postgres: installing Debian's postgresql needs root or sudo, and neither is available" >&2
		exit 1
	fi
	sudo="sudo"
fi

echo "install-postgres: installing Debian's postgresql (apt-get update, apt-get install -y)"
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	echo "install-postgres: apt-get installed postgresql, but there is no /usr/lib/postgresql/*/bin/initdb" >&2
	exit 1
fi
echo "install-postgres: PostgreSQL's server is in $(ls -d /usr/lib/postgresql/*/bin | tail -1) now"
