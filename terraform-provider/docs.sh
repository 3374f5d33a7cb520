#!/bin/sh
# Renders the provider's documentation into docs/terraform with tfplugindocs
# (pinned as a tool in go.mod) from the schema's descriptions, examples/
# and terraform-provider/templates. Offline: tfplugindocs builds the
# provider and reads its schema with the terraform CLI on the PATH.
#
#   terraform-provider/docs.sh          regenerate docs/terraform
#   terraform-provider/docs.sh check    fail if docs/terraform is not current
set -eu
cd "$(dirname "$0")/.."
export CHECKPOINT_DISABLE=1
command -v terraform >/dev/null || { echo "docs.sh: needs the terraform CLI on the PATH" >&2; exit 1; }
out=docs/terraform
if [ "${1:-}" = check ]; then
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi
provider_dir=cmd/terraform-provider-jobbie
rel=$(realpath -m --relative-to="$provider_dir" "$out")
log=$(mktemp)
if ! go tool tfplugindocs generate --provider-dir "$provider_dir" --provider-name jobbie \
	--rendered-provider-name Jobbie --examples-dir ../../examples \
	--website-source-dir ../../terraform-provider/templates --rendered-website-dir "$rel" >"$log" 2>&1; then
	cat "$log" >&2
	rm -f "$log"
	exit 1
fi
rm -f "$log"
if [ "${1:-}" = check ]; then
	if ! diff -ru docs/terraform "$out"; then
		echo "docs/terraform is not current: run make docs-terraform and commit the result" >&2
		exit 1
	fi
	echo "docs/terraform is current"
fi
