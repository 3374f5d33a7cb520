// Package admin serves tenant administration: namespaces, API keys,
// custom roles, backups and their policies, the plan and invoices,
// usage, and the tenant's self-hosted shards. The gateway decides
// whether the caller may (RBAC, the namespaces of its key, and that a
// key never grants more than it holds: package admission); control,
// asked through controlapi, validates shapes and existence, and its
// refusals reach the tenant as it gave them (controlapi.ForTenant).
//
// A namespace's one setting its shard applies (its retention), and the
// emptying of a namespace before its delete, go to its shard through
// package proxy; a self-hosted shard's nodes are asked for their health
// over their tunnels (package selfhosted).
package admin
