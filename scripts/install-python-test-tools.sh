#!/usr/bin/env bash
# Makes sure $PYTHON (default /usr/bin/python3, Debian's interpreter) can
# run pytest and mypy, for the Python SDK's tests and type check
# (clients/python). PyPI is not needed: it installs Debian's
# python3-pytest and python3-mypy with apt-get, as root or through sudo.
# Does nothing when both are importable. Safe to run again.
set -euo pipefail

PYTHON=${PYTHON:-/usr/bin/python3}

missing=()
for mod in pytest mypy; do
	if ! "$PYTHON" -c "import $mod" >/dev/null 2>&1; then
		missing+=("python3-$mod")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-python-test-tools: $PYTHON has pytest $("$PYTHON" -c 'import pytest; print(pytest.__version__)') and mypy $("$PYTHON" -m mypy --version | cut -d' ' -f2); nothing to do"
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-python-test-tools: $PYTHON lacks ${missing[*]} and there is no apt-get to install them: install pytest and mypy for $PYTHON, or set PYTHON to an interpreter that has them" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-python-test-tools: installing Debian's ${missing[*]} needs root or sudo, and neither is available" >&2
		exit 1
	fi
	sudo="sudo"
fi

echo "install-python-test-tools: installing Debian's ${missing[*]} for $PYTHON (apt-get update, apt-get install -y)"
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"

for mod in pytest mypy; do
	if ! "$PYTHON" -c "import $mod" >/dev/null 2>&1; then
		echo "install-python-test-tools: apt-get installed python3-$mod, but $PYTHON still cannot import $mod (is it Debian's python3?)" >&2
		exit 1
	fi
done
echo "install-python-test-tools: $PYTHON has pytest and mypy now"
