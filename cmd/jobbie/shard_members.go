package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// shardAdmin are the flags of the member commands: any node of the shard
// answers them (changes are forwarded to the leader).
type shardAdmin struct {
	url, output string
	tls         roleTLS
}

func (a *shardAdmin) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&a.url, "url", "", "HTTP address of any node of the shard, e.g. 127.0.0.1:7101 (required)")
	f.StringVarP(&a.output, "output", "o", outTable, "output format: table or json")
	a.tls.flags(f) // an operator certificate
}

// memberList is GET /internal/v1/members.
type memberList struct {
	ShardID  string `json:"shard_id"`
	LeaderID string `json:"leader_id"`
	Members  []struct {
		NodeID   string `json:"node_id"`
		RaftAddr string `json:"raft_addr"`
		HTTPAddr string `json:"http_addr"`
		Voter    bool   `json:"voter"`
		Leader   bool   `json:"leader"`
	} `json:"members"`
}

func shardMembersCmd() *cobra.Command {
	var a shardAdmin
	cmd := &cobra.Command{
		Use:   "members",
		Short: "List the members of a shard cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.do(cmd.Context(), http.MethodGet, "/internal/v1/members", nil, cmd.OutOrStdout())
		},
	}
	a.flags(cmd)
	return cmd
}

func shardAddCmd() *cobra.Command {
	var a shardAdmin
	var nodeID, raftAddr string
	cmd := &cobra.Command{
		Use:   "add",
		Short: "Add a voter to a shard cluster (a node started with --join asks for this itself)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			body, _ := json.Marshal(map[string]string{"node_id": nodeID, "raft_addr": raftAddr})
			return a.do(cmd.Context(), http.MethodPost, "/internal/v1/members", body, cmd.OutOrStdout())
		},
	}
	a.flags(cmd)
	cmd.Flags().StringVar(&nodeID, "node-id", "", "the new member's node id (required)")
	cmd.Flags().StringVar(&raftAddr, "raft-addr", "", "the new member's Raft address, host:port (required)")
	_ = cmd.MarkFlagRequired("node-id")
	_ = cmd.MarkFlagRequired("raft-addr")
	return cmd
}

func shardRemoveCmd() *cobra.Command {
	var a shardAdmin
	cmd := &cobra.Command{
		Use:   "remove <node-id>",
		Short: "Remove a member from a shard cluster",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.send(cmd.Context(), http.MethodDelete, "/internal/v1/members/"+args[0], nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", args[0])
			return nil
		},
	}
	a.flags(cmd)
	return cmd
}

// do sends a request that answers with the member list, and prints it.
func (a *shardAdmin) do(ctx context.Context, method, path string, body []byte, out io.Writer) error {
	if a.output != outTable && a.output != outJSON {
		return fmt.Errorf("--output must be %s or %s, not %q", outTable, outJSON, a.output)
	}
	var raw json.RawMessage
	if err := a.send(ctx, method, path, body, &raw); err != nil {
		return err
	}
	if a.output == outJSON {
		_, err := fmt.Fprintln(out, string(raw))
		return err
	}
	var l memberList
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
// it has done nothing, so the call is repeated, within the deadline.
func (a *shardAdmin) send(ctx context.Context, method, path string, body []byte, into any) error {
	if a.url == "" {
		return errNoURL
	}
	creds, err := a.tls.load(pki.RoleOperator)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: creds.Client(pki.Roles(pki.RoleShard))}}
	defer hc.CloseIdleConnections()
	base := strings.TrimSuffix(strings.TrimPrefix(a.url, "https://"), "/")
	if strings.Contains(base, "://") {
		return fmt.Errorf("--url %q: a shard node is reached over TLS; give host:port or https://host:port", a.url)
	}
	base = "https://" + base
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		raw, code, err := call(ctx, hc, method, base+path, body)
		if err != nil {
			return err
		}
		var e wire.ErrorBody
		if code/100 == 2 {
			if into == nil || len(raw) == 0 {
				return nil
			}
			return json.Unmarshal(raw, into)
		}
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
