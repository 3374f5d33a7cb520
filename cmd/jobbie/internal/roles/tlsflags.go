package roles

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
)

// roleTLS is how a process proves who it is to the others: its
// certificate and key from the deployment's CA, and the CA's certificate.
// Every internal channel is mutual TLS; there is no way to run without.
type roleTLS struct{ cert, key, ca string }

func (r *roleTLS) flags(f *pflag.FlagSet) {
	f.StringVar(&r.cert, "tls-cert", "", "this process's certificate (from jobbie certs issue)")
	f.StringVar(&r.key, "tls-key", "", "its key")
	f.StringVar(&r.ca, "tls-ca", "", "the deployment CA's certificate (ca.crt)")
}

// load reads the credentials and checks they are of the role want.
func (r *roleTLS) load(want pki.Role) (*pki.Credentials, error) {
	creds, err := r.loadAny()
	if err != nil {
		return nil, err
	}
	if got := creds.Identity().Role; got != want {
		return nil, fmt.Errorf("%s is the certificate of %s; this needs a certificate of role %s", r.cert, creds.Identity(), want)
	}
	return creds, nil
}

// loadAny reads the credentials, of whatever role.
func (r *roleTLS) loadAny() (*pki.Credentials, error) {
	if r.cert == "" || r.key == "" || r.ca == "" {
		return nil, fmt.Errorf("--tls-cert, --tls-key and --tls-ca are required: every internal channel is mutual TLS " +
			"(issue this process a certificate with `jobbie certs issue`)")
	}
	return pki.LoadCredentials(r.cert, r.key, r.ca)
}

// reloadOnHUP rereads the certificate and key, and the gossip keys, on
// SIGHUP: renewals and key rotations need no restart.
func reloadOnHUP(ctx context.Context, creds *pki.Credentials, pool *gossip.Pool, gossipKeyFile string, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		if err := creds.Reload(); err != nil {
			log.Error("reload certificate", "err", err)
		} else {
			log.Info("certificate reloaded", "identity", creds.Identity().String(), "not_after", creds.NotAfter())
		}
		if pool == nil {
			continue
		}
		keys, err := gossipKeysFromFile(gossipKeyFile)
		if err == nil {
			err = pool.SetKeys(keys)
		}
		if err != nil {
			log.Error("reload gossip keys", "err", err)
		} else {
			log.Info("gossip keys reloaded", "keys", len(keys))
		}
	}
}
