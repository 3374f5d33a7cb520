// Package selfhosted is the lifecycle of a self-hosted shard node (a
// tenant's own shard, in the tenant's network), as `jobbie shard
// --join-token …` runs it, cut into steps that tests drive without the
// command:
//
//   - Open: join with the tenant's token on first start (the node makes
//     its key, control signs its certificate for the token's shard), or
//     load what an earlier join stored in <data-dir>/selfhosted;
//   - DialTunnels: the node opens no port to the hosted service; it dials
//     the gateways' tunnel listeners and serves them over the tunnels;
//   - StartRenewal: the certificate is renewed at control once a third of
//     its lifetime is left, and swapped in place;
//   - LocalAPI: the tenant's API for the namespaces on the shard, served
//     to workers in its network while the hosted service is unreachable;
//   - Register: a hosted shard's leader keeps control's record of the
//     shard current (a self-hosted node joined with its token instead);
//   - AwaitRemoval: every node, hosted or not, stops once its cluster
//     removed it.
//
// The role command (cmd/jobbie/internal/roles, `jobbie shard`) runs them
// in that order around the shard node itself.
package selfhosted
