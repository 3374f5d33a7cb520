package settings

import (
	"fmt"
	"strings"
)

// Markdown is docs/configuration.md: how settings are read, then every
// role's settings in a table.
func Markdown(roles []RoleCommand) string {
	var b strings.Builder
	b.WriteString(`# Configuration

<!-- Generated from the settings schema by
     go test ./cmd/jobbie -run TestConfigurationDocIsCurrent -update-config-doc
     Do not edit by hand. -->

Every server role (` + "`jobbie dev`, `gateway`, `control`, `shard`" + ` and ` + "`jobbie worker`" + `) reads
the same kinds of settings, from three places; for each setting the first
that gives a value wins:

1. its flag (` + "`--max-conns 500`" + `);
2. its environment variable, ` + "`JOBBIE_<ROLE>_<KEY>`" + ` (` + "`JOBBIE_GATEWAY_MAX_CONNS=500`" + `); an empty
   variable counts as unset. A list takes its items comma-separated;
3. the YAML file named by ` + "`--config`" + ` (or ` + "`$JOBBIE_CONFIG`" + `), under the role's
   section (` + "`gateway:` then `max_conns: 500`" + `). A list is a YAML list;

and else its default. A file has one section per role (` + "`dev`, `gateway`,\n`control`, `shard`, `worker`" + `), so one file can serve every process of a
deployment: each role reads its own section. A key a role does not know,
in its section, and a section that is no role, are refused with the key's
path (` + "`gateway.grpc_addr_typo: unknown setting`" + `); so is a value out of its
range (` + "`gateway.max_conns (--max-conns, JOBBIE_GATEWAY_MAX_CONNS): 0 is out of\nrange: -1 or more, not 0`" + `). Every problem is reported at once, and the process
exits 1 without starting.

` + "`--dry-run`" + ` checks the settings and prints the effective ones as a file
` + "`--config`" + ` reads, each value that is not the default with its source beside
it, and exits 0; or prints every problem and exits 1. Secrets (marked
below) print as ` + "`" + Redacted + "`" + `, and no role writes one to its log.

` + "```sh" + `
jobbie gateway --config jobbie.yaml --dry-run
` + "```" + `

` + "```yaml" + `
gateway:
  control: https://10.0.0.5:8081
  http: 0.0.0.0:8080
  log_format: json
  tls_cert: /etc/jobbie/gateway.crt
  tls_key: /etc/jobbie/gateway.key
  tls_ca: /etc/jobbie/ca.crt
  gossip_key_file: /etc/jobbie/gossip.key
` + "```" + `

Logs: every role logs through slog to stderr, as ` + "`text`" + ` or ` + "`json`" + `
(` + "`log_format`" + `), at ` + "`debug`, `info`, `warn` or `error`" + ` and above (` + "`log_level`" + `).
A gateway logs one line per API request at ` + "`debug`" + ` (` + "`warn`" + ` for a 5xx
answer) with its ` + "`request_id`" + `, ` + "`tenant`" + ` and ` + "`namespace`" + ` once admitted, and
the ` + "`trace_id`" + ` of a ` + "`traceparent`" + ` header that came with it.
`)
	for _, r := range roles {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", r.Role, r.Cmd.Short)
		b.WriteString("| key | flag | environment | type | default | range | help |\n|---|---|---|---|---|---|---|\n")
		for _, s := range Schema(r.Cmd, r.Role) {
			key := "`" + s.Key() + "`"
			if s.Secret {
				key += " (secret)"
			}
			if s.Required {
				key += " (required)"
			}
			env := "`" + s.Env + "`"
			if s.EnvAlias != "" {
				env += ", `" + s.EnvAlias + "`"
			}
			def := code(s.Default)
			if s.DocDefault != "" {
				def = cell(s.DocDefault)
			}
			fmt.Fprintf(&b, "| %s | `--%s` | %s | %s | %s | %s | %s |\n", key, s.Flag, env, s.Type, def, cell(s.Range()), cell(s.Help))
		}
	}
	return b.String()
}

func code(v string) string {
	if v == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(v, "|", `\|`) + "`"
}

// cell escapes what would end a table cell or read as HTML.
func cell(v string) string {
	return strings.NewReplacer("|", `\|`, "<", `\<`).Replace(v)
}
