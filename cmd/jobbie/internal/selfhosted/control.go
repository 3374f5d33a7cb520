package selfhosted

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/controlclient"
)

// controlClient calls control at urls (tried in turn), trusting roots
// for its certificate. Joins and renewals are safe to repeat (a join's
// single-use token is refused if it was used), so a node that cannot be
// reached, loses the answer or fails passes the call on to the next.
func controlClient(urls []string, roots *x509.CertPool) *controlclient.Client {
	return controlclient.New(controlclient.Config{URL: strings.Join(urls, ","), Repeatable: true,
		TLS: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS13}, Timeout: 30 * time.Second, MaxBody: 1 << 20})
}

// postControl posts body to path through cc: want decodes into out;
// another status is control's refusal, returned with its message and the
// node that gave it.
func postControl(ctx context.Context, cc *controlclient.Client, path string, body any, want int, out any) error {
	err := cc.JSON(ctx, http.MethodPost, path, "", body, want, out)
	var se *controlclient.StatusError
	if errors.As(err, &se) {
		return fmt.Errorf("control %s answered %d %s: %s", se.URL, se.Status, http.StatusText(se.Status), bytes.TrimSpace(se.Body))
	}
	return err
}
