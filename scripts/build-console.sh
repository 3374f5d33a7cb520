#!/usr/bin/env bash
# Builds the console's front end into gateway/console/dist, which the
# jobbie binary embeds. Installs Node.js and npm from Debian when they are
# missing, and runs `npm ci` when the lock file is newer than the install.
set -euo pipefail
cd "$(dirname "$0")/../gateway/console"

if ! command -v npm >/dev/null 2>&1; then
	echo "build-console: npm is missing; installing Debian's nodejs and npm"
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || { echo "build-console: need root or sudo to install nodejs and npm" >&2; exit 1; }
		sudo="sudo"
	fi
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
fi

# Vite 7 needs Node.js 20.19 or later.
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
	echo "build-console: Node.js $(node --version) is too old: the console's build (Vite 7) needs 20.19 or later" >&2
	exit 1
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund --loglevel=error
fi
case "${1:-build}" in
build) npm run --silent build && touch dist/.gitkeep ;; # vite empties dist; the placeholder is committed
test) npm run --silent test ;;
*) echo "usage: $0 [build|test]" >&2; exit 2 ;;
esac
