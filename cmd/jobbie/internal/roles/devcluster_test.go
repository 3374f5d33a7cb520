package roles

import (
	"net"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// A multi-process dev cluster with --tunnel-addr: every control node signs
// with the one self-hosted CA and names the listener, and the gateway
// listens there trusting that CA's certificate alone (its key stays with
// control). Without the flag, none of it.
func TestDevClusterPlanTunnel(t *testing.T) {
	for _, tunnel := range []string{"", "127.0.0.1:18443"} {
		dir := t.TempDir()
		ca, err := openDevPKI(dir)
		require.NoError(t, err)
		c := &devCluster{o: devOptions{dataDir: dir, shards: 2, replicas: 1, addr: "127.0.0.1:0", tunnelAddr: tunnel},
			files: filesIn(dir), path: filepath.Join(dir, "cluster.json"), ca: ca, gossipKey: filepath.Join(dir, "gossip.key"), ports: newDevPorts()}
		require.NoError(t, c.plan())
		c.ports.releaseAll()
		caDir := filepath.Join(dir, "pki", "selfhosted")
		for _, p := range c.cf.Processes {
			i := slices.Index(p.args, "--tunnel")
			switch p.Role {
			case "control":
				require.Equal(t, tunnel != "", slices.Contains(p.args, "--selfhosted-ca-dir"), p.name())
				if tunnel != "" {
					require.Equal(t, caDir, p.args[slices.Index(p.args, "--selfhosted-ca-dir")+1])
					require.Equal(t, tunnel, p.args[slices.Index(p.args, "--tunnel-url")+1])
				}
			case "gateway":
				require.Equal(t, tunnel != "", i >= 0, p.args)
				if tunnel != "" {
					require.Equal(t, tunnel, p.args[i+1])
					require.Equal(t, filepath.Join(caDir, "ca.crt"), p.args[slices.Index(p.args, "--selfhosted-ca-file")+1])
				}
			default:
				require.Negative(t, i, p.name())
				require.NotContains(t, p.args, "--selfhosted-ca-dir", p.name())
			}
		}
	}
}

// A dev cluster picks all its ports before any process binds one, so a
// port must not be picked twice (500 picks from its 11,000 ports would
// repeat one almost surely otherwise), and each is held until released:
// nothing else binds it in between, and its process can bind it after.
func TestDevPortsHeldUntilReleased(t *testing.T) {
	d := newDevPorts()
	defer d.releaseAll()
	d.keep("127.0.0.1:25000")
	seen := map[string]bool{"127.0.0.1:25000": true}
	var addrs []string
	for range 500 {
		addr, err := d.pick()
		require.NoError(t, err)
		require.False(t, seen[addr], "%s picked twice", addr)
		seen[addr] = true
		addrs = append(addrs, addr)
	}
	for _, a := range addrs[:3] {
		_, err := net.Listen("tcp", a)
		require.Error(t, err, "%s is held", a)
		_, err = net.ListenPacket("udp", a)
		require.Error(t, err, "%s is held for UDP", a)
		d.release(a)
		l, err := net.Listen("tcp", a)
		require.NoError(t, err, "%s is free once released", a)
		require.NoError(t, l.Close())
		u, err := net.ListenPacket("udp", a)
		require.NoError(t, err)
		require.NoError(t, u.Close())
	}
}
