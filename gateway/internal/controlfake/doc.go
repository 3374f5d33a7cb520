// Package controlfake is the gateway tests' control plane: one in-memory
// controlapi.Control that keeps what control keeps (tenants' namespaces
// and where they live, keys, roles, plans, quotas, usage, backups,
// self-hosted shards, signing keys and revocations) and answers as
// control does, statuses and error bodies included, with no more checks
// than the tests need. Tests of every gateway package use it; only the
// tests of controlapi.HTTP and internal/controlclient speak control's
// HTTP API.
//
// Its state is guarded by its mutex, which every call takes: a test that
// holds it (Lock) holds every call to control. Answers are copies, made
// by a JSON round trip as the wire would make them; so is what a call
// keeps of its arguments (strings.Clone, clone): the gateway passes
// strings that point into a request fiber reuses once it is answered,
// which a real control only ever sees as bytes on the wire.
package controlfake
