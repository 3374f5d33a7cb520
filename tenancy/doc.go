// Package tenancy is the vocabulary every Jobbie role shares: tenants,
// namespaces, API key claims, roles and actions, the name rules, and the
// casbin RBAC model. It imports nothing of Jobbie's own.
package tenancy
