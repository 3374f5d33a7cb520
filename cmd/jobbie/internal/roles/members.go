package roles

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/selfhosted"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// group is a kind of Raft group whose members an operator's commands
// list, add and remove: control's (`jobbie control members|add|remove`)
// or a shard cluster's (`jobbie shard members|add|remove`). One
// implementation serves both; a group says how its commands read.
type group struct {
	role      pki.Role // of its nodes
	membersOf string   // what members lists the members of
	name      string   // what add adds to and remove removes from
	joinFlag  string   // the flag a node starts with to be added itself
	// removeLong is remove's long help.
	removeLong string
}

var (
	controlGroup = group{role: pki.RoleControl, membersOf: "the control plane's Raft group", name: "the control group", joinFlag: "--join-http"}
	shardGroup   = group{role: pki.RoleShard, membersOf: "a shard cluster", name: "a shard cluster", joinFlag: "--join",
		removeLong: `remove takes a member out of a shard cluster's Raft group, at any node
of the cluster (--url). It presents an operator certificate (--tls-*), or a
node's own: a self-hosted shard's tenant, which has no operator
certificate, runs it on one of its nodes' machines with that node's
--data-dir (its <data-dir>/selfhosted credentials), e.g. after removing a
lost node in control:

  jobbie shards remove-node sh_… n3
  jobbie shard remove n3 --url 10.0.0.7:7101 --data-dir /var/lib/jobbie`}
)

// commands are the group's members, add and remove.
func (g group) commands() []*cobra.Command {
	return []*cobra.Command{g.membersCmd(), g.addCmd(), g.removeCmd()}
}

func (g group) membersCmd() *cobra.Command {
	a := &memberAdmin{peer: g.role}
	cmd := &cobra.Command{
		Use:   "members",
		Short: "List the members of " + g.membersOf,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.members(cmd.Context(), http.MethodGet, "/internal/v1/members", nil, cmd.OutOrStdout())
		},
	}
	a.flags(cmd)
	return cmd
}

func (g group) addCmd() *cobra.Command {
	a := &memberAdmin{peer: g.role}
	var req wire.AddMemberRequest
	cmd := &cobra.Command{
		Use:   "add",
		Short: "Add a voter to " + g.name + " (a node started with " + g.joinFlag + " asks for this itself)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			body, _ := json.Marshal(req)
			return a.members(cmd.Context(), http.MethodPost, "/internal/v1/members", body, cmd.OutOrStdout())
		},
	}
	a.flags(cmd)
	f := cmd.Flags()
	f.StringVar(&req.NodeID, "node-id", "", "the new member's node id (required)")
	f.StringVar(&req.RaftAddr, "raft-addr", "", "the new member's Raft address, host:port (required)")
	if g.role == pki.RoleControl { // control records where its members serve; a shard's learn it by gossip
		f.StringVar(&req.HTTPAddr, "http-addr", "", "the new member's HTTP address, host:port, where followers forward to it")
	}
	_ = cmd.MarkFlagRequired("node-id")
	_ = cmd.MarkFlagRequired("raft-addr")
	return cmd
}

func (g group) removeCmd() *cobra.Command {
	a := &memberAdmin{peer: g.role}
	cmd := &cobra.Command{
		Use:   "remove <node-id>",
		Short: "Remove a member from " + g.name,
		Long:  g.removeLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.CheckID("node", args[0]); err != nil {
				return err
			}
			if err := a.send(cmd.Context(), http.MethodDelete, "/internal/v1/members/"+url.PathEscape(args[0]), nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", args[0])
			return nil
		},
	}
	a.flags(cmd)
	return cmd
}

// memberAdmin is how an operator's command talks to a Raft group's
// internal API (control's or a shard's): any node answers, changes are
// forwarded to the leader. It presents an operator certificate and admits
// only a node of the peer role. A shard's members also admit one another
// there, so the shard commands also run with a node's own certificate
// (a self-hosted node's, which its tenant holds and no operator
// certificate covers): then only a node of that same shard is talked to.
type memberAdmin struct {
	url, output string
	tls         roleTLS
	peer        pki.Role // pki.RoleControl or pki.RoleShard
	dataDir     string   // a shard node's data directory: its selfhosted credentials
}

// node names what --url reaches, for help and errors.
func (a *memberAdmin) node() string {
	if a.peer == pki.RoleControl {
		return "control node"
	}
	return "node of the shard"
}

func (a *memberAdmin) flags(cmd *cobra.Command) {
	example := "127.0.0.1:7101"
	if a.peer == pki.RoleControl {
		example = "127.0.0.1:8081"
	}
	f := cmd.Flags()
	f.StringVar(&a.url, "url", "", fmt.Sprintf("HTTP address of any %s, e.g. %s (required)", a.node(), example))
	f.StringVarP(&a.output, "output", "o", cli.OutTable, cli.OutputHelp)
	a.tls.flags(f) // an operator certificate, or a shard node's own
	if a.peer == pki.RoleShard {
		f.StringVar(&a.dataDir, "data-dir", "", "instead of --tls-*: the data directory of a self-hosted node of the shard on this machine, "+
			"whose own certificate (<data-dir>/selfhosted) is used")
	}
}

