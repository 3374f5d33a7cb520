// Package cli is Jobbie's command-line client: every command that calls
// Jobbie's APIs, as a customer or an operator would, through the public
// Go client (package client) and the wire shapes; it imports nothing of
// the servers. One file per noun: jobs, queues (and their settings),
// workers, schedules, search, bulk, keys, roles, namespaces, shards,
// status, cluster, events, backups, usage, plan, invoices, webhook signing
// keys and webhooks through a gateway with an API key; plans, tenants and
// live moves on the control plane with the operator key; login and
// contexts (config.go) for the gateway's.
//
// Every command takes the same flags to reach its API (flags.go): --url,
// --key or --key-file, -o table|json|yaml, and each API's environment
// variables; beneath them, the gateway's commands read the config file's
// context that `jobbie login` saved (config.go, login.go). Commands print
// the API's answer as JSON (or YAML, yaml.go), or a table; list commands
// take --watch (watch.go).
package cli
