#!/usr/bin/env bash
# Makes sure $PYTHON (default /usr/bin/python3, Debian's interpreter) can
# run pytest, for the Python SDK's tests (clients/python). PyPI is not
# needed: it installs Debian's python3-pytest with apt-get, as root or
# through sudo. Does nothing when pytest is already importable. Safe to
# run again.
set -euo pipefail

PYTHON=${PYTHON:-/usr/bin/python3}

if "$PYTHON" -c 'import pytest' >/dev/null 2>&1; then
	echo "install-pytest: $PYTHON has pytest $("$PYTHON" -c 'import pytest; print(pytest.__version__)'); nothing to do"
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-pytest: $PYTHON cannot import pytest and there is no apt-get to install it: install pytest for $PYTHON, or set PYTHON to an interpreter that has it" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-pytest: installing Debian's python3-pytest needs root or sudo, and neither is available" >&2
		exit 1
	fi
	sudo="sudo"
fi

echo "install-pytest: $PYTHON cannot import pytest; installing Debian's python3-pytest (apt-get update, apt-get install -y python3-pytest)"
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pytest

if ! "$PYTHON" -c 'import pytest' >/dev/null 2>&1; then
	echo "install-pytest: apt-get installed python3-pytest, but $PYTHON still cannot import pytest (is it Debian's python3?)" >&2
	exit 1
fi
echo "install-pytest: installed pytest $("$PYTHON" -c 'import pytest; print(pytest.__version__)') for $PYTHON"