// credentials are what the command presents, and whom it then admits:
// with an operator certificate, any node of the peer role; with a shard
// node's own (from --data-dir, or --tls-* naming its files), only the
// nodes of that node's shard and owner.
func (a *memberAdmin) credentials() (*pki.Credentials, pki.Policy, error) {
	tlsSet := a.tls != (roleTLS{})
	if a.dataDir != "" {
		if tlsSet {
			return nil, nil, errors.New("give --data-dir or --tls-cert, --tls-key and --tls-ca, not both")
		}
		if cert := selfhosted.File(a.dataDir, selfhosted.CertFile); !exists(cert) {
			return nil, nil, fmt.Errorf("--data-dir %s: no %s: it is not the data directory of a self-hosted node that joined", a.dataDir, cert)
		}
		creds, err := selfhosted.LoadCredentials(a.dataDir)
		if err != nil {
			return nil, nil, err
		}
		return creds, a.policy(creds.Identity()), nil
	}
	if a.peer != pki.RoleShard {
		creds, err := a.tls.load(pki.RoleOperator)
		return creds, pki.Roles(a.peer), err
	}
	if !tlsSet {
		return nil, nil, errors.New("--tls-cert, --tls-key and --tls-ca are required (an operator certificate, or a node's own), " +
			"or --data-dir (a self-hosted node's): every internal channel is mutual TLS")
	}
	creds, err := a.tls.loadAny()
	if err != nil {
		return nil, nil, err
	}
	id := creds.Identity()
	if id.Role != pki.RoleOperator && id.Role != pki.RoleShard {
		return nil, nil, fmt.Errorf("%s is the certificate of %s; this needs a certificate of role operator, or a node's own of the shard (role shard)", a.tls.cert, id)
	}
	return creds, a.policy(id), nil
}

// policy admits the nodes the credentials of id may talk to.
func (a *memberAdmin) policy(id pki.Identity) pki.Policy {
	if id.Role == pki.RoleShard {
		return pki.OwnedShardMember(id.Shard, id.Tenant)
	}
	return pki.Roles(a.peer)
}

// members sends a request that answers with the member list, and prints it.
func (a *memberAdmin) members(ctx context.Context, method, path string, body []byte, out io.Writer) error {
	if err := cli.CheckOutput(a.output); err != nil {
		return err
	}
	var raw json.RawMessage
	if err := a.send(ctx, method, path, body, &raw); err != nil {
		return err
	}
	if a.output != cli.OutTable { // yaml: the JSON, turned to YAML by the root's writer
		_, err := fmt.Fprintln(out, string(raw))
		return err
	}
	var l wire.MemberList
	if err := json.Unmarshal(raw, &l); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLE\tRAFT\tHTTP")
	for _, m := range l.Members {
		role := "follower"
		switch {
		case m.Leader:
			role = "leader"
		case !m.Voter:
			role = "nonvoter"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.NodeID, role, m.RaftAddr, m.HTTPAddr)
	}
	return tw.Flush()
}

// send calls the node at --url and decodes a 2xx answer into into (if not
// nil); anything else is an error with the server's message. While the
// node knows no leader (an election, or a node that has only just joined)
// it has done nothing, so the call is repeated for up to 30 s.
func (a *memberAdmin) send(ctx context.Context, method, path string, body []byte, into any) error {
	if a.url == "" {
		return fmt.Errorf("--url is required: the HTTP address of any %s", a.node())
	}
	creds, expect, err := a.credentials()
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: creds.Client(expect)}}
	defer hc.CloseIdleConnections()
	base := strings.TrimSuffix(strings.TrimPrefix(a.url, "https://"), "/")
	if strings.Contains(base, "://") {
		return fmt.Errorf("--url %q: a %s is reached over TLS; give host:port or https://host:port", a.url, a.node())
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		raw, code, err := call(ctx, hc, method, "https://"+base+path, body)
		if err != nil {
			return err
		}
		if code/100 == 2 {
			if into == nil || len(raw) == 0 {
				return nil
			}
			return json.Unmarshal(raw, into)
		}
		var e wire.ErrorBody
		if json.Unmarshal(raw, &e) != nil || e.Error == nil || e.Error.Code == "" {
			return fmt.Errorf("%s %s: status %d", method, path, code)
		}
		if e.Error.Code != wire.CodeNoLeader {
			return fmt.Errorf("%s %s: %s (%s)", method, path, e.Error.Message, e.Error.Code)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s %s: %s (%s)", method, path, e.Error.Message, e.Error.Code)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// call makes one request and returns the answer's body and status.
func call(ctx context.Context, hc *http.Client, method, url string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return raw, res.StatusCode, err
}
