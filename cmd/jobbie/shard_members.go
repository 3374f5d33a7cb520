package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli"
	"github.com/spf13/cobra"
)

func shardMembersCmd() *cobra.Command {
	a := shardAdmin()
	cmd := &cobra.Command{
		Use:   "members",
		Short: "List the members of a shard cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.members(cmd.Context(), http.MethodGet, "/internal/v1/members", nil, cmd.OutOrStdout())
		},
	}
	a.flags(cmd)
	return cmd
}

func shardAddCmd() *cobra.Command {
	a := shardAdmin()
	var nodeID, raftAddr string
	cmd := &cobra.Command{
		Use:   "add",
		Short: "Add a voter to a shard cluster (a node started with --join asks for this itself)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			body, _ := json.Marshal(map[string]string{"node_id": nodeID, "raft_addr": raftAddr})
			return a.members(cmd.Context(), http.MethodPost, "/internal/v1/members", body, cmd.OutOrStdout())
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
	a := shardAdmin()
	cmd := &cobra.Command{
		Use:   "remove <node-id>",
		Short: "Remove a member from a shard cluster",
		Long: `remove takes a member out of a shard cluster's Raft group, at any node
of the cluster (--url). It presents an operator certificate (--tls-*), or a
node's own: a self-hosted shard's tenant, which has no operator
certificate, runs it on one of its nodes' machines with that node's
--data-dir (its <data-dir>/selfhosted credentials), e.g. after removing a
lost node in control:

  jobbie shards remove-node sh_… n3
  jobbie shard remove n3 --url 10.0.0.7:7101 --data-dir /var/lib/jobbie`,
		Args: cobra.ExactArgs(1),
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
