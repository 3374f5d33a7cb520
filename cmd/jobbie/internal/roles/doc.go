// Package roles assembles Jobbie's processes: `jobbie dev` (every role in
// one process, or a local cluster of processes), `jobbie control`,
// `jobbie gateway` and `jobbie shard`, each from its flags (which package
// settings also reads from --config and JOBBIE_* variables) into the
// server's Config, with what every process shares (certificates and TLS
// flags, the gossip pool, its log (package rolelog), pprof, SIGHUP
// reloads). Beside them stand the
// commands that serve the processes rather than the API: the certificates
// of the deployment's CA (`jobbie certs`), the member commands of a Raft
// group, one implementation for control's and a shard's (members.go), and
// the load generator (`jobbie bench`).
//
// A self-hosted shard node's lifecycle is package selfhosted's; `jobbie
// shard` runs its steps (shard.go). The commands that call the public and
// operator APIs are package cli's.
package roles
