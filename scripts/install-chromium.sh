#!/usr/bin/env bash
# Makes sure a Chromium is there for the console's browser tests
# (e2e/console). Does nothing when $JOBBIE_CHROMIUM names one, or when
# chromium, chromium-browser or google-chrome is on the PATH (the names the
# tests look for). Otherwise installs Debian's chromium with apt-get, as
# root or through sudo. Safe to run again.
set -euo pipefail

have() {
	if [ -n "${JOBBIE_CHROMIUM:-}" ] && command -v "$JOBBIE_CHROMIUM" >/dev/null 2>&1; then
		command -v "$JOBBIE_CHROMIUM"
		return 0
	fi
	for name in chromium chromium-browser google-chrome; do
		if command -v "$name" >/dev/null 2>&1; then
			command -v "$name"
			return 0
		fi
	done
	return 1
}

if found=$(have); then
	echo "install-chromium: $found is there; nothing to do"
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-chromium: no Chromium on the PATH and no apt-get to install one: install Chromium or Chrome, or set JOBBIE_CHROMIUM to its path" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-chromium: no Chromium on the PATH; installing Debian's chromium needs root or sudo, and neither is available" >&2
		exit 1
	fi
	sudo="sudo"
fi

echo "install-chromium: no Chromium on the PATH; installing Debian's chromium (apt-get update, apt-get install -y chromium)"
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

if ! found=$(have); then
	echo "install-chromium: apt-get installed chromium, but no chromium is on the PATH" >&2
	exit 1
fi
echo "install-chromium: installed $found ($("$found" --version 2>/dev/null | head -n 1))"
