package roles

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/internal/gossip"
)

// What every role process shares: the gossip pool it joins, its log, the
// version it advertises.

// roleGossip is how a role process joins the gossip pool.
type roleGossip struct {
	bind, advertise, join, keyFile string
}

func (g *roleGossip) flags(f *pflag.FlagSet, defaultBind string) {
	f.StringVar(&g.bind, "gossip", defaultBind, "gossip listen address (UDP and TCP)")
	f.StringVar(&g.advertise, "gossip-advertise", "", "gossip address peers should use, when not the listen address")
	f.StringVar(&g.join, "join", "", "gossip peers to join: host:port[,…] or dns:<name>[:port]")
	f.StringVar(&g.keyFile, "gossip-key-file", "", "file holding the gossip encryption keys, one a line (16, 24 or 32 bytes as hex or base64; the first encrypts) (required)")
}

// start creates the pool without joining: peers may start later, and
// keepJoined joins them when they do.
func (g *roleGossip) start(name string, meta gossip.Meta, log *slog.Logger) (*gossip.Pool, error) {
	keys, err := gossipKeysFromFile(g.keyFile)
	if err != nil {
		return nil, err
	}
	return gossip.New(gossip.Config{
		NodeName: name, BindAddr: g.bind, AdvertiseAddr: g.advertise, Keys: keys, Meta: meta,
		LogOutput: slog.NewLogLogger(log.Handler(), slog.LevelWarn).Writer(),
	})
}

// keepJoined joins the --join peers, and joins them again whenever this
// node finds itself alone (they all restarted, or a partition healed),
// resolving the list anew each time so dns: picks up new addresses.
func (g *roleGossip) keepJoined(ctx context.Context, pool *gossip.Pool, log *slog.Logger) {
	if strings.TrimSpace(g.join) == "" {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	failing := false
	for {
		if pool.NumMembers() < 2 {
			addrs, err := gossip.ResolveJoin(g.join)
			if err == nil {
				_, err = pool.Join(addrs)
			}
			switch {
			case err != nil && !failing && ctx.Err() == nil:
				log.Warn("gossip: cannot join peers yet; retrying every second", "join", g.join, "err", err)
				failing = true
			case err == nil:
				log.Info("gossip: joined", "members", pool.NumMembers())
				failing = false
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// leavePool tells peers this node is going, so they drop it at once.
func leavePool(pool *gossip.Pool) {
	_ = pool.Leave(time.Second)
	_ = pool.Shutdown()
}

// gossipKeysFromFile reads the gossip encryption keys, one a line, each
// written as hex or base64: the first encrypts, all are accepted (see
// gossip.Config.Keys for rotation). Gossip is always encrypted.
func gossipKeysFromFile(path string) ([][]byte, error) {
	if path == "" {
		return nil, errors.New("--gossip-key-file is required: gossip is always encrypted " +
			"(make a key with: head -c 32 /dev/urandom | xxd -p -c 64 > gossip.key)")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var keys [][]byte
	for i, line := range strings.Split(string(b), "\n") {
		s := strings.TrimSpace(line)
		if s == "" {
			continue
		}
		key, err := hex.DecodeString(s)
		if err != nil {
			if key, err = base64.StdEncoding.DecodeString(s); err != nil {
				return nil, fmt.Errorf("%s:%d: a gossip key must be 16, 24 or 32 bytes written as hex or base64", path, i+1)
			}
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no gossip key in the file", path)
	}
	return keys, nil
}

// roleVersion is this build's version as gossip advertises it: the module
// version, or the VCS revision of a development build.
func roleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return "dev"
}
