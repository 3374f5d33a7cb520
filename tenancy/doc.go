// Package tenancy is the vocabulary every Jobbie role shares: tenants,
// namespaces, API key claims, roles and actions, the name rules, and the
// casbin RBAC model. Of Jobbie's own it imports only wire, where the
// names of roles and actions are defined (so the Go SDK can name them
// without linking casbin or the JWT library); their meaning is here.
package tenancy
