package e2e

import (
	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

func clientKey(name string, role tenancy.Role, ns ...string) client.CreateKeyRequest {
	return client.CreateKeyRequest{Name: name, Role: role, Namespaces: ns}
}
